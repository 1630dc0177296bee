/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * matmul kernels on Vulkan against the CPU reference: linear (with and without bias, leading
 * dims), addmm (alpha, beta, bias broadcasts, beta = 0), matmul (1-D operands, batch
 * broadcasting), bmm, mm, every linear_act fusion and the residual fusions linear_add(_relu);
 * M <= 4 with K a multiple of the 16-byte vector takes the gemv path (stems gemv*), other M = 1
 * products the scalar vector path, larger M the tiled one; K and N are not multiples of the
 * tiles; f32, f16 and bf16. The stem says which of bias and residual are bound: _nb none,
 * (plain) bias, _r residual, _br both. linear_concat: several linears on one input as one
 * matmul over the concatenated weight, its parts read at their offsets in the combined output
 * by the next kernels. On nv-coopmat (and its emulation on lavapipe) the tensor-core kernels'
 * 64x64 and 128x128 tiles, K splits and staging paths (test_gemm_tiles*), and which tile and
 * split lowering picks (test_gemm_tile_choice). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/ir_json.h"
#include "compiler/pass.h"
#include "compiler/plan.h"
#include "tests/concat_graph.h"
#include "tests/kernel_check.h"
#include "runtime/vulkan/vk_shaders.h"
#include "tests/vk_check.h"

static const char *dts[] = {"fp32", "fp16", "bf16"};
static const double tols[] = {VC_TOL_F32, VC_TOL_F16, VC_TOL_BF16};

/* The stem lowering picks for a linear x[m, k] @ w[n, k]^T in dtype t (graph inputs live in the
 * arena at 256-byte-aligned offsets): gemv when M <= 4 and K is a multiple of 16 bytes. */
static const char *linear_stem(int64_t m, int64_t k, bool bias, bool res, int t, char *buf)
{
    bool fast = m <= 4 && k % (t == 0 ? 4 : 8) == 0;
    sprintf(buf, "%s%s", fast ? "gemv" : "matmul",
            bias ? (res ? "_br" : "") : (res ? "_r" : "_nb"));
    return buf;
}

/* linear x[m, k] @ w[n, k]^T (+ b[n]) in one dtype */
static void linear(int64_t m, int64_t k, int64_t n, bool bias, int t)
{
    TuSpec in[3] = {F32(2, {m, k}), F32(2, {n, k}), F32(1, {n})};
    char stem[16];
    vc_check_node("aten.linear.default", bias ? 3 : 2, in, F32(2, {m, n}), "", dts[t], tols[t],
                  linear_stem(m, k, bias, false, t, stem));
}

static void test_linear_shapes_f32(void **state)
{
    (void)state;
    const int64_t ms[] = {1, 5, 33, 70}, ks[] = {1, 7, 64, 300}, ns[] = {1, 10, 129};
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            for (int c = 0; c < 3; c++)
                linear(ms[a], ks[b], ns[c], true, 0);
}

static void test_linear_dtypes(void **state)
{
    (void)state;
    for (int t = 0; t < 3; t++) {
        linear(1, 300, 129, true, t); /* vector path */
        linear(1, 64, 10, false, t);
        linear(70, 300, 129, true, t); /* tiled, several tiles in both directions */
        linear(33, 7, 10, false, t);
        linear(5, 1, 1, true, t);
    }
}

static void test_linear_leading_dims(void **state)
{
    (void)state;
    for (int t = 0; t < 3; t++) {
        vc_check_node("aten.linear.default", 3,
                      S(F32(3, {2, 3, 37}), F32(2, {19, 37}), F32(1, {19})), F32(3, {2, 3, 19}), "",
                      dts[t], tols[t], "matmul");
        vc_check_node("aten.linear.default", 2, S(F32(3, {1, 1, 37}), F32(2, {19, 37})),
                      F32(3, {1, 1, 19}), "", dts[t], tols[t], "matmul_nb");
        vc_check_node("aten.linear.default", 3, S(F32(1, {37}), F32(2, {19, 37}), F32(1, {19})),
                      F32(1, {19}), "", dts[t], tols[t], "matmul");
    }
}

static void test_addmm(void **state)
{
    (void)state;
    static const char *attrs[] = {"", "\"alpha\":0.5,\"beta\":2.0", "\"beta\":0.0",
                                  "\"alpha\":-1.5"};
    /* beta = 0 drops the bias term (and its binding: stem matmul_nb) */
    for (int t = 0; t < 3; t++)
        for (int i = 0; i < 4; i++) {
            const char *stem = i == 2 ? "matmul_nb" : "matmul";
            vc_check_node("aten.addmm.default", 3,
                          S(F32(1, {11}), F32(2, {9, 13}), F32(2, {13, 11})), F32(2, {9, 11}),
                          attrs[i], dts[t], tols[t], stem);
            vc_check_node("aten.addmm.default", 3,
                          S(F32(2, {9, 11}), F32(2, {9, 13}), F32(2, {13, 11})), F32(2, {9, 11}),
                          attrs[i], dts[t], tols[t], stem);
        }
    for (int t = 0; t < 3; t++) {
        /* M = 1 (vector path over a [K, N] operand); bias broadcasts [M, 1] and [] */
        vc_check_node("aten.addmm.default", 3, S(F32(1, {70}), F32(2, {1, 45}), F32(2, {45, 70})),
                      F32(2, {1, 70}), "\"alpha\":0.5,\"beta\":2.0", dts[t], tols[t], "matmul");
        vc_check_node("aten.addmm.default", 3, S(F32(2, {9, 1}), F32(2, {9, 13}), F32(2, {13, 11})),
                      F32(2, {9, 11}), "", dts[t], tols[t], "matmul");
        vc_check_node("aten.addmm.default", 3, S(F32(0, {0}), F32(2, {9, 13}), F32(2, {13, 11})),
                      F32(2, {9, 11}), "\"beta\":0.25", dts[t], tols[t], "matmul");
    }
}

