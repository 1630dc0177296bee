/* reduce: sum, mean or amax over the last dim (the partition sends only last-dim reductions to
 * the NPU), keepdim or not. A row is the last dim of one outer index; rows are addressed with the
 * input's and output's physical strides over the logical outer shape. A workgroup of 256 holds
 * 256 / TPR rows with TPR lanes each (TPR: the row length rounded up to a power of two, at most
 * 256), so short rows do not leave most lanes idle. Push (19 words, shaders/reduce.comp):
 * {rows, len, code, lstride, oshape[5], xs[5], ys[5]}; spec {256, TPR}. */
#include "compiler/lower/kernels.h"

enum { RD_SUM = 1, RD_MEAN = 2, RD_AMAX = 3 }; /* codes of shaders/reduce.comp */

#define RD_WG 256
#define RD_OUTER KC_ROW_OUTER

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
    if (r - 1 > RD_OUTER) return kc_error(c, "reduce kernel: rank %d above 6", r);
    if (y->rank != r && y->rank != r - 1 && !(r == 0 && y->rank == 0))
        return kc_error(c, "reduce kernel: output rank %d for input rank %d", y->rank, r);
    KcRows w = kc_last_dim_rows(x, y);
    uint32_t tpr = kc_lanes_for(w.len, RD_WG);
    Status st = kc_push_i(c, k, w.rows);
    if (st == ST_OK) st = kc_push_i(c, k, w.len);
    if (st == ST_OK) st = kc_push_u(c, k, code);
    if (st == ST_OK) st = kc_push_i(c, k, w.step);
    for (int d = 0; d < RD_OUTER && st == ST_OK; d++)
        st = kc_push_i(c, k, w.shape[d]);
    for (int d = 0; d < RD_OUTER && st == ST_OK; d++)
        st = kc_push_i(c, k, w.xs[d]);
    for (int d = 0; d < RD_OUTER && st == ST_OK; d++)
        st = kc_push_i(c, k, w.ys[d]);
    if (st == ST_OK) st = kc_spec(c, k, RD_WG);
    if (st == ST_OK) st = kc_spec(c, k, tpr);
    kc_grid(k, w.rows, RD_WG / tpr);
    return st;
}
