/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * The depthwise conv kernel (shaders/conv2d_dw.glsl, conv2d_dw*) on Vulkan against the CPU
 * reference: kernels 1, 3, 4, 5, 7 and rectangular, stride 1 and 2 (also different per axis),
 * padding (ints, 'same' with an even kernel, 'valid'), dilation 2, bias or none, channel
 * multipliers 1, 2 and 8 (one input channel: a stem), odd sizes, N = 2, channel counts that
 * are not multiples of the channel tile (padded inputs and outputs); rows of outputs split in
 * tiles of 1 to 8 outputs per invocation (conv.dw_tx); every epilogue: a residual from another
 * tensor, from the conv's own input and the conv output itself, every activation alone and after
 * the residual; f32 and f16, bf16 for coverage. And the lowering's choice: the depthwise kernel
 * for one input channel per group, not for groups < C, not with conv.dw=0 or where a row's input
 * passes its registers; its outputs per invocation. `make test` runs a case per code path,
 * `make test-long` the rest (tu_here). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/lower/kernels.h"
#include "tests/conv_graph.h"
#include "tests/vk_check.h"

#define L 1
#define Q 0

static void test_dw_shapes(void **state)
{
    (void)state;
    static const ConvCase cases[] = {
        /* n  c  h   w  cout g  kh kw sh sw ph pw dh dw bias */
        {2, 12, 13, 11, 12, 12, 3, 3, 1, 1, 1, 1, 1, 1, true, NULL, "conv2d_dw_b", Q},
        {2, 12, 13, 11, 12, 12, 3, 3, 2, 2, 1, 1, 1, 1, false, NULL, "conv2d_dw", Q},
        {1, 40, 9, 7, 40, 40, 5, 5, 1, 1, 4, 4, 2, 2, true, NULL, "conv2d_dw_b", Q}, /* dilated */
        /* ConvNeXt's 7x7 (a row of 30: tiles of 6), EfficientNet's 5x5 / 2 */
        {1, 24, 17, 30, 24, 24, 7, 7, 1, 1, 3, 3, 1, 1, true, NULL, "conv2d_dw_b", Q},
        {1, 20, 15, 15, 20, 20, 5, 5, 2, 2, 2, 2, 1, 1, true, NULL, "conv2d_dw_b", Q},
        /* rectangular, stride 2 down and 1 across, dilation 2 across (TX 8 of a row of 33) */
        {1, 9, 12, 37, 9, 9, 3, 5, 2, 1, 1, 2, 1, 2, false, NULL, "conv2d_dw", Q},
        {1, 6, 13, 11, 12, 6, 3, 3, 1, 1, 1, 1, 1, 1, true, NULL, "conv2d_dw_b", Q}, /* mult 2 */
        {1, 1, 16, 17, 8, 1, 3, 3, 1, 1, 1, 1, 1, 1, true, NULL, "conv2d_dw_b", Q},  /* mult 8 */
        {1, 5, 9, 10, 5, 5, 4, 4, 1, 1, 0, 0, 1, 1, true, "same", "conv2d_dw_b", Q},
        {1, 5, 9, 10, 5, 5, 3, 3, 2, 2, 0, 0, 1, 1, false, "valid", "conv2d_dw", L},
        {2, 33, 5, 3, 33, 33, 3, 3, 1, 1, 1, 1, 1, 1, true, NULL, "conv2d_dw_b", L}, /* 3 wide */
        {1, 16, 9, 9, 16, 16, 1, 1, 2, 2, 0, 0, 1, 1, true, NULL, "conv2d_dw_b", L}, /* 1x1 */
        {1, 7, 23, 21, 7, 7, 7, 7, 2, 2, 3, 3, 1, 1, false, NULL, "conv2d_dw", L},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        gb_conv_case(&cases[i], 0, 2);
    for (int i = 0; i < 4; i++) {
        ConvCase c = cases[i];
        c.lng = i != 0; /* bf16: one in the quick suite */
        gb_conv_case(&c, 2, 3);
    }
}

/* Tiles of TX outputs per invocation (conv.dw_tx): one output, odd counts with a partial last
 * tile, wider than the row (clamped to it). */
static void test_dw_tiles(void **state)
{
    (void)state;
    static const struct {
        const char *knob;
        int lng;
    } tx[] = {{"conv.dw_tx=1", L}, {"conv.dw_tx=3", Q}, {"conv.dw_tx=5", L}, {"conv.dw_tx=16", Q}};
    ConvCase c = {2, 12, 13, 11, 12, 12, 3, 3, 1, 1, 1, 1, 1, 1, true, NULL, "conv2d_dw_b", Q};
    ConvCase s = {1, 9, 12, 37, 9, 9, 3, 5, 2, 2, 1, 2, 1, 2, false, NULL, "conv2d_dw", L};
    for (size_t i = 0; i < sizeof tx / sizeof tx[0]; i++) {
        vc_tune(tx[i].knob);
        c.lng = tx[i].lng;
        gb_conv_case(&c, 0, 2);
        gb_conv_case(&s, 0, 1);
    }
    vc_tune(NULL);
}

/* x [2, 12, 13, 11] -> depthwise 3x3 (bias when `bias`) -> [+ a residual] -> [activation]. The
 * residual: 0 none, 1 another graph input, 2 x itself, 3 the conv output itself. */
static void dw_epilogue(bool bias, int res, const char *act, const char *attrs, int t,
                        const char *expect)
{
    int64_t xs[4] = {2, 12, 13, 11};
    Gb g = {0};
    gb_input(&g, "x", xs);
    if (res == 1) gb_input(&g, "r", xs);
    gb_conv(&g, "c", "x", xs, 12, 12, 3, 3, bias, "co", xs, "\"padding\":[1,1]");
    const char *pre = "co";
    if (res) {
        const char *other = res == 1 ? "r" : res == 2 ? "x" : "co";
        gb_node(&g, "add", "aten.add.Tensor", (const char *[]){"co", other, NULL},
                (const int64_t *[]){xs, xs}, "s", xs, NULL);
        pre = "s";
    }
    if (act)
        gb_node(&g, "act", act, (const char *[]){pre, NULL}, (const int64_t *[]){xs}, "y", xs,
                attrs);
    gb_check(&g, act ? "y" : pre, xs, gb_dtypes[t], gb_tols[t], expect);
}

static void test_dw_epilogues(void **state)
{
    (void)state;
    static const char *const res_stem[2][4] = {
        {"conv2d_dw", "conv2d_dw_r", "conv2d_dw", "conv2d_dw"},
        {"conv2d_dw_b", "conv2d_dw_br", "conv2d_dw_b", "conv2d_dw_b"}};
    for (int res = 1; res < 4; res++)
        for (int bias = 0; bias < 2; bias++)
            for (int t = 0; t < 3; t++)
                if (tu_here(!(t < 2 && bias == (res != 2))))
                    dw_epilogue(bias, res, NULL, NULL, t, res_stem[bias][res]);
    /* quick: each activation alone in fp32 and fp16, after a residual in fp16 every third */
    for (int i = 0; i < gb_nacts; i++)
        for (int t = 0; t < 3; t++) {
            if (tu_here(t == 2))
                dw_epilogue(true, 0, gb_acts[i].op, gb_acts[i].attrs, t, "conv2d_dw_b");
            if (tu_here(!(t == 1 && i % 3 == 0)))
                dw_epilogue(true, 1, gb_acts[i].op, gb_acts[i].attrs, t, "conv2d_dw_br");
        }
}

/* A padded input and a padded output read downstream: x -> conv to 12 channels (padded to the
 * channel tile) -> depthwise 5x5 / 2 -> relu6 -> conv 1x1 to 32 channels, which reads every
 * logical channel of the depthwise output. */
static void test_dw_padded_chain(void **state)
{
    (void)state;
    int64_t xs[4] = {1, 3, 19, 17}, a[4] = {1, 12, 19, 17}, b[4] = {1, 12, 10, 9},
            y[4] = {1, 32, 10, 9};
    Gb g = {0};
    gb_input(&g, "x", xs);
    gb_conv(&g, "c1", "x", xs, 12, 1, 3, 3, true, "a", a, "\"padding\":[1,1]");
    gb_conv(&g, "dw", "a", a, 12, 12, 5, 5, true, "b", b, "\"stride\":[2,2],\"padding\":[2,2]");
    gb_node(&g, "act", "aten.relu6.default", (const char *[]){"b", NULL}, (const int64_t *[]){b},
            "r", b, NULL);
    gb_conv(&g, "c2", "r", b, 32, 1, 1, 1, false, "y", y, NULL);
    for (int t = 0; t < 3; t++)
        if (tu_here(t == 2)) gb_check(&g, "y", y, gb_dtypes[t], gb_tols[t], "conv2d_dw_b");
}

/* The kernels lowering picks for x [1, c, 14, ow] -> conv (groups, kernel kh x kw, stride sw and
 * dilation dw across): the stem of the plan's first kernel, and for the depthwise kernel its
 * multiplier (push word), tiles per row (push) and outputs per invocation (spec 1). */
typedef struct Pick {
    const char *stem;
    uint32_t mult, wtiles, tx;
} Pick;

static Pick pick(int64_t c, int64_t cout, int64_t groups, int64_t kh, int64_t kw, int64_t ow,
                 int64_t sw, int64_t dw)
{
    int64_t pw = dw * (kw - 1) / 2, w = (ow - 1) * sw + 1 + dw * (kw - 1) - 2 * pw;
    ConvCase cc = {1,  c, 14, w,    cout, groups, kh, kw, 1, sw, (kh - 1) / 2,
                   pw, 1, dw, true, NULL, NULL,   0};
    char attrs[200];
    int64_t xs[4] = {1, c, 14, w}, ys[4];
    gb_conv_geom(&cc, attrs, sizeof attrs, ys);
    assert_int_equal(ys[3], ow);
    Gb g = {0};
    gb_input(&g, "x", xs);
    gb_conv(&g, "conv", "x", xs, cout, groups, kh, kw, true, "y", ys, attrs);
    Pipeline pipe;
    vc_compile_json(gb_json(&g, "y", ys), &pipe);
    const PlanKernel *k = gb_first_conv(pipe.plan);
    Pick p = {.stem = kernel_row(k->shader) ? kernel_row(k->shader)->stem : "?"};
    if (strncmp(p.stem, "conv2d_dw", 9) == 0) {
        DwPush pc;
        assert_int_equal(k->npush, DWCONV_PUSH_WORDS);
        memcpy(&pc, k->push, sizeof pc);
        p.mult = pc.mult, p.wtiles = pc.wtiles, p.tx = k->spec[1];
        assert_int_equal(k->spec[2], kw);
        assert_int_equal(k->spec[3], sw);
        assert_int_equal(k->spec[4], dw);
    }
    pipeline_free(&pipe);
    return p;
}

static void test_dw_lowering(void **state)
{
    (void)state;
    if (tu_long()) skip(); /* the quick suite's */
    static const struct {
        int64_t c, cout, groups, kh, kw, ow, sw, dw;
        const char *stem;
        uint32_t mult, tx;
    } cases[] = {
        {96, 96, 96, 7, 7, 56, 1, 1, "conv2d_dw_b", 1, 8}, /* ConvNeXt: 56 = 7 tiles of 8 */
        {16, 16, 16, 3, 3, 28, 1, 1, "conv2d_dw_b", 1, 7}, /* 4 tiles of 7, none idle */
        {16, 16, 16, 3, 3, 14, 2, 1, "conv2d_dw_b", 1, 7},
        {16, 16, 16, 3, 3, 10, 1, 1, "conv2d_dw_b", 1, 5},
        {16, 16, 16, 5, 5, 7, 1, 1, "conv2d_dw_b", 1, 7}, /* narrower than 8: the row */
        {8, 16, 8, 3, 3, 20, 1, 1, "conv2d_dw_b", 2, 5},  /* multiplier 2 */
        {1, 8, 1, 3, 3, 20, 1, 1, "conv2d_dw_b", 8, 5},   /* one input channel */
        /* a row's input segment within 32 registers: (TX - 1) * sw + (kw - 1) * dw + 1 */
        {16, 16, 16, 7, 7, 64, 1, 4, "conv2d_dw_b", 1, 8}, /* 7 + 24 + 1 = 32 */
        {16, 16, 16, 7, 7, 64, 2, 4, "conv2d_dw_b", 1, 4}, /* 6 + 24 + 1 */
        {16, 16, 16, 3, 3, 40, 1, 16, "conv2d_b", 0, 0},   /* 33 for one output: the GEMM */
        {16, 16, 8, 3, 3, 20, 1, 1, "conv2d_b", 0, 0},     /* two channels per group */
        {16, 32, 2, 3, 3, 20, 1, 1, "conv2d_b", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Pick p = pick(cases[i].c, cases[i].cout, cases[i].groups, cases[i].kh, cases[i].kw,
                      cases[i].ow, cases[i].sw, cases[i].dw);
        if (strcmp(p.stem, cases[i].stem) != 0)
            fail_msg("case %zu: %s, expected %s", i, p.stem, cases[i].stem);
        assert_int_equal(p.mult, cases[i].mult);
        assert_int_equal(p.tx, cases[i].tx);
        if (p.tx) assert_int_equal(p.wtiles, (uint32_t)((cases[i].ow + p.tx - 1) / p.tx));
    }
    vc_tune("conv.dw=0");
    assert_string_equal(pick(16, 16, 16, 3, 3, 20, 1, 1).stem, "conv2d_b");
    vc_tune(NULL);
    vc_tune("conv.dw_tx=3");
    assert_int_equal(pick(16, 16, 16, 3, 3, 20, 1, 1).tx, 3);
    vc_tune("conv.dw_tx=16"); /* clamped to the row */
    assert_int_equal(pick(16, 16, 16, 3, 3, 10, 1, 1).tx, 10);
    vc_tune(NULL);
}

TU_MAIN(test_dw_lowering, test_dw_shapes, test_dw_tiles, test_dw_epilogues, test_dw_padded_chain)
