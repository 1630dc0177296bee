/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * data-movement kernels on Vulkan against the CPU reference: transpose/permute/t (rank 5, negative
 * dims), expand (-1), slice (negative start, end 2^63-1, step > 1) and select, cat of 2/3/4
 * inputs along the first and last dim, getitem and float->float cast (copy), int64 data through
 * slice/cat/transpose (i32 modules, ids up to 200000), int->float cast above 65504, embedding
 * with vocab 70000, index_copy in place (out aliases self) and not in place, with repeated
 * indices; f32/f16/bf16 with shapes that are not multiples of the workgroup. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/ir_json.h"
#include "compiler/pass.h"
#include "compiler/plan.h"
#include "kernel_check.h"
#include "vk_check.h"

static const char *dts[] = {"fp32", "fp16", "bf16"};
static const double tols[] = {VC_TOL_F32, VC_TOL_F16, VC_TOL_BF16};

static void node3(const char *aten, int nin, const TuSpec *in, TuSpec out, const char *attrs,
                  const char *stem)
{
    for (int t = 0; t < 3; t++) vc_check_node(aten, nin, in, out, attrs, dts[t], tols[t], stem);
}

static void test_transpose(void **state)
{
    (void)state;
    node3("aten.transpose.int", 1, S(F32(3, {3, 5, 67})), F32(3, {67, 5, 3}),
          "\"dim0\":-1,\"dim1\":0", "transpose");
    node3("aten.permute.default", 1, S(F32(5, {2, 3, 4, 5, 7})), F32(5, {7, 2, 5, 3, 4}),
          "\"dims\":[4,0,-2,1,2]", "transpose");
    node3("aten.t.default", 1, S(F32(2, {37, 45})), F32(2, {45, 37}), "", "transpose");
}

static void test_expand(void **state)
{
    (void)state;
    node3("aten.expand.default", 1, S(F32(3, {3, 1, 67})), F32(4, {2, 3, 5, 67}),
          "\"size\":[2,-1,5,-1]", "expand");
    node3("aten.expand.default", 1, S(F32(2, {1, 1})), F32(3, {4, 3, 71}), "\"size\":[4,3,71]",
          "expand");
}

static void test_slice_select(void **state)
{
    (void)state;
    node3("aten.slice.Tensor", 1, S(F32(3, {3, 5, 67})), F32(3, {3, 5, 22}),
          "\"dim\":-1,\"start\":2,\"end\":9223372036854775807,\"step\":3", "slice");
    node3("aten.slice.Tensor", 1, S(F32(3, {4, 37, 9})), F32(3, {4, 9, 9}),
          "\"dim\":1,\"start\":-10,\"end\":-1", "slice");
    node3("aten.slice.Tensor", 1, S(F32(2, {40, 9})), F32(2, {14, 9}),
          "\"dim\":0,\"start\":-100,\"end\":14", "slice");
    node3("aten.select.int", 1, S(F32(3, {3, 5, 67})), F32(2, {3, 67}), "\"dim\":1,\"index\":-2",
          "slice");
    node3("aten.select.int", 1, S(F32(3, {3, 5, 67})), F32(2, {5, 67}), "\"dim\":0,\"index\":2",
          "slice");
}

static void test_cat(void **state)
{
    (void)state;
    node3("aten.cat.default", 2, S(F32(3, {2, 5, 67}), F32(3, {3, 5, 67})), F32(3, {5, 5, 67}),
          "\"dim\":0", "cat2");
    node3("aten.cat.default", 3, S(F32(3, {2, 5, 7}), F32(3, {2, 5, 60}), F32(3, {2, 5, 1})),
          F32(3, {2, 5, 68}), "\"dim\":-1", "cat3");
    node3("aten.cat.default", 4,
          S(F32(2, {3, 33}), F32(2, {1, 33}), F32(2, {5, 33}), F32(2, {2, 33})), F32(2, {11, 33}),
          "\"dim\":0", "cat4");
    node3("aten.cat.default", 4,
          S(F32(3, {2, 3, 33}), F32(3, {2, 3, 1}), F32(3, {2, 3, 50}), F32(3, {2, 3, 7})),
          F32(3, {2, 3, 91}), "\"dim\":2", "cat4");
    node3("aten.cat.default", 2, S(F32(3, {2, 3, 33}), F32(3, {2, 4, 33})), F32(3, {2, 7, 33}),
          "\"dim\":1", "cat2");
}

