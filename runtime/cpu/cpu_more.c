/* CPU reference of the ops real torchvision and transformers exports add: fills of a tensor
 * (zero_, fill) or a region of it (slice_fill), diff, advanced indexing, gather, pad,
 * group_norm, 2-D upsampling, einsum and scaled_dot_product_attention. ATen semantics; sums in
 * double, one rounding to float32 on store. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/shape/shape.h"
#include "runtime/cpu/cpu_kernels.h"

#define err(c, tensor, ...) diag_error((c)->diag, (c)->file, (c)->node->name, tensor, __VA_ARGS__)

static const char *out_name(const CpuCall *c)
{
    return node_output(c->g, c->node, 0)->name;
}

/* v as an int64 without undefined behaviour: NaN 0, out of range saturated. */
static int64_t to_i64(double v)
{
    return v != v ? 0 : v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : (int64_t)v;
}

/* Stores value v (a float, or an int when the output is integer) at element i of o. */
static void st_val(HTensor *o, int64_t i, double f, int64_t iv, bool is_int)
{
    size_t s = dtype_size(o->dtype);
    if (is_int)
        htensor_convert((char *)o->data + (size_t)i * s, o->dtype, &iv, DT_I64, 1);
    else
        htensor_convert((char *)o->data + (size_t)i * s, o->dtype, &f, DT_F64, 1);
}

/* The value a fill writes, as an attribute: input 1 when the node has one (a 0-dim tensor:
 * fill.Tensor, slice_fill; an int or bool tensor as an int), else attribute `key`; kind
 * ATTR_NONE when it is neither a number nor present. */
static Attr fill_value(const CpuCall *c, const char *key)
{
    if (c->nin > 1) {
        const HTensor *t = c->in[1];
        if (dtype_is_float(t->dtype)) return (Attr){.kind = ATTR_FLOAT, .f = htensor_get_f(t, 0)};
        int64_t i = htensor_get_i(t, 0);
        return (Attr){.kind = ATTR_INT, .i = i, .f = (double)i};
    }
    const Attr *v = node_attr(c->node, key);
    if (v && (v->kind == ATTR_INT || v->kind == ATTR_FLOAT || v->kind == ATTR_BOOL)) return *v;
    return (Attr){.kind = ATTR_NONE};
}

/* Stores fill value v at element i of o, as ATen's fill casts it: a float into an integer
 * tensor truncated, into bool nonzero. */
static void st_fill(HTensor *o, int64_t i, const Attr *v)
{
    bool is_int = !dtype_is_float(o->dtype);
    int64_t iv = v->kind == ATTR_FLOAT ? to_i64(v->f) : v->i;
    double f = v->kind == ATTR_FLOAT && is_int && o->dtype != DT_BOOL ? (double)iv : v->f;
    st_val(o, i, f, iv, is_int && f == (double)iv);
}

/* The fill value: 0 for zero_, `value` (fill.Scalar) or input 1 (fill.Tensor). */
Status cpu_fill_like(const CpuCall *c)
{
    bool zero = c->node->aten && strstr(c->node->aten, "zero_");
    Attr v = zero ? (Attr){.kind = ATTR_INT} : fill_value(c, "value");
    if (v.kind == ATTR_NONE) return err(c, NULL, "attribute 'value' must be a number");
    HTensor *o = c->out[0];
    for (int64_t i = 0; i < o->numel; i++)
        st_fill(o, i, &v);
    return ST_OK;
}