static void matmul(const char *op, TuSpec a, TuSpec b, TuSpec y)
{
    TuSpec in[2] = {a, b};
    for (int t = 0; t < 3; t++)
        vc_check_node(op, 2, in, y, "", dts[t], tols[t], "matmul_nb");
}

static void test_matmul(void **state)
{
    (void)state;
    const char *mm = "aten.matmul.default";
    matmul(mm, F32(1, {7}), F32(2, {7, 4}), F32(1, {4}));
    matmul(mm, F32(2, {5, 7}), F32(1, {7}), F32(1, {5}));
    matmul(mm, F32(1, {7}), F32(3, {2, 7, 4}), F32(2, {2, 4}));
    matmul(mm, F32(3, {2, 5, 7}), F32(1, {7}), F32(2, {2, 5}));
    matmul(mm, F32(4, {2, 3, 5, 7}), F32(2, {7, 4}), F32(4, {2, 3, 5, 4}));
    matmul(mm, F32(4, {1, 3, 5, 7}), F32(4, {2, 1, 7, 4}), F32(4, {2, 3, 5, 4}));
    matmul(mm, F32(2, {5, 7}), F32(3, {3, 7, 20}), F32(3, {3, 5, 20}));
    matmul(mm, F32(4, {2, 3, 17, 8}), F32(4, {2, 3, 8, 17}), F32(4, {2, 3, 17, 17}));
    /* decode-like M = 1 per batch: vector path with batch strides */
    matmul(mm, F32(4, {2, 3, 1, 40}), F32(4, {2, 3, 40, 9}), F32(4, {2, 3, 1, 9}));
    matmul(mm, F32(4, {2, 3, 1, 9}), F32(4, {2, 1, 9, 40}), F32(4, {2, 3, 1, 40}));
    /* four batch dims (rank 6, the NPU's limit), the inner two merge */
    matmul(mm, F32(6, {2, 1, 3, 2, 3, 4}), F32(6, {1, 2, 3, 2, 4, 5}), F32(6, {2, 2, 3, 2, 3, 5}));
}

static void test_bmm_mm(void **state)
{
    (void)state;
    matmul("aten.bmm.default", F32(3, {3, 5, 7}), F32(3, {3, 7, 4}), F32(3, {3, 5, 4}));
    matmul("aten.bmm.default", F32(3, {4, 1, 33}), F32(3, {4, 33, 65}), F32(3, {4, 1, 65}));
    matmul("aten.bmm.default", F32(3, {2, 70, 20}), F32(3, {2, 20, 66}), F32(3, {2, 70, 66}));
    matmul("aten.mm.default", F32(2, {33, 70}), F32(2, {70, 20}), F32(2, {33, 20}));
    matmul("aten.mm.default", F32(2, {1, 70}), F32(2, {70, 129}), F32(2, {1, 129}));
}

/* one tensor as both operands (and as the bias): bound twice */
static void test_same_operand(void **state)
{
    (void)state;
    /* clang-format off */
    const char *mm =
        "{\"graph_inputs\":[" VC_T("x", "[9,9]") "],\"graph_outputs\":[" VC_T("y", "[9,9]") "],\"nodes\":["
        VC_NODE("n", "aten.matmul.default", VC_T("x", "[9,9]") "," VC_T("x", "[9,9]"), VC_T("y", "[9,9]"), "") "]}";
    const char *am =
        "{\"graph_inputs\":[" VC_T("x", "[9,9]") "],\"graph_outputs\":[" VC_T("y", "[9,9]") "],\"nodes\":["
        VC_NODE("n", "aten.addmm.default", VC_T("x", "[9,9]") "," VC_T("x", "[9,9]") "," VC_T("x", "[9,9]"),
                VC_T("y", "[9,9]"), "\"beta\":0.5") "]}";
    /* clang-format on */
    for (int t = 0; t < 3; t++) {
        vc_check_json(mm, dts[t], tols[t], "matmul_nb");
        vc_check_json(am, dts[t], tols[t], "matmul");
    }
}