/* getitem and a float->float cast run the copy module */
static void test_copy(void **state)
{
    (void)state;
    node3("<built-in function getitem>", 2, S(F32(3, {3, 5, 67}), F32(3, {2, 5, 67})),
          F32(3, {2, 5, 67}), "\"index\":1", "copy");
    node3("aten._to_copy.default", 1, S(F32(3, {3, 5, 67})), F32(3, {3, 5, 67}),
          "\"dtype\":\"torch.float32\"", "copy");
    vc_check_node("<built-in function getitem>", 2, S(F32(2, {3, 5}), I64(2, {7, 43})),
                  I64(2, {7, 43}), "\"index\":-1", "fp16", 0, "copy");
}

/* int64 data (int32 on the device) through the i32 modules: exact, so tolerance 0 */
static void test_int_data(void **state)
{
    (void)state;
    for (int t = 0; t < 2; t++) {
        vc_check_node("aten.slice.Tensor", 1, S(I64(2, {9, 67})), I64(2, {9, 22}),
                      "\"dim\":1,\"start\":2,\"end\":9223372036854775807,\"step\":3", dts[t], 0,
                      "slice");
        vc_check_node("aten.cat.default", 3, S(I64(2, {2, 7}), I64(2, {2, 60}), I64(2, {2, 1})),
                      I64(2, {2, 68}), "\"dim\":1", dts[t], 0, "cat3");
        vc_check_node("aten.permute.default", 1, S(I64(3, {3, 5, 67})), I64(3, {67, 3, 5}),
                      "\"dims\":[2,0,1]", dts[t], 0, "transpose");
    }
    /* ids up to 200000 (the embedding consumer sets their random range) moved raw */
    const char *g =
        "{\"graph_inputs\":[" VC_TI("ids", "[6,7]") "],\"graph_outputs\":[" VC_T("e", "[6,7,3]") "," VC_TI("tr", "[7,6]") "],"
        "\"weights\":[" VC_T("w", "[200000,3]") "],\"weight_name_mapping\":{\"p_w\":\"w\"},\"nodes\":["
        VC_NODE("emb", "aten.embedding.default", VC_T("p_w", "[200000,3]") "," VC_TI("ids", "[6,7]"), VC_T("e", "[6,7,3]"), "")
        "," VC_NODE("tr", "aten.t.default", VC_TI("ids", "[6,7]"), VC_TI("tr", "[7,6]"), "") "]}";
    vc_check_json(g, "fp32", 0, "transpose");
}

/* int -> float: ids up to 200000 are exact in f32 and rounded once in bf16; f16 (max 65504)
 * gets ids below 1000 */
static void test_cast_int(void **state)
{
    (void)state;
#define CAST_G(V)                                                                                  \
    "{\"graph_inputs\":[" VC_TI("ids", "[5,9]") "],\"graph_outputs\":[" VC_T("e", "[5,9,2]") "," VC_T("f", "[5,9]") "],"   \
    "\"weights\":[" VC_T("w", "[" V ",2]") "],\"weight_name_mapping\":{\"p_w\":\"w\"},\"nodes\":["                                       \
    VC_NODE("emb", "aten.embedding.default", VC_T("p_w", "[" V ",2]") "," VC_TI("ids", "[5,9]"), VC_T("e", "[5,9,2]"), "") \
    "," VC_NODE("f", "aten._to_copy.default", VC_TI("ids", "[5,9]"), VC_T("f", "[5,9]"), "\"dtype\":\"torch.float32\"") "]}"
    vc_check_json(CAST_G("200000"), "fp32", 0, "cast");
    vc_check_json(CAST_G("200000"), "bf16", VC_TOL_BF16, "cast");
    vc_check_json(CAST_G("1000"), "fp16", VC_TOL_F16, "cast");
#undef CAST_G
}

