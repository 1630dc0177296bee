/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * Mixed execution: NPU partitions on Vulkan, the rest on the CPU reference, transfers at the
 * boundaries (integers and bools stay exact, floats cast to and from the storage dtype), against
 * the CPU-only run of the same graph. Ops the NPU lacks (cumsum, integer comparisons feeding a
 * where), ops it lacks for these attributes (softmax over a non-last dim, a dilated max_pool2d),
 * chains that cross the boundary several times, host-only work hoisted ahead of the NPU work,
 * split chunks viewed inside a CPU-made tensor, and a five-way cat between NPU ops (a CPU node
 * once; now two NPU kernels, each writing its slice). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/vk_check.h"

#define T VC_T
#define NODE VC_NODE

static void test_npu_cpu_npu(void **state)
{
    (void)state;
    /* clang-format off */
    /* relu (npu) -> cumsum (cpu) -> sigmoid (npu) -> cumsum (cpu) -> tanh (npu) */
    const char *g =
        "{\"graph_inputs\":[" T("x", "[3,37]") "],\"graph_outputs\":[" T("o", "[3,37]") "],\"nodes\":["
        NODE("r", "aten.relu.default", T("x", "[3,37]"), T("a", "[3,37]"), "")
        "," NODE("c", "aten.cumsum.default", T("a", "[3,37]"), T("b", "[3,37]"), "\"dim\":1")
        "," NODE("s", "aten.sigmoid.default", T("b", "[3,37]"), T("e", "[3,37]"), "")
        "," NODE("c2", "aten.cumsum.default", T("e", "[3,37]"), T("f", "[3,37]"), "\"dim\":0")
        "," NODE("t", "aten.tanh.default", T("f", "[3,37]"), T("o", "[3,37]"), "") "]}";
    /* clang-format on */
    vc_check_json(g, "fp32", VC_TOL_F32, "unary");
    vc_check_json(g, "fp16", VC_TOL_F16, "unary");
    vc_check_json(g, "bf16", VC_TOL_BF16, "unary");
}

static void test_bool_where(void **state)
{
    (void)state;
    /* clang-format off */
    /* a comparison (cpu, bool) feeding a where (cpu) whose operands come from the NPU */
    const char *g =
        "{\"graph_inputs\":[" T("x", "[4,50]") "],\"graph_outputs\":[" T("o", "[4,50]") "],\"nodes\":["
        NODE("n", "aten.neg.default", T("x", "[4,50]"), T("nx", "[4,50]"), "")
        "," NODE("s", "aten.sin.default", T("x", "[4,50]"), T("sx", "[4,50]"), "")
        "," NODE("g", "aten.gt.Scalar", T("x", "[4,50]"), "{\"name\":\"m\",\"dtype\":\"bool\",\"shape\":[4,50]}", "\"other\":0.1")
        "," NODE("w", "aten.where.self", "{\"name\":\"m\",\"dtype\":\"bool\",\"shape\":[4,50]}," T("sx", "[4,50]") "," T("nx", "[4,50]"), T("y", "[4,50]"), "")
        "," NODE("e", "aten.exp.default", T("y", "[4,50]"), T("o", "[4,50]"), "") "]}";
    /* clang-format on */
    vc_check_json(g, "fp16", VC_TOL_F16, "unary");
}

