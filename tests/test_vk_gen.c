/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * Generated kernels (fuse-elementwise, compiler/codegen/codegen.h) on Vulkan against the CPU
 * reference, in f32, f16 and bf16, on random inputs with every device buffer poisoned with NaN:
 * every unary op, every binary op with tensor operands broadcast with 1s in every position (ranks 1
 * to 6), scalar operands, alpha and the division modes, pow exponents, comparisons, logical ops,
 * where and masked_fill (taken from the CPU into the group), casts from integers, strided views
 * inside a group (permute, transpose, slice with a step, select, expand, reshape, cat), sources
 * folded into constants and index arithmetic (a causal mask from two aranges), bool outputs written
 * four bytes at a time, and the same groups switched off (their where and comparison members
 * then run as lone generated kernels), and the whole fixtures with the pass on and off. Each check
 * fails when no generated kernel ran where one should. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tests/elt_cases.h"
#include "tests/vk_check.h"

#define T VC_T
#define NODE VC_NODE
#define TB(n, s) "{\"name\":\"" n "\",\"dtype\":\"bool\",\"shape\":" s "}"

static const char *dts[] = {"fp32", "fp16", "bf16"};
static const double tols[] = {VC_TOL_F32, VC_TOL_F16, VC_TOL_BF16};

static void all_dtypes(const char *json)
{
    for (int t = 0; t < 3; t++)
        vc_check_json(json, dts[t], tols[t], "gen");
}

/* y = U(|x * w| + 0.5) (domain-safe) or U(x * w), with w broadcast, then * 1.5 */
static void test_unary_ops(void **state)
{
    (void)state;
    static const struct {
        const char *op, *attrs;
        bool positive;
    } ops[] = {
        {"aten.relu.default", "", false},
        {"aten.relu6.default", "", false},
        {"aten.hardtanh.default", "\"min_val\":-0.25,\"max_val\":0.5", false},
        {"aten.hardswish.default", "", false},
        {"aten.hardsigmoid.default", "", false},
        {"aten.sigmoid.default", "", false},
        {"aten.tanh.default", "", false},
        {"aten.gelu.default", "", false},
        {"aten.gelu.default", "\"approximate\":\"tanh\"", false},
        {"aten.silu.default", "", false},
        {"aten.neg.default", "", false},
        {"aten.exp.default", "", false},
        {"aten.log.default", "", true},
        {"aten.abs.default", "", false},
        {"aten.sqrt.default", "", true},
        {"aten.rsqrt.default", "", true},
        {"aten.cos.default", "", false},
        {"aten.sin.default", "", false},
        {"aten.clamp.default", "\"min\":-0.2,\"max\":0.3", false},
        {"aten.clamp_min.default", "\"min\":0.1", false},
        {"aten.leaky_relu.default", "\"negative_slope\":0.2", false},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        char g[4096];
        /* clang-format off */
        snprintf(g, sizeof g,
                 "{\"graph_inputs\":[" T("x", "[3,1,37]") "," T("w", "[5,1]") "],\"graph_outputs\":[" T("o", "[3,5,37]") "],\"nodes\":["
                 NODE("m", "aten.mul.Tensor", T("x", "[3,1,37]") "," T("w", "[5,1]"), T("a", "[3,5,37]"), "")
                 "%s," NODE("u", "%s", T("%s", "[3,5,37]"), T("b", "[3,5,37]"), "%s")
                 "," NODE("s", "aten.mul.Tensor", T("b", "[3,5,37]"), T("o", "[3,5,37]"), "\"other\":1.5") "]}",
                 ops[i].positive
                     ? "," NODE("ab", "aten.abs.default", T("a", "[3,5,37]"), T("p", "[3,5,37]"), "")
                       "," NODE("q", "aten.add.Tensor", T("p", "[3,5,37]"), T("c", "[3,5,37]"), "\"other\":0.5")
                     : "",
                 ops[i].op, ops[i].positive ? "c" : "a", ops[i].attrs);
        /* clang-format on */
        all_dtypes(g);
    }
}