/* npu.slice_fill: x, with the region shape_slice_box reads set to `value` (or input 1). */
Status cpu_slice_fill(const CpuCall *c)
{
    const HTensor *x = c->in[0];
    HTensor *o = c->out[0];
    SliceBox b;
    const char *why = NULL;
    if (!shape_slice_box(c->node, x->rank, x->shape, &b, &why)) return err(c, NULL, "%s", why);
    Attr v = fill_value(c, "value");
    if (v.kind == ATTR_NONE) v = (Attr){.kind = ATTR_INT}; /* absent: zero_ */
    memcpy(o->data, x->data, (size_t)o->numel * dtype_size(o->dtype));
    for (int64_t i = 0; i < o->numel; i++) {
        int64_t pos[NPU_MAX_RANK], r = i;
        for (int a = x->rank - 1; a >= 0; a--) {
            pos[a] = r % x->shape[a];
            r /= x->shape[a];
        }
        bool in = true;
        for (int l = 0; in && l < b.n; l++) { /* each slice's index of the one before's */
            int64_t p = pos[b.dim[l]] - b.start[l];
            in = p >= 0 && p % b.step[l] == 0 && p / b.step[l] < b.count[l];
            pos[b.dim[l]] = in ? p / b.step[l] : 0;
        }
        if (in) st_fill(o, i, &v);
    }
    return ST_OK;
}

/* Splits x at dim into outer, len, inner (row-major). */
static void split3(const HTensor *x, int dim, int64_t *outer, int64_t *len, int64_t *inner)
{
    *outer = *inner = 1;
    for (int i = 0; i < dim; i++)
        *outer *= x->shape[i];
    *len = x->shape[dim];
    for (int i = dim + 1; i < x->rank; i++)
        *inner *= x->shape[i];
}

/* diff: cat(prepend, x, append) along dim, then n times a[i+1] - a[i] (!= for bool). */
Status cpu_diff(const CpuCall *c)
{
    const HTensor *x = c->in[0];
    HTensor *o = c->out[0];
    int d = norm_dim(attr_int(c->node, "dim", -1), x->rank);
    int64_t n = attr_int(c->node, "n", 1);
    if (d < 0 || n < 0) return err(c, NULL, "diff: bad dim or n");
    int64_t outer, xl, inner, total = 0;
    split3(x, d, &outer, &xl, &inner);
    for (int i = 0; i < c->nin; i++)
        total += c->in[i]->shape[d];
    bool fl = dtype_is_float(o->dtype), bl = o->dtype == DT_BOOL;
    double *buf = malloc(sizeof(double) * (size_t)(outer * total * inner + 1));
    if (!buf) return ST_NOMEM;
    /* the concatenation, in order prepend, x, append (the IR lists x first) */
    int order[3] = {1, 0, 2}, at = 0;
    for (int k = 0; k < 3; k++) {
        int i = c->nin == 1 ? (k == 1 ? 0 : -1) : order[k];
        if (i < 0 || i >= c->nin) continue;
        const HTensor *t = c->in[i];
        int64_t tl = t->shape[d];
        for (int64_t a = 0; a < outer; a++)
            for (int64_t l = 0; l < tl; l++)
                for (int64_t b = 0; b < inner; b++) {
                    int64_t src = (a * tl + l) * inner + b;
                    buf[(a * total + at + l) * inner + b] =
                        fl ? htensor_get_f(t, src) : (double)htensor_get_i(t, src);
                }
        at += tl;
    }
    int64_t len = total;
    for (int64_t r = 0; r < n && len > 0; r++, len--)
        for (int64_t a = 0; a < outer; a++)
            for (int64_t l = 0; l + 1 < len; l++)
                for (int64_t b = 0; b < inner; b++) {
                    double *p = &buf[(a * total + l) * inner + b];
                    double nx = p[inner];
                    *p = bl ? (double)(nx != *p) : fl ? (double)((float)nx - (float)*p) : nx - *p;
                }
    if (o->numel != outer * (len > 0 ? len : 0) * inner) {
        free(buf);
        return err(c, out_name(c), "diff: the declared output has %lld elements",
                   (long long)o->numel);
    }
    for (int64_t a = 0; a < outer; a++)
        for (int64_t l = 0; l < len; l++)
            for (int64_t b = 0; b < inner; b++) {
                double v = buf[(a * total + l) * inner + b];
                st_val(o, (a * len + l) * inner + b, v, fl ? 0 : to_i64(v), !fl);
            }
    free(buf);
    return ST_OK;
}

/* Normalises index v into [0, size); false when out of range. */
static bool wrap_index(int64_t *v, int64_t size)
{
    if (*v < 0) *v += size;
    return *v >= 0 && *v < size;
}

