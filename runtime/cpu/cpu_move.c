/* CPU reference data movement beyond views: stack, flip, roll, tril/triu, repeat,
 * repeat_interleave and pixel_shuffle. Every output element is copied from one input
 * element (tril/triu: or zero), by element size, so every dtype moves unchanged. */
#include <string.h>
#include "runtime/cpu/cpu_kernels.h"

#define err(c, ...) diag_error((c)->diag, (c)->file, (c)->node->name, NULL, __VA_ARGS__)

/* Output element i's coordinates advance in row-major order. */
static void step(int64_t *pos, const int64_t *shape, int rank)
{
    for (int a = rank - 1; a >= 0; a--) {
        if (++pos[a] < shape[a]) return;
        pos[a] = 0;
    }
}

static void put(HTensor *o, int64_t i, const HTensor *x, int64_t at)
{
    size_t s = dtype_size(o->dtype);
    htensor_convert((char *)o->data + (size_t)i * s, o->dtype,
                    (const char *)x->data + (size_t)at * dtype_size(x->dtype), x->dtype, 1);
}

Status cpu_stack(const CpuCall *c)
{
    HTensor *o = c->out[0];
    int d = norm_dim(attr_int(c->node, "dim", 0), o->rank);
    if (d < 0) return err(c, "stack: bad dim");
    int64_t pos[NPU_MAX_RANK] = {0}, xs[NPU_MAX_RANK];
    shape_strides(c->in[0]->shape, c->in[0]->rank, xs);
    for (int64_t i = 0; i < o->numel; i++, step(pos, o->shape, o->rank)) {
        int64_t at = 0;
        for (int a = 0, k = 0; a < o->rank; a++)
            if (a != d) at += pos[a] * xs[k++];
        put(o, i, c->in[pos[d]], at);
    }
    return ST_OK;
}

/* Reads a dims list into flags per dim of rank r; false on a bad dim. */
static bool dim_flags(const Node *n, const char *key, int r, bool *f, int *cnt)
{
    int64_t d[NPU_MAX_RANK];
    *cnt = attr_present(n, key) ? attr_ints(n, key, d, NPU_MAX_RANK) : 0;
    memset(f, 0, sizeof(bool) * NPU_MAX_RANK);
    for (int i = 0; i < *cnt; i++) {
        int k = norm_dim(d[i], r > 0 ? r : 1);
        if (k < 0) return false;
        if (r > 0) f[k] = true;
    }
    return *cnt >= 0;
}

Status cpu_flip(const CpuCall *c)
{
    const HTensor *x = c->in[0];
    HTensor *o = c->out[0];
    bool f[NPU_MAX_RANK];
    int cnt;
    if (!dim_flags(c->node, "dims", x->rank, f, &cnt)) return err(c, "flip: bad dims");
    int64_t pos[NPU_MAX_RANK] = {0}, xs[NPU_MAX_RANK];
    shape_strides(x->shape, x->rank, xs);
    for (int64_t i = 0; i < o->numel; i++, step(pos, o->shape, o->rank)) {
        int64_t at = 0;
        for (int a = 0; a < x->rank; a++)
            at += (f[a] ? x->shape[a] - 1 - pos[a] : pos[a]) * xs[a];
        put(o, i, x, at);
    }
    return ST_OK;
}

static int64_t wrap(int64_t v, int64_t n)
{
    return n > 0 ? ((v % n) + n) % n : 0;
}

Status cpu_roll(const CpuCall *c)
{
    const HTensor *x = c->in[0];
    HTensor *o = c->out[0];
    int64_t sh[NPU_MAX_RANK], d[NPU_MAX_RANK], shift[NPU_MAX_RANK] = {0};
    int ns = attr_ints(c->node, "shifts", sh, NPU_MAX_RANK);
    int nd = attr_present(c->node, "dims") ? attr_ints(c->node, "dims", d, NPU_MAX_RANK) : 0;
    if (ns < 1 || nd < 0) return err(c, "roll: bad shifts or dims");
    if (nd == 0) { /* the flattened tensor */
        for (int64_t i = 0; i < o->numel; i++)
            put(o, i, x, wrap(i - sh[0], x->numel));
        return ST_OK;
    }
    for (int i = 0; i < nd && i < ns; i++) {
        int k = norm_dim(d[i], x->rank);
        if (k < 0) return err(c, "roll: bad dim");
        shift[k] += sh[i];
    }
    int64_t pos[NPU_MAX_RANK] = {0}, xs[NPU_MAX_RANK];
    shape_strides(x->shape, x->rank, xs);
    for (int64_t i = 0; i < o->numel; i++, step(pos, o->shape, o->rank)) {
        int64_t at = 0;
        for (int a = 0; a < x->rank; a++)
            at += wrap(pos[a] - shift[a], x->shape[a]) * xs[a];
        put(o, i, x, at);
    }
    return ST_OK;
}