/* y = -(a OP b) with tensor operands; division and pow on safe operands */
static void test_binary_broadcast(void **state)
{
    (void)state;
    for (int o = 0; o < elt_nbinary_ops; o++)
        for (int s = 0; s < elt_nshapes; s++) {
            bool safe = elt_binary_ops[o].safe;
            const EltShapes *sh = &elt_shapes[s];
            char g[4096], a[64], b[64], out[64];
            shape_str(sh->a.shape, sh->a.rank, a, sizeof a);
            shape_str(sh->b.shape, sh->b.rank, b, sizeof b);
            shape_str(sh->out.shape, sh->out.rank, out, sizeof out);
            /* safe: a' = |a| + 0.5 for pow's base, b' = |b| + 0.5 for the divisor */
            snprintf(
                g, sizeof g,
                "{\"graph_inputs\":[{\"name\":\"a\",\"shape\":%s},{\"name\":\"b\",\"shape\":%s}],"
                "\"graph_outputs\":[{\"name\":\"o\",\"shape\":%s}],\"nodes\":["
                "{\"name\":\"pa\",\"op_type\":\"aten.abs.default\",\"inputs\":[{\"name\":\"a\","
                "\"shape\":%s}],\"outputs\":[{\"name\":\"a1\",\"shape\":%s}],\"attrs\":{}},"
                "{\"name\":\"qa\",\"op_type\":\"aten.add.Tensor\",\"inputs\":[{\"name\":\"a1\","
                "\"shape\":%s}],\"outputs\":[{\"name\":\"a2\",\"shape\":%s}],\"attrs\":{\"other\":"
                "0.5}},"
                "{\"name\":\"pb\",\"op_type\":\"aten.abs.default\",\"inputs\":[{\"name\":\"b\","
                "\"shape\":%s}],\"outputs\":[{\"name\":\"b1\",\"shape\":%s}],\"attrs\":{}},"
                "{\"name\":\"qb\",\"op_type\":\"aten.add.Tensor\",\"inputs\":[{\"name\":\"b1\","
                "\"shape\":%s}],\"outputs\":[{\"name\":\"b2\",\"shape\":%s}],\"attrs\":{\"other\":"
                "0.5}},"
                "{\"name\":\"op\",\"op_type\":\"%s\",\"inputs\":[{\"name\":\"%s\",\"shape\":%s},{"
                "\"name\":\"%s\",\"shape\":%s}],\"outputs\":[{\"name\":\"c\",\"shape\":%s}],"
                "\"attrs\":{%s}},"
                "{\"name\":\"n\",\"op_type\":\"aten.neg.default\",\"inputs\":[{\"name\":\"c\","
                "\"shape\":%s}],\"outputs\":[{\"name\":\"o\",\"shape\":%s}],\"attrs\":{}}]}",
                a, b, out, a, a, a, a, b, b, b, b, elt_binary_ops[o].aten, safe ? "a2" : "a", a,
                safe ? "b2" : "b", b, out, elt_binary_ops[o].attrs, out, out);
            all_dtypes(g);
        }
}

/* scalar operands, alpha, division modes, pow exponents: y = (x * w) OP s then relu/neg */
static void test_scalar_operands(void **state)
{
    (void)state;
    for (int o = 0; o < elt_nscalar_ops; o++) {
        const EltOp *op = &elt_scalar_ops[o];
        bool pos = strstr(op->aten, "pow") != NULL;
        char g[4096];
        /* clang-format off */
        snprintf(g, sizeof g,
                 "{\"graph_inputs\":[" T("x", "[4,33]") "," T("w", "[33]") "],\"graph_outputs\":[" T("o", "[4,33]") "],\"nodes\":["
                 NODE("m", "aten.mul.Tensor", T("x", "[4,33]") "," T("w", "[33]"), T("a", "[4,33]"), "")
                 "," NODE("ab", "%s", T("a", "[4,33]"), T("p", "[4,33]"), "%s")
                 "," NODE("op", "%s", T("p", "[4,33]"), T("c", "[4,33]"), "%s")
                 "," NODE("n", "aten.neg.default", T("c", "[4,33]"), T("o", "[4,33]"), "") "]}",
                 pos ? "aten.abs.default" : "aten.mul.Tensor", pos ? "" : "\"other\":4",
                 op->aten, op->attrs);
        /* clang-format on */
        bool mode = strstr(op->attrs, "rounding_mode") != NULL;
        for (int t = 0; t < 3; t++)
            vc_check_json(g, dts[t], mode ? elt_mode_tols[t] : tols[t], "gen");
    }
}

/* comparisons (tensor and scalar), logical ops, where (three forms), masked_fill: on the CPU
 * without generated kernels, inside one generated kernel with them */
