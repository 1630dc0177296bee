/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * conv2d and pool2d kernels on Vulkan against the CPU reference: groups 1 / 2 / depthwise,
 * stride, padding (ints, 'same', 'valid'), dilation, 1x1 / 3x3 / 7x7 and rectangular kernels,
 * bias or none, channel counts that are not multiples of the channel tile or the register tile,
 * N = 2 and odd spatial sizes; the fused conv_relu, conv_add, conv_add_relu (a residual from
 * another conv, the conv's own input, the conv output itself), every activation of the epilogue
 * (alone, after an add, on a depthwise conv, in a K split's reduce); conv -> conv chains so
 * padded inputs are read; pools with every attribute variant (ceil_mode windows, count_include_pad,
 * divisor_override, dilation, adaptive sizes); f32 and f16, bf16 for coverage. The tiling of the
 * implicit-GEMM kernels: several tiles each way, K splits and their reduce with every epilogue.
 * Pointwise convs over a 1x1 map (squeeze-excite) as matrix-vector products: both kernels, every
 * activation, padded rows in and out.
 * Every case runs per kernel tier (tests/vk_check.c: portable, the emulated tensor-core kernels,
 * and nv-coopmat where the device has it; NPU_TEST_TIER picks one). A large graph input packed
 * on the device (pass pack-inputs) for odd channel counts. `make test` runs a case per code path,
 * `make test-long` the rest (L, here()). */
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

/* `make test` runs a case per code path (kernel shape, epilogue, tile and split, pool variant);
 * `make test-long` (tu_long) the rest: L marks those, and here() says whether a case of the
 * quick (false) or long (true) set runs in this suite. */
#define L 1
#define Q 0
#define here tu_here

/* ---- conv2d ------------------------------------------------------------------------------- */

static void test_conv_shapes(void **state)
{
    (void)state;
    static const ConvCase cases[] = {
        /* n  c  h   w  cout g  kh kw sh sw ph pw dh dw bias */
        {2, 3, 13, 11, 5, 1, 3, 3, 1, 1, 1, 1, 1, 1, true, NULL, "conv2d_b", Q},
        {2, 20, 13, 11, 33, 1, 3, 3, 2, 2, 1, 1, 1, 1, false, NULL, "conv2d", Q},
        {2, 20, 9, 7, 40, 1, 1, 1, 1, 1, 0, 0, 1, 1, true, NULL, "conv2d_b", L},
        {1, 3, 23, 21, 16, 1, 7, 7, 2, 2, 3, 3, 1, 1, true, NULL, "conv2d_b", Q},
        {2, 5, 13, 11, 7, 1, 3, 3, 1, 1, 2, 2, 2, 2, false, NULL, "conv2d", L},
        {2, 6, 12, 10, 8, 1, 3, 2, 1, 2, 0, 1, 2, 1, true, NULL, "conv2d_b", L},
        {1, 300, 5, 3, 70, 1, 1, 1, 1, 1, 0, 0, 1, 1, false, NULL, "conv2d",
         Q}, /* long K, 2 tiles */
        {1, 4, 9, 8, 6, 1, 4, 4, 1, 1, 0, 0, 1, 1, true, "same", "conv2d_b", Q},
        {1, 4, 9, 8, 6, 1, 3, 3, 2, 1, 0, 0, 1, 1, false, "valid", "conv2d", Q},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        gb_conv_case(&cases[i], 0, 2);
    static const ConvCase *bf16[] = {&cases[0], &cases[1]};
    for (int i = 0; i < 2; i++) {
        ConvCase c = *bf16[i];
        c.lng = L;
        gb_conv_case(&c, 2, 3);
    }
}

/* Grouped convs: groups < C on the implicit GEMM; groups = C (one input channel per group) on
 * the depthwise kernel (tests/test_vk_dwconv.c checks it in depth), and with conv.dw=0 on the
 * implicit GEMM, which still takes the depthwise convs the depthwise kernel does not. */
static void test_conv_groups(void **state)
{
    (void)state;
    static const ConvCase cases[] = {
        {2, 8, 13, 11, 6, 2, 3, 3, 1, 1, 1, 1, 1, 1, true, NULL, "conv2d_b", L}, /* groups 2 */
        {2, 12, 13, 11, 12, 12, 3, 3, 2, 2, 1, 1, 1, 1, false, NULL, "conv2d_dw",
         Q},                                                                         /* depthwise */
        {2, 6, 13, 11, 12, 6, 3, 3, 1, 1, 1, 1, 1, 1, true, NULL, "conv2d_dw_b", L}, /* mult. 2 */
        {1, 40, 9, 7, 40, 40, 5, 5, 1, 1, 4, 4, 2, 2, true, NULL, "conv2d_dw_b", Q}, /* dilated */
        {1, 64, 7, 5, 96, 2, 3, 3, 1, 1, 1, 1, 1, 1, false, NULL, "conv2d", Q}, /* 48 per group */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        gb_conv_case(&cases[i], 0, 2);
    ConvCase c = cases[1];
    c.lng = L;
    gb_conv_case(&c, 2, 3);
    vc_tune("conv.dw=0");
    for (size_t i = 1; i < 4; i++) {
        c = cases[i];
        c.expect = c.bias ? "conv2d_b" : "conv2d";
        gb_conv_case(&c, 0, 2);
    }
    vc_tune(NULL);
}

/* The tiling of the implicit-GEMM kernels (portable and tensor-core): several channel and
 * pixel tiles with partial last ones, K splits with a short last split and their reduce pass
 * with every epilogue, groups with 16+ channels each (tensor cores), stride, dilation, a
 * ResNet-stem-like 7x7 / 2 and a 7x7-stage-like shape (few tiles, long K). */
static void test_conv_gemm_tiles(void **state)
{
    (void)state;
    static const ConvCase cases[] = {
        /* n  c  h   w  cout g  kh kw sh sw ph pw dh dw bias */
        {1, 64, 7, 7, 130, 1, 3, 3, 1, 1, 1, 1, 1, 1, true, NULL, "conv2d_b",
         Q}, /* M 64+64+2, K 576 */
        {2, 40, 11, 9, 96, 1, 1, 1, 1, 1, 0, 0, 1, 1, false, NULL, "conv2d",
         L}, /* N 198: 4 tiles */
        {1, 32, 15, 13, 64, 2, 3, 3, 2, 2, 1, 1, 1, 1, true, NULL, "conv2d_b",
         L},                                                                      /* 32 per group */
        {1, 3, 32, 30, 24, 1, 7, 7, 2, 2, 3, 3, 1, 1, true, NULL, "conv2d_b", Q}, /* stem, K 147 */
        {1, 48, 9, 9, 40, 1, 3, 3, 1, 1, 2, 2, 2, 2, false, NULL, "conv2d", L},   /* dilation 2 */
        {1, 100, 5, 6, 17, 1, 3, 3, 1, 1, 1, 1, 1, 1, true, NULL, "conv2d_b", L}, /* K 900 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        gb_conv_case(&cases[i], 0, 3);
}

/* conv.bm / conv.bn: the SIMT conv's tile from the tuning table reaches the plan (spec 0..2:
 * workgroup, BM, BN; a pair over 512 invocations keeps the automatic tile), and every tile shape
 * the knobs allow computes the conv: 16 to 128 each way, partial tiles both ways, a K split with
 * its reduce (300 channels over 15 pixels), f32 so the tensor-core tiers take the SIMT kernel too.
 */
/* The SIMT conv's tile in the plan of a 1x1 conv, 40 -> 130 channels over 7x7 pixels, under the
 * knobs set: spec 0..2 (workgroup, BM, BN). */
static void planned_tile(uint32_t spec[3])
{
    Gb g = {0};
    int64_t xs[4] = {1, 40, 7, 7}, ys[4] = {1, 130, 7, 7};
    gb_input(&g, "x", xs);
    gb_conv(&g, "conv", "x", xs, 130, 1, 1, 1, true, "y", ys, "");
    Pipeline pipe;
    vc_compile_json(gb_json(&g, "y", ys), &pipe);
    const PlanKernel *k = gb_first_conv(pipe.plan);
    memcpy(spec, k->spec, 3 * sizeof *spec);
    pipeline_free(&pipe);
}

static void test_conv_simt_tiles(void **state)
{
    (void)state;
    static const ConvCase cases[] = {
        /* n  c  h   w  cout g  kh kw sh sw ph pw dh dw bias */
        {1, 40, 7, 7, 130, 1, 1, 1, 1, 1, 0, 0, 1, 1, true, NULL, "conv2d_b", Q}, /* 49 pixels */
        {1, 300, 5, 3, 70, 1, 1, 1, 1, 1, 0, 0, 1, 1, false, NULL, "conv2d", Q},  /* K split */
        {2, 12, 9, 7, 20, 1, 3, 3, 1, 1, 1, 1, 1, 1, true, NULL, "conv2d_b", L},  /* 3x3, N 2 */
    };
    static const uint32_t tiles[][2] = {{16, 16}, {128, 16}, {16, 128}, {128, 64}, {32, 16}};
    char a[64];
    uint32_t spec[3];
    for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++) {
        vc_tune(NULL);
        snprintf(a, sizeof a, "conv.bm=%u", tiles[i][0]);
        vc_tune(a);
        snprintf(a, sizeof a, "conv.bn=%u", tiles[i][1]);
        vc_tune(a);
        planned_tile(spec);
        assert_int_equal(spec[0], tiles[i][0] * tiles[i][1] / 16);
        assert_int_equal(spec[1], tiles[i][0]);
        assert_int_equal(spec[2], tiles[i][1]);
        for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++)
            gb_conv_case(&cases[j], 0, 1);
    }
    vc_tune(NULL);
    vc_tune("conv.bm=128");
    vc_tune("conv.bn=128"); /* 1024 invocations: the automatic tile */
    planned_tile(spec);
    assert_int_equal(spec[1], 32); /* 130 channels, 49 pixels: kc_gemm_tile's 32 x 64 */
    assert_int_equal(spec[2], 64);
    vc_tune(NULL);
}

/* The K-split reduce with each residual source on shapes the tensor-core tier takes (64+
 * channels, K 576): a residual from elsewhere (a relu of a strided 1x1 conv; bias on the main
 * conv), the conv's own input (bound to the reduce as its residual), and relu after. */
static void test_conv_split_residual(void **state)
{
    (void)state;
    int64_t xs[4] = {1, 64, 9, 9}, a[4] = {1, 96, 5, 5}, c[4] = {1, 64, 9, 9};
    Gb g = {0};
    gb_input(&g, "x", xs);
    gb_conv(&g, "down", "x", xs, 96, 1, 1, 1, false, "d", a, "\"stride\":[2,2]");
    gb_node(&g, "dr", "aten.relu.default", (const char *[]){"d", NULL}, (const int64_t *[]){a},
            "dd", a, NULL);
    gb_conv(&g, "main", "x", xs, 96, 1, 3, 3, true, "m", a, "\"stride\":2,\"padding\":1");
    gb_node(&g, "add", "aten.add.Tensor", (const char *[]){"m", "dd", NULL},
            (const int64_t *[]){a, a}, "s", a, NULL);
    gb_node(&g, "r", "aten.relu.default", (const char *[]){"s", NULL}, (const int64_t *[]){a}, "y",
            a, NULL);
    for (int t = 0; t < 3; t++)
        if (here(t == 2)) gb_check(&g, "y", a, gb_dtypes[t], gb_tols[t], "conv2d_br");
    Gb h = {0};
    gb_input(&h, "x", xs);
    gb_conv(&h, "c1", "x", xs, 64, 1, 3, 3, true, "c1o", c, "\"padding\":[1,1]");
    gb_conv(&h, "c2", "c1o", c, 64, 1, 3, 3, false, "c2o", c, "\"padding\":[1,1]");
    gb_node(&h, "add", "aten.add.Tensor", (const char *[]){"c2o", "c1o", NULL},
            (const int64_t *[]){c, c}, "y", c, NULL);
    for (int t = 0; t < 3; t++)
        if (here(t == 2)) gb_check(&h, "y", c, gb_dtypes[t], gb_tols[t], "conv2d");
}

/* ---- fused conv patterns and padded inputs ------------------------------------------------ */

/* x -> conv1 -> relu (conv_relu, padded output of 20 channels) -> conv2 reads it padded ->
 * + conv1's output (the conv's own input) -> relu: conv_add_relu whose residual is x. */
static void test_conv_relu_chain(void **state)
{
    (void)state;
    int64_t xs[4] = {2, 3, 13, 11}, a[4] = {2, 20, 13, 11};
    Gb g = {0};
    gb_input(&g, "x", xs);
    gb_conv(&g, "c1", "x", xs, 20, 1, 3, 3, true, "c1o", a, "\"padding\":[1,1]");
    gb_node(&g, "r1", "aten.relu.default", (const char *[]){"c1o", NULL}, (const int64_t *[]){a},
            "r1o", a, NULL);
    gb_conv(&g, "c2", "r1o", a, 20, 1, 3, 3, true, "c2o", a, "\"padding\":[1,1]");
    gb_node(&g, "add", "aten.add.Tensor", (const char *[]){"c2o", "r1o", NULL},
            (const int64_t *[]){a, a}, "s", a, NULL);
    gb_node(&g, "r2", "aten.relu.default", (const char *[]){"s", NULL}, (const int64_t *[]){a}, "y",
            a, NULL);
    for (int t = 0; t < 3; t++)
        if (here(t == 2)) gb_check(&g, "y", a, gb_dtypes[t], gb_tols[t], "conv2d_b");
}

/* A residual from another conv (bias on one, none on the other), with and without the relu,
 * and a stride-2 downsample branch as in resnet's first block of a stage. */
static void test_conv_add_residual(void **state)
{
    (void)state;
    int64_t xs[4] = {2, 10, 13, 11}, a[4] = {2, 33, 7, 6};
    for (int relu = 0; relu < 2; relu++) {
        Gb g = {0};
        gb_input(&g, "x", xs);
        gb_conv(&g, "down", "x", xs, 33, 1, 1, 1, false, "d", a, "\"stride\":[2,2]");
        gb_conv(&g, "main", "x", xs, 33, 1, 3, 3, true, "m", a, "\"stride\":2,\"padding\":1");
        gb_node(&g, "add", "aten.add.Tensor", (const char *[]){"d", "m", NULL},
                (const int64_t *[]){a, a}, relu ? "s" : "y", a, NULL);
        if (relu)
            gb_node(&g, "r", "aten.relu.default", (const char *[]){"s", NULL},
                    (const int64_t *[]){a}, "y", a, NULL);
        for (int t = 0; t < 2; t++)
            if (here(relu == 0)) gb_check(&g, "y", a, gb_dtypes[t], gb_tols[t], "conv2d_r");
    }
}

/* add(c, c): the fused add reads the conv output twice. */
static void test_conv_add_self(void **state)
{
    (void)state;
    int64_t xs[4] = {1, 4, 9, 7}, a[4] = {1, 6, 9, 7};
    if (tu_long()) skip(); /* the quick suite's */
    Gb g = {0};
    gb_input(&g, "x", xs);
    gb_conv(&g, "c", "x", xs, 6, 1, 3, 3, true, "co", a, "\"padding\":[1,1]");
    gb_node(&g, "add", "aten.add.Tensor", (const char *[]){"co", "co", NULL},
            (const int64_t *[]){a, a}, "y", a, NULL);
    gb_check(&g, "y", a, "fp32", VC_TOL_F32, "conv2d_b");
}

/* The conv epilogue's activations (shaders/activation.glsl; every one of gb_acts) after four
 * producers: a conv alone (conv_ACT), after a
 * residual add (conv_add_ACT), a depthwise conv as in mobilenet's blocks, and a conv whose K the
 * plan splits (the reduce pass applies it; the tensor cores, emulated, take it in fp16). Conv
 * outputs of this size reach past every bound. test_passes.c checks the same graphs fuse. */
static void test_conv_activations(void **state)
{
    (void)state;
    int64_t xs[4] = {2, 10, 11, 9}, a[4] = {2, 12, 11, 9};
    int64_t ks[4] = {1, 64, 9, 9}, ka[4] = {1, 32, 9, 9};
    for (int i = 0; i < gb_nacts; i++)
        for (int add = 0; add < 4; add++) {
            Gb g = {0};
            const int64_t *in = add == 3 ? ks : xs, *os = add == 2 ? xs : add == 3 ? ka : a;
            gb_input(&g, "x", in);
            /* add 2: a depthwise conv (groups = channels); add 3: K 576 over 81 pixels */
            if (add == 2)
                gb_conv(&g, "c", "x", xs, 10, 10, 3, 3, true, "co", xs, "\"padding\":[1,1]");
            else
                gb_conv(&g, "c", "x", in, os[1], 1, 3, 3, true, "co", os, "\"padding\":[1,1]");
            const char *pre = "co";
            if (add == 1) {
                gb_conv(&g, "r", "x", xs, 12, 1, 1, 1, false, "ro", a, NULL);
                gb_node(&g, "add", "aten.add.Tensor", (const char *[]){"co", "ro", NULL},
                        (const int64_t *[]){a, a}, "s", a, NULL);
                pre = "s";
            }
            gb_node(&g, "act", gb_acts[i].op, (const char *[]){pre, NULL}, (const int64_t *[]){os},
                    "y", os, gb_acts[i].attrs);
            static const char *const expect[] = {"conv2d_b", "conv2d_br", "conv2d_dw_b",
                                                 "conv2d_b"};
            /* quick: each activation once (after one of the producers) in fp32 and fp16 */
            bool quick = add == i % 4;
            for (int t = 0; t < 3; t++)
                if (here(!(quick && t < 2)))
                    gb_check(&g, "y", os, gb_dtypes[t], gb_tols[t], expect[add]);
        }
}

/* ---- pointwise convs over a 1x1 map: matrix-vector products -------------------------------- */

/* A conv over a 1x1 map with a 1x1 kernel (squeeze-excite's) runs as a matrix-vector product per
 * image: conv2d_gemv (16-byte loads) where K and every row start are whole vectors (4 f32, 8
 * f16/bf16), else conv2d_mv. Dense graph inputs (rows C apart) with C and Cout off the channel
 * tile, N 1 and 2, bias or none, long K and many rows; conv.gemv=0 gives it back to the implicit
 * GEMM; a fused residual keeps it there. */
static void test_conv_matvec_shapes(void **state)
{
    (void)state;
    static const struct {
        int64_t n, c, cout;
        bool bias;
        const char *expect[3]; /* fp32, fp16, bf16 */
        int lng;
    } cases[] = {
        {1, 40, 20, true, {"conv2d_gemv_b", "conv2d_gemv_b", "conv2d_gemv_b"}, Q},
        {2, 20, 33, false, {"conv2d_gemv", "conv2d_mv", "conv2d_mv"}, Q},
        {2, 6, 72, true, {"conv2d_mv_b", "conv2d_mv_b", "conv2d_mv_b"}, Q},
        {1, 3, 5, false, {"conv2d_mv", "conv2d_mv", "conv2d_mv"}, L},
        {2, 1152, 48, true, {"conv2d_gemv_b", "conv2d_gemv_b", "conv2d_gemv_b"}, Q},
        {1, 48, 1152, true, {"conv2d_gemv_b", "conv2d_gemv_b", "conv2d_gemv_b"}, L},
        {2, 37, 65, true, {"conv2d_mv_b", "conv2d_mv_b", "conv2d_mv_b"}, L},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (!here(cases[i].lng)) continue;
        int64_t xs[4] = {cases[i].n, cases[i].c, 1, 1}, ys[4] = {cases[i].n, cases[i].cout, 1, 1};
        Gb g = {0};
        gb_input(&g, "x", xs);
        gb_conv(&g, "conv", "x", xs, cases[i].cout, 1, 1, 1, cases[i].bias, "y", ys, NULL);
        for (int t = 0; t < 3; t++)
            gb_check(&g, "y", ys, gb_dtypes[t], gb_tols[t], cases[i].expect[t]);
    }
    if (tu_long()) return;
    int64_t xs[4] = {2, 40, 1, 1}, ys[4] = {2, 20, 1, 1};
    Gb g = {0};
    gb_input(&g, "x", xs);
    gb_conv(&g, "conv", "x", xs, 20, 1, 1, 1, true, "y", ys, "\"stride\":[2,2]");
    vc_tune("conv.gemv=0");
    gb_check(&g, "y", ys, "fp16", VC_TOL_F16, "conv2d_b");
    vc_tune(NULL);
    /* conv + residual (conv_add) stays on the implicit GEMM */
    Gb h = {0};
    gb_input(&h, "x", xs);
    gb_input(&h, "r", ys);
    gb_conv(&h, "conv", "x", xs, 20, 1, 1, 1, true, "c", ys, NULL);
    gb_node(&h, "add", "aten.add.Tensor", (const char *[]){"c", "r", NULL},
            (const int64_t *[]){ys, ys}, "y", ys, NULL);
    gb_check(&h, "y", ys, "fp32", VC_TOL_F32, "conv2d_br");
}

/* Every activation of the conv epilogue (gb_acts, relu6 and hardtanh with their bounds among
 * them) on both kernels: even rows on conv2d_gemv (K 24), odd on conv2d_mv (K 6). */
static void test_conv_matvec_acts(void **state)
{
    (void)state;
    for (int i = 0; i < gb_nacts; i++) {
        int64_t xs[4] = {2, i % 2 ? 6 : 24, 1, 1}, ys[4] = {2, 20, 1, 1};
        Gb g = {0};
        gb_input(&g, "x", xs);
        gb_conv(&g, "conv", "x", xs, 20, 1, 1, 1, true, "c", ys, NULL);
        gb_node(&g, "act", gb_acts[i].op, (const char *[]){"c", NULL}, (const int64_t *[]){ys}, "y",
                ys, gb_acts[i].attrs);
        for (int t = 0; t < 3; t++)
            if (here(t == 2))
                gb_check(&g, "y", ys, gb_dtypes[t], gb_tols[t],
                         i % 2 ? "conv2d_mv_b" : "conv2d_gemv_b");
    }
}

/* Squeeze-excite as torchvision builds it: x -> global average pool (padded channels) -> conv
 * (reduce) -> silu -> conv (expand) -> sigmoid -> x * scale. The convs read padded inputs (rows
 * 64 and 32 elements apart) and write padded outputs for the next one: C 40 squeezed to 10
 * (the expanding conv's K off the vector: conv2d_mv), C 64 to 16 (both on conv2d_gemv). */
static void test_conv_matvec_se(void **state)
{
    (void)state;
    static const struct {
        int64_t n, c, s;
        const char *expect;
    } cases[] = {{1, 40, 10, "conv2d_mv_b"}, {2, 64, 16, "conv2d_gemv_b"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t xs[4] = {cases[i].n, cases[i].c, 5, 3}, p[4] = {cases[i].n, cases[i].c, 1, 1},
                q[4] = {cases[i].n, cases[i].s, 1, 1};
        Gb g = {0};
        gb_input(&g, "x", xs);
        gb_node(&g, "pool", "aten.adaptive_avg_pool2d.default", (const char *[]){"x", NULL},
                (const int64_t *[]){xs}, "p", p, "\"output_size\":[1,1]");
        gb_conv(&g, "fc1", "p", p, cases[i].s, 1, 1, 1, true, "f1", q, NULL);
        gb_node(&g, "a1", "aten.silu.default", (const char *[]){"f1", NULL}, (const int64_t *[]){q},
                "s1", q, NULL);
        gb_conv(&g, "fc2", "s1", q, cases[i].c, 1, 1, 1, true, "f2", p, NULL);
        gb_node(&g, "a2", "aten.sigmoid.default", (const char *[]){"f2", NULL},
                (const int64_t *[]){p}, "s2", p, NULL);
        gb_node(&g, "mul", "aten.mul.Tensor", (const char *[]){"s2", "x", NULL},
                (const int64_t *[]){p, xs}, "y", xs, NULL);
        for (int t = 0; t < 3; t++)
            if (here(t == 2)) gb_check(&g, "y", xs, gb_dtypes[t], gb_tols[t], cases[i].expect);
    }
}

/* ---- pools -------------------------------------------------------------------------------- */

/* ATen's pool output size (as runtime/cpu/cpu_conv.c). */
static int64_t pout(int64_t in, int64_t k, int64_t p, int64_t s, int64_t d, bool ceil)
{
    int64_t num = in + 2 * p - d * (k - 1) - 1 + (ceil ? s - 1 : 0);
    int64_t o = num / s + 1;
    if (ceil && (o - 1) * s >= in + p) o--;
    return o;
}

typedef struct PoolCase {
    const char *op;
    int64_t kh, kw, sh, sw, ph, pw, dh, dw; /* sh = 0: no stride attribute */
    bool ceil;
    const char *extra; /* further attributes */
} PoolCase;

/* The pool on a dense graph input and on a padded conv output (20 channels). */
/* dtypes t0 .. t1 - 1, when `lng`'s set runs in this suite */
static void pool_case(const PoolCase *pc, int t0, int t1, bool lng)
{
    if (!here(lng)) return;
    int64_t xs[4] = {2, 20, 13, 11}, in3[4] = {2, 3, 13, 11};
    int64_t sh = pc->sh ? pc->sh : pc->kh, sw = pc->sw ? pc->sw : pc->kw;
    int64_t ys[4] = {2, 20, pout(13, pc->kh, pc->ph, sh, pc->dh, pc->ceil),
                     pout(11, pc->kw, pc->pw, sw, pc->dw, pc->ceil)};
    char attrs[256] = "";
    snprintf(attrs, sizeof attrs,
             "\"kernel_size\":[%lld,%lld],\"padding\":[%lld,%lld],\"ceil_mode\":%s",
             (long long)pc->kh, (long long)pc->kw, (long long)pc->ph, (long long)pc->pw,
             pc->ceil ? "true" : "false");
    if (pc->sh)
        tu_cat(attrs, sizeof attrs, ",\"stride\":[%lld,%lld]", (long long)sh, (long long)sw);
    if (strstr(pc->op, "max"))
        tu_cat(attrs, sizeof attrs, ",\"dilation\":[%lld,%lld]", (long long)pc->dh,
               (long long)pc->dw);
    if (pc->extra) tu_cat(attrs, sizeof attrs, ",%s", pc->extra);
    for (int padded = 0; padded < 2; padded++) {
        Gb g = {0};
        gb_input(&g, "x", padded ? in3 : xs);
        if (padded) gb_conv(&g, "c", "x", in3, 20, 1, 3, 3, false, "xc", xs, "\"padding\":1");
        gb_node(&g, "pool", pc->op, (const char *[]){padded ? "xc" : "x", NULL},
                (const int64_t *[]){xs}, "y", ys, attrs);
        for (int t = t0; t < t1; t++)
            gb_check(&g, "y", ys, gb_dtypes[t], gb_tols[t], "pool2d");
    }
}

static void test_max_pool(void **state)
{
    (void)state;
    static const PoolCase cases[] = {
        {"aten.max_pool2d.default", 3, 3, 2, 2, 1, 1, 1, 1, false, NULL},
        {"aten.max_pool2d.default", 3, 3, 2, 2, 0, 0, 1, 1, true, NULL},
        {"aten.max_pool2d.default", 2, 2, 2, 2, 1, 1, 1, 1, true, NULL},  /* last window dropped */
        {"aten.max_pool2d.default", 3, 2, 2, 3, 1, 1, 1, 1, true, NULL},  /* rectangular */
        {"aten.max_pool2d.default", 2, 2, 0, 0, 0, 0, 1, 1, false, NULL}, /* stride = kernel */
        /* wide windows, spread over 32 and 16 invocations (dilated max pools run on the CPU) */
        {"aten.max_pool2d.default", 7, 7, 1, 1, 3, 3, 1, 1, false, NULL},
        {"aten.max_pool2d.default", 5, 4, 2, 1, 2, 2, 1, 1, true, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        pool_case(&cases[i], 0, 2, !(i == 0 || i == 2 || i == 5));
    pool_case(&cases[0], 2, 3, L);
}

static void test_avg_pool(void **state)
{
    (void)state;
    static const PoolCase cases[] = {
        {"aten.avg_pool2d.default", 3, 3, 2, 2, 1, 1, 1, 1, false, NULL},
        {"aten.avg_pool2d.default", 3, 3, 2, 2, 1, 1, 1, 1, true, "\"count_include_pad\":false"},
        {"aten.avg_pool2d.default", 3, 3, 2, 2, 1, 1, 1, 1, true, "\"count_include_pad\":true"},
        {"aten.avg_pool2d.default", 2, 3, 2, 2, 1, 0, 1, 1, true, "\"divisor_override\":5"},
        {"aten.avg_pool2d.default", 2, 2, 0, 0, 0, 0, 1, 1, true, NULL},
        /* wide windows (16 and 32 invocations), clipped at the edges */
        {"aten.avg_pool2d.default", 5, 5, 2, 2, 2, 2, 1, 1, true, "\"count_include_pad\":false"},
        {"aten.avg_pool2d.default", 7, 6, 3, 2, 3, 3, 1, 1, false, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        pool_case(&cases[i], 0, 2, !(i == 1 || i == 3 || i == 5));
    pool_case(&cases[1], 2, 3, L);
}

static void test_adaptive_pool(void **state)
{
    (void)state;
    static const int64_t outs[][2] = {{1, 1}, {3, 2}, {5, 4}, {13, 11}, {16, 14}};
    int64_t xs[4] = {2, 20, 13, 11};
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++) {
        int64_t ys[4] = {2, 20, outs[i][0], outs[i][1]};
        char attrs[64];
        snprintf(attrs, sizeof attrs, "\"output_size\":[%lld,%lld]", (long long)outs[i][0],
                 (long long)outs[i][1]);
        Gb g = {0};
        gb_input(&g, "x", xs);
        gb_node(&g, "pool", "aten.adaptive_avg_pool2d.default", (const char *[]){"x", NULL},
                (const int64_t *[]){xs}, "y", ys, attrs);
        for (int t = 0; t < (i == 1 ? 3 : 2); t++)
            if (here(i == 1 || i == 3))
                gb_check(&g, "y", ys, gb_dtypes[t], gb_tols[t],
                         i == 0 ? "pool2d_global" : "pool2d");
    }
}

/* ---- a graph input packed on the device (pass pack-inputs) ------------------------------- */

/* x [1, C, H, W] of at least PACK_INPUTS_MIN elements, read by a conv to 17 channels (its output
 * padded to 32 and depadded for the graph output) and by a relu (dense): odd channel counts,
 * NaN-poisoned buffers (every vc_check), on Vulkan and on the CPU backend (which runs the pack
 * node as an identity). In bf16 it is uploaded as f32 and cast by the pack kernel; in f16 the
 * host converts it (F16C) straight into the mapped buffer and the conv reads it. */
static void test_packed_input(void **state)
{
    (void)state;
    static const int64_t shapes[][4] = {
        {1, 1, 130, 131}, {1, 3, 75, 77}, {1, 5, 59, 57}, {1, 17, 33, 31}};
    static char json[32768];
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const int64_t *xs = shapes[i];
        if (!here(i == 1 || i == 2)) continue;
        assert_true(xs[0] * xs[1] * xs[2] * xs[3] >= PACK_INPUTS_MIN);
        int64_t ys[4] = {1, 17, xs[2], xs[3]};
        Gb g = {0};
        gb_input(&g, "x", xs);
        gb_conv(&g, "conv", "x", xs, 17, 1, 3, 3, true, "y", ys,
                "\"stride\":[1,1],\"padding\":[1,1],\"dilation\":[1,1]");
        gb_node(&g, "act", "aten.relu.default", (const char *[]){"x", NULL},
                (const int64_t *[]){xs}, "r", xs, NULL);
        gb_output(&g, "y", ys);
        gb_output(&g, "r", xs);
        snprintf(json, sizeof json,
                 "{\"model_name\":\"t\",\"graph_inputs\":[%s],\"graph_outputs\":[%s],"
                 "\"weights\":[%s],\"weight_name_mapping\":{%s},\"nodes\":[%s]}",
                 g.in, g.out, g.w, g.map, g.nodes);
        for (int t = 1; t < 3; t++) {
            /* one input channel: the depthwise kernel, 17 output channels from it */
            const char *want = t == 2 ? "pack" : xs[1] == 1 ? "conv2d_dw_b" : "conv2d_b";
            vc_check_json(json, gb_dtypes[t], gb_tols[t], want);
            vc_check_json_on(json, gb_dtypes[t], gb_tols[t], want, true);
        }
    }
}

TU_MAIN(test_conv_shapes, test_conv_groups, test_conv_gemm_tiles, test_conv_simt_tiles,
        test_conv_split_residual, test_conv_relu_chain, test_conv_activations,
        test_conv_add_residual, test_conv_add_self, test_conv_matvec_shapes, test_conv_matvec_acts,
        test_conv_matvec_se, test_max_pool, test_avg_pool, test_adaptive_pool, test_packed_input)
