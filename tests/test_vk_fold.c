/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * The GEMV prologue folds on Vulkan against the CPU reference (compiler/fuse_fold.c,
 * shaders/gemv.glsl GEMV_PRO): rmsnorm_linear (the exporter's pow/mean/add/rsqrt/mul/mul chain
 * read by one linear, by separate linears, by a linear_concat q|k|v with biases, by a linear with
 * a residual add, with bias and residual) and silu_mul_linear (silu(gate) * up read by a linear,
 * either mul order, with bias and residual; the whole gated MLP with gate|up as one
 * linear_concat, the down projection reading two views of its output). M = 1..4 rows, K from 8
 * to 1544 (multiples of 8, not of the lanes), several N, f32, f16 and bf16, buffers poisoned with
 * NaN. Each check names the stem that must run (gemv_rms*, gemv_glu*), so a plan without the
 * fold fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tests/vk_check.h"

static const char *dts[] = {"fp32", "fp16", "bf16"};
static const double tols[] = {VC_TOL_F32, VC_TOL_F16, VC_TOL_BF16};

static void t3(FILE *f, const char *name, int64_t m, int64_t k)
{
    fprintf(f, "{\"name\":\"%s\",\"shape\":[1,%lld,%lld]}", name, (long long)m, (long long)k);
}

static void t2(FILE *f, const char *name, int64_t a, int64_t b)
{
    if (b)
        fprintf(f, "{\"name\":\"%s\",\"shape\":[%lld,%lld]}", name, (long long)a, (long long)b);
    else
        fprintf(f, "{\"name\":\"%s\",\"shape\":[%lld]}", name, (long long)a);
}

/* Readers of the folded tensor "h" [1, m, k]: n linears (weights w<i> [cols[i], k], biases b<i>
 * when bias), each output y<i> either a graph output, read by a neg (o<i>: linear_concat parts
 * may not be graph outputs), or added to the residual r<i> [1, m, cols[i]]. */
enum { OUT_PLAIN, OUT_NEG, OUT_RES };
typedef struct Readers {
    int n;
    int64_t cols[4];
    bool bias;
    int out;
} Readers;

static void weights(FILE *f, const Readers *r, int64_t k, const char *extra, int64_t extra_n)
{
    fprintf(f, "],\"weights\":[");
    bool first = true;
    if (extra) {
        t2(f, extra, extra_n, 0);
        first = false;
    }
    for (int i = 0; i < r->n; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "w%d", i);
        if (!first) fputc(',', f);
        first = false;
        t2(f, nm, r->cols[i], k);
        if (r->bias) {
            snprintf(nm, sizeof nm, "b%d", i);
            fputc(',', f);
            t2(f, nm, r->cols[i], 0);
        }
    }
    fprintf(f, "],\"weight_name_mapping\":{");
    if (extra) fprintf(f, "\"p_%s\":\"%s\"%s", extra, extra, r->n ? "," : "");
    for (int i = 0; i < r->n; i++) {
        fprintf(f, "%s\"p_w%d\":\"w%d\"", i ? "," : "", i, i);
        if (r->bias) fprintf(f, ",\"p_b%d\":\"b%d\"", i, i);
    }
    fprintf(f, "},\"nodes\":[");
}

static void outputs(FILE *f, const Readers *r, int64_t m)
{
    fprintf(f, "],\"graph_outputs\":[");
    for (int i = 0; i < r->n; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "%s%d", r->out == OUT_NEG ? "o" : "y", i);
        if (i) fputc(',', f);
        t3(f, nm, m, r->cols[i]);
    }
}

