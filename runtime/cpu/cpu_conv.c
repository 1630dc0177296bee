/* Convolution and pooling, ATen-exact. conv2d is a GEMM per image and group (weights [Cout_g, K]
 * times an im2col matrix [K, OH*OW] packed on the fly by the GEMM), except when a group has
 * fewer than four output channels (depthwise): there a direct loop wastes less. Both sum the
 * products in double in the same (channel, kh, kw) order, then add the bias, so they agree
 * bit for bit. Pools accumulate in double and follow ATen's output-size and divisor rules. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/shape/shape.h"
#include "runtime/cpu/cpu_gemm.h"
#include "runtime/cpu/cpu_kernels.h"

/* Geometry shared by conv and pools: input [n, c, h, w], window kh x kw. */
typedef struct Geom {
    int64_t n, c, h, w;
    int64_t cout, groups;
    int64_t kh, kw, sh, sw, ph, pw, dh, dw;
    int64_t oh, ow;
} Geom;

static const char *in_name(const CpuCall *c, int i)
{
    return node_input(c->g, c->node, i)->name;
}

static const char *out_name(const CpuCall *c)
{
    return node_output(c->g, c->node, 0)->name;
}

static Status bad(const CpuCall *c, const char *tensor, const char *what)
{
    return diag_error(c->diag, c->file, c->node->name, tensor, "%s: %s", op_short_name(c->node->op),
                      what);
}

/* Reads the [N,]C,H,W input; an unbatched 3-D input counts as N = 1. */
static Status read_input(const CpuCall *c, Geom *g)
{
    const HTensor *x = c->in[0];
    if (x->rank != 3 && x->rank != 4) return bad(c, in_name(c, 0), "input must be 3-D or 4-D");
    int o = x->rank - 3;
    g->n = o ? x->shape[0] : 1;
    g->c = x->shape[o];
    g->h = x->shape[o + 1];
    g->w = x->shape[o + 2];
    return ST_OK;
}

/* The output must be the input's rank with [N,]cout,oh,ow. */
static Status check_out(const CpuCall *c, const Geom *g, int64_t cout)
{
    const HTensor *x = c->in[0], *y = c->out[0];
    int o = x->rank - 3;
    int ok = y->rank == x->rank && (!o || y->shape[0] == g->n) && y->shape[o] == cout &&
             y->shape[o + 1] == g->oh && y->shape[o + 2] == g->ow;
    if (ok) return ST_OK;
    char want[96], got[96];
    int64_t s[4] = {g->n, cout, g->oh, g->ow};
    shape_str(s + (o ? 0 : 1), x->rank, want, sizeof want);
    shape_str(y->shape, y->rank, got, sizeof got);
    return diag_error(c->diag, c->file, c->node->name, out_name(c),
                      "%s: output declared %s but the attributes give %s",
                      op_short_name(c->node->op), got, want);
}

/* ---- conv2d ---- */

typedef struct Im2col {
    const float *x; /* first channel of this image and group */
    const Geom *g;
} Im2col;

/* The GEMM's B packer: column j is output pixel (j / ow, j % ow), row k is (channel, r, s). */
static void pack_im2col(const void *ctx, int64_t k0, int64_t kc, int64_t j0, int64_t nc, int nr,
                        double *dst)
{
    const Im2col *m = ctx;
    const Geom *g = m->g;
    int64_t khw = g->kh * g->kw, hw = g->h * g->w;
    int64_t y0[64], x0[64];
    for (int64_t jr = 0; jr < nc; jr += nr) {
        int cols = (int)(nc - jr < nr ? nc - jr : nr);
        for (int j = 0; j < cols; j++) {
            int64_t p = j0 + jr + j;
            y0[j] = p / g->ow * g->sh - g->ph;
            x0[j] = p % g->ow * g->sw - g->pw;
        }
        /* A panel within one output row (the common case) shares its input row. */
        int one_row = y0[0] == y0[cols - 1];
        int64_t ci = k0 / khw, r = k0 / g->kw % g->kh, s = k0 % g->kw;
        for (int64_t k = 0; k < kc; k++) {
            const float *plane = m->x + ci * hw;
            int64_t dy = r * g->dh, dx = s * g->dw;
            int j = 0;
            if (one_row) {
                int64_t y = y0[0] + dy;
                if (y >= 0 && y < g->h) {
                    const float *row = plane + y * g->w;
                    for (; j < cols; j++) {
                        int64_t xx = x0[j] + dx;
                        dst[j] = xx >= 0 && xx < g->w ? row[xx] : 0.0;
                    }
                }
            } else {
                for (; j < cols; j++) {
                    int64_t y = y0[j] + dy, xx = x0[j] + dx;
                    dst[j] =
                        y >= 0 && y < g->h && xx >= 0 && xx < g->w ? plane[y * g->w + xx] : 0.0;
                }
            }
            for (; j < nr; j++)
                dst[j] = 0.0;
            dst += nr;
            if (++s == g->kw) {
                s = 0;
                if (++r == g->kh) r = 0, ci++;
            }
        }
    }
}

