/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * The conv_scale fusion (compiler/fuse_patterns.c) on Vulkan against the CPU reference: a
 * squeeze-excite block's x * s, s = sigmoid(excite(silu(squeeze(pool(x))))) one value per
 * (image, channel), read by the projection conv, which scales x as it loads it
 * (shaders/conv2d_common.glsl CONV_SCALE). Batch 2 (s differs per image), channels off the
 * channel tile (x and s read padded), x * s and s * x, a 1x1 and a 3x3 consumer (its zero padding),
 * groups, a depthwise consumer, a residual add (conv2d_sbr; the residual x itself), a K split
 * (conv2d_spart and the plain reduce), a scale shared by the batch ([1, C, 1, 1] graph input);
 * fp32, fp16, bf16, on every tier vk_check offers (portable, the direct kernel of a CPU device,
 * the emulated tensor-core kernels). Each plan has no binary kernel (the multiply is gone) and
 * a conv of the scaled family. Not fused: a product with another consumer (a near miss naming
 * it), a pointwise conv over a 1x1 map (the matrix-vector kernels), the pattern switched off
 * (--no-fuse conv_scale: conv_add and the binary kernel back). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/lower/kernels.h"
#include "compiler/pass.h"
#include "tests/conv_graph.h"
#include "tests/vk_check.h"

/* One squeeze-excite block feeding a conv: x0 [n, c0, h, w] -> 3x3 conv (bias) -> silu = xa
 * [n, c, h, w] -> pool -> 1x1 conv to 8 -> silu -> 1x1 conv to c -> sigmoid = s [n, c, 1, 1];
 * p = xa * s (swap: s * xa) -> conv (k x k, `groups`, pad k / 2, bias) to cout (res 1: + x0,
 * cout = c0; res 2: + xa itself, unscaled, cout = c) = y. twice: p is a graph output too (a
 * second consumer). */
typedef struct SeCase {
    int64_t n, c0, c, h, w, cout, k, groups;
    bool swap;
    int res;
    bool twice;
    const char *expect; /* the consumer's family */
    int quick;          /* the dtype (gb_dtypes) `make test` checks, the others are test-long's */
} SeCase;

static const char *se_graph(const SeCase *sc, int64_t ys[4])
{
    int64_t x0[4] = {sc->n, sc->c0, sc->h, sc->w}, xa[4] = {sc->n, sc->c, sc->h, sc->w};
    int64_t pl[4] = {sc->n, sc->c, 1, 1}, sq[4] = {sc->n, 8, 1, 1};
    ys[0] = sc->n, ys[1] = sc->cout, ys[2] = sc->h, ys[3] = sc->w;
    char pad[64];
    snprintf(pad, sizeof pad, "\"padding\":[%lld,%lld]", (long long)(sc->k / 2),
             (long long)(sc->k / 2));
    Gb g = {0};
    gb_input(&g, "x", x0);
    gb_conv(&g, "ca", "x", x0, sc->c, 1, 3, 3, true, "cao", xa, "\"padding\":[1,1]");
    gb_node(&g, "sa", "aten.silu.default", (const char *[]){"cao", NULL}, (const int64_t *[]){xa},
            "xa", xa, NULL);
    gb_node(&g, "pool", "aten.adaptive_avg_pool2d.default", (const char *[]){"xa", NULL},
            (const int64_t *[]){xa}, "pl", pl, "\"output_size\":[1,1]");
    gb_conv(&g, "fc1", "pl", pl, 8, 1, 1, 1, true, "f1", sq, NULL);
    gb_node(&g, "s1", "aten.silu.default", (const char *[]){"f1", NULL}, (const int64_t *[]){sq},
            "f1s", sq, NULL);
    gb_conv(&g, "fc2", "f1s", sq, sc->c, 1, 1, 1, true, "f2", pl, NULL);
    gb_node(&g, "sg", "aten.sigmoid.default", (const char *[]){"f2", NULL}, (const int64_t *[]){pl},
            "s", pl, NULL);
    gb_node(&g, "mul", "aten.mul.Tensor",
            sc->swap ? (const char *[]){"s", "xa", NULL} : (const char *[]){"xa", "s", NULL},
            sc->swap ? (const int64_t *[]){pl, xa} : (const int64_t *[]){xa, pl}, "p", xa, NULL);
    gb_conv(&g, "proj", "p", xa, sc->cout, sc->groups, sc->k, sc->k, true, sc->res ? "po" : "y", ys,
            pad);
    if (sc->res)
        gb_node(&g, "add", "aten.add.Tensor",
                (const char *[]){"po", sc->res == 2 ? "xa" : "x", NULL},
                (const int64_t *[]){ys, sc->res == 2 ? xa : x0}, "y", ys, NULL);
    if (sc->twice) gb_output(&g, "p", xa);
    return gb_json(&g, "y", ys);
}