static void test_where_comparisons(void **state)
{
    (void)state;
    static const char *cmp[] = {"aten.eq.Scalar", "aten.ne.Scalar", "aten.lt.Tensor",
                                "aten.le.Tensor", "aten.gt.Tensor", "aten.ge.Scalar"};
    for (size_t c = 0; c < sizeof cmp / sizeof cmp[0]; c++) {
        bool scalar = strstr(cmp[c], "Scalar") != NULL;
        char g[4096];
        /* clang-format off */
        /* eq/ne against a value the rounded inputs hit: x * 4 rounded by floor division */
        snprintf(g, sizeof g,
                 "{\"graph_inputs\":[" T("x", "[6,1,19]") "," T("y", "[5,19]") "],\"graph_outputs\":[" T("o", "[6,5,19]") "],\"nodes\":["
                 NODE("f", "aten.div.Tensor_mode", T("x", "[6,1,19]"), T("xf", "[6,1,19]"), "\"other\":0.25,\"rounding_mode\":\"floor\"")
                 "," NODE("xe", "aten.expand.default", T("xf", "[6,1,19]"), T("xg", "[6,5,19]"), "\"size\":[6,5,19]")
                 "," NODE("k", "%s", T("%s", "%s") "%s", TB("m", "[6,5,19]"), "%s")
                 "," NODE("n", "aten.logical_not.default", TB("m", "[6,5,19]"), TB("nm", "[6,5,19]"), "")
                 "," NODE("w", "aten.where.self", TB("nm", "[6,5,19]") "," T("y", "[5,19]") "," T("xf", "[6,1,19]"), T("a", "[6,5,19]"), "")
                 "," NODE("mf", "aten.masked_fill.Scalar", T("a", "[6,5,19]") "," TB("m", "[6,5,19]"), T("o", "[6,5,19]"), "\"value\":-2.5") "]}",
                 cmp[c], scalar ? "xg" : "xf", scalar ? "[6,5,19]" : "[6,1,19]",
                 scalar ? "" : "," T("y", "[5,19]"), scalar ? "\"other\":1" : "");
        /* clang-format on */
        all_dtypes(g);
    }
    /* logical_and / logical_or of two comparisons; where with scalar operands */
    /* clang-format off */
    const char *g =
        "{\"graph_inputs\":[" T("x", "[7,23]") "," T("y", "[23]") "],\"graph_outputs\":[" T("o", "[7,23]") "],\"nodes\":["
        NODE("a", "aten.gt.Scalar", T("x", "[7,23]"), TB("p", "[7,23]"), "\"other\":-0.3")
        "," NODE("b", "aten.lt.Tensor", T("x", "[7,23]") "," T("y", "[23]"), TB("q", "[7,23]"), "")
        "," NODE("c", "aten.logical_and.default", TB("p", "[7,23]") "," TB("q", "[7,23]"), TB("r", "[7,23]"), "")
        "," NODE("d", "aten.logical_or.default", TB("r", "[7,23]") "," TB("q", "[7,23]"), TB("s", "[7,23]"), "")
        "," NODE("w1", "aten.where.ScalarOther", TB("r", "[7,23]") "," T("x", "[7,23]"), T("u", "[7,23]"), "\"other\":0.75")
        "," NODE("w2", "aten.where.ScalarSelf", TB("s", "[7,23]") "," T("u", "[7,23]"), T("v", "[7,23]"), "\"self\":-1.25")
        "," NODE("e", "aten.exp.default", T("v", "[7,23]"), T("o", "[7,23]"), "") "]}";
    /* clang-format on */
    all_dtypes(g);
}

/* A bool graph output is written four bytes per invocation (21 elements: a partial last word). */
static void test_bool_output(void **state)
{
    (void)state;
    /* clang-format off */
    const char *g =
        "{\"graph_inputs\":[" T("x", "[3,7]") "," T("y", "[3,7]") "],\"graph_outputs\":[" TB("o", "[3,7]") "],\"nodes\":["
        NODE("s", "aten.sin.default", T("x", "[3,7]"), T("a", "[3,7]"), "")
        "," NODE("c", "aten.gt.Tensor", T("a", "[3,7]") "," T("y", "[3,7]"), TB("m", "[3,7]"), "")
        "," NODE("n", "aten.logical_not.default", TB("m", "[3,7]"), TB("o", "[3,7]"), "") "]}";
    /* clang-format on */
    vc_check_json(g, "fp32", 0, "gen");
    vc_check_json(g, "bf16", 0.5, "gen"); /* sin(x) > y may flip where the two nearly tie */
}

