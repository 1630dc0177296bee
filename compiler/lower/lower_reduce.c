/* reduce: sum, mean or amax over the last dim (the partition sends only last-dim reductions to
 * the NPU), keepdim or not. A row is the last dim of one outer index; rows are addressed with the
 * input's and output's physical strides over the logical outer shape. A workgroup of 256 holds
 * 256 / TPR rows with TPR lanes each (TPR: the row length rounded up to a power of two, at most
 * 256), so short rows do not leave most lanes idle. Push ReducePush (shaders/abi.h
 * REDUCE_PUSH, the code RD_*); spec {256, TPR}. */
#include "compiler/lower/kernels.h"

#define RD_WG 256

Status lower_reduce(const KernelCtx *c, PlanKernel *k)
{
    const Node *n = c->anchor;
    uint32_t code = n->op == OP_SUM    ? RD_SUM
                    : n->op == OP_MEAN ? RD_MEAN
                    : n->op == OP_AMAX ? RD_AMAX
                                       : 0;
    if (!code) return kc_error(c, "%s is not a reduce kernel op", op_short_name(n->op));
    if (k->nin != 1) return kc_error(c, "reduce kernel needs one input");
    const PlanTensor *x = kc_arg(k, c->p, 0), *y = kc_out(k, c->p);
    if (!dtype_is_float(x->dtype) || !dtype_is_float(y->dtype))
        return kc_error(c, "reduce kernel: integer tensors stay on the CPU");
    int r = x->rank;
    int64_t dims[NPU_MAX_RANK];
    if (r > 0 && (attr_ints(n, "dim", dims, NPU_MAX_RANK) != 1 || norm_dim(dims[0], r) != r - 1))
        return kc_error(c, "reduce kernel reduces the last dim only");
    if (r - 1 > ROW_OUTER) return kc_error(c, "reduce kernel: rank %d above 6", r);
    if (y->rank != r && y->rank != r - 1 && !(r == 0 && y->rank == 0))
        return kc_error(c, "reduce kernel: output rank %d for input rank %d", y->rank, r);
    KcRows w = kc_last_dim_rows(x, y);
    uint32_t tpr = kc_lanes_for(w.len, RD_WG);
    KcWords ws = {0};
    ReducePush pr = {.rows = kc_word(&ws, w.rows),
                     .len = kc_word(&ws, w.len),
                     .code = code,
                     .lstride = kc_word(&ws, w.step)};
    KC_WORDS(&ws, pr.oshape, w.shape);
    KC_WORDS(&ws, pr.xs, w.xs);
    KC_WORDS(&ws, pr.ys, w.ys);
    Status st = kc_words_ok(c, k, &ws);
    if (st == ST_OK) st = kc_push_block(c, k, &pr, sizeof pr);
    if (st == ST_OK) st = kc_spec(c, k, RD_WG);
    if (st == ST_OK) st = kc_spec(c, k, tpr);
    kc_grid(k, w.rows, RD_WG / tpr);
    return st;
}
