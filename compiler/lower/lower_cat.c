/* cat: up to NPU_MAX_CAT_INPUTS dense inputs along one dim (shaders/cat.glsl). The binding
 * count of a shader is static, so the kernel runs the module of its input count: cat2, cat3 or
 * cat4 (one input left after dropping legacy empty tensors is a copy). Tensors are seen as
 * [outer, size, inner] around the cat dim. Push {n, total, inner, end0, end1, end2}: input k
 * covers out rows [end(k-1), end(k)) along the dim. */
#include "compiler/lower/kernels.h"

#include "compiler/support.h"

#define CAT_WG 256

Status lower_cat(const KernelCtx *c, PlanKernel *k)
{
    const PlanTensor *out = kc_out(k, c->p);
    int r = out->rank;
    int dim = norm_dim(attr_int(c->anchor, "dim", 0), r);
    if (dim < 0) return kc_error(c, "cat dim out of range for rank %d", r);
    if (out->padded) return kc_error(c, "cat writes a padded layout");
    /* drop legacy empty inputs (rank 1, 0 elements), as the CPU reference does */
    int outk = k->args[k->nargs - 1], nin = 0;
    for (int i = 0; i < k->nin; i++) {
        const PlanTensor *x = kc_arg(k, c->p, i);
        if (x->rank == 1 && x->shape[0] == 0) continue;
        k->args[nin++] = k->args[i];
    }
    k->args[nin] = outk;
    k->nin = nin;
    k->nargs = nin + 1;
    if (nin < 1 || nin > NPU_MAX_CAT_INPUTS)
        return kc_error(c, "cat of %d inputs (the kernels take 1..%d)", nin, NPU_MAX_CAT_INPUTS);
    int64_t end[NPU_MAX_CAT_INPUTS] = {0}, at = 0, inner = 1;
    for (int i = dim + 1; i < r; i++)
        inner *= out->shape[i];
    for (int i = 0; i < nin; i++) {
        const PlanTensor *x = kc_arg(k, c->p, i);
        if (x->rank != r || x->padded || x->storage != out->storage)
            return kc_error(c, "cat input %d differs from the output in rank, layout or storage",
                            i);
        for (int d = 0; d < r; d++)
            if (d != dim && x->shape[d] != out->shape[d])
                return kc_error(c, "cat input %d: dim %d is %lld, the output's %lld", i, d,
                                (long long)x->shape[d], (long long)out->shape[d]);
        at += x->shape[dim];
        end[i] = at;
    }
    if (at != out->shape[dim])
        return kc_error(c, "cat gives %lld along the dim, declared %lld", (long long)at,
                        (long long)out->shape[dim]);
    if (nin == 1) { /* the input in its own order */
        Status st = kc_pick(c, k, (KernelKey){.kind = KK_copy});
        return st == ST_OK ? lower_copy(c, k) : st;
    }
    int64_t n = kc_numel(out);
    Status st = kc_pick(c, k, (KernelKey){.kind = KK_cat, .n = nin});
    if (st == ST_OK) st = kc_push_i(c, k, n);
    if (st == ST_OK) st = kc_push_i(c, k, out->shape[dim]);
    if (st == ST_OK) st = kc_push_i(c, k, inner);
    for (int i = 0; i < 3 && st == ST_OK; i++)
        st = kc_push_i(c, k, end[i]);
    if (st == ST_OK) st = kc_spec(c, k, CAT_WG);
    kc_grid(k, n, CAT_WG);
    return st;
}