/* x[i0, .., ik-1]: the index tensors broadcast to the output's leading dims. */
Status cpu_index(const CpuCall *c)
{
    const HTensor *x = c->in[0];
    HTensor *o = c->out[0];
    int k = c->nin - 1, rb = o->rank - (x->rank - k);
    if (rb < 0) return err(c, out_name(c), "index: output rank too small");
    int64_t inner = 1, xst[NPU_MAX_RANK], ist[8][NPU_MAX_RANK];
    for (int i = k; i < x->rank; i++)
        inner *= x->shape[i];
    shape_strides(x->shape, x->rank, xst);
    for (int j = 0; j < k; j++)
        bcast_strides(c->in[1 + j]->shape, c->in[1 + j]->rank, o->shape, rb, ist[j]);
    int64_t rows = shape_numel(o->shape, rb);
    size_t es = dtype_size(o->dtype);
    for (int64_t r = 0; r < rows; r++) {
        int64_t off = 0;
        for (int j = 0; j < k; j++) {
            int64_t v = htensor_get_i(c->in[1 + j], bcast_offset(r, o->shape, rb, ist[j]));
            int64_t raw = v;
            if (!wrap_index(&v, x->shape[j]))
                return err(c, node_input(c->g, c->node, 1 + j)->name,
                           "index %lld is out of bounds for dimension %d with size %lld",
                           (long long)raw, j, (long long)x->shape[j]);
            off += v * xst[j];
        }
        htensor_convert((char *)o->data + (size_t)(r * inner) * es, o->dtype,
                        (const char *)x->data + (size_t)off * dtype_size(x->dtype), x->dtype,
                        inner);
    }
    return ST_OK;
}

/* out[p] = x[p with dim replaced by index[p]]. */
Status cpu_gather(const CpuCall *c)
{
    const HTensor *x = c->in[0], *idx = c->in[1];
    HTensor *o = c->out[0];
    int d = norm_dim(attr_int(c->node, "dim", 0), x->rank > 0 ? x->rank : 1);
    if (d < 0 || (x->rank && idx->rank != x->rank))
        return err(c, NULL, "gather: bad dim or index rank");
    int64_t xst[NPU_MAX_RANK], pos[NPU_MAX_RANK] = {0};
    shape_strides(x->shape, x->rank, xst);
    size_t es = dtype_size(o->dtype);
    for (int64_t i = 0; i < o->numel; i++) {
        int64_t v = htensor_get_i(idx, i), raw = v, off = 0;
        /* unlike advanced indexing, gather does not wrap negative indices: ATen refuses them */
        if (v < 0 || !wrap_index(&v, x->rank ? x->shape[d] : 1))
            return err(c, node_input(c->g, c->node, 1)->name,
                       "index %lld is out of bounds for dimension %d", (long long)raw, d);
        for (int a = 0; a < x->rank; a++)
            off += (a == d ? v : pos[a]) * xst[a];
        htensor_convert((char *)o->data + (size_t)i * es, o->dtype,
                        (const char *)x->data + (size_t)off * dtype_size(x->dtype), x->dtype, 1);
        for (int a = idx->rank - 1; a >= 0; a--) {
            if (++pos[a] < idx->shape[a]) break;
            pos[a] = 0;
        }
    }
    return ST_OK;
}

/* The source index of output position i of a padded dim, or -1 for the constant. */
static int64_t pad_src(int mode, int64_t i, int64_t lo, int64_t size)
{
    int64_t s = i - lo;
    if (s >= 0 && s < size) return s;
    switch (mode) {
    case 1: /* reflect: mirror without repeating the edge */
        if (size == 1) return 0;
        s = s < 0 ? -s : s;
        s %= 2 * (size - 1);
        return s < size ? s : 2 * (size - 1) - s;
    case 2:
        return s < 0 ? 0 : size - 1; /* replicate */
    case 3:
        return ((s % size) + size) % size; /* circular */
    default:
        return -1;
    }
}

