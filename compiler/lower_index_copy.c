/* index_copy(self, index, source) along `dim` (shaders/index_copy.comp), the tensors seen as
 * [outer, size, inner] (self, out) and [outer, m, inner] (source). When the views pass made the
 * output an alias of self's storage (compiler/pass_views.c: nothing reads self afterwards) the
 * kernel writes only the source rows (mode 1: a KV cache is updated in place, not copied);
 * otherwise it writes every out element from self or the source (mode 0).
 * Push {n, mode, size, inner, m}. The geometry and the mode serve rope_cache too
 * (kc_index_copy_geom; lower_rope.c), whose source is computed in the kernel. */
#include "kernels.h"

#define IC_WG 64

static int base_of(const Plan *p, int t)
{
    for (int i = 0; i < 8 && p->tensors[t].alias_of >= 0; i++)
        t = p->tensors[t].alias_of;
    return t;
}

Status kc_index_copy_geom(const KernelCtx *c, const PlanKernel *k, const Node *n, int self_arg,
                          int idx_arg, int src_rank, const int64_t *src_shape, bool src_padded,
                          IcGeom *ic)
{
    const PlanTensor *self = kc_arg(k, c->p, self_arg), *idx = kc_arg(k, c->p, idx_arg);
    const PlanTensor *out = kc_out(k, c->p);
    int r = self->rank;
    int dim = norm_dim(attr_int(n, "dim", 0), r);
    if (dim < 0) return kc_error(c, "index_copy dim out of range for rank %d", r);
    if (self->padded || src_padded || out->padded || idx->storage != DT_I32 ||
        self->storage != out->storage)
        return kc_error(c, "index_copy needs dense tensors of one storage and int indices");
    int64_t m = kc_numel(idx), inner = 1;
    for (int i = dim + 1; i < r; i++)
        inner *= self->shape[i];
    if (src_rank != r || out->rank != r || src_shape[dim] != m)
        return kc_error(c, "index_copy source has %lld slices for %lld indices",
                        (long long)(src_rank == r ? src_shape[dim] : -1), (long long)m);
    for (int i = 0; i < r; i++)
        if (out->shape[i] != self->shape[i] || (i != dim && src_shape[i] != self->shape[i]))
            return kc_error(c, "index_copy: self, source and output shapes do not match");
    int outk = k->args[k->nargs - 1];
    ic->dim = dim;
    ic->size = self->shape[dim];
    ic->m = m;
    ic->inner = inner > 0 ? inner : 1;
    ic->in_place = c->p->tensors[outk].alias_of >= 0 &&
                   base_of(c->p, outk) == base_of(c->p, k->args[self_arg]);
    return ST_OK;
}

Status lower_index_copy(const KernelCtx *c, PlanKernel *k)
{
    if (k->nin != 3) return kc_error(c, "index_copy kernel needs self, index and source");
    const PlanTensor *src = kc_arg(k, c->p, 2), *out = kc_out(k, c->p);
    if (src->storage != out->storage)
        return kc_error(c, "index_copy needs dense tensors of one storage and int indices");
    IcGeom ic;
    Status st = kc_index_copy_geom(c, k, c->anchor, 0, 1, src->rank, src->shape, src->padded, &ic);
    if (st != ST_OK) return st;
    int64_t n = ic.in_place ? kc_numel(src) : kc_numel(out);
    st = kc_push_i(c, k, n);
    if (st == ST_OK) st = kc_push_u(c, k, ic.in_place ? 1 : 0);
    if (st == ST_OK) st = kc_push_i(c, k, ic.size);
    if (st == ST_OK) st = kc_push_i(c, k, ic.inner);
    if (st == ST_OK) st = kc_push_i(c, k, ic.m);
    if (st == ST_OK) st = kc_spec(c, k, IC_WG);
    kc_grid(k, n, IC_WG);
    return st;
}
