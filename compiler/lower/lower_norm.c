/* norm family: rmsnorm (the fused pow -> mean -> add eps -> rsqrt -> mul x -> mul w chain),
 * layernorm (LAYER_NORM over trailing dims; layernorm_t: the layernorm_t fusion, its rows read and
 * written through the members' permutes at any strides, push LnTPush (LN_T_PUSH), spec {WG, lanes
 * per row, XJ, YJ}: shaders/layernorm_t.glsl) and batchnorm (eval-mode BATCH_NORM, channel dim 1).
 *
 * rmsnorm and layernorm run one workgroup per row (the normalised trailing dims), statistics in
 * fp32 with a shared-memory reduction (shaders/norm_row.glsl). The row's elements must be
 * contiguous; the rows themselves are addressed through up to three collapsed outer dims with
 * physical strides, so a padded tensor is read and written without touching its padding: push
 * NormRowPush (shaders/abi.h NORM_ROW_PUSH). batchnorm runs one invocation per logical element
 * of [N, C, inner]: push BatchnormPush (BATCHNORM_PUSH).
 * A binding is one tensor and the output binds last, so optional inputs pick the stem:
 * layernorm (x, w, b), layernorm_w (x, w), layernorm_plain (x); batchnorm (x, w, b, mean, var),
 * batchnorm_plain (x, mean, var). The shaders share shaders/layernorm.glsl, batchnorm.glsl. */
#include "compiler/fusion.h"
#include "compiler/lower/kernels.h"
#include "compiler/strided.h"

#include <string.h>

#define NORM_WG 256
#define LN_REGS_MAX 8 /* layernorm.glsl LN_E: a row's elements per invocation in registers */
#define BN_WG 256
/* layernorm_t: rows per workgroup where a side's rows lie side by side (ln.rows' auto), and the
 * grid below which fewer are taken: 2 workgroups per SM of the tier's reference GPU */
#define LN_T_ROWS 16
#define LN_T_TARGET (2 * TIER_NV_COOPMAT_SMS)

/* Binds inputs in the order the shader expects: order[i] = argument index of binding i. Never
 * more bindings than the kernel has (its args array is sized by lower.c). */
static Status reorder_inputs(const KernelCtx *c, PlanKernel *k, const int *order, int n)
{
    int ids[64];
    if (n > 64 || n > k->nin) return kc_error(c, "%s kernel: too many inputs", k->shader);
    for (int i = 0; i < n; i++) {
        if (order[i] < 0) return kc_error(c, "%s kernel: an input is not bound", k->shader);
        ids[i] = k->args[order[i]];
    }
    int out = k->args[k->nargs - 1];
    for (int i = 0; i < n; i++)
        k->args[i] = ids[i];
    k->args[n] = out;
    k->nin = n;
    k->nargs = n + 1;
    return ST_OK;
}

/* Row geometry of x and y over their first `outer` dims (the rest is the row, length n): pushes
 * a NormRowPush. */
