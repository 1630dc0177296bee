/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * layernorm_t on Vulkan against the CPU reference, in f32, f16 and bf16: a layer_norm read
 * through the permutes (and reshapes) making its input and written through those after it, one
 * kernel with no transpose or depad copy:
 * - ConvNeXt's block: a padded NCHW tensor (a max_pool2d's output, odd channel counts: 5, 33, 40
 *   padded to 32 and 64) permuted to NHWC and normalised over the channels, batch 1 and 2,
 *   non-square H x W; with weight and bias, weight only, neither;
 * - LayerNorm2d (ConvNeXt's stem and downsampling): NCHW -> NHWC, norm, NHWC -> NCHW, padded in;
 * - the downsampling's other half: an NHWC graph input normalised, then permuted to NCHW;
 * - a dense NCHW graph input (no padding) permuted and normalised, also through pack-inputs;
 * - Swin V2's window reversal: [B, nh, nw, ws, ws, C] -> permute(0,1,3,2,4,5) -> reshape to
 *   [B, H, W, C] -> norm (rows over four strided dims), and MaxViT's window partition read
 *   through reshape -> permute -> reshape from a padded tensor; a chain whose strides exist only
 *   over the dense tensor reads a depad copy;
 * - every rows-per-workgroup path (ln.rows 1, 2, 8, 64: row counts not a multiple of it), and
 *   rows longer than 4 x 256 lanes;
 * - the plans: no transpose or depad kernel left, each also run by the CPU backend; switched off
 * (--no-fuse layernorm_t) the transpose and layernorm kernels of before, same results; a permuted
 * input another node reads too is a near miss. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/pass.h"
#include "compiler/plan.h"
#include "tests/pass_check.h"
#include "tests/vk_check.h"

static const char *dts[] = {"fp32", "fp16", "bf16"};
static const double tols[] = {VC_TOL_F32, VC_TOL_F16, VC_TOL_BF16};

/* ---- a chain of nodes in the exporter's format, from graph input x --------------------------- */

typedef struct Gb {
    char nodes[8192], extra_in[256], weights[256], map[256];
    char cur[16], in_shape[64];
    int rank, n;
    int64_t shape[8];
} Gb;

static void gb_start(Gb *g, int rank, const int64_t *shape)
{
    memset(g, 0, sizeof *g);
    g->rank = rank;
    memcpy(g->shape, shape, sizeof(int64_t) * (size_t)rank);
    snprintf(g->cur, sizeof g->cur, "x");
    shape_str(shape, rank, g->in_shape, sizeof g->in_shape);
}

/* Appends node t<n> = op(cur [, extra]) of the given output shape; cur becomes its output. */
static void gb_op(Gb *g, const char *aten, const char *extra, const char *attrs, int rank,
                  const int64_t *shape)
{
    char in[64], out[64];
    shape_str(g->shape, g->rank, in, sizeof in);
    shape_str(shape, rank, out, sizeof out);
    size_t l = strlen(g->nodes);
    snprintf(g->nodes + l, sizeof g->nodes - l,
             "%s{\"name\":\"t%d\",\"op_type\":\"%s\",\"inputs\":[{\"name\":\"%s\",\"shape\":%s}%s],"
             "\"outputs\":[{\"name\":\"t%d\",\"shape\":%s}],\"attrs\":{%s}}",
             l ? "," : "", g->n, aten, g->cur, in, extra ? extra : "", g->n, out, attrs);
    snprintf(g->cur, sizeof g->cur, "t%d", g->n++);
    g->rank = rank;
    memcpy(g->shape, shape, sizeof(int64_t) * (size_t)rank);
}

/* max_pool2d 2x2 stride 2 (its output is padded to the channel tile) */
static void gb_pool(Gb *g)
{
    int64_t s[4] = {g->shape[0], g->shape[1], g->shape[2] / 2, g->shape[3] / 2};
    gb_op(g, "aten.max_pool2d.default", NULL, "\"kernel_size\":[2,2],\"stride\":[2,2]", 4, s);
}

static void gb_permute(Gb *g, const int *perm)
{
    int64_t s[8];
    char a[96] = "\"dims\":[";
    for (int i = 0; i < g->rank; i++) {
        s[i] = g->shape[perm[i]];
        snprintf(a + strlen(a), sizeof a - strlen(a), "%s%d", i ? "," : "", perm[i]);
    }
    strcat(a, "]");
    gb_op(g, "aten.permute.default", NULL, a, g->rank, s);
}

static void gb_view(Gb *g, int rank, const int64_t *shape)
{
    char a[96] = "\"size\":", s[64];
    shape_str(shape, rank, s, sizeof s);
    strcat(a, s);
    gb_op(g, "aten.view.default", NULL, a, rank, shape);
}

/* layer_norm over the last dim, with weight and bias (wb 2), weight only (1) or neither (0) */
static void gb_ln(Gb *g, int wb)
{
    int64_t c = g->shape[g->rank - 1];
    char extra[256] = "", attrs[96];
    if (wb >= 1) {
        snprintf(extra, sizeof extra, ",{\"name\":\"p_ln_weight\",\"shape\":[%lld]}", (long long)c);
        snprintf(g->weights, sizeof g->weights, "{\"name\":\"ln.weight\",\"shape\":[%lld]}",
                 (long long)c);
        snprintf(g->map, sizeof g->map, "\"p_ln_weight\":\"ln.weight\"");
    }
    if (wb == 2) {
        snprintf(extra + strlen(extra), sizeof extra - strlen(extra),
                 ",{\"name\":\"p_ln_bias\",\"shape\":[%lld]}", (long long)c);
        snprintf(g->weights + strlen(g->weights), sizeof g->weights - strlen(g->weights),
                 ",{\"name\":\"ln.bias\",\"shape\":[%lld]}", (long long)c);
        snprintf(g->map + strlen(g->map), sizeof g->map - strlen(g->map),
                 ",\"p_ln_bias\":\"ln.bias\"");
    }
    snprintf(attrs, sizeof attrs, "\"normalized_shape\":[%lld],\"eps\":1e-06", (long long)c);
    gb_op(g, "aten.layer_norm.default", extra, attrs, g->rank, g->shape);
}

/* The graph: input x, the chain, cur as the output. */
static void gb_json(const Gb *g, char *b, size_t cap)
{
    char out[64];
    shape_str(g->shape, g->rank, out, sizeof out);
    snprintf(b, cap,
             "{\"model_name\":\"lnt\",\"graph_inputs\":[{\"name\":\"x\",\"shape\":%s}],"
             "\"graph_outputs\":[{\"name\":\"%s\",\"shape\":%s}],\"weights\":[%s],"
             "\"weight_name_mapping\":{%s},\"nodes\":[%s]}",
             g->in_shape, g->cur, out, g->weights, g->map, g->nodes);
}

static const int NHWC[4] = {0, 2, 3, 1}, NCHW[4] = {0, 3, 1, 2};

/* kernels whose stem starts with s in the plan of json (in dt, vc_tune's knobs, no_fuse: a
 * --no-fuse spec) */
static int count_stem_as(const char *json, const char *s, const char *no_fuse, DType dt)
{
    CompileOptions o;
    vc_options(&o);
    o.compute = dt;
    if (no_fuse) o.no_fuse[o.n_no_fuse++] = no_fuse;
    Pipeline p = tu_compile_json(json, &o);
    int n = 0;
    for (int k = 0; k < p.plan->nkernels; k++)
        n += strncmp(p.plan->kernels[k].shader, s, strlen(s)) == 0;
    pipeline_free(&p);
    return n;
}

static int count_stem(const char *json, const char *s, const char *no_fuse)
{
    return count_stem_as(json, s, no_fuse, DT_F16);
}

static const char *const lnt_stem[] = {"layernorm_t_plain", "layernorm_t_w", "layernorm_t"};

/* Checks json in every dtype with a layernorm_t kernel (wb: its weight and bias as gb_ln's) and
 * no transpose or depad one. */
static void check_lnt(const char *json, int wb)
{
    assert_int_equal(count_stem(json, "transpose", NULL), 0);
    assert_int_equal(count_stem(json, "depad", NULL), 0);
    assert_int_equal(count_stem(json, "layernorm_t", NULL), 1);
    for (int t = 0; t < 3; t++)
        vc_check_json(json, dts[t], tols[t], lnt_stem[wb]);
    /* the same plan on the CPU backend, which runs the instance's member nodes */
    vc_check_json_on(json, "fp32", VC_TOL_F32, lnt_stem[wb], true);
}

/* ConvNeXt's block: pool (padded NCHW) -> NHWC -> norm over C */
static void block_graph(char *b, size_t cap, int64_t n, int64_t c, int64_t h, int64_t w, int wb)
{
    Gb g;
    gb_start(&g, 4, (int64_t[]){n, c, h, w});
    gb_pool(&g);
    gb_permute(&g, NHWC);
    gb_ln(&g, wb);
    gb_json(&g, b, cap);
}

static void test_block(void **state)
{
    (void)state;
    char b[16384];
    static const int64_t cases[][5] = {
        /* N, C, H, W (before the 2x2 pool), weight/bias */
        {1, 5, 6, 14, 2}, {2, 33, 10, 6, 2}, {1, 40, 8, 8, 1}, {2, 3, 4, 18, 0}, {1, 96, 6, 10, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int64_t *k = cases[i];
        block_graph(b, sizeof b, k[0], k[1], k[2], k[3], (int)k[4]);
        check_lnt(b, (int)k[4]);
    }
}

/* LayerNorm2d: NCHW -> NHWC -> norm -> NCHW, the input padded or a dense graph input */
static void test_norm2d(void **state)
{
    (void)state;
    char b[16384];
    Gb g;
    static const int64_t cases[][4] = {{1, 7, 6, 10}, {2, 33, 4, 6}, {1, 64, 2, 14}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gb_start(&g, 4, cases[i]);
        gb_pool(&g);
        gb_permute(&g, NHWC);
        gb_ln(&g, 2);
        gb_permute(&g, NCHW);
        gb_json(&g, b, sizeof b);
        check_lnt(b, 2);
    }
    /* a dense NCHW graph input: read at its strides, written NHWC */
    gb_start(&g, 4, (int64_t[]){2, 9, 3, 5});
    gb_permute(&g, NHWC);
    gb_ln(&g, 2);
    gb_json(&g, b, sizeof b);
    check_lnt(b, 2);
    /* a graph input that pack-inputs uploads as f32 and packs on the device (bf16) */
    gb_start(&g, 4, (int64_t[]){1, 40, 24, 20});
    gb_permute(&g, NHWC);
    gb_ln(&g, 2);
    gb_json(&g, b, sizeof b);
    assert_int_equal(count_stem_as(b, "pack", NULL, DT_BF16), 1);
    check_lnt(b, 2);
    /* an NHWC graph input normalised, then NCHW (ConvNeXt's downsampling before its conv) */
    gb_start(&g, 4, (int64_t[]){2, 5, 3, 17});
    gb_ln(&g, 1);
    gb_permute(&g, NCHW);
    gb_json(&g, b, sizeof b);
    check_lnt(b, 1);
}

/* Window chains: Swin V2's reversal (rows over four strided dims) and MaxViT's partition of a
 * padded tensor through reshape -> permute -> reshape. */
static void test_windows(void **state)
{
    (void)state;
    char b[16384];
    Gb g;
    /* [1, 2, 3, 4, 5, 24] -> [1, 2, 4, 3, 5, 24] -> [1, 8, 15, 24] */
    gb_start(&g, 6, (int64_t[]){1, 2, 3, 4, 5, 24});
    gb_permute(&g, (int[]){0, 1, 3, 2, 4, 5});
    gb_view(&g, 4, (int64_t[]){1, 8, 15, 24});
    gb_ln(&g, 2);
    gb_json(&g, b, sizeof b);
    check_lnt(b, 2);
    /* pool -> [1, 20, 4, 6] (padded) -> [1, 20, 2, 2, 3, 2] -> (0,2,4,3,5,1) -> [1, 6, 4, 20] */
    gb_start(&g, 4, (int64_t[]){1, 20, 8, 12});
    gb_pool(&g);
    gb_view(&g, 6, (int64_t[]){1, 20, 2, 2, 3, 2});
    gb_permute(&g, (int[]){0, 2, 4, 3, 5, 1});
    gb_view(&g, 4, (int64_t[]){1, 6, 4, 20});
    gb_ln(&g, 2);
    gb_json(&g, b, sizeof b);
    check_lnt(b, 2);
}

/* A chain whose strides exist over the dense tensor but not over the padded one (a reshape
 * merging the batch and the padded channels): layout gives the instance a depad copy to read. */
static void test_padded_fallback(void **state)
{
    (void)state;
    char b[16384];
    Gb g;
    /* pool -> [2, 5, 2, 3] (channels padded) -> [10, 2, 3] -> (1, 2, 0) -> [2, 3, 10] -> norm */
    gb_start(&g, 4, (int64_t[]){2, 5, 4, 6});
    gb_pool(&g);
    gb_view(&g, 3, (int64_t[]){10, 2, 3});
    gb_permute(&g, (int[]){1, 2, 0});
    gb_ln(&g, 2);
    gb_json(&g, b, sizeof b);
    assert_int_equal(count_stem(b, "depad", NULL), 1);
    assert_int_equal(count_stem(b, "transpose", NULL), 0);
    assert_int_equal(count_stem(b, "layernorm_t", NULL), 1);
    for (int t = 0; t < 3; t++)
        vc_check_json(b, dts[t], tols[t], "layernorm_t");
}

/* The rows-per-workgroup paths (the last workgroup part-filled), and long rows. */
static void test_rows_per_group(void **state)
{
    (void)state;
    char b[16384], tune[32];
    Gb g;
    /* 21 rows (3 x 7 pixels) of 33 channels, NCHW -> NHWC and back */
    gb_start(&g, 4, (int64_t[]){1, 33, 6, 14});
    gb_pool(&g);
    gb_permute(&g, NHWC);
    gb_ln(&g, 2);
    gb_json(&g, b, sizeof b);
    static const int rows[] = {1, 2, 8, 64};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        snprintf(tune, sizeof tune, "ln.rows=%d", rows[i]);
        vc_tune(tune);
        check_lnt(b, 2);
    }
    gb_permute(&g, NCHW);
    gb_json(&g, b, sizeof b);
    vc_tune("ln.rows=8");
    check_lnt(b, 2);
    vc_tune(NULL);
    /* rows of 1100 elements (more than 4 per lane of 256), 6 of them */
    gb_start(&g, 4, (int64_t[]){1, 1100, 2, 3});
    gb_permute(&g, NHWC);
    gb_ln(&g, 2);
    gb_json(&g, b, sizeof b);
    check_lnt(b, 2);
}

/* Switched off: the transposes, depad and layernorm of before, the same results; a permuted
 * input that a residual reads too stays a copy (a near miss). */
static void test_switch_and_near_miss(void **state)
{
    (void)state;
    char b[16384];
    block_graph(b, sizeof b, 2, 5, 6, 10, 2);
    vc_set_no_fuse("layernorm_t");
    assert_int_equal(count_stem(b, "transpose", "layernorm_t"), 1);
    assert_int_equal(count_stem(b, "depad", "layernorm_t"), 0); /* the transpose reads the pad */
    assert_int_equal(count_stem(b, "layernorm_t", "layernorm_t"), 0);
    for (int t = 0; t < 3; t++)
        vc_check_json(b, dts[t], tols[t], "layernorm");
    vc_set_no_fuse(NULL);
    /* clang-format off */
    Pipeline p = tp_compile_json(
        "{\"graph_inputs\":[" T("x", "[1,5,3,4]") "],\"graph_outputs\":[" T("o", "[1,3,4,5]") "],"
        "\"nodes\":["
        NODE("p", "aten.permute.default", T("x", "[1,5,3,4]"), T("xp", "[1,3,4,5]"), "\"dims\":[0,2,3,1]")
        "," NODE("ln", "aten.layer_norm.default", T("xp", "[1,3,4,5]"), T("y", "[1,3,4,5]"), "\"normalized_shape\":[5]")
        "," NODE("a", "aten.add.Tensor", T("y", "[1,3,4,5]") "," T("xp", "[1,3,4,5]"), T("o", "[1,3,4,5]"), "") "]}");
    /* clang-format on */
    assert_int_equal(tp_count_pattern(p.g, "layernorm_t"), 0);
    bool miss = false;
    for (int i = 0; i < p.g->nmisses; i++)
        miss |= strcmp(p.g->misses[i].pattern, "layernorm_t") == 0 &&
                strstr(p.g->misses[i].reason, "other readers") != NULL;
    assert_true(miss);
    pipeline_free(&p);
}

TU_MAIN(test_block, test_norm2d, test_windows, test_padded_fallback, test_rows_per_group,
        test_switch_and_near_miss)