static void reader_nodes(FILE *f, const Readers *r, int64_t m, int64_t k)
{
    for (int i = 0; i < r->n; i++) {
        int64_t c = r->cols[i];
        char w[16], b[16], y[16], o[16], rr[16];
        snprintf(w, sizeof w, "p_w%d", i);
        snprintf(b, sizeof b, "p_b%d", i);
        snprintf(y, sizeof y, "%s%d", r->out == OUT_PLAIN ? "y" : "l", i);
        fprintf(f, ",{\"name\":\"lin%d\",\"op_type\":\"aten.linear.default\",\"inputs\":[", i);
        t3(f, "h", m, k);
        fputc(',', f);
        t2(f, w, c, k);
        if (r->bias) {
            fputc(',', f);
            t2(f, b, c, 0);
        }
        fprintf(f, "],\"outputs\":[");
        t3(f, y, m, c);
        fprintf(f, "],\"attrs\":{}}");
        if (r->out == OUT_PLAIN) continue;
        snprintf(o, sizeof o, "%s%d", r->out == OUT_NEG ? "o" : "y", i);
        snprintf(rr, sizeof rr, "r%d", i);
        if (r->out == OUT_NEG) {
            fprintf(f, ",{\"name\":\"neg%d\",\"op_type\":\"aten.neg.default\",\"inputs\":[", i);
        } else {
            fprintf(f, ",{\"name\":\"add%d\",\"op_type\":\"aten.add.Tensor\",\"inputs\":[", i);
            t3(f, rr, m, c);
            fputc(',', f);
        }
        t3(f, y, m, c);
        fprintf(f, "],\"outputs\":[");
        t3(f, o, m, c);
        fprintf(f, "],\"attrs\":{}}");
    }
}

static void residual_inputs(FILE *f, const Readers *r, int64_t m)
{
    for (int i = 0; r->out == OUT_RES && i < r->n; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "r%d", i);
        fputc(',', f);
        t3(f, nm, m, r->cols[i]);
    }
}

/* x [1, m, k] -> RMSNorm (the exporter's chain, weight gamma) -> h -> readers */
static char *rms_graph(int64_t m, int64_t k, const Readers *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    fprintf(f, "{\"model_name\":\"fold\",\"graph_inputs\":[");
    t3(f, "x", m, k);
    residual_inputs(f, r, m);
    outputs(f, r, m);
    weights(f, r, k, "gamma", k);
    fprintf(f, "{\"name\":\"pow\",\"op_type\":\"aten.pow.Tensor_Scalar\",\"inputs\":[");
    t3(f, "x", m, k);
    fprintf(f, "],\"outputs\":[");
    t3(f, "sq", m, k);
    fprintf(f, "],\"attrs\":{\"exponent\":2}},{\"name\":\"mean\",\"op_type\":\"aten.mean.dim\","
               "\"inputs\":[");
    t3(f, "sq", m, k);
    fprintf(f, "],\"outputs\":[");
    t3(f, "ms", m, 1);
    fprintf(f, "],\"attrs\":{\"dim\":[-1],\"keepdim\":true}},{\"name\":\"add\",\"op_type\":"
               "\"aten.add.Tensor\",\"inputs\":[");
    t3(f, "ms", m, 1);
    fprintf(f, "],\"outputs\":[");
    t3(f, "mse", m, 1);
    fprintf(f, "],\"attrs\":{\"other\":1e-06}},{\"name\":\"rsqrt\",\"op_type\":"
               "\"aten.rsqrt.default\",\"inputs\":[");
    t3(f, "mse", m, 1);
    fprintf(f, "],\"outputs\":[");
    t3(f, "rs", m, 1);
    fprintf(f, "],\"attrs\":{}},{\"name\":\"mul1\",\"op_type\":\"aten.mul.Tensor\",\"inputs\":[");
    t3(f, "x", m, k);
    fputc(',', f);
    t3(f, "rs", m, 1);
    fprintf(f, "],\"outputs\":[");
    t3(f, "xn", m, k);
    fprintf(f, "],\"attrs\":{}},{\"name\":\"mul2\",\"op_type\":\"aten.mul.Tensor\",\"inputs\":[");
    t2(f, "p_gamma", k, 0);
    fputc(',', f);
    t3(f, "xn", m, k);
    fprintf(f, "],\"outputs\":[");
    t3(f, "h", m, k);
    fprintf(f, "],\"attrs\":{}}");
    reader_nodes(f, r, m, k);
    fprintf(f, "]}");
    fclose(f);
    return buf;
}