Status cpu_tri(const CpuCall *c)
{
    const HTensor *x = c->in[0];
    HTensor *o = c->out[0];
    bool lower = strstr(c->node->aten ? c->node->aten : "", "tril") != NULL;
    int64_t diag = attr_int(c->node, "diagonal", 0), pos[NPU_MAX_RANK] = {0};
    size_t s = dtype_size(o->dtype);
    for (int64_t i = 0; i < o->numel; i++, step(pos, o->shape, o->rank)) {
        int64_t r = pos[o->rank - 2], k = pos[o->rank - 1];
        bool keep = lower ? k - r <= diag : k - r >= diag;
        if (keep)
            put(o, i, x, i);
        else
            memset((char *)o->data + (size_t)i * s, 0, s);
    }
    return ST_OK;
}

Status cpu_repeat(const CpuCall *c)
{
    const HTensor *x = c->in[0];
    HTensor *o = c->out[0];
    int lead = o->rank - x->rank;
    int64_t pos[NPU_MAX_RANK] = {0}, xs[NPU_MAX_RANK];
    shape_strides(x->shape, x->rank, xs);
    for (int64_t i = 0; i < o->numel; i++, step(pos, o->shape, o->rank)) {
        int64_t at = 0;
        for (int a = 0; a < x->rank; a++)
            at += (pos[lead + a] % x->shape[a]) * xs[a];
        put(o, i, x, at);
    }
    return ST_OK;
}

/* repeat_interleave.self_Tensor: element j of the (flattened or `dim`) line repeated
 * repeats[j] times (a one-element repeats for all); their sum must be output_size. */
static Status repeat_by_tensor(const CpuCall *c)
{
    const HTensor *x = c->in[0], *r = c->in[1];
    HTensor *o = c->out[0];
    bool flat = !attr_present(c->node, "dim") || x->rank == 0;
    int d = flat ? 0 : norm_dim(attr_int(c->node, "dim", 0), x->rank);
    int64_t len = flat ? x->numel : x->shape[d], outer = 1, inner = 1, total = 0;
    for (int i = 0; !flat && i < d; i++)
        outer *= x->shape[i];
    for (int i = d + 1; !flat && i < x->rank; i++)
        inner *= x->shape[i];
    if (d < 0 || (r->numel != len && r->numel != 1))
        return err(c, "repeat_interleave: repeats must have one count per element along dim");
    for (int64_t j = 0; j < len; j++) {
        int64_t k = htensor_get_i(r, r->numel == 1 ? 0 : j);
        if (k < 0) return err(c, "repeat_interleave: repeats can not be negative");
        total += k;
    }
    int64_t olen = flat ? o->numel : o->shape[d];
    if (total != olen)
        return err(c, "repeat_interleave: the repeats add up to %lld, output_size says %lld",
                   (long long)total, (long long)olen);
    for (int64_t a = 0, at = 0; a < outer; a++, at = 0)
        for (int64_t j = 0; j < len; j++)
            for (int64_t k = htensor_get_i(r, r->numel == 1 ? 0 : j); k > 0; k--, at++)
                for (int64_t b = 0; b < inner; b++)
                    put(o, (a * olen + at) * inner + b, x, (a * len + j) * inner + b);
    return ST_OK;
}

Status cpu_repeat_interleave(const CpuCall *c)
{
    const HTensor *x = c->in[0];
    HTensor *o = c->out[0];
    if (c->nin == 2) return repeat_by_tensor(c);
    int64_t rep = attr_int(c->node, "repeats", 1);
    if (rep < 1) return ST_OK; /* empty output */
    if (!attr_present(c->node, "dim") || x->rank == 0) {
        for (int64_t i = 0; i < o->numel; i++)
            put(o, i, x, i / rep);
        return ST_OK;
    }
    int d = norm_dim(attr_int(c->node, "dim", 0), x->rank);
    if (d < 0) return err(c, "repeat_interleave: bad dim");
    int64_t pos[NPU_MAX_RANK] = {0}, xs[NPU_MAX_RANK];
    shape_strides(x->shape, x->rank, xs);
    for (int64_t i = 0; i < o->numel; i++, step(pos, o->shape, o->rank)) {
        int64_t at = 0;
        for (int a = 0; a < x->rank; a++)
            at += (a == d ? pos[a] / rep : pos[a]) * xs[a];
        put(o, i, x, at);
    }
    return ST_OK;
}

/* out[.., c, h*r + i, w*r + j] = x[.., c*r*r + i*r + j, h, w] */
Status cpu_pixel_shuffle(const CpuCall *c)
{
    const HTensor *x = c->in[0];
    HTensor *o = c->out[0];
    int64_t f = attr_int(c->node, "upscale_factor", 1);
    int r = o->rank;
    if (f < 1 || r < 3) return err(c, "pixel_shuffle: bad upscale_factor");
    int64_t pos[NPU_MAX_RANK] = {0}, xs[NPU_MAX_RANK];
    shape_strides(x->shape, x->rank, xs);
    for (int64_t i = 0; i < o->numel; i++, step(pos, o->shape, r)) {
        int64_t at = 0;
        for (int a = 0; a < r - 3; a++)
            at += pos[a] * xs[a];
        int64_t ch = pos[r - 3] * f * f + (pos[r - 2] % f) * f + pos[r - 1] % f;
        at += ch * xs[r - 3] + (pos[r - 2] / f) * xs[r - 2] + (pos[r - 1] / f) * xs[r - 1];
        put(o, i, x, at);
    }
    return ST_OK;
}