/* linear + activation as one graph; the fusion must form: one kernel, fused, stem matmul. */
static void linear_act(const char *act, const char *attrs, int64_t m, int t)
{
    char x[64], y[64], json[2048];
    snprintf(x, sizeof x, "[%lld,45]", (long long)m);
    snprintf(y, sizeof y, "[%lld,21]", (long long)m);
    snprintf(json, sizeof json,
             "{\"model_name\":\"t\",\"graph_inputs\":[{\"name\":\"x\",\"shape\":%s},"
             "{\"name\":\"w\",\"shape\":[21,45]},{\"name\":\"b\",\"shape\":[21]}],"
             "\"graph_outputs\":[{\"name\":\"y\",\"shape\":%s}],\"nodes\":["
             "{\"name\":\"lin\",\"op_type\":\"aten.linear.default\",\"inputs\":["
             "{\"name\":\"x\",\"shape\":%s},{\"name\":\"w\",\"shape\":[21,45]},"
             "{\"name\":\"b\",\"shape\":[21]}],\"outputs\":[{\"name\":\"h\",\"shape\":%s}],"
             "\"attrs\":{}},"
             "{\"name\":\"act\",\"op_type\":\"%s\",\"inputs\":[{\"name\":\"h\",\"shape\":%s}],"
             "\"outputs\":[{\"name\":\"y\",\"shape\":%s}],\"attrs\":{%s}}]}",
             x, y, x, y, act, y, y, attrs);
    Pipeline pipe;
    vc_compile_json(json, &pipe);
    const Plan *p = pipe.plan;
    assert_int_equal(p->nkernels, 1);
    assert_string_equal(p->kernels[0].shader, "matmul");
    assert_true(p->kernels[0].fusion >= 0);
    assert_true(strncmp(p->fusions[p->kernels[0].fusion].pattern, "linear", 6) == 0 ||
                strcmp(p->fusions[p->kernels[0].fusion].pattern, "linear_act") == 0);
    pipeline_free(&pipe);
    vc_check_json(json, dts[t], tols[t], "matmul");
}

static void test_linear_act(void **state)
{
    (void)state;
    static const char *acts[][2] = {
        {"aten.relu.default", ""},
        {"aten.gelu.default", ""},
        {"aten.gelu.default", "\"approximate\":\"tanh\""},
        {"aten.silu.default", ""},
        {"aten.sigmoid.default", ""},
        {"aten.tanh.default", ""},
        {"aten.hardswish.default", ""},
    };
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++)
        for (int t = 0; t < 3; t++) {
            linear_act(acts[i][0], acts[i][1], 1, t);
            linear_act(acts[i][0], acts[i][1], 37, t);
        }
}

/* Residual forms for lin_graph: none, add(linear, r), add(r, linear), add(r, linear) then relu. */
enum { RES_NONE, RES_AFTER, RES_BEFORE, RES_RELU };

/* x[m, k] -> linear(w[n, k] (+ b[n])) (-> act) (-> add with r[m, n]) (-> relu) -> y, in the
 * exporter's format. */
static void lin_graph(char *json, size_t cap, int64_t m, int64_t k, int64_t n, bool bias,
                      const char *act, int res)
{
    char xs[48], ws[48], ys[48], nodes[2048], inputs[512];
    snprintf(xs, sizeof xs, "[%lld,%lld]", (long long)m, (long long)k);
    snprintf(ws, sizeof ws, "[%lld,%lld]", (long long)n, (long long)k);
    snprintf(ys, sizeof ys, "[%lld,%lld]", (long long)m, (long long)n);
    snprintf(inputs, sizeof inputs,
             "{\"name\":\"x\",\"shape\":%s},{\"name\":\"w\",\"shape\":%s},"
             "{\"name\":\"b\",\"shape\":[%lld]},{\"name\":\"r\",\"shape\":%s}",
             xs, ws, (long long)n, ys);
    char bs[64] = "";
    if (bias) snprintf(bs, sizeof bs, ",{\"name\":\"b\",\"shape\":[%lld]}", (long long)n);
    int len = snprintf(nodes, sizeof nodes,
                       "{\"name\":\"lin\",\"op_type\":\"aten.linear.default\",\"inputs\":["
                       "{\"name\":\"x\",\"shape\":%s},{\"name\":\"w\",\"shape\":%s}%s],"
                       "\"outputs\":[{\"name\":\"%s\",\"shape\":%s}],\"attrs\":{}}",
                       xs, ws, bs, act || res ? "h" : "y", ys);
    if (act)
        len +=
            snprintf(nodes + len, sizeof nodes - (size_t)len,
                     ",{\"name\":\"act\",\"op_type\":\"%s\",\"inputs\":[{\"name\":\"h\",\"shape\":"
                     "%s}],\"outputs\":[{\"name\":\"y\",\"shape\":%s}],\"attrs\":{}}",
                     act, ys, ys);
    if (res) {
        const char *a = res == RES_AFTER ? "h" : "r", *b = res == RES_AFTER ? "r" : "h";
        len += snprintf(nodes + len, sizeof nodes - (size_t)len,
                        ",{\"name\":\"add\",\"op_type\":\"aten.add.Tensor\",\"inputs\":["
                        "{\"name\":\"%s\",\"shape\":%s},{\"name\":\"%s\",\"shape\":%s}],"
                        "\"outputs\":[{\"name\":\"%s\",\"shape\":%s}],\"attrs\":{}}",
                        a, ys, b, ys, res == RES_RELU ? "s" : "y", ys);
        if (res == RES_RELU)
            snprintf(nodes + len, sizeof nodes - (size_t)len,
                     ",{\"name\":\"relu\",\"op_type\":\"aten.relu.default\",\"inputs\":["
                     "{\"name\":\"s\",\"shape\":%s}],\"outputs\":[{\"name\":\"y\",\"shape\":%s}],"
                     "\"attrs\":{}}",
                     ys, ys);
    }
    snprintf(json, cap,
             "{\"model_name\":\"t\",\"graph_inputs\":[%s],\"graph_outputs\":[{\"name\":\"y\","
             "\"shape\":%s}],\"nodes\":[%s]}",
             inputs, ys, nodes);
}

