/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * Elementwise and row-reduction kernels on Vulkan against the CPU reference, in f32, f16 and
 * bf16: binary ops with tensor and scalar operands and broadcasting in every position (ranks 1
 * to 6, dims of 1 on either side), div rounding modes on quotients that straddle integers, pow
 * with special, integer (negative bases) and fractional exponents and tensor exponents, the fused
 * add_relu and silu_mul (both operand orders), sum/mean/amax and (log_)softmax over rows of 1, 7,
 * 257, 3000 (5000) elements, and masked_softmax with broadcast masks holding -inf, fully masked
 * rows included; where (tensor and scalar operands, masked_fill) broadcast in every position,
 * comparisons and logical ops (bool results as 0/1 in the compute dtype). Padded (conv-family)
 * operands are not covered here: they need the conv2d family to produce them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tests/elt_cases.h"
#include "tests/kernel_check.h"
#include "tests/vk_check.h"

#define T VC_T
#define NODE VC_NODE

static const char *dts[] = {"fp32", "fp16", "bf16"};
static const double tols[] = {VC_TOL_F32, VC_TOL_F16, VC_TOL_BF16};

/* the tensor-tensor binary ops whose operands need no care, on every broadcast */
static void test_binary_tensor_tensor(void **state)
{
    (void)state;
    for (int o = 0; o < elt_nbinary_ops; o++) {
        const EltOp *op = &elt_binary_ops[o];
        if (op->safe) continue; /* test_div_pow_positive */
        for (int s = 0; s < elt_nshapes; s++)
            for (int t = 0; t < 3; t++)
                vc_check_node(op->aten, 2, S(elt_shapes[s].a, elt_shapes[s].b), elt_shapes[s].out,
                              op->attrs, dts[t], tols[t], "binary");
    }
}

/* the scalar-operand ops (those not blowing up near 0: test_div_pow_positive has them) */
static void test_binary_scalar(void **state)
{
    (void)state;
    for (int o = 0; o < elt_nscalar_ops; o++) {
        const EltOp *op = &elt_scalar_ops[o];
        if (op->safe) continue;
        bool mode = strstr(op->attrs, "rounding_mode") != NULL;
        for (int t = 0; t < 3; t++)
            vc_check_node(op->aten, 1, S(F32(3, {3, 5, 67})), F32(3, {3, 5, 67}), op->attrs, dts[t],
                          mode ? elt_mode_tols[t] : tols[t], "binary_s");
    }
}

/* pow with exponents that blow up near 0 (negative, fractional), and div with every rounding
 * mode by a tensor, on operands kept away from 0: p = |x| + 0.5, d = |y| + 0.25. */
