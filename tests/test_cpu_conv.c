/* conv2d and pooling kernels against hand-computed values and naive double-precision loops
 * written here (the oracles), on random non-zero data and shapes that are no block multiple. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tests/testutil.h"

/* Builds the one-node graph, runs it; the output lands in *y (caller frees). */
static Status run_node(const char *aten, int nin, const TuSpec *in, const TuSpec *out,
                       const char *attrs, HTensor *x, HTensor *y, DiagList *d)
{
    Graph *g = tu_node_graph(aten, nin, in, 1, out, attrs);
    assert_non_null(g);
    Status st = tu_run(g, x, y, d);
    graph_free(g);
    return st;
}

static TuSpec spec4(int64_t a, int64_t b, int64_t c, int64_t e)
{
    return (TuSpec){NULL, 4, {a, b, c, e}};
}

/* ---- conv2d ---- */

typedef struct ConvCase {
    int64_t n, c, h, w, cout, kh, kw, sh, sw, ph, pw, dh, dw, groups;
    int bias;
    const char *attrs; /* NULL: generated from the numbers above */
} ConvCase;

static void ref_conv(const ConvCase *k, const float *x, const float *w, const float *b, int64_t oh,
                     int64_t ow, float *y)
{
    int64_t cing = k->c / k->groups, coutg = k->cout / k->groups;
    for (int64_t n = 0; n < k->n; n++)
        for (int64_t co = 0; co < k->cout; co++)
            for (int64_t oy = 0; oy < oh; oy++)
                for (int64_t ox = 0; ox < ow; ox++) {
                    double acc = 0;
                    int64_t g = co / coutg;
                    for (int64_t ci = 0; ci < cing; ci++)
                        for (int64_t r = 0; r < k->kh; r++)
                            for (int64_t s = 0; s < k->kw; s++) {
                                int64_t iy = oy * k->sh - k->ph + r * k->dh;
                                int64_t ix = ox * k->sw - k->pw + s * k->dw;
                                if (iy < 0 || iy >= k->h || ix < 0 || ix >= k->w) continue;
                                acc += (double)
                                           x[((n * k->c + g * cing + ci) * k->h + iy) * k->w + ix] *
                                       w[((co * cing + ci) * k->kh + r) * k->kw + s];
                            }
                    if (b) acc += b[co];
                    y[((n * k->cout + co) * oh + oy) * ow + ox] = (float)acc;
                }
}

static void check_conv(const ConvCase *k, int64_t oh, int64_t ow)
{
    char attrs[256];
    if (k->attrs)
        snprintf(attrs, sizeof attrs, "%s", k->attrs);
    else
        snprintf(attrs, sizeof attrs,
                 "{\"stride\":[%lld,%lld],\"padding\":[%lld,%lld],\"dilation\":[%lld,%lld],"
                 "\"groups\":%lld}",
                 (long long)k->sh, (long long)k->sw, (long long)k->ph, (long long)k->pw,
                 (long long)k->dh, (long long)k->dw, (long long)k->groups);
    TuSpec in[3] = {spec4(k->n, k->c, k->h, k->w),
                    spec4(k->cout, k->c / k->groups, k->kh, k->kw),
                    {NULL, 1, {k->cout}}};
    TuSpec out = spec4(k->n, k->cout, oh, ow);
    HTensor x[3], y;
    int nin = k->bias ? 3 : 2;
    for (int i = 0; i < nin; i++) {
        tu_alloc(&x[i], NULL, in[i].rank, in[i].shape);
        tu_rand(&x[i], 11 + (uint64_t)i, -1.0, 1.0);
    }
    DiagList d = {0};
    assert_int_equal(run_node("aten.conv2d.default", nin, in, &out, attrs, x, &y, &d), ST_OK);
    float *ref = malloc(sizeof(float) * (size_t)y.numel);
    ref_conv(k, x[0].data, x[1].data, k->bias ? x[2].data : NULL, oh, ow, ref);
    assert_true(tu_close(&y, ref, y.numel, attrs));
    free(ref);
    htensor_free(&y);
    for (int i = 0; i < nin; i++)
        htensor_free(&x[i]);
    diag_free(&d);
}