/* int64 inputs cast to float inside the group; a float->float cast */
static void test_casts(void **state)
{
    (void)state;
    /* clang-format off */
    const char *g =
        "{\"graph_inputs\":[" VC_TI("ids", "[2,1,9]") "," T("w", "[4,1]") "],\"graph_outputs\":[" T("o", "[2,4,9]") "],\"nodes\":["
        NODE("t", "aten.to.dtype", VC_TI("ids", "[2,1,9]"), T("f", "[2,1,9]"), "\"dtype\":\"torch.float32\"")
        "," NODE("m", "aten.mul.Tensor", T("f", "[2,1,9]") "," T("w", "[4,1]"), T("a", "[2,4,9]"), "")
        "," NODE("t2", "aten._to_copy.default", T("a", "[2,4,9]"), T("b", "[2,4,9]"), "\"dtype\":\"torch.float32\"")
        "," NODE("c", "aten.cos.default", T("b", "[2,4,9]"), T("o", "[2,4,9]"), "") "]}";
    /* clang-format on */
    all_dtypes(g);
}

/* strided views inside one group: a permute of a broadcast product, a transpose, a slice with a
 * step, a select, an expand, reshapes that split and merge dims, a cat of three parts (RoPE's
 * rotate-half among them) */
static void test_views(void **state)
{
    (void)state;
    /* clang-format off */
    const char *g1 =
        "{\"graph_inputs\":[" T("x", "[2,3,4,5]") "," T("w", "[3,1,1]") "],\"graph_outputs\":[" T("o", "[5,3,2,2]") "],\"nodes\":["
        NODE("m", "aten.mul.Tensor", T("x", "[2,3,4,5]") "," T("w", "[3,1,1]"), T("a", "[2,3,4,5]"), "")
        "," NODE("p", "aten.permute.default", T("a", "[2,3,4,5]"), T("b", "[5,3,2,4]"), "\"dims\":[3,1,0,2]")
        "," NODE("s", "aten.slice.Tensor", T("b", "[5,3,2,4]"), T("c", "[5,3,2,2]"), "\"dim\":3,\"start\":1,\"end\":4,\"step\":2")
        "," NODE("r", "aten.relu.default", T("c", "[5,3,2,2]"), T("o", "[5,3,2,2]"), "") "]}";
    /* clang-format on */
    all_dtypes(g1);
    /* clang-format off */
    const char *g2 =
        "{\"graph_inputs\":[" T("x", "[4,6]") "," T("y", "[6,1]") "],\"graph_outputs\":[" T("o", "[3,8]") "],\"nodes\":["
        NODE("t", "aten.transpose.int", T("x", "[4,6]"), T("a", "[6,4]"), "\"dim0\":0,\"dim1\":1")
        "," NODE("e", "aten.expand.default", T("y", "[6,1]"), T("b", "[6,4]"), "\"size\":[6,4]")
        "," NODE("m", "aten.mul.Tensor", T("a", "[6,4]") "," T("b", "[6,4]"), T("c", "[6,4]"), "")
        "," NODE("v", "aten.view.default", T("c", "[6,4]"), T("d", "[3,8]"), "\"size\":[3,8]")
        "," NODE("n", "aten.neg.default", T("d", "[3,8]"), T("o", "[3,8]"), "") "]}";
    /* clang-format on */
    all_dtypes(g2);
    /* clang-format off */
    const char *g3 =
        "{\"graph_inputs\":[" T("x", "[2,5,7]") "],\"graph_outputs\":[" T("o", "[2,7]") "],\"nodes\":["
        NODE("s", "aten.select.int", T("x", "[2,5,7]"), T("a", "[2,7]"), "\"dim\":1,\"index\":-2")
        "," NODE("e", "aten.exp.default", T("a", "[2,7]"), T("o", "[2,7]"), "") "]}";
    /* clang-format on */
    all_dtypes(g3);
    /* rotate_half(x) * sin + x * cos with the two slices, the neg and the cat in the group */
    /* clang-format off */
    const char *g4 =
        "{\"graph_inputs\":[" T("x", "[1,2,3,8]") "," T("c", "[3,8]") "," T("s", "[3,8]") "],\"graph_outputs\":[" T("o", "[1,2,3,8]") "],\"nodes\":["
        NODE("s1", "aten.slice.Tensor", T("x", "[1,2,3,8]"), T("x1", "[1,2,3,4]"), "\"dim\":3,\"start\":0,\"end\":4")
        "," NODE("s2", "aten.slice.Tensor", T("x", "[1,2,3,8]"), T("x2", "[1,2,3,4]"), "\"dim\":3,\"start\":4,\"end\":9223372036854775807")
        "," NODE("ng", "aten.neg.default", T("x2", "[1,2,3,4]"), T("n2", "[1,2,3,4]"), "")
        "," NODE("ct", "aten.cat.default", T("n2", "[1,2,3,4]") "," T("x1", "[1,2,3,4]"), T("r", "[1,2,3,8]"), "\"dim\":-1")
        "," NODE("m1", "aten.mul.Tensor", T("x", "[1,2,3,8]") "," T("c", "[3,8]"), T("a", "[1,2,3,8]"), "")
        "," NODE("m2", "aten.mul.Tensor", T("r", "[1,2,3,8]") "," T("s", "[3,8]"), T("b", "[1,2,3,8]"), "")
        "," NODE("ad", "aten.sub.Tensor", T("a", "[1,2,3,8]") "," T("b", "[1,2,3,8]"), T("o", "[1,2,3,8]"), "") "]}";
    /* clang-format on */
    all_dtypes(g4);
    /* a cat of three unequal parts along a middle dim, one of them broadcast */
    /* clang-format off */
    const char *g5 =
        "{\"graph_inputs\":[" T("a", "[2,3,5]") "," T("b", "[2,1,5]") "," T("c", "[1,5]") "],\"graph_outputs\":[" T("o", "[2,6,5]") "],\"nodes\":["
        NODE("e", "aten.expand.default", T("c", "[1,5]"), T("c2", "[2,2,5]"), "\"size\":[2,2,5]")
        "," NODE("ct", "aten.cat.default", T("a", "[2,3,5]") "," T("b", "[2,1,5]") "," T("c2", "[2,2,5]"), T("d", "[2,6,5]"), "\"dim\":1")
        "," NODE("t", "aten.tanh.default", T("d", "[2,6,5]"), T("o", "[2,6,5]"), "") "]}";
    /* clang-format on */
    all_dtypes(g5);
}