/* Direct convolution of one image and group (few output channels per group). */
static void conv_direct(const Geom *g, const float *x, const float *w, const float *bias,
                        int64_t coutg, int64_t cing, float *y)
{
    for (int64_t co = 0; co < coutg; co++) {
        const float *wc = w + co * cing * g->kh * g->kw;
        for (int64_t oy = 0; oy < g->oh; oy++)
            for (int64_t ox = 0; ox < g->ow; ox++) {
                double acc = 0.0;
                const float *wk = wc;
                for (int64_t ci = 0; ci < cing; ci++) {
                    const float *plane = x + ci * g->h * g->w;
                    for (int64_t r = 0; r < g->kh; r++) {
                        int64_t iy = oy * g->sh - g->ph + r * g->dh;
                        for (int64_t s = 0; s < g->kw; s++, wk++) {
                            int64_t ix = ox * g->sw - g->pw + s * g->dw;
                            if (iy >= 0 && iy < g->h && ix >= 0 && ix < g->w)
                                acc += (double)*wk * (double)plane[iy * g->w + ix];
                        }
                    }
                }
                if (bias) acc += (double)bias[co];
                y[(co * g->oh + oy) * g->ow + ox] = (float)acc;
            }
    }
}

/* Reads padding: ints, or "valid" / "same" (left pad = total // 2 as PyTorch does). */
static Status conv_padding(const CpuCall *c, Geom *g)
{
    const Attr *a = node_attr(c->node, "padding");
    if (a && a->kind == ATTR_STR) {
        if (strcmp(a->s, "valid") == 0) {
            g->ph = g->pw = 0;
            g->oh = g->ow = -1; /* computed below */
            return ST_OK;
        }
        if (strcmp(a->s, "same") != 0)
            return bad(c, NULL, "padding must be ints, 'same' or 'valid'");
        if (g->sh != 1 || g->sw != 1) return bad(c, NULL, "padding='same' needs stride 1");
        g->ph = g->dh * (g->kh - 1) / 2;
        g->pw = g->dw * (g->kw - 1) / 2;
        g->oh = g->h;
        g->ow = g->w;
        return ST_OK;
    }
    int64_t p[2];
    if (!attr_ints_n(c->node, "padding", p, 2, 0) || p[0] < 0 || p[1] < 0)
        return bad(c, NULL, "padding must be one or two non-negative ints");
    g->ph = p[0];
    g->pw = p[1];
    g->oh = g->ow = -1;
    return ST_OK;
}

static Status conv_run(const CpuCall *c, const Geom *gp);

Status cpu_conv2d(const CpuCall *c)
{
    Geom g;
    Status st = read_input(c, &g);
    if (st != ST_OK) return st;
    const HTensor *w = c->in[1];
    const HTensor *b = c->nin > 2 ? c->in[2] : NULL;
    const char *wn = in_name(c, 1);
    if (w->rank != 4) return bad(c, wn, "weight must be 4-D [Cout, C/groups, KH, KW]");
    g.cout = w->shape[0];
    g.kh = w->shape[2];
    g.kw = w->shape[3];
    g.groups = attr_int(c->node, "groups", 1);
    int64_t v[2];
    if (!attr_ints_n(c->node, "stride", v, 2, 1) || v[0] < 1 || v[1] < 1)
        return bad(c, NULL, "stride must be one or two positive ints");
    g.sh = v[0], g.sw = v[1];
    if (!attr_ints_n(c->node, "dilation", v, 2, 1) || v[0] < 1 || v[1] < 1)
        return bad(c, NULL, "dilation must be one or two positive ints");
    g.dh = v[0], g.dw = v[1];
    if (g.groups < 1 || g.c % g.groups || g.cout % g.groups)
        return diag_error(c->diag, c->file, c->node->name, wn,
                          "conv2d: groups=%lld must divide C=%lld and Cout=%lld",
                          (long long)g.groups, (long long)g.c, (long long)g.cout);
    int64_t cing = g.c / g.groups;
    if (w->shape[1] != cing)
        return diag_error(c->diag, c->file, c->node->name, wn,
                          "conv2d: weight has %lld input channels, C/groups = %lld",
                          (long long)w->shape[1], (long long)cing);
    if (b && (b->rank != 1 || b->shape[0] != g.cout))
        return bad(c, in_name(c, 2), "bias must be [Cout]");
    if ((st = conv_padding(c, &g)) != ST_OK) return st;
    if (g.oh < 0) {
        int64_t eh = g.h + 2 * g.ph - g.dh * (g.kh - 1) - 1;
        int64_t ew = g.w + 2 * g.pw - g.dw * (g.kw - 1) - 1;
        if (eh < 0 || ew < 0) return bad(c, wn, "kernel larger than the padded input");
        g.oh = eh / g.sh + 1;
        g.ow = ew / g.sw + 1;
    }
    if ((st = check_out(c, &g, g.cout)) != ST_OK) return st;
    return conv_run(c, &g);
}

