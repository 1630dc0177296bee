/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * data-movement kernels on Vulkan against the CPU reference: transpose/permute/t (rank 5, negative
 * dims), expand (-1), slice (negative start, end 2^63-1, step > 1) and select, cat of 2/3/4
 * inputs along the first and last dim, getitem and float->float cast (copy), int64 data through
 * slice/cat/transpose (i32 modules, ids up to 200000), int->float cast above 65504, embedding
 * with vocab 70000, index_copy in place (out aliases self) and not in place, with repeated
 * indices, split (a slice kernel per chunk read; getitems as exported); permute, slice, select and
 * expand reading a channel-padded tensor in place (no depad); roll (dims, flattened) and pad (all
 * modes, negative amounts) through the pad rows, a pad and roll of a channel-padded tensor in
 * place; f32/f16/bf16 with shapes that are not multiples of the workgroup. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/ir_json.h"
#include "compiler/pass.h"
#include "compiler/plan.h"
#include "tests/kernel_check.h"
#include "tests/vk_check.h"

static const char *dts[] = {"fp32", "fp16", "bf16"};
static const double tols[] = {VC_TOL_F32, VC_TOL_F16, VC_TOL_BF16};

static void node3(const char *aten, int nin, const TuSpec *in, TuSpec out, const char *attrs,
                  const char *stem)
{
    for (int t = 0; t < 3; t++)
        vc_check_node(aten, nin, in, out, attrs, dts[t], tols[t], stem);
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
    /* more inputs than one kernel binds: a kernel per group, each writing its slice (5 = 3 + 2
     * along a middle dim; 9 = 3 + 3 + 3 along the last, odd sizes) */
    node3("aten.cat.default", 5,
          S(F32(3, {2, 1, 7}), F32(3, {2, 3, 7}), F32(3, {2, 2, 7}), F32(3, {2, 5, 7}),
            F32(3, {2, 1, 7})),
          F32(3, {2, 12, 7}), "\"dim\":1", "cat2");
    node3("aten.cat.default", 9,
          S(F32(2, {3, 1}), F32(2, {3, 2}), F32(2, {3, 3}), F32(2, {3, 1}), F32(2, {3, 4}),
            F32(2, {3, 1}), F32(2, {3, 5}), F32(2, {3, 2}), F32(2, {3, 1})),
          F32(2, {3, 20}), "\"dim\":-1", "cat3");
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
    /* clang-format off */
    /* ids up to 200000 (the embedding consumer sets their random range) moved raw */
    const char *g =
        "{\"graph_inputs\":[" VC_TI("ids", "[6,7]") "],\"graph_outputs\":[" VC_T("e", "[6,7,3]") "," VC_TI("tr", "[7,6]") "],"
        "\"weights\":[" VC_T("w", "[200000,3]") "],\"weight_name_mapping\":{\"p_w\":\"w\"},\"nodes\":["
        VC_NODE("emb", "aten.embedding.default", VC_T("p_w", "[200000,3]") "," VC_TI("ids", "[6,7]"), VC_T("e", "[6,7,3]"), "")
        "," VC_NODE("tr", "aten.t.default", VC_TI("ids", "[6,7]"), VC_TI("tr", "[7,6]"), "") "]}";
    /* clang-format on */
    vc_check_json(g, "fp32", 0, "transpose");
}

/* int -> float: ids up to 200000 are exact in f32 and rounded once in bf16; f16 (max 65504)
 * gets ids below 1000 */