static void lin_check(int64_t m, int64_t k, int64_t n, bool bias, const char *act, int res, int t)
{
    char json[4096], stem[16];
    lin_graph(json, sizeof json, m, k, n, bias, act, res);
    /* a handful of outputs: one cancelling sum dominates the relative error of 16-bit inputs */
    double tol = tols[t] * (m * n < 8 ? 2 : 1);
    vc_check_json(json, dts[t], tol, linear_stem(m, k, bias, res != RES_NONE, t, stem));
}

/* The gemv path over the decode shapes: K a multiple of 8 (and 1001: a multiple of neither 8 nor
 * 4, so every dtype takes the matmul fallback), N from 1 to 2048, with and without bias and
 * residual. */
static void test_gemv_shapes(void **state)
{
    (void)state;
    const int64_t ks[] = {8, 64, 1536, 1001, 8960}, ns[] = {1, 7, 33, 2048};
    for (int t = 0; t < 3; t++)
        for (int a = 0; a < 5; a++)
            for (int b = 0; b < 4; b++) {
                if (ks[a] == 8960 && ns[b] == 2048 && t != 2) continue; /* one big case: bf16 */
                if (!tu_here((a + b + t) % 3 != 0)) continue; /* quick: every K, N and dtype */
                int v = (a + b) % 4;
                lin_check(1, ks[a], ns[b], v & 1, NULL, RES_NONE, t);
                lin_check(1, ks[a], ns[b], !(v & 1), NULL, v & 2 ? RES_BEFORE : RES_AFTER, t);
            }
}

/* Many rows: 70000 (17500 workgroups of 4 rows) and 270000 (67500 workgroups: the grid folds
 * into y past 65535). */
static void test_gemv_large_n(void **state)
{
    (void)state;
    for (int t = 0; t < 3; t++) {
        if (!tu_here(t != 1)) continue;
        lin_check(1, 64, 70000, true, NULL, RES_AFTER, t);
        lin_check(1, 8, 270000, false, NULL, RES_NONE, t);
        lin_check(1, 16, 270000, true, NULL, RES_BEFORE, t);
    }
}

/* M = 2..4 rows of A on the gemv path (R * M outputs per workgroup), M = 5 on the tiled one. */
static void test_gemv_rows(void **state)
{
    (void)state;
    for (int t = 0; t < 3; t++)
        for (int64_t m = 2; m <= 5; m++) {
            if (!tu_here((t + m) % 3 != 0)) continue; /* quick: every M and dtype */
            lin_check(m, 64, 33, true, NULL, RES_NONE, t);
            lin_check(m, 1536, 9000, m % 2, NULL, RES_AFTER, t); /* R = 4 for M <= 2 */
        }
}

/* Activations on the gemv path and the residual with a relu after it (linear_add_relu) on all
 * three paths. */
static void test_gemv_act_residual(void **state)
{
    (void)state;
    static const char *acts[] = {"aten.relu.default", "aten.gelu.default",
                                 "aten.silu.default", "aten.sigmoid.default",
                                 "aten.tanh.default", "aten.hardswish.default"};
    for (int t = 0; t < 3; t++) {
        for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
            lin_check(1, 256, 33, true, acts[i], RES_NONE, t);
            lin_check(3, 64, 7, false, acts[i], RES_NONE, t);
        }
        lin_check(1, 256, 33, true, NULL, RES_RELU, t);  /* gemv_br */
        lin_check(1, 100, 33, false, NULL, RES_RELU, t); /* scalar vector path, matmul_r */
        lin_check(37, 64, 45, true, NULL, RES_RELU, t);  /* tiled, matmul_br */
        lin_check(37, 64, 45, false, NULL, RES_BEFORE, t);
    }
}

/* alpha, beta and batch strides on the gemv path: N = 1 makes a [K, N] operand contiguous
 * along K (b_ks = 1). */