static void test_div_pow_positive(void **state)
{
    (void)state;
    static const char *pows[] = {"-0.5", "-1", "-2", "-3", "1.7", "-2.25", "0.5"};
    for (size_t e = 0; e < sizeof pows / sizeof pows[0]; e++) {
        char g[4096];
        /* clang-format off */
        snprintf(g, sizeof g,
                 "{\"graph_inputs\":[" T("x", "[3,111]") "],\"graph_outputs\":[" T("o", "[3,111]") "],\"nodes\":["
                 NODE("a", "aten.abs.default", T("x", "[3,111]"), T("ax", "[3,111]"), "")
                 "," NODE("p", "aten.add.Tensor", T("ax", "[3,111]"), T("y", "[3,111]"), "\"other\":0.5")
                 "," NODE("w", "aten.pow.Tensor_Scalar", T("y", "[3,111]"), T("o", "[3,111]"), "\"exponent\":%s") "]}",
                 pows[e]);
        /* clang-format on */
        for (int t = 0; t < 3; t++)
            vc_check_json(g, dts[t], tols[t], "binary_s");
    }
    /* clang-format off */
    /* tensor ** tensor: base in [0.5, 1.5], exponent in [-3, 3]; and a broadcast exponent row */
    const char *pt =
        "{\"graph_inputs\":[" T("x", "[4,1,33]") "," T("e", "[5,33]") "],\"graph_outputs\":[" T("o", "[4,5,33]") "],\"nodes\":["
        NODE("a", "aten.abs.default", T("x", "[4,1,33]"), T("ax", "[4,1,33]"), "")
        "," NODE("p", "aten.add.Tensor", T("ax", "[4,1,33]"), T("b", "[4,1,33]"), "\"other\":0.5")
        "," NODE("m", "aten.mul.Tensor", T("e", "[5,33]"), T("e3", "[5,33]"), "\"other\":3")
        "," NODE("w", "aten.pow.Tensor_Tensor", T("b", "[4,1,33]") "," T("e3", "[5,33]"), T("o", "[4,5,33]"), "") "]}";
    /* clang-format on */
    for (int t = 0; t < 3; t++)
        vc_check_json(pt, dts[t], tols[t], "binary");
    /* x * 3 / (|y| + 0.25): quotients in [-12, 12] straddle integers */
    static const char *modes[] = {"", ",\"rounding_mode\":\"trunc\"",
                                  ",\"rounding_mode\":\"floor\""};
    for (int m = 0; m < 3; m++) {
        char g[4096];
        /* clang-format off */
        snprintf(g, sizeof g,
                 "{\"graph_inputs\":[" T("x", "[6,1,40]") "," T("y", "[5,40]") "],\"graph_outputs\":[" T("o", "[6,5,40]") "],\"nodes\":["
                 NODE("a", "aten.abs.default", T("y", "[5,40]"), T("ay", "[5,40]"), "")
                 "," NODE("p", "aten.add.Tensor", T("ay", "[5,40]"), T("d", "[5,40]"), "\"other\":0.25")
                 "," NODE("m", "aten.mul.Tensor", T("x", "[6,1,40]"), T("x3", "[6,1,40]"), "\"other\":3")
                 "," NODE("q", "aten.div.Tensor_mode", T("x3", "[6,1,40]") "," T("d", "[5,40]"), T("o", "[6,5,40]"), "%s") "]}",
                 modes[m] + (m ? 1 : 0));
        /* clang-format on */
        for (int t = 0; t < 3; t++)
            vc_check_json(g, dts[t], m ? elt_mode_tols[t] : tols[t], "binary");
    }
}

static void test_add_relu(void **state)
{
    (void)state;
    /* clang-format off */
    const char *g =
        "{\"graph_inputs\":[" T("x", "[2,8,5,5]") "," T("b", "[1,8,1,1]") "],\"graph_outputs\":[" T("o", "[2,8,5,5]") "],\"nodes\":["
        NODE("a", "aten.add.Tensor", T("x", "[2,8,5,5]") "," T("b", "[1,8,1,1]"), T("s", "[2,8,5,5]"), "")
        "," NODE("r", "aten.relu.default", T("s", "[2,8,5,5]"), T("o", "[2,8,5,5]"), "") "]}";
    /* clang-format on */
    /* clang-format off */
    /* the same tensor on both sides: the fused group lists it once */
    const char *self =
        "{\"graph_inputs\":[" T("x", "[3,77]") "],\"graph_outputs\":[" T("o", "[3,77]") "],\"nodes\":["
        NODE("a", "aten.add.Tensor", T("x", "[3,77]") "," T("x", "[3,77]"), T("s", "[3,77]"), "")
        "," NODE("r", "aten.relu.default", T("s", "[3,77]"), T("o", "[3,77]"), "") "]}";
    /* clang-format on */
    for (int t = 0; t < 3; t++) {
        vc_check_json(g, dts[t], tols[t], "add_relu");
        vc_check_json(self, dts[t], tols[t], "binary_s");
    }
}

static void test_silu_mul(void **state)
{
    (void)state;
    /* clang-format off */
    /* silu(g) * u, u * silu(g), and the multiplier produced after the silu */
    const char *g1 =
        "{\"graph_inputs\":[" T("g", "[3,177]") "," T("u", "[3,177]") "],\"graph_outputs\":[" T("o", "[3,177]") "],\"nodes\":["
        NODE("s", "aten.silu.default", T("g", "[3,177]"), T("sg", "[3,177]"), "")
        "," NODE("m", "aten.mul.Tensor", T("sg", "[3,177]") "," T("u", "[3,177]"), T("o", "[3,177]"), "") "]}";
    /* clang-format on */
    /* clang-format off */
    const char *g2 =
        "{\"graph_inputs\":[" T("u", "[3,177]") "," T("g", "[3,177]") "],\"graph_outputs\":[" T("o", "[3,177]") "],\"nodes\":["
        NODE("s", "aten.silu.default", T("g", "[3,177]"), T("sg", "[3,177]"), "")
        "," NODE("m", "aten.mul.Tensor", T("u", "[3,177]") "," T("sg", "[3,177]"), T("o", "[3,177]"), "") "]}";
    /* clang-format on */
    /* clang-format off */
    const char *g3 =
        "{\"graph_inputs\":[" T("g", "[3,177]") "," T("v", "[3,177]") "],\"graph_outputs\":[" T("o", "[3,177]") "],\"nodes\":["
        NODE("s", "aten.silu.default", T("g", "[3,177]"), T("sg", "[3,177]"), "")
        "," NODE("n", "aten.sin.default", T("v", "[3,177]"), T("u", "[3,177]"), "")
        "," NODE("m", "aten.mul.Tensor", T("u", "[3,177]") "," T("sg", "[3,177]"), T("o", "[3,177]"), "") "]}";
    /* clang-format on */
    for (int t = 0; t < 3; t++) {
        vc_check_json(g1, dts[t], tols[t], "silu_mul");
        vc_check_json(g2, dts[t], tols[t], "silu_mul");
        vc_check_json(g3, dts[t], tols[t], "silu_mul");
    }
}

