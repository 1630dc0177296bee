/* softmax, log_softmax over the last dim, and the fused masked_softmax (add(scores, mask) ->
 * softmax, the mask broadcast). Rows as in lower_reduce.c: 256 / TPR rows per workgroup of 256,
 * TPR lanes per row; each row takes its max, the sum of exp(v - max), then writes. Operands are
 * addressed with their physical strides (0 on the mask's broadcast dims).
 * Stems: `softmax` binds {x, y}; `masked_softmax` binds {x, mask, y} (a mask add of one tensor
 * to itself is lowered as `softmax` with SM_DOUBLE, v = x + x). Push SoftmaxPush
 * (shaders/abi.h SOFTMAX_PUSH): code SM_LOG for log_softmax, SM_SAFE for an exported sdpa's
 * softmax (a row of -inf alone gives zeros, compiler/canon_sdpa.c). Spec {256, TPR}. */
#include "compiler/lower/kernels.h"

#define SM_WG 256

/* Strides of t in the shape of y (right-aligned, 0 on broadcast dims), in y's rank. */
static bool bstrides(const PlanTensor *t, const PlanTensor *y, int64_t *st)
{
    int64_t phys[NPU_MAX_RANK];
    kc_strides(t, phys);
    if (t->rank > y->rank) return false;
    for (int d = 0; d < y->rank; d++) {
        int td = d - (y->rank - t->rank);
        st[d] = 0;
        if (td < 0) continue;
        if (t->shape[td] != y->shape[d] && t->shape[td] != 1) return false;
        st[d] = t->shape[td] == 1 ? 0 : phys[td];
    }
    return true;
}

Status lower_softmax(const KernelCtx *c, PlanKernel *k)
{
    const Node *sm = kc_member(c, OP_SOFTMAX);
    if (!sm) sm = kc_member(c, OP_LOG_SOFTMAX);
    if (!sm) return kc_error(c, "%s kernel without a softmax", k->shader);
    uint32_t code = sm->op == OP_LOG_SOFTMAX ? SM_LOG : 0;
    if (attr_bool(sm, "safe", false)) code |= SM_SAFE; /* an exported sdpa's: empty rows 0 */
    bool masked = c->kind == KK_masked_softmax;
    const PlanTensor *y = kc_out(k, c->p), *x = kc_arg(k, c->p, 0);
    const PlanTensor *m = NULL;
    if (masked) {
        const Node *add = kc_member(c, OP_ADD);
        if (!add || add->nin != 2 || attr_float(add, "alpha", 1.0) != 1.0)
            return kc_error(c, "masked_softmax without a plain two-tensor add");
        /* the kernel inputs are the add's operands in its order; the sum is symmetric, so only
         * their broadcast matters (both go through strides) */
        if (k->nin == 1) {
            code |= SM_DOUBLE;
            Status ps = kc_pick(c, k, (KernelKey){.kind = KK_softmax});
            if (ps != ST_OK) return ps;
        } else if (k->nin == 2) {
            m = kc_arg(k, c->p, 1);
        } else {
            return kc_error(c, "masked_softmax kernel with %d inputs", k->nin);
        }
    } else if (k->nin != 1) {
        return kc_error(c, "softmax kernel needs one input");
    }
    for (int i = 0; i < k->nargs; i++)
        if (!dtype_is_float(kc_arg(k, c->p, i)->dtype))
            return kc_error(c, "softmax kernel: tensor %s is not floating point",
                            kc_arg(k, c->p, i)->name);
    int r = y->rank;
    if (r > 0 && norm_dim(attr_int(sm, "dim", -1), r) != r - 1)
        return kc_error(c, "softmax kernel reduces the last dim only");
    if (r - 1 > ROW_OUTER) return kc_error(c, "softmax kernel: rank %d above 6", r);
    int64_t xs[NPU_MAX_RANK] = {0}, ms[NPU_MAX_RANK] = {0}, ys[NPU_MAX_RANK] = {0};
    if (!bstrides(x, y, xs) || !bstrides(y, y, ys) || (m && !bstrides(m, y, ms)))
        return kc_error(c, "softmax kernel: an operand does not broadcast to the output shape");
    int64_t len = r ? y->shape[r - 1] : 1, rows = 1;
    int64_t oshape[ROW_OUTER], oxs[ROW_OUTER], oms[ROW_OUTER], oys[ROW_OUTER];
    for (int d = 0; d < ROW_OUTER; d++) {
        int od = d - (ROW_OUTER - (r - 1));
        bool in = r > 0 && od >= 0;
        oshape[d] = in ? y->shape[od] : 1;
        oxs[d] = in ? xs[od] : 0;
        oms[d] = in ? ms[od] : 0;
        oys[d] = in ? ys[od] : 0;
        rows *= oshape[d];
    }
    uint32_t tpr = kc_lanes_for(len, SM_WG);
    KcWords w = {0};
    SoftmaxPush ps = {.rows = kc_word(&w, rows),
                      .len = kc_word(&w, len),
                      .code = code,
                      .xls = kc_word(&w, r ? xs[r - 1] : 0),
                      .mls = kc_word(&w, r ? ms[r - 1] : 0),
                      .yls = kc_word(&w, r ? ys[r - 1] : 0)};
    KC_WORDS(&w, ps.oshape, oshape);
    KC_WORDS(&w, ps.xs, oxs);
    KC_WORDS(&w, ps.ms, oms);
    KC_WORDS(&w, ps.ys, oys);
    Status st = kc_words_ok(c, k, &w);
    if (st == ST_OK) st = kc_push_block(c, k, &ps, sizeof ps);
    if (st == ST_OK) st = kc_spec(c, k, SM_WG);
    if (st == ST_OK) st = kc_spec(c, k, tpr);
    kc_grid(k, rows, SM_WG / tpr);
    return st;
}
