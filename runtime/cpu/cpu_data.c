/* CPU reference data movement: views, permutes, expand, cat, slice/select/split, index_copy,
 * embedding, getitem and tensor sources. All element types (f32, i64, bool) by element size. */
#include <stdint.h>
#include <string.h>
#include "compiler/shape/shape.h"
#include "runtime/cpu/cpu_kernels.h"

#define err(c, tensor, ...) diag_error((c)->diag, (c)->file, (c)->node->name, tensor, __VA_ARGS__)

static size_t esz(const HTensor *t)
{
    return dtype_size(t->dtype);
}

Status cpu_copy(const CpuCall *c)
{
    if (c->nout == 0) return ST_OK; /* _assert_tensor_metadata */
    const HTensor *x = c->in[0];
    HTensor *o = c->out[0];
    if (x->numel != o->numel)
        return err(c, node_output(c->g, c->node, 0)->name,
                   "declared output has %lld elements but the input has %lld",
                   (long long)((long long)o->numel), (long long)((long long)x->numel));
    if (x->dtype == o->dtype)
        memcpy(o->data, x->data, (size_t)x->numel * esz(x));
    else
        htensor_convert(o->data, o->dtype, x->data, x->dtype, x->numel);
    return ST_OK;
}

Status cpu_getitem(const CpuCall *c)
{
    int64_t i = attr_int(c->node, "index", 0);
    if (i < 0) i += c->nin;
    if (i < 0 || i >= c->nin)
        return err(c, NULL, "getitem index %lld of %lld inputs", (long long)(i),
                   (long long)(c->nin));
    const HTensor *x = c->in[i];
    HTensor *o = c->out[0];
    if (x->numel != o->numel)
        return err(c, NULL, "getitem: %lld vs %lld elements", (long long)(x->numel),
                   (long long)(o->numel));
    htensor_convert(o->data, o->dtype, x->data, x->dtype, x->numel);
    return ST_OK;
}

/* out[i] = in[perm applied]: generic strided gather. */
static void gather(const HTensor *x, HTensor *o, const int64_t *in_strides_for_out)
{
    size_t s = esz(x);
    const char *src = x->data;
    char *dst = o->data;
    int r = o->rank;
    int64_t idx[NPU_MAX_RANK] = {0};
    int64_t off = 0;
    for (int64_t i = 0; i < o->numel; i++) {
        memcpy(dst + (size_t)i * s, src + (size_t)off * s, s);
        for (int d = r - 1; d >= 0; d--) {
            idx[d]++;
            off += in_strides_for_out[d];
            if (idx[d] < o->shape[d]) break;
            off -= in_strides_for_out[d] * idx[d];
            idx[d] = 0;
        }
    }
}

Status cpu_permute(const CpuCall *c)
{
    const HTensor *x = c->in[0];
    HTensor *o = c->out[0];
    int r = x->rank, perm[NPU_MAX_RANK];
    if (!node_perm(c->node, r, perm))
        return err(c, NULL, "%s dims are not a permutation of rank %lld",
                   op_short_name(c->node->op), (long long)r);
    if (c->node->op == OP_T && r > 2)
        return err(c, NULL, "t() needs rank <= 2, got %lld", (long long)r);
    if (o->numel != x->numel)
        return err(c, NULL, "permute: %lld vs %lld elements", (long long)(o->numel),
                   (long long)(x->numel));
    int64_t st[NPU_MAX_RANK], os[NPU_MAX_RANK];
    shape_strides(x->shape, r, st);
    for (int i = 0; i < r; i++)
        os[i] = st[perm[i]];
    gather(x, o, os);
    return ST_OK;
}

/* o = x broadcast to o's shape (x of o's dtype). */
static Status broadcast_into(const CpuCall *c, const HTensor *x, HTensor *o)
{
    if (x->rank > o->rank)
        return err(c, NULL, "expand to rank %lld from rank %lld", (long long)(o->rank),
                   (long long)(x->rank));
    for (int i = 0; i < x->rank; i++) {
        int64_t a = x->shape[i], b = o->shape[i + o->rank - x->rank];
        if (a != b && a != 1)
            return err(c, NULL, "expand: dim of size %lld cannot become %lld", (long long)(a),
                       (long long)(b));
    }
    int64_t st[NPU_MAX_RANK];
    bcast_strides(x->shape, x->rank, o->shape, o->rank, st);
    gather(x, o, st);
    return ST_OK;
}

Status cpu_expand(const CpuCall *c)
{
    return broadcast_into(c, c->in[0], c->out[0]);
}

/* copy(self, src): src cast to self's dtype and broadcast to its shape. */
Status cpu_copy_into(const CpuCall *c)
{
    const HTensor *x = c->in[1];
    HTensor tmp = {0};
    if (x->dtype != c->out[0]->dtype) {
        if (htensor_convert_new(&tmp, x, c->out[0]->dtype) != ST_OK) return ST_NOMEM;
        x = &tmp;
    }
    Status st = broadcast_into(c, x, c->out[0]);
    htensor_free(&tmp);
    return st;
}