static const int64_t lens[] = {1, 7, 257, 3000};

static void test_reduce(void **state)
{
    (void)state;
    static const char *ops[] = {"aten.sum.dim_IntList", "aten.mean.dim", "aten.amax.default"};
    for (size_t o = 0; o < 3; o++)
        for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
            for (int keep = 0; keep < 2; keep++)
                for (int t = 0; t < 3; t++) {
                    int64_t n = lens[l];
                    TuSpec in = F32(3, {2, 3, n});
                    TuSpec out = keep ? F32(3, {2, 3, 1}) : F32(2, {2, 3});
                    vc_check_node(ops[o], 1, &in, out,
                                  keep ? "\"dim\":[-1],\"keepdim\":true" : "\"dim\":[2]", dts[t],
                                  tols[t], "reduce");
                }
    /* rank 1 (one row) and many short rows (several rows per workgroup, a partial last one) */
    for (int t = 0; t < 3; t++) {
        vc_check_node("aten.sum.dim_IntList", 1, S(F32(1, {257})), F32(0, {0}), "\"dim\":[0]",
                      dts[t], tols[t], "reduce");
        vc_check_node("aten.mean.dim", 1, S(F32(4, {3, 5, 7, 3})), F32(4, {3, 5, 7, 1}),
                      "\"dim\":[-1],\"keepdim\":true", dts[t], tols[t], "reduce");
    }
}

static void test_softmax(void **state)
{
    (void)state;
    static const char *ops[] = {"aten.softmax.int", "aten._log_softmax.default"};
    static const int64_t sl[] = {1, 7, 257, 3000, 5000};
    for (size_t o = 0; o < 2; o++)
        for (size_t l = 0; l < sizeof sl / sizeof sl[0]; l++)
            for (int t = 0; t < 3; t++) {
                TuSpec x = sl[l] > 1000 ? F32(2, {3, sl[l]}) : F32(3, {2, 5, sl[l]});
                vc_check_node(ops[o], 1, &x, x, "\"dim\":-1", dts[t], tols[t], "softmax");
            }
    for (int t = 0; t < 3; t++)
        vc_check_node("aten.softmax.int", 1, S(F32(1, {33})), F32(1, {33}), "\"dim\":0", dts[t],
                      tols[t], "softmax");
}

/* scores [1,H,S,T] + mask -> softmax. The mask is log(relu(m)): -inf where m <= 0. With
 * mr [1,1,S,1] and mc [1,1,1,T] the mask log(relu(mr)) + log(relu(mc)) has fully masked rows
 * (NaN in the reference, as in PyTorch; outputs the reference has non-finite are not compared)
 * and masked columns. */