static void test_int_compare_where(void **state)
{
    (void)state;
    /* clang-format off */
    /* an integer comparison (cpu) makes a bool mask that crosses to the NPU for a where and a
     * masked_fill broadcasting it (GPT-2's causal mask: arange-built, compared, then where) */
    const char *g =
        "{\"graph_inputs\":[" VC_TI("i", "[1,9]") "," VC_TI("j", "[9,1]") "," T("x", "[2,3,9,9]") "],"
        "\"graph_outputs\":[" T("o", "[2,3,9,9]") "],\"nodes\":["
        NODE("le", "aten.le.Tensor", VC_TI("i", "[1,9]") "," VC_TI("j", "[9,1]"), "{\"name\":\"m\",\"dtype\":\"bool\",\"shape\":[9,9]}", "")
        "," NODE("w", "aten.where.ScalarOther", "{\"name\":\"m\",\"dtype\":\"bool\",\"shape\":[9,9]}," T("x", "[2,3,9,9]"), T("y", "[2,3,9,9]"), "\"other\":-1e4")
        "," NODE("n", "aten.logical_not.default", "{\"name\":\"m\",\"dtype\":\"bool\",\"shape\":[9,9]}", "{\"name\":\"nm\",\"dtype\":\"bool\",\"shape\":[9,9]}", "")
        "," NODE("f", "aten.masked_fill.Scalar", T("y", "[2,3,9,9]") ",{\"name\":\"nm\",\"dtype\":\"bool\",\"shape\":[9,9]}", T("z", "[2,3,9,9]"), "\"value\":-2e4")
        "," NODE("s", "aten.softmax.int", T("z", "[2,3,9,9]"), T("o", "[2,3,9,9]"), "\"dim\":-1") "]}";
    /* clang-format on */
    vc_check_json(g, "fp32", VC_TOL_F32, "where_s");
    vc_check_json(g, "fp16", VC_TOL_F16, "where_s");
    vc_check_json(g, "bf16", VC_TOL_BF16, "where_s");
}

static void test_hoisted_host_work(void **state)
{
    (void)state;
    /* clang-format off */
    /* the integer cumsum / comparison / views listed between NPU ops run first on the CPU (one
     * CPU partition, then one NPU partition); the values must not change */
    const char *g =
        "{\"graph_inputs\":[" T("x", "[4,33]") "," VC_TI("i", "[4,33]") "],\"graph_outputs\":[" T("o", "[4,33]") "],\"nodes\":["
        NODE("sin", "aten.sin.default", T("x", "[4,33]"), T("s", "[4,33]"), "")
        "," NODE("cs", "aten.cumsum.default", VC_TI("i", "[4,33]"), VC_TI("c", "[4,33]"), "\"dim\":1")
        "," NODE("gt", "aten.gt.Scalar", VC_TI("c", "[4,33]"), "{\"name\":\"m\",\"dtype\":\"bool\",\"shape\":[4,33]}", "\"other\":30")
        "," NODE("v", "aten.view.default", "{\"name\":\"m\",\"dtype\":\"bool\",\"shape\":[4,33]}", "{\"name\":\"mv\",\"dtype\":\"bool\",\"shape\":[132]}", "\"size\":[132]")
        "," NODE("v2", "aten.view.default", "{\"name\":\"mv\",\"dtype\":\"bool\",\"shape\":[132]}", "{\"name\":\"m2\",\"dtype\":\"bool\",\"shape\":[4,33]}", "\"size\":[4,33]")
        "," NODE("cos", "aten.cos.default", T("s", "[4,33]"), T("k", "[4,33]"), "")
        "," NODE("w", "aten.where.ScalarOther", "{\"name\":\"m2\",\"dtype\":\"bool\",\"shape\":[4,33]}," T("k", "[4,33]"), T("o", "[4,33]"), "\"other\":-1") "]}";
    /* clang-format on */
    vc_check_json(g, "fp32", VC_TOL_F32, "where_s");
    vc_check_json(g, "bf16", VC_TOL_BF16, "where_s");
}

static void test_split_views_of_host_data(void **state)
{
    (void)state;
    /* clang-format off */
    /* a CPU-made tensor (from NPU data, so the split stays on the NPU) split into views (one
     * token: contiguous chunks): the NPU reads chunks 0 and 2 from the uploaded base at their
     * offsets, the CPU reads chunk 1 from the host copy at its offset */
    const char *g =
        "{\"graph_inputs\":[" T("x", "[1,1,384]") "],\"graph_outputs\":[" T("a", "[1,1,128]") "," T("b", "[1,1,128]") "," T("c", "[1,1,128]") "],\"nodes\":["
        NODE("neg", "aten.neg.default", T("x", "[1,1,384]"), T("nx", "[1,1,384]"), "")
        "," NODE("cs", "aten.cumsum.default", T("nx", "[1,1,384]"), T("h", "[1,1,384]"), "\"dim\":2")
        "," NODE("split", "aten.split.Tensor", T("h", "[1,1,384]"), T("split_0", "[1,1,128]") "," T("split_1", "[1,1,128]") "," T("split_2", "[1,1,128]"), "\"split_size\":128,\"dim\":2")
        "," NODE("sin", "aten.sin.default", T("split_0", "[1,1,128]"), T("a", "[1,1,128]"), "")
        "," NODE("cs2", "aten.cumsum.default", T("split_1", "[1,1,128]"), T("b", "[1,1,128]"), "\"dim\":2")
        "," NODE("cos", "aten.cos.default", T("split_2", "[1,1,128]"), T("c", "[1,1,128]"), "") "]}";
    /* clang-format on */
    vc_check_json(g, "fp32", VC_TOL_F32, "unary");
    vc_check_json(g, "fp16", VC_TOL_F16, "unary");
    vc_check_json_on(g, "fp16", VC_TOL_F16, "unary", true);
}