static Status push_rows(const KernelCtx *c, PlanKernel *k, const PlanTensor *x, const PlanTensor *y,
                        int outer, double eps)
{
    if (x->rank != y->rank) return kc_error(c, "%s: input and output ranks differ", k->shader);
    int64_t xs[NPU_MAX_RANK], ys[NPU_MAX_RANK], n = 1, rows = 1;
    kc_strides(x, xs);
    kc_strides(y, ys);
    for (int d = 0; d < x->rank; d++) {
        if (x->shape[d] != y->shape[d])
            return kc_error(c, "%s: input and output shapes differ", k->shader);
        if (d >= outer)
            n *= x->shape[d];
        else
            rows *= x->shape[d];
        /* the row must be contiguous: only its first dim may be padded (padding then lies after
         * the logical elements) */
        if (d > outer && (x->pshape[d] != x->shape[d] || y->pshape[d] != y->shape[d]))
            return kc_error(c, "%s: the normalised dims are not contiguous in memory", k->shader);
    }
    /* collapse the outer dims: drop size-1 dims, merge neighbours that are contiguous in both */
    int64_t sh[NPU_MAX_RANK], sx[NPU_MAX_RANK], sy[NPU_MAX_RANK];
    int m = 0;
    for (int d = 0; d < outer; d++) {
        if (x->shape[d] == 1) continue;
        if (m > 0 && sx[m - 1] == xs[d] * x->shape[d] && sy[m - 1] == ys[d] * x->shape[d]) {
            sh[m - 1] *= x->shape[d];
            sx[m - 1] = xs[d];
            sy[m - 1] = ys[d];
            continue;
        }
        sh[m] = x->shape[d];
        sx[m] = xs[d];
        sy[m] = ys[d];
        m++;
    }
    if (m > 3) return kc_error(c, "%s: more than 3 non-contiguous outer dims", k->shader);
    int64_t od[3] = {1, 1, 1}, ox[3] = {0, 0, 0}, oy[3] = {0, 0, 0};
    for (int i = 0; i < m; i++) {
        od[3 - m + i] = sh[i];
        ox[3 - m + i] = sx[i];
        oy[3 - m + i] = sy[i];
    }
    KcWords w = {0};
    NormRowPush pn = {.n = kc_word(&w, n),
                      .rows = kc_word(&w, rows),
                      .eps = (float)eps,
                      .od1 = kc_word(&w, od[1]),
                      .od2 = kc_word(&w, od[2]),
                      .xs0 = kc_word(&w, ox[0]),
                      .xs1 = kc_word(&w, ox[1]),
                      .xs2 = kc_word(&w, ox[2]),
                      .ys0 = kc_word(&w, oy[0]),
                      .ys1 = kc_word(&w, oy[1]),
                      .ys2 = kc_word(&w, oy[2])};
    Status st = kc_words_ok(c, k, &w);
    if (st == ST_OK) st = kc_push_block(c, k, &pn, sizeof pn);
    /* a power of two (the shader's tree reduction): short rows do not idle 256 lanes */
    uint32_t wg = 32;
    while (wg < NORM_WG && wg < n)
        wg *= 2;
    if (st == ST_OK) st = kc_spec(c, k, wg);
    kc_grid(k, rows, 1);
    return st;
}

static Status lower_rmsnorm(const KernelCtx *c, PlanKernel *k)
{
    /* x, the weight and eps from the members (shared with the GEMV prologue: fuse_fold.c) */
    int x, w;
    double eps;
    if (!c->fusion || !fuse_fold_operands(c->g, c->fusion, &x, &w, &eps))
        return kc_error(c, "rmsnorm kernel needs the fused pow/mean/add-eps/rsqrt/mul/mul chain");
    int order[2] = {kc_arg_of(c, k, x), kc_arg_of(c, k, w)};
    Status st = reorder_inputs(c, k, order, 2);
    if (st != ST_OK) return st;
    const PlanTensor *xt = kc_arg(k, c->p, 0), *wt = kc_arg(k, c->p, 1), *yt = kc_out(k, c->p);
    if (xt->rank < 1 || wt->rank != 1 || wt->shape[0] != xt->shape[xt->rank - 1])
        return kc_error(c, "rmsnorm: the weight is not a vector over the last dim");
    return push_rows(c, k, xt, yt, xt->rank - 1, eps);
}

/* The weight and bias (inputs 1 and 2 when present) of a norm over len elements: their flags. */
static Status norm_params(const KernelCtx *c, const PlanKernel *k, int64_t len, unsigned *flags)
{
    for (int i = 1; i < k->nin; i++)
        if (kc_numel(kc_arg(k, c->p, i)) != len)
            return kc_error(c, "layer_norm: weight/bias must have %lld elements", (long long)len);
    *flags = (k->nin >= 2 ? KF_WEIGHT : 0) | (k->nin == 3 ? KF_BIAS : 0);
    return ST_OK;
}

/* layernorm_t (fuse_patterns.c): the rows through the members' permutes and reshapes
 * (strided.h), x the input of the first member, written to the last member's output. */