Status cpu_pad(const CpuCall *c)
{
    const HTensor *x = c->in[0];
    HTensor *o = c->out[0];
    int64_t p[2 * NPU_MAX_RANK] = {0}, lo[NPU_MAX_RANK] = {0};
    int k = attr_ints(c->node, "pad", p, 2 * NPU_MAX_RANK);
    const char *ms = attr_str(c->node, "mode", "constant");
    int mode = !strcmp(ms, "reflect")     ? 1
               : !strcmp(ms, "replicate") ? 2
               : !strcmp(ms, "circular")  ? 3
                                          : 0;
    if (k < 0 || k % 2 || k / 2 > x->rank || o->rank != x->rank)
        return err(c, NULL, "pad: bad `pad`");
    for (int j = 0; j < k / 2; j++)
        lo[x->rank - 1 - j] = p[2 * j];
    const Attr *va = node_attr(c->node, "value");
    double fv = va && va->kind != ATTR_NONE ? va->f : 0.0;
    int64_t iv = va && va->kind == ATTR_INT ? va->i : to_i64(fv);
    bool is_int = !dtype_is_float(o->dtype);
    int64_t xst[NPU_MAX_RANK], pos[NPU_MAX_RANK] = {0};
    shape_strides(x->shape, x->rank, xst);
    size_t es = dtype_size(o->dtype);
    for (int64_t i = 0; i < o->numel; i++) {
        int64_t off = 0;
        for (int a = 0; a < x->rank && off >= 0; a++) {
            int64_t s = pad_src(mode, pos[a], lo[a], x->shape[a]);
            off = s < 0 ? -1 : off + s * xst[a];
        }
        if (off < 0)
            st_val(o, i, fv, iv, is_int);
        else
            htensor_convert((char *)o->data + (size_t)i * es, o->dtype,
                            (const char *)x->data + (size_t)off * dtype_size(x->dtype), x->dtype,
                            1);
        for (int a = o->rank - 1; a >= 0; a--) {
            if (++pos[a] < o->shape[a]) break;
            pos[a] = 0;
        }
    }
    return ST_OK;
}

/* Per image and group, (x - mean) / sqrt(var + eps) (biased variance), then the per-channel
 * affine w, b (either may be NULL). */
static Status norm_groups(const CpuCall *c, int64_t groups, const HTensor *w, const HTensor *b)
{
    const HTensor *x = c->in[0];
    HTensor *o = c->out[0];
    double eps = attr_float(c->node, "eps", 1e-5);
    if (x->rank < 2 || groups < 1 || x->shape[1] % groups)
        return err(c, NULL, "group_norm: bad groups");
    int64_t n = x->shape[0], ch = x->shape[1], nc = n * ch, sp = nc > 0 ? x->numel / nc : 0;
    int64_t cpg = ch / groups, m = cpg * sp;
    const float *xd = x->data;
    float *yd = o->data;
    for (int64_t i = 0; i < n * groups; i++) {
        const float *xp = xd + i * m;
        double sum = 0, sq = 0;
        for (int64_t j = 0; j < m; j++)
            sum += xp[j];
        double mean = sum / (double)m;
        for (int64_t j = 0; j < m; j++)
            sq += (xp[j] - mean) * (xp[j] - mean);
        double rstd = 1.0 / sqrt(sq / (double)m + eps);
        for (int64_t j = 0; j < m; j++) {
            int64_t cc = (i % groups) * cpg + j / sp;
            double v = (xp[j] - mean) * rstd;
            if (w) v *= ((const float *)w->data)[cc];
            if (b) v += ((const float *)b->data)[cc];
            yd[i * m + j] = (float)v;
        }
    }
    return ST_OK;
}

Status cpu_group_norm(const CpuCall *c)
{
    return norm_groups(c, attr_int(c->node, "num_groups", 1), c->nin > 1 ? c->in[1] : NULL,
                       c->nin > 2 ? c->in[2] : NULL);
}

/* instance_norm: group_norm with a group per channel; without use_input_stats the running
 * statistics (inputs 3 and 4) normalise as eval batch_norm does. */