static void test_gemv_addmm_batch(void **state)
{
    (void)state;
    for (int t = 0; t < 3; t++) {
        vc_check_node("aten.addmm.default", 3, S(F32(1, {1}), F32(2, {1, 16}), F32(2, {16, 1})),
                      F32(2, {1, 1}), "\"alpha\":0.5,\"beta\":2.0", dts[t], tols[t], "gemv");
        vc_check_node("aten.addmm.default", 3, S(F32(2, {3, 1}), F32(2, {3, 64}), F32(2, {64, 1})),
                      F32(2, {3, 1}), "\"alpha\":-1.5", dts[t], tols[t], "gemv");
        vc_check_node("aten.matmul.default", 2, S(F32(4, {2, 3, 1, 16}), F32(4, {2, 1, 16, 1})),
                      F32(4, {2, 3, 1, 1}), "", dts[t], tols[t], "gemv_nb");
        /* a 1-D B folds the batch into M = 4; K = 20 is 16-byte vectors only in f32 */
        vc_check_node("aten.matmul.default", 2, S(F32(3, {2, 2, 20}), F32(1, {20})), F32(2, {2, 2}),
                      "", dts[t], tols[t], t ? "matmul_nb" : "gemv_nb");
    }
}

/* Lowering proves 16-byte alignment: with a 4-byte arena alignment the activation lands at byte
 * 8 (after a 3-element input) and the product falls back to the scalar path. Compile only:
 * no device binds storage at such an offset. */
static void test_gemv_alignment(void **state)
{
    (void)state;
    /* clang-format off */
    const char *json =
        "{\"graph_inputs\":[" VC_T("a", "[3]") "," VC_T("x", "[1,64]") "," VC_T(
            "w", "[16,64]") "],\"graph_outputs\":[" VC_T("y", "[1,16]") "," VC_T("c", "[3]") "],"
        "\"nodes\":[" VC_NODE("n", "aten.linear.default", VC_T("x", "[1,64]") "," VC_T("w", "[16,64]"),
                              VC_T("y", "[1,16]"), "") "," VC_NODE("r", "aten.relu.default",
                              VC_T("a", "[3]"), VC_T("c", "[3]"), "") "]}";
    /* clang-format on */
    for (int align = 4; align <= 256; align *= 64) {
        CompileOptions o;
        compile_defaults(&o);
        o.compute = DT_BF16;
        o.arena_align = align;
        Pipeline pipe = tu_compile_json(json, &o);
        const Plan *p = pipe.plan;
        int64_t xoff = -1;
        const char *stem = NULL;
        for (int i = 0; i < p->ntensors; i++)
            if (strcmp(p->tensors[i].name, "x") == 0) xoff = p->tensors[i].offset;
        for (int k = 0; k < p->nkernels; k++)
            if (strncmp(p->kernels[k].shader, "relu", 4) && strcmp(p->kernels[k].shader, "unary"))
                stem = p->kernels[k].shader;
        assert_non_null(stem);
        if (align == 4) {
            assert_int_equal(xoff % 16, 8);
            assert_string_equal(stem, "matmul_nb");
        } else {
            assert_int_equal(xoff % 16, 0);
            assert_string_equal(stem, "gemv_nb");
        }
        pipeline_free(&pipe);
    }
}

/* Both gemv forms with parameters the heuristic does not pick (gemv.wg, .r, .u, .g): split-K
 * (G = 0) with R = 3 and a guarded last trip of U = 5; subgroup rows with more row groups than
 * subgroups (G = 8 over lavapipe's 4 subgroups of 8 in a workgroup of 32: a subgroup takes two),
 * R = 3 rows past N, M = 3; chunks per lane not a multiple of U, K = 8 (one chunk). */
static void test_gemv_variants(void **state)
{
    (void)state;

    static const int vs[][4] = {{64, 3, 5, 0}, {32, 3, 3, 8}, {32, 1, 8, 16}, {128, 2, 1, 1}};
    static const char *const knobs[] = {"gemv.wg", "gemv.r", "gemv.u", "gemv.g"};
    const int64_t ks[] = {8, 136, 1536}, ns[] = {3, 7, 50};
    for (int v = 0; v < 4; v++) {
        for (int i = 0; i < 4; i++) {
            char a[32];
            snprintf(a, sizeof a, "%s=%d", knobs[i], vs[v][i]);
            vc_tune(a);
        }
        for (int t = 0; t < 3; t++)
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++) {
                    if (!tu_here(t != v % 3)) continue; /* quick: each variant in one dtype */
                    int w = (a + b + v + t) % 4;
                    lin_check(w == 3 ? 3 : 1, ks[a], ns[b], w & 1, NULL,
                              w & 2 ? RES_AFTER : RES_NONE, t);
                }
    }
    vc_tune(NULL);
}

/* The backend refuses a module whose subgroup operations the device lacks: the gemv modules
 * declare basic + arithmetic + ballot, the scalar matmul modules none. */