static void test_softmax_non_last_dim(void **state)
{
    (void)state;
    /* clang-format off */
    /* softmax over dim 0 is decided to stay on the CPU (attributes, not the op name) */
    const char *g =
        "{\"graph_inputs\":[" T("x", "[5,9]") "],\"graph_outputs\":[" T("o", "[5,9]") "],\"nodes\":["
        NODE("a", "aten.abs.default", T("x", "[5,9]"), T("a", "[5,9]"), "")
        "," NODE("s", "aten.softmax.int", T("a", "[5,9]"), T("b", "[5,9]"), "\"dim\":0")
        "," NODE("c", "aten.cos.default", T("b", "[5,9]"), T("o", "[5,9]"), "") "]}";
    /* clang-format on */
    vc_check_json(g, "fp32", VC_TOL_F32, "unary");
}

static void test_dilated_pool(void **state)
{
    (void)state;
    /* clang-format off */
    /* max_pool2d with dilation stays on the CPU (attributes, not the op name); a plain one and
     * the elementwise ops around it run on the NPU */
    const char *g =
        "{\"graph_inputs\":[" T("x", "[2,5,13,11]") "],\"graph_outputs\":[" T("o", "[2,5,4,3]") "],\"nodes\":["
        NODE("a", "aten.abs.default", T("x", "[2,5,13,11]"), T("a", "[2,5,13,11]"), "")
        "," NODE("p", "aten.max_pool2d.default", T("a", "[2,5,13,11]"), T("p", "[2,5,9,7]"), "\"kernel_size\":[3,3],\"stride\":[1,1],\"dilation\":[2,2]")
        "," NODE("s", "aten.sigmoid.default", T("p", "[2,5,9,7]"), T("s", "[2,5,9,7]"), "")
        "," NODE("q", "aten.max_pool2d.default", T("s", "[2,5,9,7]"), T("o", "[2,5,4,3]"), "\"kernel_size\":[2,2],\"stride\":[2,2]") "]}";
    /* clang-format on */
    vc_check_json(g, "fp32", VC_TOL_F32, "pool2d");
    vc_check_json(g, "fp16", VC_TOL_F16, "pool2d");
}

static void test_five_way_cat(void **state)
{
    (void)state;
    /* clang-format off */
    const char *g =
        "{\"graph_inputs\":[" T("x", "[2,3]") "],\"graph_outputs\":[" T("o", "[10,3]") "],\"nodes\":["
        NODE("a", "aten.relu.default", T("x", "[2,3]"), T("a", "[2,3]"), "")
        "," NODE("b", "aten.sin.default", T("x", "[2,3]"), T("b", "[2,3]"), "")
        "," NODE("cat", "aten.cat.default", T("a", "[2,3]") "," T("b", "[2,3]") "," T("x", "[2,3]") "," T("a", "[2,3]") "," T("b", "[2,3]"), T("c", "[10,3]"), "\"dim\":0")
        "," NODE("t", "aten.tanh.default", T("c", "[10,3]"), T("o", "[10,3]"), "") "]}";
    /* clang-format on */
    vc_check_json(g, "fp16", VC_TOL_F16, "unary");
}

int main(void)
{
    /* these graphs are about partition boundaries: generated kernels would take the where, the
     * comparisons and the chains around them onto the NPU (test_vk_gen.c covers that) */
    vc_set_no_fuse("fuse-elementwise");
    return TU_TESTS(test_npu_cpu_npu, test_bool_where, test_int_compare_where,
                    test_hoisted_host_work, test_split_views_of_host_data,
                    test_softmax_non_last_dim, test_five_way_cat, test_dilated_pool);
}