static void test_conv_hand(void **state)
{
    (void)state;
    /* 1..9 in 3x3, a 2x2 kernel of ones, no padding: sums of 2x2 windows. */
    TuSpec in[2] = {spec4(1, 1, 3, 3), spec4(1, 1, 2, 2)}, out = spec4(1, 1, 2, 2);
    HTensor x[2], y;
    tu_alloc(&x[0], NULL, 4, in[0].shape);
    tu_alloc(&x[1], NULL, 4, in[1].shape);
    for (int i = 0; i < 9; i++)
        ((float *)x[0].data)[i] = (float)(i + 1);
    for (int i = 0; i < 4; i++)
        ((float *)x[1].data)[i] = 1.0f;
    DiagList d = {0};
    assert_int_equal(run_node("aten.conv2d.default", 2, in, &out, NULL, x, &y, &d), ST_OK);
    const float want[4] = {12, 16, 24, 28};
    assert_memory_equal(y.data, want, sizeof want);
    htensor_free(&y);
    htensor_free(&x[0]);
    htensor_free(&x[1]);
    diag_free(&d);
}

static void test_conv_random(void **state)
{
    (void)state;
    static const struct {
        ConvCase k;
        int64_t oh, ow;
    } cases[] = {
        /* n  c  h  w cout kh kw sh sw ph pw dh dw g bias */
        {{2, 3, 7, 9, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, NULL}, 7, 9},
        {{1, 3, 13, 11, 7, 5, 3, 2, 2, 2, 1, 1, 1, 1, 0, NULL}, 7, 6},
        {{1, 4, 12, 10, 6, 3, 3, 1, 1, 2, 2, 2, 2, 1, 1, NULL}, 12, 10},
        {{2, 4, 9, 9, 6, 3, 3, 1, 1, 1, 1, 1, 1, 2, 1, NULL}, 9, 9},
        {{1, 8, 11, 11, 8, 3, 3, 2, 2, 1, 1, 1, 1, 8, 1, NULL}, 6, 6},
        {{1, 4, 8, 7, 8, 3, 3, 1, 1, 1, 1, 1, 1, 4, 0, NULL}, 8, 7},
        {{1, 16, 10, 10, 32, 3, 3, 1, 1, 1, 1, 1, 1, 2, 1, NULL}, 10, 10},
        {{2, 17, 5, 6, 19, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, NULL}, 5, 6},
        {{1, 17, 9, 9, 19, 1, 1, 2, 2, 0, 0, 1, 1, 1, 0, NULL}, 5, 5},
        /* K = 270 > one K block, 400 pixels > one column block, 100 rows > one row block */
        {{1, 30, 20, 20, 100, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, NULL}, 20, 20},
        {{1, 3, 30, 30, 13, 7, 7, 2, 2, 3, 3, 1, 1, 1, 0, NULL}, 15, 15},
        /* attribute forms: omitted, scalar, one-element list, strings */
        {{1, 3, 8, 8, 5, 3, 3, 1, 1, 0, 0, 1, 1, 1, 1, "{}"}, 6, 6},
        {{1, 3, 9, 9, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, "{\"stride\":2,\"padding\":[1]}"}, 5, 5},
        {{1, 3, 8, 8, 5, 3, 3, 1, 1, 0, 0, 1, 1, 1, 0, "{\"padding\":\"valid\"}"}, 6, 6},
        {{1, 3, 8, 9, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, "{\"padding\":\"same\"}"}, 8, 9},
        /* even kernel, dilation 3 width: totals 3 and 6 -> left pads 1 and 3 */
        {{1, 2, 7, 8, 4, 4, 3, 1, 1, 1, 3, 1, 3, 1, 1, "{\"padding\":\"same\",\"dilation\":[1,3]}"},
         7,
         8},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_conv(&cases[i].k, cases[i].oh, cases[i].ow);
}

static void test_conv_unbatched(void **state)
{
    (void)state;
    ConvCase k = {1, 3, 6, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, NULL};
    TuSpec in[3] = {{NULL, 3, {3, 6, 6}}, spec4(4, 3, 3, 3), {NULL, 1, {4}}};
    TuSpec out = {NULL, 3, {4, 6, 6}};
    HTensor x[3], y;
    for (int i = 0; i < 3; i++) {
        tu_alloc(&x[i], NULL, in[i].rank, in[i].shape);
        tu_rand(&x[i], 5 + (uint64_t)i, -1.0, 1.0);
    }
    DiagList d = {0};
    assert_int_equal(run_node("aten.conv2d.default", 3, in, &out, "{\"padding\":1}", x, &y, &d),
                     ST_OK);
    float ref[4 * 36];
    ref_conv(&k, x[0].data, x[1].data, x[2].data, 6, 6, ref);
    assert_true(tu_close(&y, ref, 4 * 36, "unbatched"));
    htensor_free(&y);
    for (int i = 0; i < 3; i++)
        htensor_free(&x[i]);
    diag_free(&d);
}

/* Bad shapes are ST_BAD_INPUT naming node n0 and the tensor at fault. */
static void test_conv_errors(void **state)
{
    (void)state;
    static const struct {
        TuSpec x, w, y;
        const char *attrs, *tensor, *msg;
    } cases[] = {
        {{NULL, 4, {1, 4, 5, 5}},
         {NULL, 4, {6, 2, 3, 3}},
         {NULL, 4, {1, 6, 3, 3}},
         "{\"groups\":3}",
         "in1",
         "groups"},
        {{NULL, 4, {1, 4, 5, 5}},
         {NULL, 4, {6, 3, 3, 3}},
         {NULL, 4, {1, 6, 3, 3}},
         "{}",
         "in1",
         "input channels"},
        {{NULL, 4, {1, 4, 5, 5}},
         {NULL, 4, {6, 4, 3, 3}},
         {NULL, 4, {1, 6, 5, 5}},
         "{}",
         "out0",
         "[1,6,3,3]"},
        {{NULL, 4, {1, 4, 5, 5}},
         {NULL, 4, {6, 4, 3, 3}},
         {NULL, 4, {1, 6, 3, 3}},
         "{\"stride\":2}",
         "out0",
         "declared"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TuSpec in[2] = {cases[i].x, cases[i].w};
        HTensor x[2], y;
        for (int j = 0; j < 2; j++) {
            tu_alloc(&x[j], NULL, in[j].rank, in[j].shape);
            tu_rand(&x[j], 3, -1, 1);
        }
        DiagList d = {0};
        assert_int_equal(
            run_node("aten.conv2d.default", 2, in, &cases[i].y, cases[i].attrs, x, &y, &d),
            ST_BAD_INPUT);
        assert_int_equal(d.count, 1);
        assert_string_equal(d.items[0].node, "n0");
        assert_string_equal(d.items[0].tensor, cases[i].tensor);
        assert_non_null(strstr(d.items[0].msg, cases[i].msg));
        htensor_free(&y);
        htensor_free(&x[0]);
        htensor_free(&x[1]);
        diag_free(&d);
    }
}

/* ---- pools ---- */

typedef struct PoolCase {
    const char *aten, *attrs;
    int64_t n, c, h, w, oh, ow;
    /* oracle parameters */
    int64_t kh, kw, sh, sw, ph, pw, dh, dw;
    int include_pad;
    int64_t div_override;
} PoolCase;

static void ref_pool(const PoolCase *p, const float *x, float *y)
{
    int is_max = strstr(p->aten, "max") != NULL;
    for (int64_t pl = 0; pl < p->n * p->c; pl++)
        for (int64_t oy = 0; oy < p->oh; oy++)
            for (int64_t ox = 0; ox < p->ow; ox++) {
                double acc = 0, m = -INFINITY;
                int64_t inside = 0, padded = 0;
                for (int64_t r = 0; r < p->kh; r++)
                    for (int64_t s = 0; s < p->kw; s++) {
                        int64_t iy = oy * p->sh - p->ph + r * p->dh;
                        int64_t ix = ox * p->sw - p->pw + s * p->dw;
                        /* positions inside input + padding on both sides count for the pad */
                        if (iy < p->h + p->ph && ix < p->w + p->pw) padded++;
                        if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w) continue;
                        double v = x[(pl * p->h + iy) * p->w + ix];
                        acc += v;
                        m = v > m ? v : m;
                        inside++;
                    }
                double div = p->div_override  ? (double)p->div_override
                             : p->include_pad ? (double)padded
                                              : (double)inside;
                y[(pl * p->oh + oy) * p->ow + ox] = (float)(is_max ? m : acc / div);
            }
}

static void check_pool(const PoolCase *p)
{
    TuSpec in = spec4(p->n, p->c, p->h, p->w), out = spec4(p->n, p->c, p->oh, p->ow);
    HTensor x, y;
    tu_alloc(&x, NULL, 4, in.shape);
    tu_rand(&x, 21, -2.0, 2.0);
    DiagList d = {0};
    assert_int_equal(run_node(p->aten, 1, &in, &out, p->attrs, &x, &y, &d), ST_OK);
    float *ref = malloc(sizeof(float) * (size_t)y.numel);
    ref_pool(p, x.data, ref);
    assert_true(tu_close(&y, ref, y.numel, p->attrs));
    free(ref);
    htensor_free(&x);
    htensor_free(&y);
    diag_free(&d);
}

#define MAXP "aten.max_pool2d.default"
#define AVGP "aten.avg_pool2d.default"
static void test_pool_random(void **state)
{
    (void)state;
    static const PoolCase cases[] = {
        {MAXP, "{\"kernel_size\":[2,2]}", 2, 3, 8, 8, 4, 4, 2, 2, 2, 2, 0, 0, 1, 1, 1, 0},
        {MAXP, "{\"kernel_size\":[2,2],\"stride\":[]}", 1, 2, 7, 7, 3, 3, 2, 2, 2, 2, 0, 0, 1, 1, 1,
         0},
        {MAXP, "{\"kernel_size\":2,\"stride\":2,\"ceil_mode\":true}", 1, 2, 7, 7, 4, 4, 2, 2, 2, 2,
         0, 0, 1, 1, 1, 0},
        {MAXP, "{\"kernel_size\":[3,3],\"stride\":[2,2],\"padding\":[1,1]}", 1, 4, 112, 112, 56, 56,
         3, 3, 2, 2, 1, 1, 1, 1, 1, 0},
        {MAXP, "{\"kernel_size\":[3,2],\"stride\":[2,1],\"padding\":[1,0],\"dilation\":[2,2]}", 1,
         2, 11, 9, 5, 7, 3, 2, 2, 1, 1, 0, 2, 2, 1, 0},
        {MAXP, "{\"kernel_size\":3,\"stride\":2,\"padding\":1,\"ceil_mode\":true}", 1, 1, 6, 6, 4,
         4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0},
        /* ceil would give 4, but the 4th window would start in the right padding */
        {MAXP, "{\"kernel_size\":2,\"stride\":2,\"padding\":1,\"ceil_mode\":true}", 1, 2, 5, 5, 3,
         3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 0},
        {AVGP, "{\"kernel_size\":2,\"stride\":2,\"padding\":1,\"ceil_mode\":true}", 1, 2, 5, 5, 3,
         3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 0},
        {AVGP, "{\"kernel_size\":[2,2]}", 2, 3, 7, 9, 3, 4, 2, 2, 2, 2, 0, 0, 1, 1, 1, 0},
        {AVGP, "{\"kernel_size\":2,\"stride\":2,\"ceil_mode\":true}", 1, 2, 7, 7, 4, 4, 2, 2, 2, 2,
         0, 0, 1, 1, 1, 0},
        {AVGP, "{\"kernel_size\":3,\"stride\":2,\"padding\":1,\"ceil_mode\":true}", 1, 2, 6, 6, 4,
         4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0},
        {AVGP,
         "{\"kernel_size\":3,\"stride\":2,\"padding\":1,\"ceil_mode\":true,"
         "\"count_include_pad\":false}",
         1, 2, 6, 6, 4, 4, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0},
        {AVGP, "{\"kernel_size\":[3,2],\"stride\":[1,2],\"padding\":[1,1],\"divisor_override\":5}",
         1, 2, 5, 6, 5, 4, 3, 2, 1, 2, 1, 1, 1, 1, 1, 5},
        {AVGP,
         "{\"kernel_size\":[3,3],\"stride\":[2,2],\"padding\":[1,1],\"divisor_override\":null}", 1,
         2, 9, 8, 5, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_pool(&cases[i]);
}

/* Hand-computed windows: 1..9 in 3x3 and 1..4 in 2x2. */
static void test_pool_hand(void **state)
{
    (void)state;
    static const struct {
        const char *aten, *attrs;
        int64_t h, oh;
        float want[4];
    } cases[] = {
        /* ceil: clipped windows divide by their clipped size: (3+6)/2, (7+8)/2, 9/1 */
        {AVGP, "{\"kernel_size\":2,\"ceil_mode\":true}", 3, 2, {3.0f, 4.5f, 7.5f, 9.0f}},
        {MAXP, "{\"kernel_size\":2,\"ceil_mode\":true}", 3, 2, {5, 6, 8, 9}},
        /* padding 1 on 2x2, each window sees one element of four places */
        {AVGP, "{\"kernel_size\":2,\"padding\":1}", 2, 2, {0.25f, 0.5f, 0.75f, 1.0f}},
        {AVGP, "{\"kernel_size\":2,\"padding\":1,\"count_include_pad\":false}", 2, 2, {1, 2, 3, 4}},
        {AVGP,
         "{\"kernel_size\":2,\"padding\":1,\"divisor_override\":2}",
         2,
         2,
         {0.5f, 1, 1.5f, 2}},
        {MAXP, "{\"kernel_size\":2,\"padding\":1}", 2, 2, {1, 2, 3, 4}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TuSpec in = spec4(1, 1, cases[i].h, cases[i].h),
               out = spec4(1, 1, cases[i].oh, cases[i].oh);
        HTensor x, y;
        tu_alloc(&x, NULL, 4, in.shape);
        for (int64_t j = 0; j < x.numel; j++)
            ((float *)x.data)[j] = (float)(j + 1);
        DiagList d = {0};
        assert_int_equal(run_node(cases[i].aten, 1, &in, &out, cases[i].attrs, &x, &y, &d), ST_OK);
        assert_memory_equal(y.data, cases[i].want, sizeof cases[i].want);
        htensor_free(&x);
        htensor_free(&y);
        diag_free(&d);
    }
}

/* A NaN in a max-pool window wins, as in ATen. */
static void test_max_pool_nan(void **state)
{
    (void)state;
    TuSpec in = spec4(1, 1, 2, 4), out = spec4(1, 1, 1, 2);
    HTensor x, y;
    tu_alloc(&x, NULL, 4, in.shape);
    const float v[8] = {1, NAN, 3, 4, 5, 6, 7, -1};
    memcpy(x.data, v, sizeof v);
    DiagList d = {0};
    assert_int_equal(run_node(MAXP, 1, &in, &out, "{\"kernel_size\":2}", &x, &y, &d), ST_OK);
    assert_true(isnan(((float *)y.data)[0]));
    assert_true(((float *)y.data)[1] == 7.0f);
    htensor_free(&x);
    htensor_free(&y);
    diag_free(&d);
}

static void test_adaptive(void **state)
{
    (void)state;
    static const struct {
        const char *attrs;
        int64_t h, w, oh, ow;
    } cases[] = {
        {"{\"output_size\":[1,1]}", 7, 7, 1, 1},  {"{\"output_size\":[3,2]}", 7, 5, 3, 2},
        {"{\"output_size\":[4,3]}", 10, 7, 4, 3}, {"{\"output_size\":[null,3]}", 6, 7, 6, 3},
        {"{\"output_size\":5}", 5, 11, 5, 5},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TuSpec in = spec4(2, 3, cases[i].h, cases[i].w),
               out = spec4(2, 3, cases[i].oh, cases[i].ow);
        HTensor x, y;
        tu_alloc(&x, NULL, 4, in.shape);
        tu_rand(&x, 9, -1.0, 1.0);
        DiagList d = {0};
        assert_int_equal(
            run_node("aten.adaptive_avg_pool2d.default", 1, &in, &out, cases[i].attrs, &x, &y, &d),
            ST_OK);
        /* Oracle: an input cell belongs to window o when o*in <= cell*out... written out. */
        const float *xp = x.data;
        float *ref = malloc(sizeof(float) * (size_t)y.numel);
        int64_t h = cases[i].h, w = cases[i].w, oh = cases[i].oh, ow = cases[i].ow;
        for (int64_t pl = 0; pl < 6; pl++)
            for (int64_t a = 0; a < oh; a++)
                for (int64_t b = 0; b < ow; b++) {
                    int64_t hs = (int64_t)floor((double)a * h / oh);
                    int64_t he = (int64_t)ceil((double)(a + 1) * h / oh);
                    int64_t ws = (int64_t)floor((double)b * w / ow);
                    int64_t we = (int64_t)ceil((double)(b + 1) * w / ow);
                    double s = 0;
                    for (int64_t yy = hs; yy < he; yy++)
                        for (int64_t xx = ws; xx < we; xx++)
                            s += xp[(pl * h + yy) * w + xx];
                    ref[(pl * oh + a) * ow + b] = (float)(s / (double)((he - hs) * (we - ws)));
                }
        assert_true(tu_close(&y, ref, y.numel, cases[i].attrs));
        free(ref);
        htensor_free(&x);
        htensor_free(&y);
        diag_free(&d);
    }
    /* 5 -> 2 windows are [0,3) and [2,5): the middle cell is in both. */
    TuSpec in = {NULL, 4, {1, 1, 1, 5}}, out = {NULL, 4, {1, 1, 1, 2}};
    HTensor x, y;
    tu_alloc(&x, NULL, 4, in.shape);
    for (int j = 0; j < 5; j++)
        ((float *)x.data)[j] = (float)(j + 1);
    DiagList d = {0};
    assert_int_equal(run_node("aten.adaptive_avg_pool2d.default", 1, &in, &out,
                              "{\"output_size\":[1,2]}", &x, &y, &d),
                     ST_OK);
    const float want[2] = {2.0f, 4.0f};
    assert_memory_equal(y.data, want, sizeof want);
    htensor_free(&x);
    htensor_free(&y);
    diag_free(&d);
}

static void test_pool_errors(void **state)
{
    (void)state;
    static const struct {
        const char *aten, *attrs;
        int64_t oh;
        const char *tensor;
    } cases[] = {
        {MAXP, "{\"kernel_size\":2,\"stride\":2}", 4, "out0"}, /* 7 -> 3, not 4 */
        {AVGP, "{\"kernel_size\":2,\"stride\":2,\"ceil_mode\":true}", 3, "out0"},
        {MAXP, "{\"kernel_size\":2,\"padding\":2}", 5, NULL}, /* pad > kernel/2 */
        {"aten.adaptive_avg_pool2d.default", "{\"output_size\":[2,2]}", 3, "out0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TuSpec in = spec4(1, 2, 7, 7), out = spec4(1, 2, cases[i].oh, cases[i].oh);
        HTensor x, y;
        tu_alloc(&x, NULL, 4, in.shape);
        tu_rand(&x, 1, -1, 1);
        DiagList d = {0};
        assert_int_equal(run_node(cases[i].aten, 1, &in, &out, cases[i].attrs, &x, &y, &d),
                         ST_BAD_INPUT);
        assert_string_equal(d.items[0].node, "n0");
        if (cases[i].tensor) assert_string_equal(d.items[0].tensor, cases[i].tensor);
        htensor_free(&x);
        htensor_free(&y);
        diag_free(&d);
    }
}

TU_MAIN(test_conv_hand, test_conv_random, test_conv_unbatched, test_conv_errors, test_pool_random,
        test_pool_hand, test_adaptive, test_pool_errors, test_max_pool_nan)
