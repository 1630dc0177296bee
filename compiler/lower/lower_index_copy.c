/* index_copy(self, index, source) along `dim` (shaders/index_copy.comp), the tensors seen as
 * [outer, size, inner] (self, out) and [outer, m, inner] (source). When the views pass made the
 * output an alias of self's storage (compiler/pass_views.c: nothing reads self afterwards) the
 * kernel writes only the source rows (mode 1: a KV cache is updated in place, not copied);
 * otherwise it writes every out element from self or the source (mode 0).
 * Push IndexCopyPush (shaders/abi.h INDEX_COPY_PUSH): the source element (o, j, e) is at o * so + j
 * * sm + e (dense: so = m * inner, sm = inner; through a member transpose, index_copy_t: its
 * input's strides permuted). The geometry and the mode serve rope_cache too (kc_index_copy_geom;
 * lower_rope.c), whose source is computed in the kernel. */
#include "compiler/lower/kernels.h"

#include <string.h>

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

/* index_copy_t (fuse_patterns.c): the source comes through a member transpose; binds {self,
 * index, the transpose's input} and gives the source's strides as the index_copy sees it. */
static Status transposed_source(const KernelCtx *c, PlanKernel *k, const Node *ic, const Node *tp,
                                int64_t *sx)
{
    int want[3] = {ic->in[0], ic->in[1], tp->in[0]}, ids[3];
    for (int i = 0; i < 3; i++) {
        int a = kc_arg_of(c, k, want[i]);
        if (a < 0) return kc_error(c, "index_copy_t: self, index and the source must be inputs");
        ids[i] = k->args[a];
    }
    memcpy(k->args, ids, sizeof ids);
    const GTensor *src = &c->g->tensors[ic->in[2]];
    if (!kc_permuted_strides(kc_arg(k, c->p, 2), tp, src->rank, src->shape, sx))
        return kc_error(c, "index_copy_t: the transposed source does not have its graph shape");
    return ST_OK;
}

Status lower_index_copy(const KernelCtx *c, PlanKernel *k)
{
    if (k->nin != 3) return kc_error(c, "index_copy kernel needs self, index and source");
    const Node *n = c->anchor;
    int pr = n->nin == 3 ? c->g->tensors[n->in[2]].producer : -1;
    const Node *tp = pr >= 0 && kc_is_member(c, pr) ? &c->g->nodes[pr] : NULL;
    int64_t sx[NPU_MAX_RANK];
    Status st = tp ? transposed_source(c, k, n, tp, sx) : ST_OK;
    if (st != ST_OK) return st;
    const PlanTensor *src = kc_arg(k, c->p, 2), *out = kc_out(k, c->p);
    const GTensor *gs = &c->g->tensors[n->in[2]];
    int rank = tp ? gs->rank : src->rank;
    const int64_t *shape = tp ? gs->shape : src->shape;
    if (!tp) kc_strides(src, sx);
    if (src->storage != out->storage)
        return kc_error(c, "index_copy needs dense tensors of one storage and int indices");
    IcGeom ic;
    st = kc_index_copy_geom(c, k, n, 0, 1, rank, shape, src->padded, &ic);
    if (st != ST_OK) return st;
    /* the source as [outer, m, inner]: inner contiguous, outer one stride (the matcher's rule) */
    int64_t so;
    const char *why = NULL;
    if (!strides_outer_m_inner(rank, shape, sx, ic.dim, &so, &why))
        return kc_error(c, "index_copy: %s", why);
    int64_t n_el = 1;
    for (int d = 0; d < rank; d++)
        n_el *= shape[d];
    int64_t nk = ic.in_place ? n_el : kc_numel(out);
    KcWords w = {0};
    IndexCopyPush pi = {.n = kc_word(&w, nk),
                        .mode = ic.in_place ? 1 : 0,
                        .size = kc_word(&w, ic.size),
                        .inner = kc_word(&w, ic.inner),
                        .m = kc_word(&w, ic.m),
                        .so = kc_word(&w, so),
                        .sm = kc_word(&w, sx[ic.dim])};
    st = kc_words_ok(c, k, &w);
    if (st == ST_OK) st = kc_push_block(c, k, &pi, sizeof pi);
    if (st == ST_OK) st = kc_spec(c, k, IC_WG);
    kc_grid(k, nk, IC_WG);
    return st;
}