static Status lower_layernorm_t(const KernelCtx *c, PlanKernel *k)
{
    const Fusion *f = c->fusion;
    const Node *ln = kc_member(c, OP_LAYER_NORM);
    if (!ln || k->nin < 1 || k->nin > 3)
        return kc_error(c, "layernorm_t kernel needs a layer_norm with 1 to 3 inputs");
    SvRows r;
    const char *why = NULL;
    if (!sv_norm_rows(c->g, f->nodes, f->nnodes, (int)(ln - c->g->nodes), &r, &why))
        return kc_error(c, "layernorm_t: %s", why);
    int order[3] = {kc_arg_of(c, k, c->g->nodes[f->nodes[0]].in[0]), -1, -1};
    for (int i = 1; i < ln->nin; i++)
        order[i] = kc_arg_of(c, k, ln->in[i]);
    Status st = reorder_inputs(c, k, order, ln->nin);
    unsigned flags = 0;
    if (st == ST_OK) st = norm_params(c, k, r.n, &flags);
    if (st == ST_OK)
        st = kc_pick(c, k, (KernelKey){.kind = KK_layernorm, .impl = KI_STRIDED, .flags = flags});
    if (st != ST_OK) return st;
    /* which side's rows lie side by side (the innermost row dim of stride 1, the elements not):
     * there the invocations take consecutive rows */
    bool xrows = r.xl != 1 && r.xs[ROW_OUTER - 1] == 1,
         yrows = r.yl != 1 && r.ys[ROW_OUTER - 1] == 1;
    uint32_t tpr = kc_lanes_for((r.n + 3) / 4, NORM_WG); /* about 4 elements per lane */
    int64_t rows = kc_tune(c, TUNE_LN_ROWS);
    if (rows == TUNE_AUTO) {
        rows = xrows || yrows ? LN_T_ROWS : 1;
        while (rows > 1 && !c->cpu_device && (r.rows + rows - 1) / rows < LN_T_TARGET)
            rows /= 2;
    }
    while (rows * tpr < 32)
        rows *= 2;
    if (rows * tpr > NORM_WG) rows = NORM_WG / tpr;
    KcWords w = {0};
    LnTPush pl = {.rows = kc_word(&w, r.rows),
                  .n = kc_word(&w, r.n),
                  .eps = (float)attr_float(ln, "eps", 1e-5),
                  .xl = kc_word(&w, r.xl),
                  .yl = kc_word(&w, r.yl)};
    KC_WORDS(&w, pl.oshape, r.oshape);
    KC_WORDS(&w, pl.xs, r.xs);
    KC_WORDS(&w, pl.ys, r.ys);
    st = kc_words_ok(c, k, &w);
    if (st == ST_OK) st = kc_push_block(c, k, &pl, sizeof pl);
    if (st == ST_OK) st = kc_spec(c, k, (uint32_t)(rows * tpr));
    if (st == ST_OK) st = kc_spec(c, k, tpr);
    if (st == ST_OK) st = kc_spec(c, k, !xrows);
    if (st == ST_OK) st = kc_spec(c, k, !yrows);
    kc_grid(k, r.rows, rows);
    return st;
}