/* The convolution of c's input, weight and bias with geometry g (validated, output checked). */
static Status conv_run(const CpuCall *c, const Geom *gp)
{
    Geom g = *gp;
    Status st;
    const HTensor *w = c->in[1];
    const HTensor *b = c->nin > 2 ? c->in[2] : NULL;
    int64_t cing = g.c / g.groups, coutg = g.cout / g.groups;
    const float *xd = c->in[0]->data, *wd = w->data, *bd = b ? b->data : NULL;
    float *yd = c->out[0]->data;
    int64_t kk = cing * g.kh * g.kw, p = g.oh * g.ow, hw = g.h * g.w;
    int pointwise = g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0;
    for (int64_t n = 0; n < g.n; n++)
        for (int64_t gi = 0; gi < g.groups; gi++) {
            const float *x = xd + (n * g.c + gi * cing) * hw;
            const float *wg = wd + gi * coutg * kk;
            const float *bg = bd ? bd + gi * coutg : NULL;
            float *y = yd + (n * g.cout + gi * coutg) * p;
            if (coutg < 4) {
                conv_direct(&g, x, wg, bg, coutg, cing, y);
                continue;
            }
            Im2col ctx = {x, &g};
            CpuGemm gm = {
                .m = coutg,
                .n = p,
                .k = kk,
                .a = wg,
                .a_rs = kk,
                .a_cs = 1,
                .b = x,
                .b_rs = hw,
                .b_cs = 1, /* pointwise: x is already [C, H*W] */
                .pack_b = pointwise ? NULL : pack_im2col,
                .pack_ctx = &ctx,
                .c = y,
                .c_rs = p,
                .alpha = 1.0,
                .bias = bg,
                .bias_rs = 1,
                .bias_cs = 0,
                .beta = 1.0,
            };
            if ((st = cpu_gemm(&gm)) != ST_OK)
                return diag_add(c->diag, DIAG_ERROR, st, c->file, c->node->name, NULL,
                                "conv2d: out of memory for GEMM scratch");
        }
    return ST_OK;
}

/* conv1d: [N,]C,L as an image of height 1, weight [Cout, C/g, K] as [Cout, C/g, 1, K]. */
Status cpu_conv1d(const CpuCall *c)
{
    const HTensor *x = c->in[0], *w = c->in[1];
    const HTensor *b = c->nin > 2 ? c->in[2] : NULL;
    if ((x->rank != 2 && x->rank != 3) || w->rank != 3)
        return bad(c, in_name(c, 0), "input must be [N,]C,L and weight [Cout, C/groups, K]");
    Geom g = {.n = x->rank == 3 ? x->shape[0] : 1,
              .c = x->shape[x->rank - 2],
              .h = 1,
              .w = x->shape[x->rank - 1],
              .cout = w->shape[0],
              .groups = attr_int(c->node, "groups", 1),
              .kh = 1,
              .kw = w->shape[2],
              .sh = 1,
              .dh = 1,
              .oh = 1};
    int64_t v;
    if (!attr_ints_n(c->node, "stride", &v, 1, 1) || v < 1) return bad(c, NULL, "bad stride");
    g.sw = v;
    if (!attr_ints_n(c->node, "dilation", &v, 1, 1) || v < 1) return bad(c, NULL, "bad dilation");
    g.dw = v;
    const char *pm = attr_str(c->node, "padding", NULL);
    if (pm && strcmp(pm, "same") && strcmp(pm, "valid")) return bad(c, NULL, "bad padding");
    if (pm)
        g.pw = strcmp(pm, "same") ? 0 : g.dw * (g.kw - 1) / 2;
    else if (!attr_ints_n(c->node, "padding", &g.pw, 1, 0) || g.pw < 0)
        return bad(c, NULL, "bad padding");
    if (g.groups < 1 || g.c % g.groups || g.cout % g.groups || w->shape[1] != g.c / g.groups ||
        (b && (b->rank != 1 || b->shape[0] != g.cout)))
        return bad(c, in_name(c, 1), "weight, bias and groups do not fit the input");
    int64_t e = g.w + 2 * g.pw - g.dw * (g.kw - 1) - 1;
    if (e < 0) return bad(c, in_name(c, 1), "kernel larger than the padded input");
    g.ow = e / g.sw + 1;
    if (c->out[0]->numel != g.n * g.cout * g.ow)
        return bad(c, out_name(c), "the declared output does not have [N,]Cout,L_out elements");
    return conv_run(c, &g);
}