/* sources become constants and index arithmetic: GPT-2's causal mask from two aranges, a full,
 * a where and a masked_fill, all in the kernel that scales the scores (fold-constants switched
 * off: it computes such weight-only work once at load instead, tests/test_constfold.c) */
/* clang-format off */
static const char *causal =
    "{\"graph_inputs\":[" T("x", "[1,3,6,6]") "],\"graph_outputs\":[" T("o", "[1,3,6,6]") "],\"nodes\":["
    NODE("d", "aten.div.Tensor", T("x", "[1,3,6,6]"), T("s", "[1,3,6,6]"), "\"other\":2.5")
    "," NODE("a0", "aten.arange.default", "", VC_TI("r0", "[6]"), "\"end\":6")
    "," NODE("a1", "aten.arange.start", "", VC_TI("r1", "[6]"), "\"start\":0,\"end\":6")
    "," NODE("u0", "aten.unsqueeze.default", VC_TI("r0", "[6]"), VC_TI("q0", "[1,6]"), "\"dim\":0")
    "," NODE("u1", "aten.unsqueeze.default", VC_TI("r1", "[6]"), VC_TI("q1", "[6,1]"), "\"dim\":1")
    "," NODE("le", "aten.le.Tensor", VC_TI("q0", "[1,6]") "," VC_TI("q1", "[6,1]"), TB("m", "[6,6]"), "")
    "," NODE("v", "aten.view.default", TB("m", "[6,6]"), TB("mv", "[1,1,6,6]"), "\"size\":[1,1,6,6]")
    "," NODE("f", "aten.full.default", "", T("lo", "[]"), "\"size\":[],\"fill_value\":-1000.0")
    "," NODE("w", "aten.where.self", TB("mv", "[1,1,6,6]") "," T("s", "[1,3,6,6]") "," T("lo", "[]"), T("y", "[1,3,6,6]"), "")
    "," NODE("ln", "aten.logical_not.default", TB("mv", "[1,1,6,6]"), TB("nm", "[1,1,6,6]"), "")
    "," NODE("mf", "aten.masked_fill.Scalar", T("y", "[1,3,6,6]") "," TB("nm", "[1,1,6,6]"), T("z", "[1,3,6,6]"), "\"value\":-2000.0")
    "," NODE("sm", "aten.softmax.int", T("z", "[1,3,6,6]"), T("o", "[1,3,6,6]"), "\"dim\":-1") "]}";