/* The default plan of json in dtype: its binary kernels and its scaled convs (KF_SCALE). */
static void plan_counts(const char *json, const char *dtype, int *binary, int *scaled)
{
    Pipeline pipe;
    vc_compile_json_as(json, dtype, &pipe);
    *binary = *scaled = 0;
    for (int k = 0; k < pipe.plan->nkernels; k++) {
        const char *s = pipe.plan->kernels[k].shader;
        const KernelRow *r = kernel_row(s);
        *binary += kernel_kind_of(s) == KK_binary;
        *scaled += r && (r->key.flags & KF_SCALE) != 0;
    }
    pipeline_free(&pipe);
}

static void se_case(const SeCase *sc)
{
    int64_t ys[4];
    const char *json = se_graph(sc, ys);
    for (int t = 0; t < 3; t++) {
        if (!tu_here(t != sc->quick)) continue;
        int binary, scaled;
        plan_counts(json, gb_dtypes[t], &binary, &scaled);
        assert_int_equal(binary, sc->twice ? 1 : 0);
        assert_int_equal(scaled, sc->twice ? 0 : 1);
        vc_check_json(json, gb_dtypes[t], gb_tols[t], sc->expect);
    }
}

static void test_se_scale(void **state)
{
    (void)state;
    /* quick: each case in one dtype (fp16 where the emulated tensor-core conv can take it) */
    static const SeCase cases[] = {
        /* n c0  c   h   w cout k  g  swap   res    twice  expect       quick */
        {2, 6, 20, 9, 7, 12, 1, 1, false, 0, false, "conv2d_sb", 0},
        {2, 16, 20, 9, 7, 16, 1, 1, true, 1, false, "conv2d_sbr", 1},    /* s * x, residual */
        {2, 6, 20, 9, 7, 20, 1, 1, false, 2, false, "conv2d_sb", 1},     /* + x, unscaled */
        {2, 5, 36, 7, 6, 16, 3, 1, false, 0, false, "conv2d_sb", 1},     /* 3x3: zero padding */
        {2, 6, 24, 7, 5, 6, 3, 2, true, 1, false, "conv2d_sbr", -1},     /* groups 2 */
        {2, 6, 20, 9, 7, 20, 3, 20, false, 0, false, "conv2d_dw_sb", 1}, /* depthwise */
        {1, 6, 64, 9, 9, 40, 3, 1, false, 0, false, "conv2d_sb", 1},     /* K 576: split */
        {2, 6, 20, 9, 7, 12, 1, 1, false, 0, true, "conv2d_b", 1},       /* p read twice */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        se_case(&cases[i]);
}

/* The K split's first pass takes the scale (conv2d_spart, the reduce conv2d_red_b) on the portable
 * tier of a GPU (the direct kernel of a CPU device never splits): the plan of the split case. */
static void test_se_split_plan(void **state)
{
    (void)state;
    int64_t ys[4];
    const SeCase sc = {1, 6, 64, 9, 9, 40, 3, 1, false, 0, false, "conv2d_sb", 1};
    CompileOptions o;
    vc_options(&o);
    o.compute = DT_F16;
    o.tier = TIER_PORTABLE;
    o.cpu_device = false;
    Pipeline pipe = tu_compile_json(se_graph(&sc, ys), &o);
    bool part = false, red = false;
    for (int k = 0; k < pipe.plan->nkernels; k++) {
        part |= strcmp(pipe.plan->kernels[k].shader, "conv2d_spart") == 0;
        red |= strcmp(pipe.plan->kernels[k].shader, "conv2d_red_b") == 0;
        assert_int_not_equal(kernel_kind_of(pipe.plan->kernels[k].shader), KK_binary);
    }
    assert_true(part && red);
    pipeline_free(&pipe);
}

/* x * s of graph inputs x [2, 20, h, w] and s [1, 20, 1, 1] (dense), read by a k x k conv (pad
 * k / 2, bias when k is 1) to 9 channels: y [2, 9, h, w]. */
static const char *shared_scale_graph(int64_t h, int64_t w, int64_t k, int64_t ys[4])
{
    int64_t xs[4] = {2, 20, h, w}, ss[4] = {1, 20, 1, 1};
    ys[0] = 2, ys[1] = 9, ys[2] = h, ys[3] = w;
    Gb g = {0};
    gb_input(&g, "x", xs);
    gb_input(&g, "s", ss);
    gb_node(&g, "mul", "aten.mul.Tensor", (const char *[]){"x", "s", NULL},
            (const int64_t *[]){xs, ss}, "p", xs, NULL);
    gb_conv(&g, "c", "p", xs, 9, 1, k, k, k == 1, "y", ys, k == 3 ? "\"padding\":[1,1]" : NULL);
    return gb_json(&g, "y", ys);
}

/* Does the fuse pass of json (fp16) record a conv_scale near miss whose reason contains `why`? */
static bool near_miss(const char *json, const char *why)
{
    Pipeline pipe;
    vc_compile_json_as(json, "fp16", &pipe);
    bool miss = false;
    for (int i = 0; i < pipe.g->nmisses; i++)
        miss |= strcmp(pipe.g->misses[i].pattern, "conv_scale") == 0 &&
                strstr(pipe.g->misses[i].reason, why) != NULL;
    pipeline_free(&pipe);
    return miss;
}

/* A scale shared by the batch: x [2, 20, 7, 5] and s [1, 20, 1, 1] graph inputs (dense), a 3x3
 * conv without bias (conv2d_s): the scale's batch stride is 0. */
static void test_se_shared_scale(void **state)
{
    (void)state;
    int64_t ys[4];
    const char *json = shared_scale_graph(7, 5, 3, ys);
    for (int t = 0; t < 3; t++) {
        if (!tu_here(t != 2)) continue;
        int binary, scaled;
        plan_counts(json, gb_dtypes[t], &binary, &scaled);
        assert_int_equal(binary, 0);
        assert_int_equal(scaled, 1);
        vc_check_json(json, gb_dtypes[t], gb_tols[t], "conv2d_s");
    }
}

/* Where it does not fuse: a product with a second consumer (the near miss says so), a pointwise
 * conv over a 1x1 map (the matrix-vector kernels), and --no-fuse conv_scale (the conv keeps its
 * conv_add instance, the multiply its binary kernel). */
static void test_se_not_fused(void **state)
{
    (void)state;
    if (tu_long()) skip(); /* the quick suite's */
    int64_t ys[4];
    const SeCase twice = {2, 6, 20, 9, 7, 12, 1, 1, false, 0, true, "conv2d_b", 1};
    assert_true(near_miss(se_graph(&twice, ys), "other consumers"));
    const char *json = shared_scale_graph(1, 1, 1, ys);
    assert_true(near_miss(json, "matrix-vector"));
    int binary, scaled;
    plan_counts(json, "fp16", &binary, &scaled);
    assert_int_equal(binary, 1);
    assert_int_equal(scaled, 0);

    const SeCase res = {2, 6, 20, 9, 7, 6, 1, 1, false, 1, false, "conv2d_br", 1};
    json = se_graph(&res, ys);
    vc_set_no_fuse("conv_scale");
    plan_counts(json, "fp16", &binary, &scaled);
    assert_int_equal(binary, 1);
    assert_int_equal(scaled, 0);
    vc_check_json(json, "fp16", VC_TOL_F16, "conv2d_br");
    vc_set_no_fuse(NULL);
}

TU_MAIN(test_se_scale, test_se_split_plan, test_se_shared_scale, test_se_not_fused)