/* conv_transpose2d: every input pixel scatters its weighted kernel into the output (x [N,]C,H,W,
 * weight [C, Cout/g, KH, KW]); sums in double, bias added last. */
Status cpu_conv_transpose2d(const CpuCall *c)
{
    Geom g;
    Status st = read_input(c, &g);
    if (st != ST_OK) return st;
    const HTensor *w = c->in[1], *y = c->out[0];
    const HTensor *b = c->nin > 2 ? c->in[2] : NULL;
    g.groups = attr_int(c->node, "groups", 1);
    int64_t s[2], p[2], d[2];
    if (!attr_ints_n(c->node, "stride", s, 2, 1) || !attr_ints_n(c->node, "padding", p, 2, 0) ||
        !attr_ints_n(c->node, "dilation", d, 2, 1))
        return bad(c, NULL, "stride, padding and dilation must be one or two ints");
    if (w->rank != 4 || g.groups < 1 || w->shape[0] != g.c || g.c % g.groups)
        return bad(c, in_name(c, 1), "weight must be [C, Cout/groups, KH, KW]");
    int64_t coutg = w->shape[1], cing = g.c / g.groups, kh = w->shape[2], kw = w->shape[3];
    g.cout = coutg * g.groups;
    int o = y->rank - 3;
    if (y->rank != c->in[0]->rank || y->shape[o] != g.cout)
        return bad(c, out_name(c), "the declared output does not have Cout channels");
    g.oh = y->shape[o + 1];
    g.ow = y->shape[o + 2];
    int64_t plane = g.oh * g.ow;
    double *acc = calloc((size_t)(plane > 0 ? plane : 1), sizeof *acc);
    if (!acc) return ST_NOMEM;
    const float *xd = c->in[0]->data, *wd = w->data, *bd = b ? b->data : NULL;
    float *yd = y->data;
    for (int64_t n = 0; n < g.n; n++)
        for (int64_t co = 0; co < g.cout; co++) {
            int64_t gi = co / coutg, cj = co % coutg;
            memset(acc, 0, sizeof *acc * (size_t)(g.oh * g.ow));
            for (int64_t ci = gi * cing; ci < (gi + 1) * cing; ci++) {
                const float *xp = xd + (n * g.c + ci) * g.h * g.w;
                const float *wp = wd + (ci * coutg + cj) * kh * kw;
                for (int64_t ih = 0; ih < g.h; ih++)
                    for (int64_t iw = 0; iw < g.w; iw++)
                        for (int64_t a = 0; a < kh; a++) {
                            int64_t oy = ih * s[0] - p[0] + a * d[0];
                            if (oy < 0 || oy >= g.oh) continue;
                            for (int64_t e = 0; e < kw; e++) {
                                int64_t ox = iw * s[1] - p[1] + e * d[1];
                                if (ox >= 0 && ox < g.ow)
                                    acc[oy * g.ow + ox] +=
                                        (double)xp[ih * g.w + iw] * wp[a * kw + e];
                            }
                        }
            }
            float *yp = yd + (n * g.cout + co) * g.oh * g.ow;
            for (int64_t i = 0; i < g.oh * g.ow; i++)
                yp[i] = (float)(acc[i] + (bd ? bd[co] : 0));
        }
    free(acc);
    return ST_OK;
}

/* ---- pools ---- */

