/* CPU reference of the ops with two or more outputs besides split: max.dim/min.dim, topk and
 * sort (values and int64 indices along a dim) and unbind (one output per slice). Along the dim
 * a tensor is outer x len x inner; NaN counts as the largest value, as in ATen. */
#include <stdlib.h>
#include <string.h>
#include "runtime/cpu/cpu_kernels.h"

#define err(c, ...) diag_error((c)->diag, (c)->file, (c)->node->name, NULL, __VA_ARGS__)

static void split_dim(const HTensor *x, int d, int64_t *outer, int64_t *len, int64_t *inner)
{
    *outer = *inner = 1;
    *len = x->rank ? x->shape[d] : 1;
    for (int i = 0; i < d; i++)
        *outer *= x->shape[i];
    for (int i = d + 1; i < x->rank; i++)
        *inner *= x->shape[i];
}

static void put(HTensor *o, int64_t i, const HTensor *x, int64_t at)
{
    size_t s = dtype_size(o->dtype);
    htensor_convert((char *)o->data + (size_t)i * s, o->dtype,
                    (const char *)x->data + (size_t)at * dtype_size(x->dtype), x->dtype, 1);
}

static void put_index(HTensor *o, int64_t i, int64_t v)
{
    htensor_convert((char *)o->data + (size_t)i * dtype_size(o->dtype), o->dtype, &v, DT_I64, 1);
}

/* a before b in descending order (NaN first); ties keep the index order */
static bool greater(double a, double b)
{
    return (a != a && b == b) || a > b;
}

Status cpu_max_dim(const CpuCall *c)
{
    const HTensor *x = c->in[0];
    bool mn = strstr(c->node->aten ? c->node->aten : "", "min") != NULL;
    int d = norm_dim(attr_int(c->node, "dim", 0), x->rank > 0 ? x->rank : 1);
    if (d < 0) return err(c, "max/min: bad dim");
    int64_t outer, len, inner;
    split_dim(x, d, &outer, &len, &inner);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            int64_t best = 0, base = o * len * inner + in;
            double bv = htensor_get_f(x, base);
            for (int64_t j = 1; j < len && bv == bv; j++) {
                double v = htensor_get_f(x, base + j * inner);
                if (v != v || (mn ? v < bv : v > bv)) best = j, bv = v;
            }
            put(c->out[0], o * inner + in, x, base + best * inner);
            put_index(c->out[1], o * inner + in, best);
        }
    return ST_OK;
}

typedef struct Key {
    double v;
    int64_t i;
} Key;

static int cmp_desc(const void *a, const void *b)
{
    const Key *x = a, *y = b;
    if (greater(x->v, y->v)) return -1;
    if (greater(y->v, x->v)) return 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static int cmp_asc(const void *a, const void *b)
{
    const Key *x = a, *y = b;
    if (greater(y->v, x->v)) return -1;
    if (greater(x->v, y->v)) return 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* sort and topk: each line along dim sorted (stable: ties by index), the first `keep` kept. */
static Status sort_lines(const CpuCall *c, int d, bool desc, int64_t keep)
{
    const HTensor *x = c->in[0];
    int64_t outer, len, inner;
    split_dim(x, d, &outer, &len, &inner);
    Key *k = malloc(sizeof *k * (size_t)(len ? len : 1));
    if (!k) return ST_NOMEM;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            int64_t base = o * len * inner + in;
            for (int64_t j = 0; j < len; j++)
                k[j] = (Key){htensor_get_f(x, base + j * inner), j};
            qsort(k, (size_t)len, sizeof *k, desc ? cmp_desc : cmp_asc);
            for (int64_t j = 0; j < keep; j++) {
                int64_t at = (o * keep + j) * inner + in;
                put(c->out[0], at, x, base + k[j].i * inner);
                put_index(c->out[1], at, k[j].i);
            }
        }
    free(k);
    return ST_OK;
}

Status cpu_sort(const CpuCall *c)
{
    const HTensor *x = c->in[0];
    int d = norm_dim(attr_int(c->node, "dim", -1), x->rank > 0 ? x->rank : 1);
    if (d < 0) return err(c, "sort: bad dim");
    return sort_lines(c, d, attr_bool(c->node, "descending", false), x->rank ? x->shape[d] : 1);
}

/* topk's order among equal values is ATen's implementation detail: here the lower index first */
Status cpu_topk(const CpuCall *c)
{
    const HTensor *x = c->in[0];
    int d = norm_dim(attr_int(c->node, "dim", -1), x->rank > 0 ? x->rank : 1);
    if (d < 0) return err(c, "topk: bad dim");
    return sort_lines(c, d, attr_bool(c->node, "largest", true), attr_int(c->node, "k", 1));
}

Status cpu_unbind(const CpuCall *c)
{
    const HTensor *x = c->in[0];
    int d = norm_dim(attr_int(c->node, "dim", 0), x->rank);
    if (d < 0) return err(c, "unbind: bad dim");
    int64_t outer, len, inner;
    split_dim(x, d, &outer, &len, &inner);
    for (int64_t j = 0; j < len && j < c->nout; j++)
        for (int64_t o = 0; o < outer; o++)
            for (int64_t in = 0; in < inner; in++)
                put(c->out[j], o * inner + in, x, (o * len + j) * inner + in);
    return ST_OK;
}
