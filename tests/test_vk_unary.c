/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * unary kernels on Vulkan against the CPU reference: every op, three storage dtypes, shapes
 * that are not multiples of the workgroup, and a padded (conv-family) layout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/kernel_check.h"
#include "tests/vk_check.h"

static const char *ops[][2] = {
    {"aten.relu.default", ""},
    {"aten.relu6.default", ""},
    {"aten.hardtanh.default", "\"min_val\":-0.5,\"max_val\":0.25"},
    {"aten.hardswish.default", ""},
    {"aten.hardsigmoid.default", ""},
    {"aten.sigmoid.default", ""},
    {"aten.tanh.default", ""},
    {"aten.gelu.default", ""},
    {"aten.gelu.default", "\"approximate\":\"tanh\""},
    {"aten.silu.default", ""},
    {"aten.neg.default", ""},
    {"aten.exp.default", ""},
    {"aten.abs.default", ""},
    {"aten.cos.default", ""},
    {"aten.sin.default", ""},
    {"aten.clamp.default", "\"min\":-0.3,\"max\":0.6"},
    {"aten.clamp_min.default", "\"min\":0.1"},
    {"aten.leaky_relu.default", "\"negative_slope\":0.1"},
};

static void test_unary_all_ops(void **state)
{
    (void)state;
    const char *dts[] = {"fp32", "fp16", "bf16"};
    const double tols[] = {VC_TOL_F32, VC_TOL_F16, VC_TOL_BF16};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        for (int t = 0; t < 3; t++)
            vc_check_node(ops[i][0], 1, S(F32(3, {3, 5, 67})), F32(3, {3, 5, 67}), ops[i][1],
                          dts[t], tols[t], "unary");
}

static void test_unary_positive_domain(void **state)
{
    (void)state;
    /* clang-format off */
    /* log, sqrt, rsqrt on |x| + 0.5 (random inputs are in [-1, 1]) */
    const char *g =
        "{\"graph_inputs\":[" VC_T("x", "[2,333]") "],\"graph_outputs\":[" VC_T("l", "[2,333]") "," VC_T("s", "[2,333]") "," VC_T("r", "[2,333]") "],\"nodes\":["
        VC_NODE("a", "aten.abs.default", VC_T("x", "[2,333]"), VC_T("ax", "[2,333]"), "")
        "," VC_NODE("p", "aten.add.Tensor", VC_T("ax", "[2,333]"), VC_T("y", "[2,333]"), "\"other\":0.5")
        "," VC_NODE("l", "aten.log.default", VC_T("y", "[2,333]"), VC_T("l", "[2,333]"), "")
        "," VC_NODE("s", "aten.sqrt.default", VC_T("y", "[2,333]"), VC_T("s", "[2,333]"), "")
        "," VC_NODE("r", "aten.rsqrt.default", VC_T("y", "[2,333]"), VC_T("r", "[2,333]"), "") "]}";
    /* clang-format on */
    vc_check_json(g, "fp32", VC_TOL_F32, "unary");
    vc_check_json(g, "fp16", VC_TOL_F16, "unary");
}

TU_MAIN(test_unary_all_ops, test_unary_positive_domain)