/* kernel_size, stride (absent, null or [] = kernel), padding, dilation (max only), ceil_mode. */
static Status pool_params(const CpuCall *c, Geom *g, int with_dilation)
{
    int64_t v[2];
    if (!attr_present(c->node, "kernel_size") || !attr_ints_n(c->node, "kernel_size", v, 2, 1) ||
        v[0] < 1 || v[1] < 1)
        return bad(c, NULL, "kernel_size must be one or two positive ints");
    g->kh = v[0], g->kw = v[1];
    const Attr *s = node_attr(c->node, "stride");
    if (s && s->kind == ATTR_INTS && s->n == 0) s = NULL;
    if (!s || s->kind == ATTR_NONE) {
        g->sh = g->kh, g->sw = g->kw;
    } else {
        if (!attr_ints_n(c->node, "stride", v, 2, 1) || v[0] < 1 || v[1] < 1)
            return bad(c, NULL, "stride must be one or two positive ints");
        g->sh = v[0], g->sw = v[1];
    }
    if (!attr_ints_n(c->node, "padding", v, 2, 0) || v[0] < 0 || v[1] < 0)
        return bad(c, NULL, "padding must be one or two non-negative ints");
    g->ph = v[0], g->pw = v[1];
    g->dh = g->dw = 1;
    if (with_dilation) {
        if (!attr_ints_n(c->node, "dilation", v, 2, 1) || v[0] < 1 || v[1] < 1)
            return bad(c, NULL, "dilation must be one or two positive ints");
        g->dh = v[0], g->dw = v[1];
    }
    /* ATen: pad should be at most half of the (effective) kernel size. */
    int64_t ekh = with_dilation ? g->dh * (g->kh - 1) + 1 : g->kh;
    int64_t ekw = with_dilation ? g->dw * (g->kw - 1) + 1 : g->kw;
    if (g->ph > ekh / 2 || g->pw > ekw / 2)
        return bad(c, NULL, "padding must be at most half of the kernel size");
    bool ceil = attr_bool(c->node, "ceil_mode", false);
    g->oh = shape_pool_out(g->h, g->kh, g->ph, g->sh, g->dh, ceil);
    g->ow = shape_pool_out(g->w, g->kw, g->pw, g->sw, g->dw, ceil);
    if (g->oh < 1 || g->ow < 1) return bad(c, in_name(c, 0), "input too small for the window");
    return ST_OK;
}

/* idx (may be NULL): each maximum's flat index iy * W + ix in its plane; the last NaN wins
 * there, as ATen's loop has it. */
static void max_pool(const Geom *g, const float *x, float *y, int64_t *idx)
{
    for (int64_t pl = 0; pl < g->n * g->c; pl++) {
        const float *xp = x + pl * g->h * g->w;
        float *yp = y + pl * g->oh * g->ow;
        for (int64_t oy = 0; oy < g->oh; oy++)
            for (int64_t ox = 0; ox < g->ow; ox++) {
                float m = -INFINITY;
                int64_t at = -1;
                for (int64_t r = 0; r < g->kh; r++) {
                    int64_t iy = oy * g->sh - g->ph + r * g->dh;
                    if (iy < 0 || iy >= g->h) continue;
                    for (int64_t s = 0; s < g->kw; s++) {
                        int64_t ix = ox * g->sw - g->pw + s * g->dw;
                        if (ix < 0 || ix >= g->w) continue;
                        float v = xp[iy * g->w + ix];
                        if (v > m || isnan(v)) m = v, at = iy * g->w + ix; /* NaN wins */
                    }
                }
                yp[oy * g->ow + ox] = m;
                if (idx) idx[pl * g->oh * g->ow + oy * g->ow + ox] = at;
            }
    }
}

/* ATen's avg_pool2d divisor: the window clipped to input + padding counts when
 * count_include_pad, the window clipped to the input otherwise; divisor_override beats both. */
static void avg_pool(const Geom *g, const float *x, float *y, int include_pad, int64_t div_override)
{
    for (int64_t pl = 0; pl < g->n * g->c; pl++) {
        const float *xp = x + pl * g->h * g->w;
        float *yp = y + pl * g->oh * g->ow;
        for (int64_t oy = 0; oy < g->oh; oy++) {
            int64_t hs = oy * g->sh - g->ph, he = hs + g->kh;
            if (he > g->h + g->ph) he = g->h + g->ph;
            int64_t ph = he - hs;
            if (hs < 0) hs = 0;
            if (he > g->h) he = g->h;
            for (int64_t ox = 0; ox < g->ow; ox++) {
                int64_t ws = ox * g->sw - g->pw, we = ws + g->kw;
                if (we > g->w + g->pw) we = g->w + g->pw;
                int64_t pool = ph * (we - ws);
                if (ws < 0) ws = 0;
                if (we > g->w) we = g->w;
                double acc = 0.0;
                for (int64_t iy = hs; iy < he; iy++)
                    for (int64_t ix = ws; ix < we; ix++)
                        acc += xp[iy * g->w + ix];
                int64_t div = div_override  ? div_override
                              : include_pad ? pool
                                            : (he - hs) * (we - ws);
                yp[oy * g->ow + ox] = (float)(acc / (double)div);
            }
        }
    }
}