Status cpu_instance_norm(const CpuCall *c)
{
    const HTensor *x = c->in[0], *w = c->nin > 1 ? c->in[1] : NULL,
                  *b = c->nin > 2 ? c->in[2] : NULL;
    if (attr_bool(c->node, "use_input_stats", true)) return norm_groups(c, x->shape[1], w, b);
    if (c->nin != 5) return err(c, NULL, "instance_norm without input stats needs running stats");
    const float *rm = c->in[3]->data, *rv = c->in[4]->data, *xd = x->data;
    double eps = attr_float(c->node, "eps", 1e-5);
    int64_t ch = x->shape[1], sp = 1;
    for (int i = 2; i < x->rank; i++)
        sp *= x->shape[i];
    float *yd = c->out[0]->data;
    for (int64_t i = 0; i < x->numel; i++) {
        int64_t k = (i / sp) % ch;
        double v = (xd[i] - rm[k]) / sqrt(rv[k] + eps);
        yd[i] = (float)(v * (w ? ((const float *)w->data)[k] : 1) +
                        (b ? ((const float *)b->data)[k] : 0));
    }
    return ST_OK;
}

/* clamp.Tensor: min(max(x, lo), hi) with broadcasting; NaN in any operand propagates. */
Status cpu_clamp_t(const CpuCall *c)
{
    HTensor *o = c->out[0];
    int64_t st[3][NPU_MAX_RANK];
    for (int k = 0; k < 3; k++)
        bcast_strides(c->in[k]->shape, c->in[k]->rank, o->shape, o->rank, st[k]);
    bool fl = dtype_is_float(o->dtype);
    for (int64_t i = 0; i < o->numel; i++) {
        int64_t off[3];
        for (int k = 0; k < 3; k++)
            off[k] = bcast_offset(i, o->shape, o->rank, st[k]);
        if (fl) {
            double v = htensor_get_f(c->in[0], off[0]), lo = htensor_get_f(c->in[1], off[1]);
            double hi = htensor_get_f(c->in[2], off[2]);
            double r = v != v || lo != lo || hi != hi ? v + lo + hi : v < lo ? lo : v;
            r = r != r ? r : r > hi ? hi : r;
            st_val(o, i, r, 0, false);
        } else {
            int64_t v = htensor_get_i(c->in[0], off[0]), lo = htensor_get_i(c->in[1], off[1]);
            int64_t hi = htensor_get_i(c->in[2], off[2]);
            v = v < lo ? lo : v;
            st_val(o, i, 0, v > hi ? hi : v, true);
        }
    }
    return ST_OK;
}

/* baddbmm: beta * self + alpha * (batch1 @ batch2), products summed in double; beta 0 ignores
 * self (NaN included), as ATen does. */
Status cpu_baddbmm(const CpuCall *c)
{
    const HTensor *self = c->in[0], *a = c->in[1], *b = c->in[2];
    HTensor *o = c->out[0];
    double beta = attr_float(c->node, "beta", 1), alpha = attr_float(c->node, "alpha", 1);
    int64_t B = a->shape[0], N = a->shape[1], M = a->shape[2], P = b->shape[2], st[NPU_MAX_RANK];
    bcast_strides(self->shape, self->rank, o->shape, 3, st);
    const float *ad = a->data, *bd = b->data;
    for (int64_t z = 0; z < B; z++)
        for (int64_t i = 0; i < N; i++)
            for (int64_t j = 0; j < P; j++) {
                double acc = 0;
                for (int64_t k = 0; k < M; k++)
                    acc += (double)ad[(z * N + i) * M + k] * bd[(z * M + k) * P + j];
                int64_t at = (z * N + i) * P + j;
                double sv =
                    beta == 0 ? 0 : beta * htensor_get_f(self, bcast_offset(at, o->shape, 3, st));
                ((float *)o->data)[at] = (float)(sv + alpha * (float)acc);
            }
    return ST_OK;
}

/* ATen's source coordinate of a linear resize (area_pixel_compute_source_index), in float. */
static float lin_src(float scale, int64_t dst, bool align)
{
    if (align) return scale * (float)dst;
    float s = scale * ((float)dst + 0.5f) - 0.5f;
    return s < 0 ? 0 : s;
}