/* g, u [1, m, k] -> silu(g) * u (up_first: mul(u, silu)) -> h -> readers */
static char *glu_graph(int64_t m, int64_t k, const Readers *r, bool up_first)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    fprintf(f, "{\"model_name\":\"fold\",\"graph_inputs\":[");
    t3(f, "g", m, k);
    fputc(',', f);
    t3(f, "u", m, k);
    residual_inputs(f, r, m);
    outputs(f, r, m);
    weights(f, r, k, NULL, 0);
    fprintf(f, "{\"name\":\"silu\",\"op_type\":\"aten.silu.default\",\"inputs\":[");
    t3(f, "g", m, k);
    fprintf(f, "],\"outputs\":[");
    t3(f, "s", m, k);
    fprintf(f, "],\"attrs\":{}},{\"name\":\"mul\",\"op_type\":\"aten.mul.Tensor\",\"inputs\":[");
    t3(f, up_first ? "u" : "s", m, k);
    fputc(',', f);
    t3(f, up_first ? "s" : "u", m, k);
    fprintf(f, "],\"outputs\":[");
    t3(f, "h", m, k);
    fprintf(f, "],\"attrs\":{}}");
    reader_nodes(f, r, m, k);
    fprintf(f, "]}");
    fclose(f);
    return buf;
}

static const char *stem(char *buf, const char *pro, const Readers *r)
{
    bool res = r->out == OUT_RES;
    sprintf(buf, "gemv_%s%s", pro, r->bias ? (res ? "_br" : "") : (res ? "_r" : "_nb"));
    return buf;
}

static void rms_check(int64_t m, int64_t k, const Readers *r, int t)
{
    char *json = rms_graph(m, k, r), s[32];
    assert_non_null(json);
    /* a handful of outputs: one cancelling sum dominates the relative error of 16-bit inputs */
    vc_check_json(json, dts[t], tols[t] * 2, stem(s, "rms", r));
    free(json);
}

static void glu_check(int64_t m, int64_t k, const Readers *r, bool up_first, int t)
{
    char *json = glu_graph(m, k, r, up_first), s[32];
    assert_non_null(json);
    vc_check_json(json, dts[t], tols[t] * 2, stem(s, "glu", r));
    free(json);
}

/* One reader with each (bias, residual) stem, M = 1..4, K from one vector to past the lanes. */
static void test_rms_linear(void **state)
{
    (void)state;
    const int64_t ks[] = {8, 72, 264, 1544}, ns[] = {1, 17, 130};
    for (int t = 0; t < 3; t++)
        for (int a = 0; a < 4; a++)
            for (int v = 0; v < 4; v++) {
                Readers r = {.n = 1,
                             .cols = {ns[(a + v) % 3]},
                             .bias = v & 1,
                             .out = v & 2 ? OUT_RES : OUT_PLAIN};
                rms_check(1 + (a + v + t) % 4, ks[a], &r, t);
            }
}

/* Separate linears on the norm (qwen2_tiny's gate and up: 172 columns), the q|k|v linear_concat
 * with biases (its parts read by the next kernels), long rows (the split-K form). */
static void test_rms_readers(void **state)
{
    (void)state;
    for (int t = 0; t < 3; t++) {
        Readers two = {.n = 2, .cols = {172, 172}, .out = OUT_PLAIN};
        rms_check(1, 64, &two, t);
        rms_check(3, 64, &two, t);
        Readers qkv = {.n = 3, .cols = {64, 32, 32}, .bias = true, .out = OUT_NEG};
        rms_check(1, 64, &qkv, t);
        rms_check(1, 136, &qkv, t);
        Readers lm = {.n = 1, .cols = {300}, .out = OUT_PLAIN};
        rms_check(2, 4104, &lm, t); /* K past 512 vectors: split-K */
    }
}

static void test_glu_linear(void **state)
{
    (void)state;
    const int64_t ks[] = {8, 176, 1544, 4104}, ns[] = {3, 64, 129};
    for (int t = 0; t < 3; t++)
        for (int a = 0; a < 4; a++)
            for (int v = 0; v < 4; v++) {
                Readers r = {.n = 1,
                             .cols = {ns[(a + v) % 3]},
                             .bias = v & 1,
                             .out = v & 2 ? OUT_RES : OUT_PLAIN};
                glu_check(1 + (a + v + t) % 4, ks[a], &r, (a + v) & 1, t);
            }
}

/* The gated MLP of a decode step as exported: x -> RMSNorm -> gate|up (one linear_concat) ->
 * silu(gate) * up -> down + the residual x: both folds, the glu one reading two views of the
 * combined gate|up output. */