static void test_masked_softmax(void **state)
{
    (void)state;
    static const struct {
        const char *x, *m;
    } cases[] = {
        {"[1,3,5,7]", "[1,1,5,7]"},
        {"[1,2,4,257]", "[1,1,4,257]"},
        {"[2,2,3,1000]", "[1,1,1,1000]"},
        {"[1,4,8,64]", "[64]"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char g[4096];
        const char *x = cases[c].x, *m = cases[c].m;
        /* clang-format off */
        snprintf(g, sizeof g,
                 "{\"graph_inputs\":[{\"name\":\"x\",\"shape\":%s},{\"name\":\"mm\",\"shape\":%s}],"
                 "\"graph_outputs\":[{\"name\":\"o\",\"shape\":%s}],\"nodes\":["
                 NODE("r", "aten.relu.default", "{\"name\":\"mm\",\"shape\":%s}", "{\"name\":\"rm\",\"shape\":%s}", "")
                 "," NODE("l", "aten.log.default", "{\"name\":\"rm\",\"shape\":%s}", "{\"name\":\"mask\",\"shape\":%s}", "")
                 "," NODE("a", "aten.add.Tensor", "{\"name\":\"x\",\"shape\":%s},{\"name\":\"mask\",\"shape\":%s}", "{\"name\":\"s\",\"shape\":%s}", "")
                 "," NODE("sm", "aten.softmax.int", "{\"name\":\"s\",\"shape\":%s}", "{\"name\":\"o\",\"shape\":%s}", "\"dim\":-1") "]}",
                 x, m, x, m, m, m, m, x, m, x, x, x);
        /* clang-format on */
        for (int t = 0; t < 3; t++)
            vc_check_json(g, dts[t], tols[t], "masked_softmax");
    }
    /* clang-format off */
    const char *full =
        "{\"graph_inputs\":[" T("x", "[1,3,16,40]") "," T("mr", "[1,1,16,1]") "," T("mc", "[1,1,1,40]") "],\"graph_outputs\":[" T("o", "[1,3,16,40]") "],\"nodes\":["
        NODE("r1", "aten.relu.default", T("mr", "[1,1,16,1]"), T("r1", "[1,1,16,1]"), "")
        "," NODE("l1", "aten.log.default", T("r1", "[1,1,16,1]"), T("l1", "[1,1,16,1]"), "")
        "," NODE("r2", "aten.relu.default", T("mc", "[1,1,1,40]"), T("r2", "[1,1,1,40]"), "")
        "," NODE("l2", "aten.log.default", T("r2", "[1,1,1,40]"), T("l2", "[1,1,1,40]"), "")
        "," NODE("mk", "aten.add.Tensor", T("l1", "[1,1,16,1]") "," T("l2", "[1,1,1,40]"), T("mask", "[1,1,16,40]"), "")
        "," NODE("a", "aten.add.Tensor", T("x", "[1,3,16,40]") "," T("mask", "[1,1,16,40]"), T("s", "[1,3,16,40]"), "")
        "," NODE("sm", "aten.softmax.int", T("s", "[1,3,16,40]"), T("o", "[1,3,16,40]"), "\"dim\":-1") "]}";
    /* clang-format on */
    for (int t = 0; t < 3; t++)
        vc_check_json(full, dts[t], tols[t], "masked_softmax");
}

/* ---- where, masked_fill, comparisons, logical ops ------------------------------------------
 * Bools live on the device as 0/1 in the compute dtype. Comparisons are checked through a where
 * choosing between the compared values (where(a OP b, a, b)), so a comparison that flips because
 * 16-bit storage rounded two close values changes the result by no more than that rounding;
 * comparisons whose answer cannot flip (x == relu(x), bool operands) are checked bit-exact. */
#define B8(...) ((TuSpec){"bool", __VA_ARGS__})
#define TB(n, s) "{\"name\":\"" n "\",\"dtype\":\"bool\",\"shape\":" s "}"

static void test_where(void **state)
{
    (void)state;
    /* cond, a, b broadcast in every position (GPT-2's [1,1,S,S] mask with a 0-d mask value) */
    static const struct {
        TuSpec c, a, b, out;
    } cases[] = {
        {B8(3, {3, 5, 67}), F32(3, {3, 5, 67}), F32(3, {3, 5, 67}), F32(3, {3, 5, 67})},
        {B8(4, {1, 1, 10, 10}), F32(4, {1, 4, 10, 10}), F32(0, {0}), F32(4, {1, 4, 10, 10})},
        {B8(5, {2, 1, 5, 1, 7}), F32(4, {3, 1, 6, 1}), F32(1, {1}), F32(5, {2, 3, 5, 6, 7})},
        {B8(1, {67}), F32(4, {2, 3, 4, 67}), F32(2, {4, 1}), F32(4, {2, 3, 4, 67})},
        {B8(4, {2, 8, 5, 5}), F32(4, {1, 8, 1, 1}), F32(4, {2, 1, 5, 5}), F32(4, {2, 8, 5, 5})},
        {B8(3, {4, 1, 9}), F32(3, {1, 3, 1}), F32(1, {9}), F32(3, {4, 3, 9})},
        {B8(6, {2, 1, 3, 1, 2, 1}), F32(6, {1, 2, 1, 4, 1, 5}), F32(6, {2, 2, 3, 4, 2, 5}),
         F32(6, {2, 2, 3, 4, 2, 5})},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int t = 0; t < 3; t++)
            vc_check_node("aten.where.self", 3, S(cases[i].c, cases[i].a, cases[i].b), cases[i].out,
                          "", dts[t], tols[t], "where");
}

static void test_where_scalar_masked_fill(void **state)
{
    (void)state;
    static const struct {
        const char *op, *attrs;
        TuSpec in[2], out;
    } cases[] = {
        {"aten.where.ScalarOther",
         "\"other\":-0.25",
         {B8(3, {3, 5, 67}), F32(3, {3, 5, 67})},
         F32(3, {3, 5, 67})},
        {"aten.where.ScalarOther",
         "\"other\":\"-inf\"",
         {B8(4, {1, 1, 7, 7}), F32(4, {2, 3, 7, 7})},
         F32(4, {2, 3, 7, 7})},
        {"aten.where.ScalarSelf",
         "\"self\":2.5",
         {B8(2, {5, 1}), F32(2, {1, 33})},
         F32(2, {5, 33})},
        {"aten.masked_fill.Scalar",
         "\"value\":\"-inf\"",
         {F32(4, {1, 4, 10, 10}), B8(4, {1, 1, 10, 10})},
         F32(4, {1, 4, 10, 10})},
        {"aten.masked_fill.Scalar",
         "\"value\":0.5",
         {F32(3, {2, 9, 13}), B8(3, {2, 9, 13})},
         F32(3, {2, 9, 13})},
        {"aten.masked_fill.Scalar",
         "\"value\":-3",
         {F32(2, {1, 31}), B8(3, {4, 6, 31})},
         F32(3, {4, 6, 31})},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int t = 0; t < 3; t++)
            vc_check_node(cases[i].op, 2, cases[i].in, cases[i].out, cases[i].attrs, dts[t],
                          tols[t], "where_s");
}

/* where(a OP b, a, b) for tensor comparisons, broadcast both ways; the comparison alone (a bool
 * graph output) in fp32, where rounding cannot flip it. */
static void test_compare(void **state)
{
    (void)state;
    static const char *ops[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    static const struct {
        const char *a, *b, *out;
        TuSpec ta, tb, tout;
    } sh[] = {
        {"[3,5,67]", "[3,5,67]", "[3,5,67]", F32(3, {3, 5, 67}), F32(3, {3, 5, 67}),
         B8(3, {3, 5, 67})},
        {"[4,1,9]", "[1,3,1]", "[4,3,9]", F32(3, {4, 1, 9}), F32(3, {1, 3, 1}), B8(3, {4, 3, 9})},
        {"[2,1,5,1,7]", "[3,1,6,1]", "[2,3,5,6,7]", F32(5, {2, 1, 5, 1, 7}), F32(4, {3, 1, 6, 1}),
         B8(5, {2, 3, 5, 6, 7})},
    };
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
            char g[4096], aten[32];
            /* clang-format off */
            snprintf(g, sizeof g,
                     "{\"graph_inputs\":[" T("a", "%s") "," T("b", "%s") "],\"graph_outputs\":["
                     T("o", "%s") "],\"nodes\":["
                     NODE("c", "aten.%s.Tensor", T("a", "%s") "," T("b", "%s"), TB("m", "%s"), "")
                     "," NODE("w", "aten.where.self", TB("m", "%s") "," T("a", "%s") "," T("b", "%s"),
                              T("o", "%s"), "") "]}",
                     sh[i].a, sh[i].b, sh[i].out, ops[o], sh[i].a, sh[i].b, sh[i].out, sh[i].out,
                     sh[i].a, sh[i].b, sh[i].out);
            /* clang-format on */
            for (int t = 0; t < 3; t++)
                vc_check_json(g, dts[t], tols[t], "binary");
            snprintf(aten, sizeof aten, "aten.%s.Tensor", ops[o]);
            vc_check_node(aten, 2, S(sh[i].ta, sh[i].tb), sh[i].tout, "", "fp32", 0, "binary");
        }
}

/* Scalar comparisons (thresholds exactly representable), through where(x OP s, x, s). */
static void test_compare_scalar(void **state)
{
    (void)state;
    static const char *cases[][2] = {{"eq.Scalar", "0.5"},  {"ne.Scalar", "0"},
                                     {"lt.Scalar", "0.25"}, {"le.Scalar", "-0.5"},
                                     {"gt.Tensor", "0"},    {"ge.Scalar", "0.75"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char g[4096];
        /* clang-format off */
        snprintf(g, sizeof g,
                 "{\"graph_inputs\":[" T("x", "[6,7,37]") "],\"graph_outputs\":[" T("o", "[6,7,37]")
                 "],\"nodes\":["
                 NODE("c", "aten.%s", T("x", "[6,7,37]"), TB("m", "[6,7,37]"), "\"other\":%s")
                 "," NODE("w", "aten.where.ScalarOther", TB("m", "[6,7,37]") "," T("x", "[6,7,37]"),
                          T("o", "[6,7,37]"), "\"other\":%s") "]}",
                 cases[c][0], cases[c][1], cases[c][1]);
        /* clang-format on */
        for (int t = 0; t < 3; t++)
            vc_check_json(g, dts[t], tols[t], "binary_s");
        char aten[32], attrs[32];
        snprintf(aten, sizeof aten, "aten.%s", cases[c][0]);
        snprintf(attrs, sizeof attrs, "\"other\":%s", cases[c][1]);
        vc_check_node(aten, 1, S(F32(3, {6, 7, 37})), B8(3, {6, 7, 37}), attrs, "fp32", 0,
                      "binary_s");
    }
}

/* Comparisons that cannot flip in any storage: x == relu(x) (true exactly where x >= 0), and
 * logical and/or/not of bool tensors, broadcast; bool graph outputs compared bit for bit. */
static void test_compare_exact(void **state)
{
    (void)state;
    /* clang-format off */
    const char *g2 =
        "{\"graph_inputs\":[" T("x", "[5,4,33]") "],\"graph_outputs\":["
        TB("e", "[5,4,33]") "," TB("n", "[5,4,33]") "],\"nodes\":["
        NODE("r", "aten.relu.default", T("x", "[5,4,33]"), T("rx", "[5,4,33]"), "")
        "," NODE("eq", "aten.eq.Tensor", T("x", "[5,4,33]") "," T("rx", "[5,4,33]"), TB("e", "[5,4,33]"), "")
        "," NODE("ne", "aten.ne.Tensor", T("rx", "[5,4,33]") "," T("x", "[5,4,33]"), TB("n", "[5,4,33]"), "") "]}";
    /* clang-format on */
    for (int t = 0; t < 3; t++)
        vc_check_json(g2, dts[t], 0, "binary");
    static const struct {
        const char *op;
        int nin;
        TuSpec in[2], out;
        const char *stem;
    } cases[] = {
        {"aten.logical_and.default",
         2,
         {B8(3, {4, 1, 9}), B8(3, {1, 3, 9})},
         B8(3, {4, 3, 9}),
         "binary"},
        {"aten.logical_or.default", 2, {B8(2, {7, 41}), B8(1, {41})}, B8(2, {7, 41}), "binary"},
        {"aten.bitwise_and.Tensor", 2, {B8(2, {7, 41}), B8(2, {7, 41})}, B8(2, {7, 41}), "binary"},
        {"aten.logical_not.default", 1, {B8(4, {2, 3, 5, 7})}, B8(4, {2, 3, 5, 7}), "binary_s"},
        {"aten.eq.Tensor", 2, {B8(2, {6, 9}), B8(2, {1, 9})}, B8(2, {6, 9}), "binary"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int t = 0; t < 3; t++)
            vc_check_node(cases[i].op, cases[i].nin, cases[i].in, cases[i].out, "", dts[t], 0,
                          cases[i].stem);
}

int main(void)
{
    /* the hand-written families themselves: chains like abs -> add -> pow would otherwise become
     * one generated kernel (test_vk_gen.c) */
    vc_set_no_fuse("fuse-elementwise");
    return TU_TESTS(test_binary_tensor_tensor, test_binary_scalar, test_div_pow_positive,
                    test_add_relu, test_silu_mul, test_reduce, test_softmax, test_masked_softmax,
                    test_where, test_where_scalar_masked_fill, test_compare, test_compare_scalar,
                    test_compare_exact);
}