static Status lower_layernorm(const KernelCtx *c, PlanKernel *k)
{
    if (c->fusion && strcmp(c->fusion->family, "layernorm_t") == 0) return lower_layernorm_t(c, k);
    const Node *n = c->anchor;
    if (n->op != OP_LAYER_NORM || k->nin < 1 || k->nin > 3)
        return kc_error(c, "layernorm kernel needs one LAYER_NORM node with 1 to 3 inputs");
    const PlanTensor *x = kc_arg(k, c->p, 0), *y = kc_out(k, c->p);
    int64_t ns[NPU_MAX_RANK + 1];
    int nd;
    if (attr_present(n, "normalized_shape")) {
        nd = attr_ints(n, "normalized_shape", ns, NPU_MAX_RANK + 1);
    } else if (k->nin > 1) { /* as the CPU reference: the weight's shape */
        const PlanTensor *w = kc_arg(k, c->p, 1);
        nd = w->rank;
        memcpy(ns, w->shape, sizeof(int64_t) * (size_t)nd);
    } else {
        return kc_error(c, "layer_norm has no `normalized_shape`");
    }
    if (nd < 0 || nd > x->rank) return kc_error(c, "layer_norm: bad `normalized_shape`");
    int64_t len = 1;
    for (int i = 0; i < nd; i++) {
        if (ns[i] != x->shape[x->rank - nd + i])
            return kc_error(c, "layer_norm: normalized_shape is not the input's trailing shape");
        len *= ns[i];
    }
    unsigned flags = 0;
    Status st = norm_params(c, k, len, &flags);
    if (st == ST_OK) st = kc_pick(c, k, (KernelKey){.kind = KK_layernorm, .flags = flags});
    if (st == ST_OK) st = push_rows(c, k, x, y, x->rank - nd, attr_float(n, "eps", 1e-5));
    /* spec 1: the row's elements per invocation held in registers (one read of x, its loads all
     * in flight at once), where that is at most LN_REGS_MAX and ln.regs allows; 0: three passes
     * over x, each a loop of dependent trips (7-10 us per norm on the H200 whatever its size) */
    int64_t per = st == ST_OK ? (len + k->spec[0] - 1) / k->spec[0] : 0;
    if (st == ST_OK)
        st = kc_spec(c, k, kc_tune(c, TUNE_LN_REGS) && per <= LN_REGS_MAX ? (uint32_t)per : 0);
    return st;
}

static Status lower_batchnorm(const KernelCtx *c, PlanKernel *k)
{
    const Node *n = c->anchor;
    if (n->op != OP_BATCH_NORM || (k->nin != 5 && k->nin != 3))
        return kc_error(c, "batchnorm kernel needs x, [weight, bias,] running mean and var");
    if (attr_bool(n, "training", false))
        return kc_error(c, "training-mode batch_norm is not supported");
    const PlanTensor *x = kc_arg(k, c->p, 0), *y = kc_out(k, c->p);
    if (x->rank < 2 || x->rank != y->rank)
        return kc_error(c, "batchnorm: input of rank >= 2 with the output's rank needed");
    int64_t C = x->shape[1], inner = 1;
    for (int d = 0; d < x->rank; d++) {
        if (x->shape[d] != y->shape[d])
            return kc_error(c, "batchnorm: input and output shapes differ");
        if (d >= 2) inner *= x->shape[d];
        /* only the channel dim may be padded: [N, Cpad, inner] */
        if (d != 1 && (x->pshape[d] != x->shape[d] || y->pshape[d] != y->shape[d]))
            return kc_error(c, "batchnorm: a dim other than the channels is padded");
    }
    for (int i = 1; i < k->nin; i++)
        if (kc_numel(kc_arg(k, c->p, i)) != C)
            return kc_error(c, "batchnorm: parameters must have %lld elements", (long long)C);
    int64_t total = x->shape[0] * C * inner;
    unsigned flags = k->nin == 5 ? KF_WEIGHT | KF_BIAS : 0;
    KcWords w = {0};
    BatchnormPush pb = {.total = kc_word(&w, total),
                        .C = kc_word(&w, C),
                        .inner = kc_word(&w, inner),
                        .xs0 = kc_word(&w, x->pshape[1] * inner),
                        .xs1 = kc_word(&w, inner),
                        .ys0 = kc_word(&w, y->pshape[1] * inner),
                        .ys1 = kc_word(&w, inner),
                        .eps = (float)attr_float(n, "eps", 1e-5)};
    Status st = kc_pick(c, k, (KernelKey){.kind = KK_batchnorm, .flags = flags});
    if (st == ST_OK) st = kc_words_ok(c, k, &w);
    if (st == ST_OK) st = kc_push_block(c, k, &pb, sizeof pb);
    if (st == ST_OK) st = kc_spec(c, k, BN_WG);
    kc_grid(k, total, BN_WG);
    return st;
}

Status lower_norm(const KernelCtx *c, PlanKernel *k)
{
    if (c->kind == KK_rmsnorm) return lower_rmsnorm(c, k);
    if (c->kind == KK_layernorm) return lower_layernorm(c, k);
    if (c->kind == KK_batchnorm) return lower_batchnorm(c, k);
    return kc_error(c, "no norm kernel of kind %s", kernel_kind_name(c->kind));
}