static void test_gemv_module_needs(void **state)
{
    (void)state;
    static const char *v[] = {"f32", "f16", "bf16"};
    for (int t = 0; t < 3; t++) {
        char name[32];
        snprintf(name, sizeof name, "gemv_br.%s", v[t]);
        assert_int_equal(vk_spv_subgroup_ops(vk_spv_find(name)), 0x1 | 0x4 | 0x8);
        snprintf(name, sizeof name, "matmul_br.%s", v[t]);
        assert_int_equal(vk_spv_subgroup_ops(vk_spv_find(name)), 0);
    }
}

/* The graph of s must fuse into one linear_concat matmul of stem `stem`, and agree with the
 * CPU reference on Vulkan in dtype t. */
static void concat(const ConcatSpec *s, int t, const char *stem)
{
    char *json = concat_graph_json(s);
    assert_non_null(json);
    Pipeline pipe;
    vc_compile_json(json, &pipe);
    const Plan *p = pipe.plan;
    int fused = 0;
    for (int k = 0; k < p->nkernels; k++)
        fused += p->kernels[k].fusion >= 0 &&
                 strcmp(p->fusions[p->kernels[k].fusion].pattern, "linear_concat") == 0 &&
                 strcmp(p->kernels[k].shader, stem) == 0;
    assert_int_equal(fused, 1);
    pipeline_free(&pipe);
    vc_check_json(json, dts[t], tols[t], stem);
    free(json);
}

static void test_linear_concat(void **state)
{
    (void)state;
    ConcatSpec qkv = {.rows = 1, .k = 70, .n = 3, .cols = {64, 32, 33}, .bias = {1, 1, 1}};
    ConcatSpec gate_up = {.rows = 1, .k = 96, .n = 2, .cols = {96, 160}};
    ConcatSpec act = {.rows = 1,
                      .k = 45,
                      .n = 2,
                      .cols = {32, 21},
                      .bias = {1, 1},
                      .act = {"aten.gelu.default", "aten.gelu.default"}};
    ConcatSpec four = {.rows = 1, .k = 302, .n = 4, .cols = {32, 64, 32, 7}};
    ConcatSpec qkv8 = {.rows = 1, .k = 64, .n = 3, .cols = {64, 32, 33}, .bias = {1, 1, 1}};
    for (int t = 0; t < 3; t++) {
        concat(&qkv, t, "matmul"); /* K = 70: the scalar vector path */
        concat(&qkv8, t, "gemv");  /* K a multiple of 8: the 16-byte-load path */
        concat(&gate_up, t, "gemv_nb");
        concat(&act, t, "matmul");
        concat(&four, t, "matmul_nb");
    }
}

/* The tiling of the tensor-core kernel (and the SIMT one): several tiles each way with partial
 * last ones, K splits with a short last split and their reduce with and without bias, with an
 * activation and with a residual (matmul_red_r, _br), a batch of products split along K, B
 * contiguous along N (no transpose). K a multiple of 8 with aligned operands takes the 16-byte
 * staging loads of the tensor-core kernel (VEC), other K the one-element loads. */
static void test_gemm_tiles(void **state)
{
    (void)state;
    for (int t = 0; t < 3; t++) {
        linear(130, 600, 70, true, t);  /* M 64+64+2, K split */
        linear(16, 1000, 33, false, t); /* few tiles, long K */
        linear(40, 17, 100, true, t);   /* K of one step */
        vc_check_node("aten.mm.default", 2, S(F32(2, {70, 330}), F32(2, {330, 90})),
                      F32(2, {70, 90}), "", dts[t], tols[t], "matmul_nb");
        vc_check_node("aten.bmm.default", 2, S(F32(3, {3, 20, 260}), F32(3, {3, 260, 24})),
                      F32(3, {3, 20, 24}), "", dts[t], tols[t], "matmul_nb");
        vc_check_node("aten.addmm.default", 3,
                      S(F32(1, {50}), F32(2, {33, 400}), F32(2, {400, 50})), F32(2, {33, 50}),
                      "\"alpha\":0.5,\"beta\":2.0", dts[t], tols[t], "matmul");
        linear_act("aten.gelu.default", "", 48, t);
        lin_check(40, 1000, 70, false, NULL, RES_RELU, t);  /* split, 16-byte loads, reduce _r */
        lin_check(40, 1003, 70, true, NULL, RES_BEFORE, t); /* split, element loads, reduce _br */
        lin_check(70, 48, 129, true, NULL, RES_RELU, t);    /* one split, 16-byte loads, _br */
    }
}

/* The large tensor-core tile (128x128 on 8 subgroups, the result through 16-row stripes:
 * matmul_cml*, emulated as matmul_cmlx* here), which lowering picks when M and N are both at
 * least 128 and its grid fills the GPU (test_gemm_tile_choice), and its narrow layout (cm.shape=1:
 * 128x64 on 4 subgroups, matmul_cmh*, emulated as matmul_cmhx*): M a whole tile and partial (200),
 * N partial (136, 300), K in one split and split (the reduce with and without bias and residual), K
 * not a multiple of 8 (one-element staging loads, VEC 0), B contiguous along N (mm, bmm, addmm: no
 * transpose), a batch of products with and without a K split. fp32 keeps the SIMT kernel: f16
 * and bf16, the narrow layout in the other dtype than the wide one's quick run. */
