/* index_copy(self, index, source) along `dim` (shaders/index_copy.comp), the tensors seen as
 * [outer, size, inner] (self, out) and [outer, m, inner] (source). When the views pass made the
 * output an alias of self's storage (compiler/pass_views.c: nothing reads self afterwards) the
 * kernel writes only the source rows (mode 1: a KV cache is updated in place, not copied);
 * otherwise it writes every out element from self or the source (mode 0).
 * Push {n, mode, size, inner, m}. */
#include "kernels.h"

#define IC_WG 256

static int base_of(const Plan *p, int t)
{
    for (int i = 0; i < 8 && p->tensors[t].alias_of >= 0; i++)
        t = p->tensors[t].alias_of;
    return t;
}

Status lower_index_copy(const KernelCtx *c, PlanKernel *k)
{
    if (k->nin != 3) return kc_error(c, "index_copy kernel needs self, index and source");
    const PlanTensor *self = kc_arg(k, c->p, 0), *idx = kc_arg(k, c->p, 1);
    const PlanTensor *src = kc_arg(k, c->p, 2), *out = kc_out(k, c->p);
    int r = self->rank;
    int dim = norm_dim(attr_int(c->anchor, "dim", 0), r);
    if (dim < 0) return kc_error(c, "index_copy dim out of range for rank %d", r);
    if (self->padded || src->padded || out->padded || idx->storage != DT_I32 ||
        src->storage != out->storage || self->storage != out->storage)
        return kc_error(c, "index_copy needs dense tensors of one storage and int indices");
    int64_t m = kc_numel(idx), size = self->shape[dim], inner = 1;
    for (int i = dim + 1; i < r; i++)
        inner *= self->shape[i];
    if (src->rank != r || out->rank != r || src->shape[dim] != m)
        return kc_error(c, "index_copy source has %lld slices for %lld indices",
                        (long long)(src->rank == r ? src->shape[dim] : -1), (long long)m);
    for (int i = 0; i < r; i++)
        if (out->shape[i] != self->shape[i] || (i != dim && src->shape[i] != self->shape[i]))
            return kc_error(c, "index_copy: self, source and output shapes do not match");
    int outk = k->args[k->nargs - 1];
    bool in_place =
        c->p->tensors[outk].alias_of >= 0 && base_of(c->p, outk) == base_of(c->p, k->args[0]);
    int64_t n = in_place ? kc_numel(src) : kc_numel(out);
    Status st = kc_push_i(c, k, n);
    if (st == ST_OK) st = kc_push_u(c, k, in_place ? 1 : 0);
    if (st == ST_OK) st = kc_push_i(c, k, size);
    if (st == ST_OK) st = kc_push_i(c, k, inner > 0 ? inner : 1);
    if (st == ST_OK) st = kc_push_i(c, k, m);
    if (st == ST_OK) st = kc_spec(c, k, IC_WG);
    kc_grid(k, n, IC_WG);
    return st;
}