Status cpu_cat(const CpuCall *c)
{
    HTensor *o = c->out[0];
    int r = o->rank;
    int dim = norm_dim(attr_int(c->node, "dim", 0), r);
    if (dim < 0) return err(c, NULL, "cat dim out of range for rank %lld", (long long)(r));
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < dim; i++)
        outer *= o->shape[i];
    for (int i = dim + 1; i < r; i++)
        inner *= o->shape[i];
    size_t s = esz(o);
    int64_t at = 0, total = 0;
    for (int k = 0; k < c->nin; k++) {
        const HTensor *x = c->in[k];
        if (x->rank == 1 && x->numel == 0) continue; /* legacy empty tensor */
        if (x->rank != r)
            return err(c, NULL, "cat input %lld has rank %lld", (long long)(k),
                       (long long)(x->rank));
        total += x->shape[dim];
    }
    if (total != o->shape[dim])
        return err(c, NULL, "cat gives %lld along the dim, declared %lld", (long long)(total),
                   (long long)(o->shape[dim]));
    for (int k = 0; k < c->nin; k++) {
        const HTensor *x = c->in[k];
        if (x->rank == 1 && x->numel == 0) continue;
        int64_t len = x->shape[dim] * inner;
        HTensor tmp;
        const HTensor *src = x;
        if (x->dtype != o->dtype) {
            if (htensor_convert_new(&tmp, x, o->dtype) != ST_OK) return ST_NOMEM;
            src = &tmp;
        }
        for (int64_t b = 0; b < outer; b++)
            memcpy((char *)o->data + (size_t)(b * o->shape[dim] * inner + at * inner) * s,
                   (const char *)src->data + (size_t)(b * len) * s, (size_t)len * s);
        if (src == &tmp) htensor_free(&tmp);
        at += x->shape[dim];
    }
    return ST_OK;
}

Status cpu_slice(const CpuCall *c)
{
    const HTensor *x = c->in[0];
    HTensor *o = c->out[0];
    int r = x->rank;
    int dim = norm_dim(attr_int(c->node, "dim", 0), r);
    if (dim < 0) return err(c, NULL, "dim out of range for rank %lld", (long long)(r));
    int64_t size = x->shape[dim], start, step = 1;
    if (c->node->op == OP_SELECT) {
        start = attr_int(c->node, "index", 0);
        if (start < 0) start += size;
        if (start < 0 || start >= size)
            return err(c, NULL, "select index %lld out of range for size %lld",
                       (long long)(attr_int(c->node, "index", 0)), (long long)(size));
    } else {
        start = attr_present(c->node, "start") ? attr_int(c->node, "start", 0) : 0;
        step = attr_present(c->node, "step") ? attr_int(c->node, "step", 1) : 1;
        if (step <= 0)
            return err(c, NULL, "slice step %lld must be positive%lld", (long long)(step),
                       (long long)(0));
        if (start < 0) start += size;
        if (start < 0) start = 0;
        if (start > size) start = size;
    }
    int64_t st[NPU_MAX_RANK], os[NPU_MAX_RANK];
    shape_strides(x->shape, r, st);
    /* output dims map to input dims (select removes `dim`) */
    int k = 0;
    for (int i = 0; i < r; i++) {
        if (c->node->op == OP_SELECT && i == dim) continue;
        if (k < o->rank) os[k++] = i == dim ? st[i] * step : st[i];
    }
    HTensor view = *x;
    view.data = (char *)x->data + (size_t)(start * st[dim]) * esz(x);
    if (o->numel == 0) return ST_OK;
    gather(&view, o, os);
    return ST_OK;
}

/* split: output k is the k-th chunk along dim (compiler/shape/shape_views.c shape_split_sizes). */
Status cpu_split(const CpuCall *c)
{
    const HTensor *x = c->in[0];
    int r = x->rank;
    int dim = norm_dim(attr_int(c->node, "dim", 0), r);
    if (dim < 0) return err(c, NULL, "dim out of range for rank %lld", (long long)r);
    int64_t sizes[64];
    const char *why = NULL;
    int cnt = shape_split_sizes(c->node, x->shape[dim], sizes, 64, &why);
    if (cnt < 0) return err(c, NULL, "%s", why);
    if (cnt != c->nout) return err(c, NULL, "split makes %d chunks for %d outputs", cnt, c->nout);
    int64_t st[NPU_MAX_RANK];
    shape_strides(x->shape, r, st);
    int64_t start = 0;
    for (int k = 0; k < cnt; k++) {
        HTensor *o = c->out[k];
        if (o->rank != r || o->shape[dim] != sizes[k])
            return err(c, node_output(c->g, c->node, k)->name,
                       "chunk %d does not have %lld rows along dim %d", k, (long long)sizes[k],
                       dim);
        HTensor view = *x;
        view.data = (char *)x->data + (size_t)(start * st[dim]) * esz(x);
        if (o->numel > 0) gather(&view, o, st);
        start += sizes[k];
    }
    return ST_OK;
}