static void gemm_tiles_large(const char *tune)
{
    vc_tune(tune);
    for (int t = 1; t < 3; t++) {
        if (!tu_here((t == 2) == (tune == NULL))) continue; /* quick: one dtype each */
        linear(128, 96, 136, true, t);                      /* one split, 16-byte loads, bias */
        linear(200, 600, 300, false, t); /* 2 x 3 tiles, partial both ways, K split */
        lin_check(200, 100, 136, true, NULL, RES_RELU, t);     /* K 100: element loads, _br */
        lin_check(128, 1003, 300, false, NULL, RES_BEFORE, t); /* split, element loads, reduce _r */
        lin_check(130, 520, 129, true, "aten.silu.default", RES_NONE,
                  t); /* split, act, reduce with bias */
        vc_check_node("aten.mm.default", 2, S(F32(2, {140, 72}), F32(2, {72, 150})),
                      F32(2, {140, 150}), "", dts[t], tols[t], "matmul_nb");
        vc_check_node("aten.bmm.default", 2, S(F32(3, {2, 130, 200}), F32(3, {2, 200, 140})),
                      F32(3, {2, 130, 140}), "", dts[t], tols[t], "matmul_nb");
        vc_check_node("aten.bmm.default", 2, S(F32(3, {2, 128, 520}), F32(3, {2, 520, 128})),
                      F32(3, {2, 128, 128}), "", dts[t], tols[t], "matmul_nb");
        vc_check_node("aten.addmm.default", 3,
                      S(F32(1, {150}), F32(2, {140, 300}), F32(2, {300, 150})), F32(2, {140, 150}),
                      "\"alpha\":0.5,\"beta\":2.0", dts[t], tols[t], "matmul");
    }
    vc_tune(NULL);
}

static void test_gemm_tiles_large(void **state)
{
    (void)state;
    gemm_tiles_large(NULL);
}

static void test_gemm_tiles_narrow(void **state)
{
    (void)state;
    gemm_tiles_large("cm.shape=1");
}

/* A linear x[m, k] @ w[n, k]^T compiled for nv-coopmat in bf16 (emu: its emulation), not run. */
static Pipeline compile_cm(int64_t m, int64_t k, int64_t n, bool emu)
{
    char json[4096];
    lin_graph(json, sizeof json, m, k, n, false, NULL, RES_NONE);
    CompileOptions o;
    vc_options(&o);
    o.compute = DT_BF16;
    o.tier = TIER_NV_COOPMAT;
    o.cm_emulate = emu;
    return tu_compile_json(json, &o);
}

/* The tile and split lowering picks for x[m, k] @ w[n, k]^T: the first pass's stem, its
 * workgroup and tile (spec 0, 1, 2), its K splits (push word nsplit), and the reduce's stem
 * when it splits. */
static void expect_cm_tile(int64_t m, int64_t k, int64_t n, bool emu, const char *stem, uint32_t wg,
                           uint32_t bm, uint32_t bn, uint32_t nsplit)
{
    Pipeline pipe = compile_cm(m, k, n, emu);
    const Plan *p = pipe.plan;
    const PlanKernel *mk = NULL, *red = NULL;
    for (int i = 0; i < p->nkernels; i++) {
        if (strncmp(p->kernels[i].shader, "matmul_c", 8) == 0) mk = &p->kernels[i];
        if (strcmp(p->kernels[i].shader, "matmul_red_nb") == 0) red = &p->kernels[i];
    }
    assert_non_null(mk);
    assert_string_equal(mk->shader, stem);
    assert_true(mk->nspec >= 3 && mk->npush >= 4);
    assert_int_equal(mk->spec[0], wg);
    assert_int_equal(mk->spec[1], bm);
    assert_int_equal(mk->spec[2], bn);
    assert_int_equal(mk->push[mk->npush - 2], nsplit);
    assert_int_equal(red != NULL, nsplit > 1);
    /* grid: one workgroup per tile and split */
    uint32_t tiles = (uint32_t)(((m + bm - 1) / bm) * ((n + bn - 1) / bn));
    assert_int_equal((uint64_t)mk->groups[0] * mk->groups[1] * mk->groups[2],
                     (uint64_t)tiles * nsplit);
    pipeline_free(&pipe);
}

static void expect_cm(int64_t m, int64_t k, int64_t n, bool emu, const char *stem, uint32_t wg,
                      uint32_t tile, uint32_t nsplit)
{
    expect_cm_tile(m, k, n, emu, stem, wg, tile, tile, nsplit);
}