/* clang-format on */

static void test_sources_and_mask(void **state)
{
    (void)state;
    vc_set_disable("fold-constants");
    all_dtypes(causal);
    /* clang-format off */
    const char *g =
        "{\"graph_inputs\":[" T("x", "[3,5]") "],\"graph_outputs\":[" T("o", "[3,5]") "],\"nodes\":["
        NODE("on", "aten.ones.default", "", T("one", "[5]"), "\"size\":[5]")
        "," NODE("ar", "aten.arange.start_step", "", T("r", "[5]"), "\"start\":0.5,\"end\":3.0,\"step\":0.5")
        "," NODE("ad", "aten.add.Tensor", T("one", "[5]") "," T("r", "[5]"), T("k", "[5]"), "")
        "," NODE("m", "aten.mul.Tensor", T("x", "[3,5]") "," T("k", "[5]"), T("o", "[3,5]"), "") "]}";
    /* clang-format on */
    all_dtypes(g);
    vc_set_disable(NULL);
}

/* Every group switched off: where, masked_fill, the comparison and the sources run as lone
 * generated kernels (bool tensors in device memory between them), the rest as before. */
static void test_groups_off(void **state)
{
    (void)state;
    vc_set_no_fuse("elementwise");
    vc_set_disable("fold-constants");
    all_dtypes(causal);
    vc_set_disable(NULL);
    vc_set_no_fuse(NULL);
}

/* The fixtures with the pass on and off: both against the CPU reference on the same random
 * weights and inputs (so within twice the tolerance of each other). */
static void test_fixtures_on_off(void **state)
{
    (void)state;
    static const struct {
        const char *path, *dtype;
        double tol;
        bool gen; /* has generated kernels */
        bool lng; /* only under `make test-long`: resnet18's 224x224 runs take most of the time */
    } fx[] = {
        {"tests/models/mlp/model.json", "fp16", VC_TOL_F16, false, false},
        {"tests/models/convnet/model.json", "fp16", VC_TOL_F16, false, false},
        {"tests/models/resnet18/model.json", "fp16", 2e-2, false, true},
        {"tests/models/qwen2_tiny/prefill.json", "bf16", 3e-2, true, false},
        {"tests/models/qwen2_tiny/decode.json", "bf16", 3e-2, true, false},
        {"tests/models/qwen2_tiny/decode.json", "fp32", VC_TOL_F32, true, false},
        {"tests/models/gpt_block/model.json", "fp16", VC_TOL_F16, true, false},
        /* no group left: conv_hardswish/conv_hardsigmoid take its activations */
        {"tests/models/mobilenet_block/model.json", "bf16", VC_TOL_BF16, false, false},
    };
    for (size_t i = 0; i < sizeof fx / sizeof fx[0]; i++) {
        if (!tu_here(fx[i].lng)) continue;
        char *json = tu_read_file(fx[i].path);
        if (!json) fail_msg("cannot read %s", fx[i].path);
        double on = vc_check_json(json, fx[i].dtype, fx[i].tol, fx[i].gen ? "gen" : NULL);
        vc_set_no_fuse("fuse-elementwise");
        double off = vc_check_json(json, fx[i].dtype, fx[i].tol, NULL);
        vc_set_no_fuse(NULL);
        fprintf(stderr, "%s %s: rel_l2 %.3g with generated kernels, %.3g without\n", fx[i].path,
                fx[i].dtype, on, off);
        free(json);
    }
}

int main(void)
{
    /* `make test-long`: the cases the quick suite leaves out (tu_here) */
    return tu_long() ? TU_TESTS(test_fixtures_on_off)
                     : TU_TESTS(test_unary_ops, test_binary_broadcast, test_scalar_operands,
                                test_where_comparisons, test_bool_output, test_casts, test_views,
                                test_sources_and_mask, test_groups_off, test_fixtures_on_off);
}