Status cpu_index_copy(const CpuCall *c)
{
    const HTensor *self = c->in[0], *index = c->in[1], *src = c->in[2];
    HTensor *o = c->out[0];
    int r = self->rank;
    int dim = norm_dim(attr_int(c->node, "dim", 0), r > 0 ? r : 1);
    if (dim < 0) return err(c, NULL, "dim out of range for rank %lld", (long long)(r));
    memcpy(o->data, self->data, (size_t)self->numel * esz(self));
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < dim; i++)
        outer *= self->shape[i];
    for (int i = dim + 1; i < r; i++)
        inner *= self->shape[i];
    int64_t n = index->numel, size = r ? self->shape[dim] : 1;
    /* 0-dim self or source counts as one slice of one element, as in ATen */
    bool flat = r <= 1 && src->rank <= 1 && (src->rank ? src->shape[0] : 1) == n;
    if (!flat && (src->rank != r || src->shape[dim] != n))
        return err(c, node_input(c->g, c->node, 2)->name, "source has %lld slices for %lld indices",
                   (long long)(src->rank == r ? src->shape[dim] : -1), (long long)(n));
    size_t s = esz(o);
    for (int64_t j = 0; j < n; j++) {
        int64_t at = htensor_get_i(index, j);
        if (at < 0) at += size;
        if (at < 0 || at >= size)
            return err(c, node_input(c->g, c->node, 1)->name,
                       "index %lld out of range for size %lld",
                       (long long)(htensor_get_i(index, j)), (long long)(size));
        for (int64_t b = 0; b < outer; b++)
            memcpy((char *)o->data + (size_t)((b * size + at) * inner) * s,
                   (const char *)src->data + (size_t)((b * n + j) * inner) * s, (size_t)inner * s);
    }
    return ST_OK;
}

Status cpu_embedding(const CpuCall *c)
{
    const HTensor *w = c->in[0], *ids = c->in[1];
    HTensor *o = c->out[0];
    if (w->rank != 2)
        return err(c, NULL, "embedding weight must be 2-D, got rank %lld", (long long)(w->rank));
    int64_t v = w->shape[0], dd = w->shape[1];
    if (o->numel != ids->numel * dd)
        return err(c, NULL, "embedding output has %lld elements, expected %lld",
                   (long long)(o->numel), (long long)(ids->numel * dd));
    size_t s = esz(w);
    for (int64_t i = 0; i < ids->numel; i++) {
        int64_t id = htensor_get_i(ids, i);
        if (id < 0 || id >= v)
            return err(c, node_input(c->g, c->node, 1)->name,
                       "token id %lld out of range [0, %lld)", (long long)(id), (long long)(v));
        memcpy((char *)o->data + (size_t)(i * dd) * s,
               (const char *)w->data + (size_t)(id * dd) * s, (size_t)dd * s);
    }
    return ST_OK;
}

Status cpu_source(const CpuCall *c)
{
    HTensor *o = c->out[0];
    const Node *n = c->node;
    double fill = 0;
    if (n->op == OP_ARANGE) {
        double start = 0, end, step = 1;
        if (attr_present(n, "start")) start = attr_float(n, "start", 0);
        end = attr_float(n, "end", 0);
        if (attr_present(n, "step")) step = attr_float(n, "step", 1);
        if (step == 0) return err(c, NULL, "arange step is 0");
        double len = (end - start) / step;
        int64_t want = len > 0 ? (int64_t)(len + (len - (double)(int64_t)len > 0 ? 1 : 0)) : 0;
        if (want != o->numel)
            return err(c, NULL, "arange gives %lld elements, declared %lld", (long long)(want),
                       (long long)(o->numel));
        for (int64_t i = 0; i < o->numel; i++) {
            double v = start + step * (double)i;
            if (o->dtype == DT_F32)
                ((float *)o->data)[i] = (float)v;
            else if (o->dtype == DT_I64)
                ((int64_t *)o->data)[i] = (int64_t)v;
            else
                ((uint8_t *)o->data)[i] = v != 0;
        }
        return ST_OK;
    }
    if (n->op == OP_ONES) fill = 1;
    if (n->op == OP_FULL) fill = attr_float(n, "fill_value", 0);
    /* any dtype (new_zeros of a float16 tensor is float16): a float value truncated into an
     * integer one, nonzero true */
    size_t es = dtype_size(o->dtype);
    for (int64_t i = 0; i < o->numel; i++)
        htensor_convert((char *)o->data + (size_t)i * es, o->dtype, &fill, DT_F64, 1);
    return ST_OK;
}