/* Windows [floor(o*in/out), ceil((o+1)*in/out)) as ATen's adaptive pooling. */
static void adaptive_avg_pool(const Geom *g, const float *x, float *y)
{
    for (int64_t pl = 0; pl < g->n * g->c; pl++) {
        const float *xp = x + pl * g->h * g->w;
        float *yp = y + pl * g->oh * g->ow;
        for (int64_t oy = 0; oy < g->oh; oy++) {
            int64_t hs = oy * g->h / g->oh, he = ((oy + 1) * g->h + g->oh - 1) / g->oh;
            for (int64_t ox = 0; ox < g->ow; ox++) {
                int64_t ws = ox * g->w / g->ow, we = ((ox + 1) * g->w + g->ow - 1) / g->ow;
                double acc = 0.0;
                for (int64_t iy = hs; iy < he; iy++)
                    for (int64_t ix = ws; ix < we; ix++)
                        acc += xp[iy * g->w + ix];
                yp[oy * g->ow + ox] = (float)(acc / (double)((he - hs) * (we - ws)));
            }
        }
    }
}

/* output_size may hold nulls (keep that input size), so the declared output is the truth; an
 * all-int output_size must agree with it. */
static Status adaptive_params(const CpuCall *c, Geom *g)
{
    const HTensor *y = c->out[0];
    g->oh = g->ow = 0;
    if (y->rank == c->in[0]->rank) {
        g->oh = y->shape[y->rank - 2];
        g->ow = y->shape[y->rank - 1];
    }
    const Attr *a = node_attr(c->node, "output_size");
    int64_t v[2];
    if (a && (a->kind == ATTR_INTS || a->kind == ATTR_INT)) {
        if (!attr_ints_n(c->node, "output_size", v, 2, 0) || v[0] < 1 || v[1] < 1)
            return bad(c, NULL, "output_size must be one or two positive ints");
        g->oh = v[0], g->ow = v[1];
    }
    if (g->oh < 1 || g->ow < 1) return bad(c, out_name(c), "output size must be positive");
    return check_out(c, g, g->c);
}

Status cpu_pool2d(const CpuCall *c)
{
    Geom g;
    Status st = read_input(c, &g);
    if (st != ST_OK) return st;
    const float *x = c->in[0]->data;
    float *y = c->out[0]->data;
    if (c->node->op == OP_MAX_POOL2D || c->node->op == OP_MAX_POOL2D_WI) {
        bool wi = c->node->op == OP_MAX_POOL2D_WI;
        if ((st = pool_params(c, &g, 1)) != ST_OK) return st;
        if ((st = check_out(c, &g, g.c)) != ST_OK) return st;
        if (wi && (c->nout != 2 || c->out[1]->dtype != DT_I64))
            return bad(c, NULL, "max_pool2d_with_indices needs an int64 second output");
        max_pool(&g, x, y, wi ? c->out[1]->data : NULL);
        return ST_OK;
    }
    if (c->node->op == OP_AVG_POOL2D) {
        if ((st = pool_params(c, &g, 0)) != ST_OK) return st;
        if ((st = check_out(c, &g, g.c)) != ST_OK) return st;
        int64_t dov = 0;
        if (attr_present(c->node, "divisor_override")) {
            dov = attr_int(c->node, "divisor_override", 0);
            if (dov == 0) return bad(c, NULL, "divisor_override must not be zero");
        }
        avg_pool(&g, x, y, attr_bool(c->node, "count_include_pad", true), dov);
        return ST_OK;
    }
    if (c->node->op == OP_ADAPTIVE_AVG_POOL2D) {
        if ((st = adaptive_params(c, &g)) != ST_OK) return st;
        adaptive_avg_pool(&g, x, y);
        return ST_OK;
    }
    return diag_add(c->diag, DIAG_ERROR, ST_INTERNAL, c->file, c->node->name, NULL,
                    "cpu_pool2d called for %s", op_short_name(c->node->op));
}