static void test_cast_int(void **state)
{
    (void)state;
    /* clang-format off */
#define CAST_G(V)                                                                                  \
    "{\"graph_inputs\":[" VC_TI("ids", "[5,9]") "],\"graph_outputs\":[" VC_T("e", "[5,9,2]") "," VC_T("f", "[5,9]") "],"   \
    "\"weights\":[" VC_T("w", "[" V ",2]") "],\"weight_name_mapping\":{\"p_w\":\"w\"},\"nodes\":["                                       \
    VC_NODE("emb", "aten.embedding.default", VC_T("p_w", "[" V ",2]") "," VC_TI("ids", "[5,9]"), VC_T("e", "[5,9,2]"), "") \
    "," VC_NODE("f", "aten._to_copy.default", VC_TI("ids", "[5,9]"), VC_T("f", "[5,9]"), "\"dtype\":\"torch.float32\"") "]}"
    /* clang-format on */
    vc_check_json(CAST_G("200000"), "fp32", 0, "cast");
    vc_check_json(CAST_G("200000"), "bf16", VC_TOL_BF16, "cast");
    vc_check_json(CAST_G("1000"), "fp16", VC_TOL_F16, "cast");
#undef CAST_G
}

static void test_embedding(void **state)
{
    (void)state;
    /* clang-format off */
    const char *g =
        "{\"graph_inputs\":[" VC_TI("ids", "[4,16]") "],\"graph_outputs\":[" VC_T("e", "[4,16,5]") "],"
        "\"weights\":[" VC_T("w", "[70000,5]") "],\"weight_name_mapping\":{\"p_w\":\"w\"},\"nodes\":["
        VC_NODE("emb", "aten.embedding.default", VC_T("p_w", "[70000,5]") "," VC_TI("ids", "[4,16]"), VC_T("e", "[4,16,5]"), "") "]}";
    /* clang-format on */
    for (int t = 0; t < 3; t++)
        vc_check_json(g, dts[t], t == 0 ? 0 : tols[t], "embedding");
    /* clang-format off */
    const char *g1 =
        "{\"graph_inputs\":[" VC_TI("ids", "[300]") "],\"graph_outputs\":[" VC_T("e", "[300,67]") "],"
        "\"weights\":[" VC_T("w", "[50,67]") "],\"weight_name_mapping\":{\"p_w\":\"w\"},\"nodes\":["
        VC_NODE("emb", "aten.embedding.default", VC_T("p_w", "[50,67]") "," VC_TI("ids", "[300]"), VC_T("e", "[300,67]"), "") "]}";
    /* clang-format on */
    for (int t = 0; t < 3; t++)
        vc_check_json(g1, dts[t], tols[t], "embedding");
}

/* index_copy: self [2,3,5,17] along dim -2 (size 5) with 7 indices (so some repeat: the last
 * source slice wins). In place when self is read by nothing else; not in place when a
 * transpose reads self after it. */
#define IC_IN VC_T("self", "[2,3,5,17]") "," VC_TI("idx", "[7]") "," VC_T("src", "[2,3,7,17]")
#define IC_NODE                                                                                    \
    VC_NODE("ic", "aten.index_copy.default", IC_IN, VC_T("ic", "[2,3,5,17]"), "\"dim\":-2")
static const char *ic_in_place =
    "{\"graph_inputs\":[" IC_IN
    "],\"graph_outputs\":[" VC_T("ic", "[2,3,5,17]") "],\"nodes\":[" IC_NODE "]}";
/* clang-format off */
static const char *ic_copy =
    "{\"graph_inputs\":[" IC_IN "],\"graph_outputs\":[" VC_T("ic", "[2,3,5,17]") "," VC_T("st", "[3,2,5,17]") "],\"nodes\":["
    IC_NODE "," VC_NODE("st", "aten.transpose.int", VC_T("self", "[2,3,5,17]"), VC_T("st", "[3,2,5,17]"), "\"dim0\":0,\"dim1\":1") "]}";
/* clang-format on */