Status cpu_upsample2d(const CpuCall *c)
{
    const HTensor *x = c->in[0];
    HTensor *o = c->out[0];
    bool bil = c->node->op == OP_UPSAMPLE_BILINEAR2D;
    bool align = bil && attr_bool(c->node, "align_corners", false);
    int64_t ih = x->shape[2], iw = x->shape[3], oh = o->shape[2], ow = o->shape[3];
    double sc[2];
    int64_t os[2];
    const char *why = NULL;
    for (int i = 0; i < 2; i++)
        if (!shape_upsample_dim(c->node, i, x->shape[2 + i], &os[i], &sc[i], &why))
            return err(c, NULL, "%s", why);
    float s[2];
    for (int i = 0; i < 2; i++) {
        int64_t in = x->shape[2 + i], out = o->shape[2 + i];
        s[i] = align ? (out > 1 ? (float)(in - 1) / (float)(out - 1) : 0.f) : (float)sc[i];
    }
    const float *xd = x->data;
    float *yd = o->data;
    for (int64_t pl = 0; pl < x->shape[0] * x->shape[1]; pl++) {
        const float *xp = xd + pl * ih * iw;
        float *yp = yd + pl * oh * ow;
        for (int64_t y = 0; y < oh; y++)
            for (int64_t z = 0; z < ow; z++) {
                if (!bil) { /* nearest: floor(dst * scale), clamped */
                    int64_t sy = (int64_t)floorf((float)y * s[0]),
                            sx = (int64_t)floorf((float)z * s[1]);
                    sy = sy < ih - 1 ? sy : ih - 1;
                    sx = sx < iw - 1 ? sx : iw - 1;
                    yp[y * ow + z] = xp[sy * iw + sx];
                    continue;
                }
                float fy = lin_src(s[0], y, align), fx = lin_src(s[1], z, align);
                int64_t y0 = (int64_t)fy, x0 = (int64_t)fx;
                int64_t y1 = y0 + (y0 < ih - 1), x1 = x0 + (x0 < iw - 1);
                float ly = fy - (float)y0, lx = fx - (float)x0;
                float hy = 1.f - ly, hx = 1.f - lx;
                yp[y * ow + z] = hy * (hx * xp[y0 * iw + x0] + lx * xp[y0 * iw + x1]) +
                                 ly * (hx * xp[y1 * iw + x0] + lx * xp[y1 * iw + x1]);
            }
    }
    return ST_OK;
}

/* einsum: every combination of label values, products summed into the output's labels. */
Status cpu_einsum(const CpuCall *c)
{
    EinsumSpec s;
    const char *why = NULL;
    const char *eq = attr_str(c->node, "equation", "");
    if (!shape_einsum_parse(eq, c->nin, &s, &why)) return err(c, NULL, "einsum '%s': %s", eq, why);
    int64_t size[EINSUM_MAX_LABELS], val[EINSUM_MAX_LABELS] = {0}, st[8][EINSUM_MAX_LABELS] = {{0}};
    int64_t ost[EINSUM_MAX_LABELS] = {0}, combos = 1;
    for (int l = 0; l < s.nlabels; l++)
        size[l] = 1;
    for (int i = 0; i < c->nin; i++) {
        int64_t xs[NPU_MAX_RANK];
        shape_strides(c->in[i]->shape, c->in[i]->rank, xs);
        for (int d = 0; d < s.rank[i]; d++) {
            int l = s.lab[i][d];
            if (c->in[i]->shape[d] != 1) {
                size[l] = c->in[i]->shape[d];
                st[i][l] += xs[d]; /* a label repeated in an operand walks its diagonal */
            }
        }
    }
    for (int l = 0; l < s.nlabels; l++)
        combos *= size[l];
    int64_t on = 1;
    for (int d = s.orank - 1; d >= 0; d--) {
        ost[s.olab[d]] = on;
        on *= size[s.olab[d]];
    }
    HTensor *o = c->out[0];
    if (on != o->numel) return err(c, out_name(c), "einsum: output size mismatch");
    double *acc = calloc((size_t)(on ? on : 1), sizeof *acc);
    if (!acc) return ST_NOMEM;
    for (int64_t k = 0; k < combos; k++) {
        double p = 1;
        int64_t oo = 0;
        for (int i = 0; i < c->nin; i++) {
            int64_t off = 0;
            for (int l = 0; l < s.nlabels; l++)
                off += val[l] * st[i][l];
            p *= ((const float *)c->in[i]->data)[off];
        }
        for (int l = 0; l < s.nlabels; l++)
            oo += val[l] * ost[l];
        acc[oo] += p;
        for (int l = s.nlabels - 1; l >= 0; l--) {
            if (++val[l] < size[l]) break;
            val[l] = 0;
        }
    }
    for (int64_t i = 0; i < on; i++)
        ((float *)o->data)[i] = (float)acc[i];
    free(acc);
    return ST_OK;
}