/* Lowering's tile choice on nv-coopmat: Qwen2.5-1.5B's prefill gate (M 128, 1536 -> 8960) and
 * down (8960 -> 1536) on the 128x128 tile, split for waves of one workgroup per SM (cm.waves:
 * 70 tiles x 3 splits of 16 steps in two waves, not 2 of 24 in two; 12 tiles x 11 splits in
 * one), ViT-B/16's qkv and fc1 (M 197: 36 tiles x 3 splits and 48 x 2 in one wave, where the
 * ceil rule's 4 and 3 left a second wave of 12); a product with M or N under 128 on the 64x64
 * tile (4 per SM: 2 x 140 tiles x 2 splits), as one whose large tiles would run unsplit on
 * fewer workgroups than SMs (ConvNeXt-T's and Swin-T's short-K GEMMs); cm.tile forces either;
 * cm.target overrides the split's target. */
static void test_gemm_tile_choice(void **state)
{
    (void)state;
    vc_tune(NULL);
    expect_cm(128, 1536, 8960, false, "matmul_cml_part", 256, 128, 3);
    expect_cm(128, 1536, 8960, true, "matmul_cmlx_part", 256, 128, 3);
    expect_cm(128, 8960, 1536, false, "matmul_cml_part", 256, 128, 11);
    expect_cm(197, 768, 2304, false, "matmul_cml_part", 256, 128, 3);
    expect_cm(197, 768, 3072, false, "matmul_cml_part", 256, 128, 2);
    expect_cm(197, 768, 768, false, "matmul_cml_part", 256, 128, 6); /* 12 tiles, 4 steps each */
    vc_tune("cm.waves=0");                                           /* ceil(132 / tiles) splits */
    expect_cm(128, 1536, 8960, false, "matmul_cml_part", 256, 128, 2);
    expect_cm(197, 768, 2304, false, "matmul_cml_part", 256, 128, 4);
    expect_cm(197, 768, 3072, false, "matmul_cml_part", 256, 128, 3);
    vc_tune(NULL);
    /* unsplit (K under 2 x KC_MIN_STEPS steps) on fewer large tiles than SMs: the 64 tile */
    expect_cm(128, 96, 136, false, "matmul_cm_nb", 128, 64, 1); /* 2 large tiles */
    expect_cm(128, 96, 136, true, "matmul_cmx_nb", 128, 64, 1);
    expect_cm(784, 192, 768, false, "matmul_cm_nb", 128, 64, 1);     /* 42: ConvNeXt-T fc1 */
    expect_cm(3136, 96, 384, false, "matmul_cm_nb", 128, 64, 1);     /* 75 */
    expect_cm(2048, 96, 2048, false, "matmul_cml_nb", 256, 128, 1);  /* 256 fill the GPU */
    expect_cm(784, 768, 192, false, "matmul_cml_part", 256, 128, 6); /* 14, split: large */
    expect_cm(127, 1536, 8960, false, "matmul_cm_part", 128, 64, 2);
    expect_cm(128, 96, 127, false, "matmul_cm_nb", 128, 64, 1);
    expect_cm(64, 96, 64, true, "matmul_cmx_nb", 128, 64, 1);
    vc_tune("cm.tile=64");
    expect_cm(128, 1536, 8960, false, "matmul_cm_part", 128, 64, 2); /* 280 tiles: target 528 */
    vc_tune("cm.tile=128");
    expect_cm(64, 96, 64, false, "matmul_cml_nb", 256, 128, 1);
    expect_cm(128, 96, 136, true, "matmul_cmlx_nb", 256, 128, 1);
    vc_tune("cm.target=70");
    expect_cm(128, 1536, 8960, false, "matmul_cml_nb", 256, 128, 1);
    /* the narrow layout: 128 x 64 tiles on 128 invocations (140 and 24 tiles), the same rule
     * for the split (~1 workgroup per SM), the 64 tile where M or N is under 128 */
    vc_tune(NULL);
    vc_tune("cm.shape=1");
    expect_cm_tile(128, 1536, 8960, false, "matmul_cmh_nb", 128, 128, 64, 1);
    expect_cm_tile(128, 8960, 1536, true, "matmul_cmhx_part", 128, 128, 64, 6);
    expect_cm(127, 1536, 8960, false, "matmul_cm_part", 128, 64, 2);
    vc_tune(NULL);
}

int main(void)
{
    /* `make test-long`: the cases the quick suite leaves out (tu_here) */
    return tu_long()
               ? TU_TESTS(test_gemv_shapes, test_gemv_large_n, test_gemv_rows, test_gemv_variants,
                          test_gemm_tiles_large, test_gemm_tiles_narrow)
               : TU_TESTS(test_linear_shapes_f32, test_linear_dtypes, test_linear_leading_dims,
                          test_addmm, test_matmul, test_bmm_mm, test_same_operand, test_linear_act,
                          test_gemv_shapes, test_gemv_large_n, test_gemv_rows,
                          test_gemv_act_residual, test_gemv_addmm_batch, test_gemv_alignment,
                          test_gemv_variants, test_gemv_module_needs, test_linear_concat,
                          test_gemm_tiles, test_gemm_tiles_large, test_gemm_tiles_narrow,
                          test_gemm_tile_choice);
}
