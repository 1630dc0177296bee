/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * matmul kernels on Vulkan against the CPU reference: linear (with and without bias, leading
 * dims), addmm (alpha, beta, bias broadcasts, beta = 0), matmul (1-D operands, batch
 * broadcasting), bmm, mm, and every linear_act fusion; M = 1 takes the vector path, larger M the
 * tiled one; K and N are not multiples of the tiles; f32, f16 and bf16. A product without a
 * bias term runs as stem matmul_nb (the same kernel with one binding fewer). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/ir_json.h"
#include "compiler/pass.h"
#include "compiler/plan.h"
#include "kernel_check.h"
#include "vk_check.h"

static const char *dts[] = {"fp32", "fp16", "bf16"};
static const double tols[] = {VC_TOL_F32, VC_TOL_F16, VC_TOL_BF16};

/* linear x[m, k] @ w[n, k]^T (+ b[n]) in one dtype */
static void linear(int64_t m, int64_t k, int64_t n, bool bias, int t)
{
    TuSpec in[3] = {F32(2, {m, k}), F32(2, {n, k}), F32(1, {n})};
    vc_check_node("aten.linear.default", bias ? 3 : 2, in, F32(2, {m, n}), "", dts[t], tols[t],
                  bias ? "matmul" : "matmul_nb");
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
    const char *mm = "{\"graph_inputs\":[" VC_T("x", "[9,9]") "],\"graph_outputs\":[" VC_T(
        "y", "[9,9]") "],\"nodes\":[" VC_NODE("n", "aten.matmul.default",
                                              VC_T("x", "[9,9]") "," VC_T("x", "[9,9]"),
                                              VC_T("y", "[9,9]"), "") "]}";
    const char *am = "{\"graph_inputs\":[" VC_T("x", "[9,9]") "],\"graph_outputs\":[" VC_T(
        "y", "[9,9]") "],\"nodes\":[" VC_NODE("n", "aten.addmm.default",
                                              VC_T("x", "[9,9]") "," VC_T("x", "[9,9]") "," VC_T(
                                                  "x", "[9,9]"),
                                              VC_T("y", "[9,9]"), "\"beta\":0.5") "]}";
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
    Graph *g = NULL;
    DiagList d = {0};
    assert_int_equal(ir_read_buffer("<t>", json, strlen(json), &g, &d), ST_OK);
    CompileOptions o;
    compile_defaults(&o);
    Pipeline pipe;
    assert_int_equal(pipeline_run_graph(g, &o, &pipe, &d), ST_OK);
    const Plan *p = pipe.plan;
    assert_int_equal(p->nkernels, 1);
    assert_string_equal(p->kernels[0].shader, "matmul");
    assert_true(p->kernels[0].fusion >= 0);
    assert_true(strncmp(p->fusions[p->kernels[0].fusion].pattern, "linear", 6) == 0 ||
                strcmp(p->fusions[p->kernels[0].fusion].pattern, "linear_act") == 0);
    pipeline_free(&pipe);
    diag_free(&d);
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

/* The tiling of the tensor-core kernel (and the SIMT one): several tiles each way with partial
 * last ones, K splits with a short last split and their reduce with and without bias and with
 * an activation, a batch of products split along K, B contiguous along N (no transpose). */
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
        vc_check_node("aten.addmm.default", 3, S(F32(1, {50}), F32(2, {33, 400}), F32(2, {400, 50})),
                      F32(2, {33, 50}), "\"alpha\":0.5,\"beta\":2.0", dts[t], tols[t], "matmul");
        linear_act("aten.gelu.default", "", 48, t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linear_shapes_f32),
        cmocka_unit_test(test_linear_dtypes),
        cmocka_unit_test(test_linear_leading_dims),
        cmocka_unit_test(test_addmm),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_bmm_mm),
        cmocka_unit_test(test_same_operand),
        cmocka_unit_test(test_linear_act),
        cmocka_unit_test(test_gemm_tiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