/* scaled_dot_product_attention as torch's math path: scores = q k^T * scale (+ float mask, or
 * -inf where a bool mask is false, or above the diagonal with is_causal), softmax over the keys
 * (a row masked entirely gives zeros, as torch's safe softmax), times v. enable_gqa: query head h
 * reads key/value head h / (Hq / Hkv). */
Status cpu_sdpa(const CpuCall *c)
{
    const HTensor *q = c->in[0], *k = c->in[1], *v = c->in[2];
    const HTensor *m = c->nin > 3 ? c->in[3] : NULL;
    HTensor *o = c->out[0];
    int r = q->rank;
    int64_t L = q->shape[r - 2], E = q->shape[r - 1], S = k->shape[r - 2], Ev = v->shape[r - 1];
    double scale =
        attr_present(c->node, "scale") ? attr_float(c->node, "scale", 1) : 1.0 / sqrt((double)E);
    bool causal = attr_bool(c->node, "is_causal", false);
    int64_t batch = shape_numel(q->shape, r - 2), heads = r >= 3 ? q->shape[r - 3] : 1;
    int64_t kvh = r >= 3 ? k->shape[r - 3] : 1;
    int64_t ls[NPU_MAX_RANK], mst[NPU_MAX_RANK];
    memcpy(ls, q->shape, sizeof(int64_t) * (size_t)r);
    ls[r - 1] = S;
    if (m) bcast_strides(m->shape, m->rank, ls, r, mst);
    double *sc = malloc(sizeof(double) * (size_t)(S ? S : 1));
    if (!sc) return ST_NOMEM;
    const float *qd = q->data, *kd = k->data, *vd = v->data;
    float *od = o->data;
    for (int64_t b = 0; b < batch; b++) {
        int64_t h = b % heads, outer = b / heads;
        int64_t kb = outer * kvh + h / (heads / kvh); /* the k/v matrix this head reads */
        const float *kp = kd + kb * S * E, *vp = vd + kb * S * Ev;
        for (int64_t i = 0; i < L; i++) {
            const float *qp = qd + (b * L + i) * E;
            double mx = -INFINITY;
            for (int64_t j = 0; j < S; j++) {
                double dot = 0;
                for (int64_t e = 0; e < E; e++)
                    dot += (double)qp[e] * kp[j * E + e];
                double s = dot * scale;
                if (causal && j > i) s = -INFINITY;
                if (m) {
                    double mv = htensor_get_f(m, bcast_offset((b * L + i) * S + j, ls, r, mst));
                    s = m->dtype == DT_BOOL ? (mv != 0 ? s : -INFINITY) : s + mv;
                }
                sc[j] = s;
                mx = s > mx ? s : mx;
            }
            double sum = 0;
            for (int64_t j = 0; j < S; j++) {
                sc[j] = mx == -INFINITY ? 0 : exp(sc[j] - mx);
                sum += sc[j];
            }
            for (int64_t e = 0; e < Ev; e++) {
                double a = 0;
                for (int64_t j = 0; j < S; j++)
                    a += sc[j] * vp[j * Ev + e];
                od[(b * L + i) * Ev + e] = (float)(sum > 0 ? a / sum : 0);
            }
        }
    }
    free(sc);
    return ST_OK;
}
