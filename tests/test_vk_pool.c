/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * Global pools and the squeeze-excite layout on Vulkan against the CPU reference. A pool whose
 * one window is the whole input (adaptive average to 1x1, an average or max pool with the
 * input's size as kernel and no padding) runs pool2d_global, a reduction per (n, c) row
 * (compiler/lower/lower_pool2d.c): odd sizes (13x11, 37x29, 1x1, 112x112 once), channels that
 * are not a multiple of the channel tile, inputs dense or channel-padded (a conv's output), row
 * lengths with and without 16-byte vectors, one and several trips per lane, f32/f16/bf16; the
 * cases that look global but are not (padding, an output larger than 1x1) stay on pool2d. The
 * squeeze-excite block (pool, two 1x1 convs, hardsigmoid, the broadcast scale multiply) reads
 * the padded conv output with no depad (compiler/pass_layout.c: the binary kernel addresses
 * every operand with its own strides), and a same-shape add of a padded and a dense tensor
 * does too. Pools with windows: tests/test_vk_conv.c. */
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/plan.h"
#include "tests/vk_check.h"

static const char *dts[] = {"fp32", "fp16", "bf16"};
static const double tols[] = {VC_TOL_F32, VC_TOL_F16, VC_TOL_BF16};

static char json[16384];

/* A tensor's JSON text {"name":..,"shape":..} in one of a few rotating buffers. */
static const char *tt(const char *name, const char *shape)
{
    static char bufs[8][128];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, 128, "{\"name\":\"%s\",\"shape\":%s}", name, shape);
    return b;
}

/* conv2d `name` without bias: x -> out, weight w [shape] (parameter p_w). */
static void g_conv(TuGraph *g, const char *name, const char *x, const char *xs, const char *w,
                   const char *ws, const char *out, const char *os, const char *attrs)
{
    char pw[32], ins[256];
    snprintf(pw, sizeof pw, "p_%s", w);
    tu_graph_weight(g, w, ws);
    snprintf(ins, sizeof ins, "%s,%s", tt(x, xs), tt(pw, ws));
    tu_graph_node(g, name, "aten.conv2d.default", ins, tt(out, os), attrs);
}

/* A pool's shapes and attributes: x [n, c, h, w] to y [n, c, oh, ow]; conv: x is the output of
 * a 3x3 conv from 3 channels (padded when c is not a multiple of 32), else a graph input. */
typedef struct PoolG {
    const char *op, *attrs;
    int64_t n, c, h, w, oh, ow;
    bool conv;
} PoolG;

static void pool_json(const PoolG *q)
{
    char xs[96], ys[96], in3[96], ws[96];
    snprintf(xs, sizeof xs, "[%lld,%lld,%lld,%lld]", (long long)q->n, (long long)q->c,
             (long long)q->h, (long long)q->w);
    snprintf(ys, sizeof ys, "[%lld,%lld,%lld,%lld]", (long long)q->n, (long long)q->c,
             (long long)q->oh, (long long)q->ow);
    snprintf(in3, sizeof in3, "[%lld,3,%lld,%lld]", (long long)q->n, (long long)q->h,
             (long long)q->w);
    snprintf(ws, sizeof ws, "[%lld,3,3,3]", (long long)q->c);
    static TuGraph g;
    memset(&g, 0, sizeof g);
    tu_cat(g.in, sizeof g.in, "%s", tt("x", q->conv ? in3 : xs));
    tu_cat(g.out, sizeof g.out, "%s", tt("y", ys));
    if (q->conv) g_conv(&g, "conv", "x", in3, "cw", ws, "xc", xs, "\"padding\":[1,1]");
    tu_graph_node(&g, "pool", q->op, tt(q->conv ? "xc" : "x", xs), tt("y", ys), q->attrs);
    tu_graph_json(&g, json, sizeof json);
}

/* The plan's kernels of stem `stem`; *k the last of them. */
static int count_stem(const Plan *p, const char *stem, const PlanKernel **k)
{
    int n = 0;
    for (int i = 0; i < p->nkernels; i++)
        if (strcmp(p->kernels[i].shader, stem) == 0) n++, *k = &p->kernels[i];
    return n;
}

static const char *const ADAPTIVE = "aten.adaptive_avg_pool2d.default";
static const char *const AVG = "aten.avg_pool2d.default";
static const char *const MAX = "aten.max_pool2d.default";

/* Global pools against the CPU reference in the dtypes of mask (bit t: dts[t]). */
enum { F32 = 1, F16 = 2, BF16 = 4 };
static void check_global(const PoolG *q, unsigned mask)
{
    pool_json(q);
    for (int t = 0; t < 3; t++)
        if (mask & (1u << t)) vc_check_json(json, dts[t], tols[t], "pool2d_global");
}

static void test_global_adaptive(void **state)
{
    (void)state;
    static const char *const a = "\"output_size\":[1,1]";
    /* 13x11 and 37x29: element loads, the latter two trips per lane in f32 (1073 > 4 * 256);
     * 8x6: 16-byte vectors (48 a multiple of 8 and 4); 1x1 and channels 1; padded inputs */
    static const struct {
        PoolG q;
        unsigned dtypes;
    } cases[] = {
        {{ADAPTIVE, a, 2, 20, 13, 11, 1, 1, false}, F32 | F16 | BF16},
        {{ADAPTIVE, a, 1, 37, 37, 29, 1, 1, false}, F32},
        {{ADAPTIVE, a, 2, 45, 8, 6, 1, 1, false}, F32},
        {{ADAPTIVE, a, 2, 5, 1, 1, 1, 1, false}, F16},
        {{ADAPTIVE, a, 3, 1, 7, 7, 1, 1, false}, F16},
        {{ADAPTIVE, a, 2, 20, 13, 11, 1, 1, true}, F16},
        {{ADAPTIVE, a, 2, 20, 8, 6, 1, 1, true}, F16 | BF16},
        /* 112x112 once: 1568 vectors a row in f16, two trips per lane of 256 */
        {{ADAPTIVE, a, 1, 3, 112, 112, 1, 1, false}, F16},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_global(&cases[i].q, cases[i].dtypes);
}

static void test_global_windows(void **state)
{
    (void)state;
    /* avg and max with the kernel the input's size: stride absent or any, ceil_mode, a divisor
     * override; count_include_pad is moot without padding */
    static const PoolG cases[] = {
        {AVG, "\"kernel_size\":[13,11]", 2, 20, 13, 11, 1, 1, true},
        {AVG, "\"kernel_size\":[13,11],\"stride\":[2,2],\"ceil_mode\":true", 2, 20, 13, 11, 1, 1,
         false},
        {AVG, "\"kernel_size\":[8,6],\"divisor_override\":7", 2, 33, 8, 6, 1, 1, true},
        {MAX, "\"kernel_size\":[13,11]", 2, 20, 13, 11, 1, 1, true},
        {MAX, "\"kernel_size\":[8,6],\"stride\":[1,1],\"dilation\":[1,1]", 1, 9, 8, 6, 1, 1, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_global(&cases[i], i == 3 ? F32 | F16 : F16);
}

/* Windows that cover the input but are not one plain window keep the windowed kernel. */
static void test_not_global(void **state)
{
    (void)state;
    static const PoolG cases[] = {
        /* padding 1: the one window counts padding (count_include_pad) */
        {AVG, "\"kernel_size\":[13,11],\"padding\":[1,1]", 2, 20, 13, 11, 1, 1, true},
        {ADAPTIVE, "\"output_size\":[2,1]", 2, 20, 13, 11, 2, 1, true},
        {ADAPTIVE, "\"output_size\":[1,3]", 1, 20, 13, 11, 1, 3, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pool_json(&cases[i]);
        vc_check_json(json, "fp16", VC_TOL_F16, "pool2d");
        Pipeline p;
        vc_compile_json_as(json, "fp16", &p);
        const PlanKernel *k = NULL;
        assert_int_equal(count_stem(p.plan, "pool2d_global", &k), 0);
        pipeline_free(&p);
    }
}

/* Lowering takes the global kernel with lanes and vectors from the row length: spec {256, TPR,
 * VEC}, one row per TPR lanes, workgroups for every row. */
static void test_global_lowering(void **state)
{
    (void)state;
    static const struct {
        PoolG q;
        const char *dtype;
        uint32_t tpr, vec, groups;
    } cases[] = {
        /* 12544 / 8 = 1568 vectors: 256 lanes (392 wanted); 3 rows, 3 workgroups */
        {{ADAPTIVE, "\"output_size\":[1,1]", 1, 3, 112, 112, 1, 1, false}, "fp16", 256, 8, 3},
        /* f32: 4 a vector, 3136 vectors, 256 lanes */
        {{ADAPTIVE, "\"output_size\":[1,1]", 1, 3, 112, 112, 1, 1, false}, "fp32", 256, 4, 3},
        /* 143 elements, not a multiple of a vector: element loads, 64 lanes (36 wanted); 40
         * rows of 64 lanes, 4 a workgroup */
        {{ADAPTIVE, "\"output_size\":[1,1]", 2, 20, 13, 11, 1, 1, true}, "fp16", 64, 1, 10},
        /* 28x28: 98 vectors, 32 lanes; 72 rows, 8 a workgroup */
        {{AVG, "\"kernel_size\":[28,28]", 1, 72, 28, 28, 1, 1, false}, "bf16", 32, 8, 9},
        /* 7x7: 49 elements, 16 lanes */
        {{MAX, "\"kernel_size\":[7,7]", 1, 1152, 7, 7, 1, 1, false}, "fp16", 16, 1, 72},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pool_json(&cases[i].q);
        Pipeline p;
        vc_compile_json_as(json, cases[i].dtype, &p);
        const PlanKernel *k = NULL;
        assert_int_equal(count_stem(p.plan, "pool2d_global", &k), 1);
        assert_int_equal(count_stem(p.plan, "pool2d", &k), 0);
        count_stem(p.plan, "pool2d_global", &k);
        assert_int_equal(k->nspec, 3);
        assert_int_equal(k->spec[0], 256);
        assert_int_equal(k->spec[1], cases[i].tpr);
        assert_int_equal(k->spec[2], cases[i].vec);
        assert_int_equal(k->groups[0] * k->groups[1] * k->groups[2], cases[i].groups);
        pipeline_free(&p);
    }
}

/* ---- the squeeze-excite layout ------------------------------------------------------------ */

/* x [2,3,13,11] -> conv 3x3 to C (padded unless C is a multiple of 32) -> relu r -> global
 * average pool -> 1x1 conv to 8 -> relu -> 1x1 conv to C -> hardsigmoid s [2,C,1,1]; outputs
 * y = s * r (broadcast over H, W) and z = r + x2 (same shape, x2 a dense graph input). */
static void se_json(int64_t c)
{
    char xc[64], s1[64], wc[64], w1[64], w2[64], ins[256];
    snprintf(xc, sizeof xc, "[2,%lld,13,11]", (long long)c);
    snprintf(s1, sizeof s1, "[2,%lld,1,1]", (long long)c);
    snprintf(wc, sizeof wc, "[%lld,3,3,3]", (long long)c);
    snprintf(w1, sizeof w1, "[8,%lld,1,1]", (long long)c);
    snprintf(w2, sizeof w2, "[%lld,8,1,1]", (long long)c);
    static const char *const q = "[2,8,1,1]";
    static TuGraph g;
    memset(&g, 0, sizeof g);
    tu_cat(g.in, sizeof g.in, "%s,%s", tt("x", "[2,3,13,11]"), tt("x2", xc));
    tu_cat(g.out, sizeof g.out, "%s,%s", tt("y", xc), tt("z", xc));
    g_conv(&g, "conv", "x", "[2,3,13,11]", "cw", wc, "xc", xc, "\"padding\":[1,1]");
    tu_graph_node(&g, "r", "aten.relu.default", tt("xc", xc), tt("r", xc), "");
    tu_graph_node(&g, "pool", ADAPTIVE, tt("r", xc), tt("p", s1), "\"output_size\":[1,1]");
    g_conv(&g, "fc1", "p", s1, "w1", w1, "f1", q, "");
    tu_graph_node(&g, "r1", "aten.relu.default", tt("f1", q), tt("q", q), "");
    g_conv(&g, "fc2", "q", q, "w2", w2, "f2", s1, "");
    tu_graph_node(&g, "hs", "aten.hardsigmoid.default", tt("f2", s1), tt("s", s1), "");
    snprintf(ins, sizeof ins, "%s,%s", tt("s", s1), tt("r", xc));
    tu_graph_node(&g, "mul", "aten.mul.Tensor", ins, tt("y", xc), "");
    snprintf(ins, sizeof ins, "%s,%s", tt("r", xc), tt("x2", xc));
    tu_graph_node(&g, "add", "aten.add.Tensor", ins, tt("z", xc), "");
    tu_graph_json(&g, json, sizeof json);
}

static void test_se_layout(void **state)
{
    (void)state;
    static const int64_t chans[] = {20, 45, 64};
    for (size_t i = 0; i < sizeof chans / sizeof chans[0]; i++) {
        se_json(chans[i]);
        Pipeline p;
        vc_compile_json_as(json, "fp16", &p);
        const PlanKernel *k = NULL;
        /* the pool, the scale multiply and the add read the padded tensors as they are */
        assert_int_equal(count_stem(p.plan, "depad", &k), 0);
        assert_int_equal(count_stem(p.plan, "pool2d_global", &k), 1);
        assert_int_equal(count_stem(p.plan, "binary", &k), 2);
        bool padded = false;
        for (int t = 0; t < p.plan->ntensors; t++)
            padded |= strcmp(p.plan->tensors[t].name, "r") == 0 && p.plan->tensors[t].padded;
        assert_true(padded == (chans[i] % 32 != 0));
        pipeline_free(&p);
        for (int t = 0; t < (i == 0 ? 2 : 1); t++)
            vc_check_json(json, dts[1 - t], tols[1 - t], "binary");
    }
}

TU_MAIN(test_global_adaptive, test_global_windows, test_not_global, test_global_lowering,
        test_se_layout)