static void test_mlp(void **state)
{
    (void)state;
    /* clang-format off */
    /* D = 64 (hidden), F = 96 (intermediate): "@D" and "@F" in the template */
    static const char *tpl =
        "{\"model_name\":\"mlp\",\"graph_inputs\":[" VC_T("x", "[1,1,@D]") "],\"graph_outputs\":["
        VC_T("y", "[1,1,@D]") "],\"weights\":[" VC_T("gamma", "[@D]") "," VC_T("wg", "[@F,@D]")
        "," VC_T("wu", "[@F,@D]") "," VC_T("wd", "[@D,@F]") "],\"weight_name_mapping\":{"
        "\"p_gamma\":\"gamma\",\"p_wg\":\"wg\",\"p_wu\":\"wu\",\"p_wd\":\"wd\"},\"nodes\":["
        VC_NODE("pow", "aten.pow.Tensor_Scalar", VC_T("x", "[1,1,@D]"), VC_T("sq", "[1,1,@D]"),
                "\"exponent\":2") ","
        VC_NODE("mean", "aten.mean.dim", VC_T("sq", "[1,1,@D]"), VC_T("ms", "[1,1,1]"),
                "\"dim\":[-1],\"keepdim\":true") ","
        VC_NODE("add", "aten.add.Tensor", VC_T("ms", "[1,1,1]"), VC_T("mse", "[1,1,1]"),
                "\"other\":1e-06") ","
        VC_NODE("rsqrt", "aten.rsqrt.default", VC_T("mse", "[1,1,1]"), VC_T("rs", "[1,1,1]"), "") ","
        VC_NODE("mul1", "aten.mul.Tensor", VC_T("x", "[1,1,@D]") "," VC_T("rs", "[1,1,1]"),
                VC_T("xn", "[1,1,@D]"), "") ","
        VC_NODE("mul2", "aten.mul.Tensor", VC_T("p_gamma", "[@D]") "," VC_T("xn", "[1,1,@D]"),
                VC_T("h", "[1,1,@D]"), "") ","
        VC_NODE("gate", "aten.linear.default", VC_T("h", "[1,1,@D]") "," VC_T("p_wg", "[@F,@D]"),
                VC_T("gl", "[1,1,@F]"), "") ","
        VC_NODE("up", "aten.linear.default", VC_T("h", "[1,1,@D]") "," VC_T("p_wu", "[@F,@D]"),
                VC_T("ul", "[1,1,@F]"), "") ","
        VC_NODE("silu", "aten.silu.default", VC_T("gl", "[1,1,@F]"), VC_T("s", "[1,1,@F]"), "") ","
        VC_NODE("mul", "aten.mul.Tensor", VC_T("s", "[1,1,@F]") "," VC_T("ul", "[1,1,@F]"),
                VC_T("gu", "[1,1,@F]"), "") ","
        VC_NODE("down", "aten.linear.default", VC_T("gu", "[1,1,@F]") "," VC_T("p_wd", "[@D,@F]"),
                VC_T("dl", "[1,1,@D]"), "") ","
        VC_NODE("res", "aten.add.Tensor", VC_T("x", "[1,1,@D]") "," VC_T("dl", "[1,1,@D]"),
                VC_T("y", "[1,1,@D]"), "") "]}";
    /* clang-format on */
    char json[8192];
    size_t o = 0;
    for (const char *c = tpl; *c && o + 4 < sizeof json; c++) {
        if (c[0] == '@' && (c[1] == 'D' || c[1] == 'F')) {
            o += (size_t)sprintf(json + o, "%s", c[1] == 'D' ? "64" : "96");
            c++;
        } else {
            json[o++] = *c;
        }
    }
    json[o] = 0;
    for (int t = 0; t < 3; t++) {
        vc_check_json(json, dts[t], tols[t] * 2, "gemv_rms_nb");
        vc_check_json(json, dts[t], tols[t] * 2, "gemv_glu_r");
        /* the folds off: the kernels of before (rmsnorm, silu_mul) */
        vc_set_no_fuse("rmsnorm_linear");
        vc_check_json(json, dts[t], tols[t] * 2, "rmsnorm");
        vc_set_no_fuse("silu_mul_linear");
        vc_check_json(json, dts[t], tols[t] * 2, "silu_mul");
        vc_set_no_fuse(NULL);
    }
}

TU_MAIN(test_rms_linear, test_rms_readers, test_glu_linear, test_mlp)