/* Is the index_copy output an alias of self in the compiled plan (and its kernel's mode)? */
static bool ic_aliased(const char *json, uint32_t *mode)
{
    Pipeline pipe;
    vc_compile_json(json, &pipe);
    const Plan *p = pipe.plan;
    bool alias = false;
    for (int t = 0; t < p->ntensors; t++)
        if (strcmp(p->tensors[t].name, "ic") == 0 && p->tensors[t].alias_of >= 0)
            alias = strcmp(p->tensors[p->tensors[t].alias_of].name, "self") == 0;
    *mode = 99;
    for (int k = 0; k < p->nkernels; k++)
        if (strcmp(p->kernels[k].shader, "index_copy") == 0) *mode = p->kernels[k].push[1];
    pipeline_free(&pipe);
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

/* index_copy_t: the source comes through a transpose ([B, T, H, D] -> [B, H, T, D], prefill's v
 * into its cache) and the kernel reads the transpose's input in place, also not in place and
 * with repeated indices; with B = 2 the source's outer dims do not collapse to one stride, so
 * the transpose stays a kernel of its own (and the result is the same). */
#define ICT_IN(b)                                                                                  \
    VC_T("self", "[" b ",3,5,17]") "," VC_TI("idx", "[7]") "," VC_T("y", "[" b ",7,3,17]")
#define ICT_NODES(b)                                                                               \
    VC_NODE("tr", "aten.transpose.int", VC_T("y", "[" b ",7,3,17]"), VC_T("x", "[" b ",3,7,17]"),  \
            "\"dim0\":1,\"dim1\":2")                                                               \
    "," VC_NODE(                                                                                   \
        "ic", "aten.index_copy.default",                                                           \
        VC_T("self", "[" b ",3,5,17]") "," VC_TI("idx", "[7]") "," VC_T("x", "[" b ",3,7,17]"),    \
        VC_T("ic", "[" b ",3,5,17]"), "\"dim\":2")
static int count_stem(const char *json, const char *stem)
{
    Pipeline pipe;
    vc_compile_json(json, &pipe);
    int n = 0;
    for (int k = 0; k < pipe.plan->nkernels; k++)
        n += strcmp(pipe.plan->kernels[k].shader, stem) == 0;
    pipeline_free(&pipe);
    return n;
}

static void test_index_copy_transposed(void **state)
{
    (void)state;
    static const char *in_place = "{\"graph_inputs\":[" ICT_IN("1") "],\"graph_outputs\":[" VC_T(
        "ic", "[1,3,5,17]") "],\"nodes\":[" ICT_NODES("1") "]}";
    /* clang-format off */
    static const char *copy =
        "{\"graph_inputs\":[" ICT_IN("1") "],\"graph_outputs\":[" VC_T("ic", "[1,3,5,17]") "," VC_T("st", "[1,5,3,17]") "],\"nodes\":["
        ICT_NODES("1") "," VC_NODE("st", "aten.transpose.int", VC_T("self", "[1,3,5,17]"), VC_T("st", "[1,5,3,17]"), "\"dim0\":1,\"dim1\":2") "]}";
    /* clang-format on */
    static const char *two = "{\"graph_inputs\":[" ICT_IN("2") "],\"graph_outputs\":[" VC_T(
        "ic", "[2,3,5,17]") "],\"nodes\":[" ICT_NODES("2") "]}";
    assert_int_equal(count_stem(in_place, "transpose"), 0);
    assert_int_equal(count_stem(copy, "transpose"), 1); /* self's reader, not the source */
    assert_int_equal(count_stem(two, "transpose"), 1);
    for (int t = 0; t < 3; t++) {
        vc_check_json(in_place, dts[t], tols[t], "index_copy");
        vc_check_json(copy, dts[t], tols[t], "index_copy");
        vc_check_json(two, dts[t], tols[t], "index_copy");
    }
}

/* split as the exporter writes it: one node with an "outputs" list (split_0, split_1, ...), a
 * getitem per used chunk listing every chunk as its inputs (producer_output_idx) with `index`.
 * GPT-2's q/k/v: split(c_attn out [1,S,3C], C, dim=2); uneven chunks along dim 0; split_with_sizes
 * with an unused (zero-size) chunk; getitem outputs as graph outputs (the getitem stays a copy);
 * int64 data through the i32 modules. */
#define SPL(n, i, s)                                                                               \
    "{\"name\":\"" n "\",\"shape\":" s ",\"producer_node\":\"split\",\"producer_output_idx\":" #i  \
    "}"
static void test_split(void **state)
{
    (void)state;
    /* clang-format off */
    const char *qkv =
        "{\"graph_inputs\":[" VC_T("x", "[1,10,144]") "],\"graph_outputs\":[" VC_T("o", "[1,10,48]") "," VC_T("p", "[1,4,10,12]") "],\"nodes\":["
        VC_NODE("split", "aten.split.Tensor", VC_T("x", "[1,10,144]"), VC_T("split_0", "[1,10,48]") "," VC_T("split_1", "[1,10,48]") "," VC_T("split_2", "[1,10,48]"), "\"split_size\":48,\"dim\":2")
        "," VC_NODE("getitem", "<built-in function getitem>", SPL("split_0", 0, "[1,10,48]") "," SPL("split_1", 1, "[1,10,48]") "," SPL("split_2", 2, "[1,10,48]"), VC_T("getitem", "[1,10,48]"), "\"index\":0")
        "," VC_NODE("getitem_1", "<built-in function getitem>", SPL("split_0", 0, "[1,10,48]") "," SPL("split_1", 1, "[1,10,48]") "," SPL("split_2", 2, "[1,10,48]"), VC_T("getitem_1", "[1,10,48]"), "\"index\":1")
        "," VC_NODE("getitem_2", "<built-in function getitem>", SPL("split_0", 0, "[1,10,48]") "," SPL("split_1", 1, "[1,10,48]") "," SPL("split_2", 2, "[1,10,48]"), VC_T("getitem_2", "[1,10,48]"), "\"index\":2")
        "," VC_NODE("mul", "aten.mul.Tensor", VC_T("getitem", "[1,10,48]") "," VC_T("getitem_1", "[1,10,48]"), VC_T("o", "[1,10,48]"), "")
        "," VC_NODE("view", "aten.view.default", VC_T("getitem_2", "[1,10,48]"), VC_T("view", "[1,10,4,12]"), "\"size\":[1,10,4,12]")
        "," VC_NODE("permute", "aten.permute.default", VC_T("view", "[1,10,4,12]"), VC_T("p", "[1,4,10,12]"), "\"dims\":[0,2,1,3]") "]}";
    /* clang-format on */
    for (int t = 0; t < 3; t++)
        vc_check_json(qkv, dts[t], tols[t], "slice");
    /* clang-format off */
    const char *uneven =
        "{\"graph_inputs\":[" VC_T("x", "[7,10]") "],\"graph_outputs\":[" VC_T("getitem", "[3,10]") "," VC_T("getitem_1", "[1,10]") "],\"nodes\":["
        VC_NODE("split", "aten.split.Tensor", VC_T("x", "[7,10]"), VC_T("split_0", "[3,10]") "," VC_T("split_1", "[3,10]") "," VC_T("split_2", "[1,10]"), "\"split_size\":3")
        "," VC_NODE("getitem", "<built-in function getitem>", SPL("split_0", 0, "[3,10]") "," SPL("split_1", 1, "[3,10]") "," SPL("split_2", 2, "[1,10]"), VC_T("getitem", "[3,10]"), "\"index\":0")
        "," VC_NODE("getitem_1", "<built-in function getitem>", SPL("split_0", 0, "[3,10]") "," SPL("split_1", 1, "[3,10]") "," SPL("split_2", 2, "[1,10]"), VC_T("getitem_1", "[1,10]"), "\"index\":-1") "]}";
    /* clang-format on */
    for (int t = 0; t < 3; t++)
        vc_check_json(uneven, dts[t], tols[t], "slice");
    /* clang-format off */
    const char *sizes =
        "{\"graph_inputs\":[" VC_T("x", "[2,5,9]") "],\"graph_outputs\":[" VC_T("o", "[2,5,4]") "],\"nodes\":["
        VC_NODE("split", "aten.split_with_sizes.default", VC_T("x", "[2,5,9]"), VC_T("split_0", "[2,5,2]") "," VC_T("split_1", "[2,5,0]") "," VC_T("split_2", "[2,5,4]") "," VC_T("split_3", "[2,5,3]"), "\"split_sizes\":[2,0,4,3],\"dim\":-1")
        "," VC_NODE("getitem", "<built-in function getitem>", SPL("split_0", 0, "[2,5,2]") "," SPL("split_1", 1, "[2,5,0]") "," SPL("split_2", 2, "[2,5,4]") "," SPL("split_3", 3, "[2,5,3]"), VC_T("getitem", "[2,5,4]"), "\"index\":2")
        "," VC_NODE("getitem_1", "<built-in function getitem>", SPL("split_0", 0, "[2,5,2]") "," SPL("split_1", 1, "[2,5,0]") "," SPL("split_2", 2, "[2,5,4]") "," SPL("split_3", 3, "[2,5,3]"), VC_T("getitem_1", "[2,5,2]"), "\"index\":0")
        "," VC_NODE("slice", "aten.slice.Tensor", VC_T("getitem_1", "[2,5,2]"), VC_T("s", "[2,5,1]"), "\"dim\":2,\"start\":1")
        "," VC_NODE("add", "aten.add.Tensor", VC_T("getitem", "[2,5,4]") "," VC_T("s", "[2,5,1]"), VC_T("o", "[2,5,4]"), "") "]}";
    /* clang-format on */
    for (int t = 0; t < 3; t++)
        vc_check_json(sizes, dts[t], tols[t], "slice");
    /* clang-format off */
    const char *ints =
        "{\"graph_inputs\":[" VC_TI("x", "[6,8]") "],\"graph_outputs\":[" VC_TI("o", "[4,6]") "],\"nodes\":["
        VC_NODE("split", "aten.split.sizes", VC_TI("x", "[6,8]"), VC_TI("split_0", "[6,4]") "," VC_TI("split_1", "[6,4]"), "\"split_size\":[4,4],\"dim\":1")
        "," VC_NODE("getitem", "<built-in function getitem>", "{\"name\":\"split_0\",\"dtype\":\"int64\",\"shape\":[6,4]},{\"name\":\"split_1\",\"dtype\":\"int64\",\"shape\":[6,4]}", VC_TI("getitem", "[6,4]"), "\"index\":1")
        "," VC_NODE("t", "aten.t.default", VC_TI("getitem", "[6,4]"), VC_TI("o", "[4,6]"), "") "]}";
    /* clang-format on */
    vc_check_json(ints, "fp16", 0, "slice");
}

/* split chunks that are contiguous, aligned runs of the input (every dim before the split dim of
 * size 1) are views starting inside it: no kernel; views of them (view, an order-keeping
 * permute) start there too, as graph outputs included; dim 0 with uneven chunks. On Vulkan and
 * on the CPU backend (which borrows the base's data at the chunk's start). */
static void test_split_views(void **state)
{
    (void)state;
    /* clang-format off */
    const char *g =
        "{\"graph_inputs\":[" VC_T("x", "[1,1,384]") "," VC_T("y", "[6,64]") "],\"graph_outputs\":[" VC_T("o", "[1,1,128]") "," VC_T("p", "[1,4,1,32]") "," VC_T("q", "[1,64]") "," VC_T("z", "[2,64]") "],\"nodes\":["
        VC_NODE("relu", "aten.relu.default", VC_T("x", "[1,1,384]"), VC_T("r", "[1,1,384]"), "")
        "," VC_NODE("split", "aten.split.Tensor", VC_T("r", "[1,1,384]"), VC_T("split_0", "[1,1,128]") "," VC_T("split_1", "[1,1,128]") "," VC_T("split_2", "[1,1,128]"), "\"split_size\":128,\"dim\":2")
        "," VC_NODE("mul", "aten.mul.Tensor", VC_T("split_0", "[1,1,128]") "," VC_T("split_1", "[1,1,128]"), VC_T("o", "[1,1,128]"), "")
        "," VC_NODE("view", "aten.view.default", VC_T("split_2", "[1,1,128]"), VC_T("v", "[1,1,4,32]"), "\"size\":[1,1,4,32]")
        "," VC_NODE("permute", "aten.permute.default", VC_T("v", "[1,1,4,32]"), VC_T("p", "[1,4,1,32]"), "\"dims\":[0,2,1,3]")
        "," VC_NODE("neg", "aten.neg.default", VC_T("y", "[6,64]"), VC_T("ny", "[6,64]"), "")
        "," VC_NODE("split_1", "aten.split.Tensor", VC_T("ny", "[6,64]"), VC_T("split_1_0", "[4,64]") "," VC_T("split_1_1", "[2,64]"), "\"split_size\":4")
        "," VC_NODE("sum", "aten.sum.dim_IntList", VC_T("split_1_0", "[4,64]"), VC_T("q", "[1,64]"), "\"dim\":[0],\"keepdim\":true")
        "," VC_NODE("sin", "aten.sin.default", VC_T("split_1_1", "[2,64]"), VC_T("z", "[2,64]"), "") "]}";
    /* clang-format on */
    for (int t = 0; t < 3; t++) {
        vc_check_json(g, dts[t], tols[t], "unary");
        vc_check_json_on(g, dts[t], tols[t], "unary", true);
    }
}

/* Graph g compiles without a depad kernel, and with a kernel `stem` matches the CPU reference in
 * every dtype. */
static void check_no_depad(const char *g, const char *stem)
{
    Pipeline pipe;
    vc_compile_json(g, &pipe);
    for (int k = 0; k < pipe.plan->nkernels; k++)
        assert_string_not_equal(pipe.plan->kernels[k].shader, "depad");
    pipeline_free(&pipe);
    for (int t = 0; t < 3; t++)
        vc_check_json(g, dts[t], tols[t], stem);
}

/* A permute, slice, select and expand of a channel-padded tensor (a max_pool2d's output, 5
 * channels padded to 32, batch 2) read in place: no depad kernel, each gather walking the padding
 * by its strides. */
static void test_padded_reads(void **state)
{
    (void)state;
    /* clang-format off */
    const char *g =
        "{\"graph_inputs\":[" VC_T("x", "[2,5,6,10]") "," VC_T("y", "[2,5,2,10]") "],\"graph_outputs\":[" VC_T("a", "[2,3,5,5]") "," VC_T("s", "[2,3,3,5]") "," VC_T("e", "[2,5,3]") "," VC_T("b", "[2,5,4,5]") "],\"nodes\":["
        VC_NODE("pool", "aten.max_pool2d.default", VC_T("x", "[2,5,6,10]"), VC_T("p", "[2,5,3,5]"), "\"kernel_size\":[2,2],\"stride\":[2,2]")
        "," VC_NODE("pool_1", "aten.max_pool2d.default", VC_T("y", "[2,5,2,10]"), VC_T("q", "[2,5,1,5]"), "\"kernel_size\":[2,2],\"stride\":[2,2]")
        "," VC_NODE("permute", "aten.permute.default", VC_T("p", "[2,5,3,5]"), VC_T("a", "[2,3,5,5]"), "\"dims\":[0,2,3,1]")
        "," VC_NODE("slice", "aten.slice.Tensor", VC_T("p", "[2,5,3,5]"), VC_T("s", "[2,3,3,5]"), "\"dim\":1,\"start\":1,\"end\":4")
        "," VC_NODE("select", "aten.select.int", VC_T("p", "[2,5,3,5]"), VC_T("e", "[2,5,3]"), "\"dim\":3,\"index\":2")
        "," VC_NODE("expand", "aten.expand.default", VC_T("q", "[2,5,1,5]"), VC_T("b", "[2,5,4,5]"), "\"size\":[2,5,4,5]") "]}";
    /* clang-format on */
    check_no_depad(g, "transpose");
}

/* roll: shifts positive, negative and beyond the size, one and several dims,
 * the flattened tensor; int64 data raw. */
static void test_roll(void **state)
{
    (void)state;
    node3("aten.roll.default", 1, S(F32(4, {2, 7, 7, 67})), F32(4, {2, 7, 7, 67}),
          "\"shifts\":[-3,-3],\"dims\":[1,2]", "pad_circular");
    node3("aten.roll.default", 1, S(F32(3, {3, 5, 67})), F32(3, {3, 5, 67}),
          "\"shifts\":[12,-70],\"dims\":[1,-1]", "pad_circular");
    node3("aten.roll.default", 1, S(F32(3, {3, 5, 67})), F32(3, {3, 5, 67}), "\"shifts\":[-1003]",
          "pad_circular");
    node3("aten.roll.default", 1, S(F32(1, {300})), F32(1, {300}), "\"shifts\":[299],\"dims\":[0]",
          "pad_circular");
    for (int t = 0; t < 2; t++)
        vc_check_node("aten.roll.default", 1, S(I64(2, {9, 67})), I64(2, {9, 67}),
                      "\"shifts\":[4,-5],\"dims\":[0,1]", dts[t], 0, "pad_circular");
}

/* pad: constant with per-side amounts (zero, negative: a crop), on one to three trailing dims,
 * a value; reflect, replicate and circular; int64 data with an int value. */
static void test_pad(void **state)
{
    (void)state;
    node3("aten.constant_pad_nd.default", 1, S(F32(4, {2, 3, 5, 67})), F32(4, {2, 3, 9, 66}),
          "\"pad\":[0,-1,1,3],\"value\":-2.5", "pad");
    node3("aten.constant_pad_nd.default", 1, S(F32(3, {3, 5, 7})), F32(3, {5, 4, 10}),
          "\"pad\":[2,1,-2,1,1,1]", "pad");
    node3("aten.pad.default", 1, S(F32(3, {2, 5, 67})), F32(3, {2, 5, 73}),
          "\"pad\":[4,2],\"mode\":\"constant\",\"value\":1.0", "pad");
    node3("aten.pad.default", 1, S(F32(4, {2, 3, 5, 7})), F32(4, {2, 3, 9, 12}),
          "\"pad\":[3,2,4,0],\"mode\":\"reflect\"", "pad_reflect");
    node3("aten.pad.default", 1, S(F32(3, {2, 5, 7})), F32(3, {2, 5, 20}),
          "\"pad\":[6,7],\"mode\":\"replicate\"", "pad_replicate");
    node3("aten.pad.default", 1, S(F32(4, {2, 3, 5, 7})), F32(4, {2, 3, 8, 14}),
          "\"pad\":[7,0,2,1],\"mode\":\"circular\"", "pad_circular");
    for (int t = 0; t < 2; t++)
        vc_check_node("aten.constant_pad_nd.default", 1, S(I64(2, {9, 67})), I64(2, {12, 65}),
                      "\"pad\":[-1,-1,2,1],\"value\":-7", dts[t], 0, "pad");
}

/* A pad and a roll of a channel-padded tensor (a max_pool2d's output, 5 channels padded to 32)
 * read in place: no depad kernel. */
static void test_window_padded_reads(void **state)
{
    (void)state;
    /* clang-format off */
    const char *g =
        "{\"graph_inputs\":[" VC_T("x", "[2,5,6,10]") "],\"graph_outputs\":[" VC_T("a", "[2,5,6,6]") "," VC_T("r", "[2,5,3,5]") "],\"nodes\":["
        VC_NODE("pool", "aten.max_pool2d.default", VC_T("x", "[2,5,6,10]"), VC_T("p", "[2,5,3,5]"), "\"kernel_size\":[2,2],\"stride\":[2,2]")
        "," VC_NODE("pad", "aten.constant_pad_nd.default", VC_T("p", "[2,5,3,5]"), VC_T("a", "[2,5,6,6]"), "\"pad\":[1,0,2,1],\"value\":3.0")
        "," VC_NODE("roll", "aten.roll.default", VC_T("p", "[2,5,3,5]"), VC_T("r", "[2,5,3,5]"), "\"shifts\":[2,-1],\"dims\":[1,3]") "]}";
    /* clang-format on */
    check_no_depad(g, "pad");
}

TU_MAIN(test_transpose, test_expand, test_slice_select, test_cat, test_copy, test_int_data,
        test_cast_int, test_embedding, test_index_copy, test_index_copy_transposed, test_split,
        test_split_views, test_padded_reads, test_roll, test_pad, test_window_padded_reads)