static void test_embedding(void **state)
{
    (void)state;
    const char *g =
        "{\"graph_inputs\":[" VC_TI("ids", "[4,16]") "],\"graph_outputs\":[" VC_T("e", "[4,16,5]") "],"
        "\"weights\":[" VC_T("w", "[70000,5]") "],\"weight_name_mapping\":{\"p_w\":\"w\"},\"nodes\":["
        VC_NODE("emb", "aten.embedding.default", VC_T("p_w", "[70000,5]") "," VC_TI("ids", "[4,16]"), VC_T("e", "[4,16,5]"), "") "]}";
    for (int t = 0; t < 3; t++) vc_check_json(g, dts[t], t == 0 ? 0 : tols[t], "embedding");
    const char *g1 =
        "{\"graph_inputs\":[" VC_TI("ids", "[300]") "],\"graph_outputs\":[" VC_T("e", "[300,67]") "],"
        "\"weights\":[" VC_T("w", "[50,67]") "],\"weight_name_mapping\":{\"p_w\":\"w\"},\"nodes\":["
        VC_NODE("emb", "aten.embedding.default", VC_T("p_w", "[50,67]") "," VC_TI("ids", "[300]"), VC_T("e", "[300,67]"), "") "]}";
    for (int t = 0; t < 3; t++) vc_check_json(g1, dts[t], tols[t], "embedding");
}

/* index_copy: self [2,3,5,17] along dim -2 (size 5) with 7 indices (so some repeat: the last
 * source slice wins). In place when self is read by nothing else; not in place when a
 * transpose reads self after it. */
#define IC_IN                                                                                      \
    VC_T("self", "[2,3,5,17]") "," VC_TI("idx", "[7]") "," VC_T("src", "[2,3,7,17]")
#define IC_NODE VC_NODE("ic", "aten.index_copy.default", IC_IN, VC_T("ic", "[2,3,5,17]"), "\"dim\":-2")
static const char *ic_in_place =
    "{\"graph_inputs\":[" IC_IN "],\"graph_outputs\":[" VC_T("ic", "[2,3,5,17]") "],\"nodes\":[" IC_NODE "]}";
static const char *ic_copy =
    "{\"graph_inputs\":[" IC_IN "],\"graph_outputs\":[" VC_T("ic", "[2,3,5,17]") "," VC_T("st", "[3,2,5,17]") "],\"nodes\":["
    IC_NODE "," VC_NODE("st", "aten.transpose.int", VC_T("self", "[2,3,5,17]"), VC_T("st", "[3,2,5,17]"), "\"dim0\":0,\"dim1\":1") "]}";

/* Is the index_copy output an alias of self in the compiled plan (and its kernel's mode)? */
static bool ic_aliased(const char *json, uint32_t *mode)
{
    Graph *g = NULL;
    DiagList d = {0};
    assert_int_equal(ir_read_buffer("<t>", json, strlen(json), &g, &d), ST_OK);
    CompileOptions o;
    compile_defaults(&o);
    Pipeline pipe;
    assert_int_equal(pipeline_run_graph(g, &o, &pipe, &d), ST_OK);
    const Plan *p = pipe.plan;
    bool alias = false;
    for (int t = 0; t < p->ntensors; t++)
        if (strcmp(p->tensors[t].name, "ic") == 0 && p->tensors[t].alias_of >= 0)
            alias = strcmp(p->tensors[p->tensors[t].alias_of].name, "self") == 0;
    *mode = 99;
    for (int k = 0; k < p->nkernels; k++)
        if (strcmp(p->kernels[k].shader, "index_copy") == 0) *mode = p->kernels[k].push[1];
    pipeline_free(&pipe);
    diag_free(&d);
    return alias;
}

static void test_index_copy(void **state)
{
    (void)state;
    uint32_t mode;
    assert_true(ic_aliased(ic_in_place, &mode));
    assert_int_equal(mode, 1);
    assert_false(ic_aliased(ic_copy, &mode));
    assert_int_equal(mode, 0);
    for (int t = 0; t < 3; t++) {
        vc_check_json(ic_in_place, dts[t], tols[t], "index_copy");
        vc_check_json(ic_copy, dts[t], tols[t], "index_copy");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transpose),  cmocka_unit_test(test_expand),
        cmocka_unit_test(test_slice_select), cmocka_unit_test(test_cat),
        cmocka_unit_test(test_copy),       cmocka_unit_test(test_int_data),
        cmocka_unit_test(test_cast_int),   cmocka_unit_test(test_embedding),
        cmocka_unit_test(test_index_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
