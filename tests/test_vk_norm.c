/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * norm and rope kernels on Vulkan against the CPU reference, in f32, f16 and bf16:
 * - rmsnorm: the fused pow/mean/add-eps/rsqrt/mul/mul chain as the qwen2 exporter writes it
 *   (weight multiply in both operand orders), row lengths 1, 33, 1000 and several rows;
 * - layernorm with and without weight and bias, rows of 1, 33, 1000 and 2500, default eps; the row
 *   in registers (ln.regs) and in three passes;
 * - batchnorm (eval) with and without affine parameters on 4-D inputs whose channels are a
 *   multiple of the channel tile (no padding), on a 3-D input, at the input with 3 channels
 *   (dense in, padded out) and after a max_pool2d (padded [N, Cpad, H, W] in and out); the
 *   padded cases need the depad (and pool2d) families and are skipped without them;
 * - rope: the fused 7-op chain with decode [1,H,1,D] and prefill [1,H,S,D] shapes, D = 16 and
 *   64, cos/sin broadcast over heads ([1,1,S,D] and [S,D]), operands in either order;
 * - rope_cache: rope stored into a KV cache by index_copy in one kernel: decode and prefill
 *   positions, D 16..128, caches of 1..64 slots, the last slots (arange positions), repeated
 *   positions (the last wins), in place (mode 1) and not (mode 0, every element of out), dim -2,
 *   and switched off (--no-fuse rope_cache: the rope and index_copy kernels). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/ir_json.h"
#include "compiler/lower/kernels.h"
#include "compiler/pass.h"
#include "tests/kernel_check.h"
#include "tests/vk_check.h"

static const char *dts[] = {"fp32", "fp16", "bf16"};
static const double tols[] = {VC_TOL_F32, VC_TOL_F16, VC_TOL_BF16};

static void check_all_dtypes(const char *json, const char *stem)
{
    for (int t = 0; t < 3; t++)
        vc_check_json(json, dts[t], tols[t], stem);
}

/* ---- rmsnorm ---------------------------------------------------------------------------- */

/* The exporter's node sequence (tests/models/qwen2_tiny/decode.json): x of shape `shp`, last dim
 * n, weight "norm.weight" [n]; weight_first: mul(w, xn) as in qwen2, else mul(xn, w). */
static void rms_graph(char *b, size_t cap, const char *shp, const char *rshp, int n,
                      bool weight_first)
{
    char w[64], mul2[256];
    snprintf(w, sizeof w, "{\"name\":\"p_norm_weight\",\"shape\":[%d]}", n);
    snprintf(mul2, sizeof mul2,
             weight_first ? "%s,{\"name\":\"mul_1\",\"shape\":%s}"
                          : "{\"name\":\"mul_1\",\"shape\":%2$s},%1$s",
             w, shp);
    snprintf(b, cap,
             "{\"model_name\":\"rms\",\"graph_inputs\":[{\"name\":\"x\",\"shape\":%1$s}],"
             "\"graph_outputs\":[{\"name\":\"mul_2\",\"shape\":%1$s}],"
             "\"weights\":[{\"name\":\"norm.weight\",\"shape\":[%3$d]}],"
             "\"weight_name_mapping\":{\"p_norm_weight\":\"norm.weight\"},\"nodes\":["
             "{\"name\":\"pow_1\",\"op_type\":\"aten.pow.Tensor_Scalar\",\"inputs\":[{\"name\":"
             "\"x\",\"shape\":%1$s}],\"outputs\":[{\"name\":\"pow_1\",\"shape\":%1$s}],"
             "\"attrs\":{\"exponent\":2}},"
             "{\"name\":\"mean\",\"op_type\":\"aten.mean.dim\",\"inputs\":[{\"name\":\"pow_1\","
             "\"shape\":%1$s}],\"outputs\":[{\"name\":\"mean\",\"shape\":%2$s}],"
             "\"attrs\":{\"dim\":[-1],\"keepdim\":true}},"
             "{\"name\":\"add\",\"op_type\":\"aten.add.Tensor\",\"inputs\":[{\"name\":\"mean\","
             "\"shape\":%2$s}],\"outputs\":[{\"name\":\"add\",\"shape\":%2$s}],"
             "\"attrs\":{\"other\":1e-06}},"
             "{\"name\":\"rsqrt\",\"op_type\":\"aten.rsqrt.default\",\"inputs\":[{\"name\":"
             "\"add\",\"shape\":%2$s}],\"outputs\":[{\"name\":\"rsqrt\",\"shape\":%2$s}],"
             "\"attrs\":{}},"
             "{\"name\":\"mul_1\",\"op_type\":\"aten.mul.Tensor\",\"inputs\":[{\"name\":\"x\","
             "\"shape\":%1$s},{\"name\":\"rsqrt\",\"shape\":%2$s}],\"outputs\":[{\"name\":"
             "\"mul_1\",\"shape\":%1$s}],\"attrs\":{}},"
             "{\"name\":\"mul_2\",\"op_type\":\"aten.mul.Tensor\",\"inputs\":[%4$s],"
             "\"outputs\":[{\"name\":\"mul_2\",\"shape\":%1$s}],\"attrs\":{}}]}",
             shp, rshp, n, mul2);
}

static void test_rmsnorm(void **state)
{
    (void)state;
    static const struct {
        const char *shp, *rshp;
        int n;
    } cases[] = {
        {"[3,1]", "[3,1]", 1},       {"[5,33]", "[5,1]", 33},       {"[2,3,1000]", "[2,3,1]", 1000},
        {"[1,1,64]", "[1,1,1]", 64}, {"[1,7,257]", "[1,7,1]", 257},
    };
    char b[4096];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int wf = 0; wf < 2; wf++) {
            rms_graph(b, sizeof b, cases[i].shp, cases[i].rshp, cases[i].n, wf);
            check_all_dtypes(b, "rmsnorm");
        }
}

/* ---- layernorm -------------------------------------------------------------------------- */

static void layernorm_cases(void);

/* The layernorm kernel's row in registers (spec 1: elements per invocation; 0: the passes). */
static uint32_t ln_regs(int64_t n)
{
    char g[1024];
    snprintf(g, sizeof g,
             "{\"graph_inputs\":[" VC_T("x", "[3,%lld]") "],\"graph_outputs\":[" VC_T(
                 "y", "[3,%lld]") "],\"nodes\":[" VC_NODE("ln", "aten.layer_norm.default",
                                                          VC_T("x", "[3,%lld]"),
                                                          VC_T("y", "[3,%lld]"),
                                                          "\"normalized_shape\":[%lld]") "]}",
             (long long)n, (long long)n, (long long)n, (long long)n, (long long)n);
    Pipeline pipe;
    vc_compile_json(g, &pipe);
    const PlanKernel *k = &pipe.plan->kernels[0];
    assert_string_equal(k->shader, "layernorm_plain");
    assert_int_equal(k->nspec, 2);
    uint32_t e = k->spec[1];
    pipeline_free(&pipe);
    return e;
}

/* Rows of 1 to 2500 elements: in registers up to 8 per invocation (256 lanes), the three passes
 * beyond, and with ln.regs=0; the two forms sum in the same order. */
static void test_layernorm(void **state)
{
    (void)state;
    assert_int_equal(ln_regs(33), 1);   /* 64 lanes */
    assert_int_equal(ln_regs(1000), 4); /* 256 lanes, the last partial */
    assert_int_equal(ln_regs(2048), 8);
    assert_int_equal(ln_regs(2049), 0);
    vc_tune("ln.regs=0");
    assert_int_equal(ln_regs(1000), 0);
    vc_tune(NULL);
    for (int regs = 1; regs >= 0; regs--) {
        vc_tune(regs ? NULL : "ln.regs=0");
        layernorm_cases();
    }
    vc_tune(NULL);
    for (int t = 0; t < 3; t++) /* longer than registers hold */
        vc_check_node("aten.layer_norm.default", 3,
                      S(F32(2, {3, 2500}), F32(1, {2500}), F32(1, {2500})), F32(2, {3, 2500}),
                      "\"normalized_shape\":[2500]", dts[t], tols[t], "layernorm");
}

static void layernorm_cases(void)
{
    const char *a1 = "\"normalized_shape\":[33],\"eps\":1e-05";
    for (int t = 0; t < 3; t++) {
        vc_check_node("aten.layer_norm.default", 3, S(F32(2, {7, 33}), F32(1, {33}), F32(1, {33})),
                      F32(2, {7, 33}), a1, dts[t], tols[t], "layernorm");
        vc_check_node("aten.layer_norm.default", 2, S(F32(2, {7, 33}), F32(1, {33})),
                      F32(2, {7, 33}), a1, dts[t], tols[t], "layernorm_w");
        vc_check_node("aten.layer_norm.default", 1, S(F32(2, {7, 33})), F32(2, {7, 33}), a1, dts[t],
                      tols[t], "layernorm_plain");
        /* long rows, more rows than a workgroup has lanes, default eps */
        vc_check_node(
            "aten.layer_norm.default", 3, S(F32(3, {2, 40, 1000}), F32(1, {1000}), F32(1, {1000})),
            F32(3, {2, 40, 1000}), "\"normalized_shape\":[1000]", dts[t], tols[t], "layernorm");
        /* a row of one element: (x - x) * rstd = 0, plus the bias */
        vc_check_node("aten.layer_norm.default", 3, S(F32(2, {5, 1}), F32(1, {1}), F32(1, {1})),
                      F32(2, {5, 1}), "\"normalized_shape\":[1],\"eps\":0.001", dts[t], tols[t],
                      "layernorm");
        /* a 4-D input (support.c keeps layer norms over more than the last dim on the CPU) */
        vc_check_node("aten.layer_norm.default", 3,
                      S(F32(4, {2, 3, 4, 25}), F32(1, {25}), F32(1, {25})), F32(4, {2, 3, 4, 25}),
                      "\"normalized_shape\":[25],\"eps\":1e-06", dts[t], tols[t], "layernorm");
    }
}

/* ---- batchnorm -------------------------------------------------------------------------- */

/* batch_norm of x (shape xs, C channels) with running statistics as weights (the binder fills
 * running_var with positive values), affine or not; `pre`: an optional max_pool2d before it
 * (its output shape bs), so the batch norm reads and writes padded tensors. ext (NULL: the batch
 * norm's output y is the graph output) adds graph inputs, replaces the outputs and adds nodes
 * after it: "INPUTS|OUTPUTS|NODES". */
static void bn_graph_ext(char *b, size_t cap, const char *xs, const char *bs, int C, bool affine,
                         bool pool, double eps, const char *ext)
{
    char ws[512], map[256], ins[512], pre[512];
    const char *src = pool ? "pool" : "x";
    if (affine) {
        snprintf(ws, sizeof ws,
                 "{\"name\":\"bn.weight\",\"shape\":[%d]},{\"name\":\"bn.bias\",\"shape\":[%d]},",
                 C, C);
        snprintf(ins, sizeof ins,
                 "{\"name\":\"%s\",\"shape\":%s},{\"name\":\"p_bn_weight\",\"shape\":[%d]},"
                 "{\"name\":\"p_bn_bias\",\"shape\":[%d]},",
                 src, bs, C, C);
    } else {
        ws[0] = 0;
        snprintf(ins, sizeof ins, "{\"name\":\"%s\",\"shape\":%s},", src, bs);
    }
    snprintf(ws + strlen(ws), sizeof ws - strlen(ws),
             "{\"name\":\"bn.running_mean\",\"shape\":[%d]},{\"name\":\"bn.running_var\","
             "\"shape\":[%d]}",
             C, C);
    snprintf(ins + strlen(ins), sizeof ins - strlen(ins),
             "{\"name\":\"b_bn_running_mean\",\"shape\":[%d]},"
             "{\"name\":\"b_bn_running_var\",\"shape\":[%d]}",
             C, C);
    snprintf(map, sizeof map,
             "%s\"b_bn_running_mean\":\"bn.running_mean\",\"b_bn_running_var\":\"bn.running_var\"",
             affine ? "\"p_bn_weight\":\"bn.weight\",\"p_bn_bias\":\"bn.bias\"," : "");
    pre[0] = 0;
    if (pool)
        snprintf(pre, sizeof pre,
                 "{\"name\":\"pool\",\"op_type\":\"aten.max_pool2d.default\",\"inputs\":[{"
                 "\"name\":\"x\",\"shape\":%s}],\"outputs\":[{\"name\":\"pool\",\"shape\":%s}],"
                 "\"attrs\":{\"kernel_size\":[2,2],\"stride\":[2,2]}},",
                 xs, bs);
    /* ext: ",INPUTS" "OUTPUTS" ",NODES" */
    char ein[1024] = "", eout[1024], enodes[4096] = "";
    snprintf(eout, sizeof eout, "{\"name\":\"y\",\"shape\":%s}", bs);
    if (ext) {
        const char *p1 = strchr(ext, '|'), *p2 = p1 ? strchr(p1 + 1, '|') : NULL;
        assert_non_null(p2);
        if (p1 > ext) snprintf(ein, sizeof ein, ",%.*s", (int)(p1 - ext), ext);
        snprintf(eout, sizeof eout, "%.*s", (int)(p2 - p1 - 1), p1 + 1);
        snprintf(enodes, sizeof enodes, ",%s", p2 + 1);
    }
    snprintf(b, cap,
             "{\"model_name\":\"bn\",\"graph_inputs\":[{\"name\":\"x\",\"shape\":%s}%s],"
             "\"graph_outputs\":[%s],\"weights\":[%s],"
             "\"weight_name_mapping\":{%s},\"nodes\":[%s"
             "{\"name\":\"y\",\"op_type\":\"aten.batch_norm.default\",\"inputs\":[%s],"
             "\"outputs\":[{\"name\":\"y\",\"shape\":%s}],\"attrs\":{\"training\":false,"
             "\"momentum\":0.1,\"eps\":%g}}%s]}",
             xs, ein, eout, ws, map, pre, ins, bs, eps, enodes);
}

static void bn_graph(char *b, size_t cap, const char *xs, const char *bs, int C, bool affine,
                     bool pool)
{
    bn_graph_ext(b, cap, xs, bs, C, affine, pool, 1e-5, NULL);
}

static void test_batchnorm_dense(void **state)
{
    (void)state;
    char b[4096];
    /* 32 and 64 channels: a multiple of the channel tile, so nothing is padded */
    bn_graph(b, sizeof b, "[2,32,5,7]", "[2,32,5,7]", 32, true, false);
    check_all_dtypes(b, "batchnorm");
    bn_graph(b, sizeof b, "[1,64,3,11]", "[1,64,3,11]", 64, false, false);
    check_all_dtypes(b, "batchnorm_plain");
    /* 3-D [N, C, L] (never padded), odd sizes */
    bn_graph(b, sizeof b, "[3,5,37]", "[3,5,37]", 5, true, false);
    check_all_dtypes(b, "batchnorm");
}

static void test_batchnorm_padded(void **state)
{
    (void)state;
    /* every padded graph output gets a depad (copy family), the pool cases need pool2d too */
    if (!kernel_has_family("depad")) {
        fprintf(stderr, "padded batchnorm: no depad family in this build\n");
        skip();
    }
    char b[4096];
    /* at the input: dense [2, 3, 5, 7] in, [2, 32, 5, 7] out */
    bn_graph(b, sizeof b, "[2,3,5,7]", "[2,3,5,7]", 3, true, false);
    check_all_dtypes(b, "batchnorm");
    if (!kernel_has_family("pool2d")) {
        fprintf(stderr, "batchnorm after max_pool2d: no pool2d family in this build\n");
        skip();
    }
    /* 3 and 40 channels padded to 32 and 64: [N, Cpad, H, W] in and out */
    bn_graph(b, sizeof b, "[2,3,10,14]", "[2,3,5,7]", 3, true, true);
    check_all_dtypes(b, "batchnorm");
    bn_graph(b, sizeof b, "[1,40,6,6]", "[1,40,3,3]", 40, false, true);
    check_all_dtypes(b, "batchnorm_plain");
}

/* NPU kernels of the compiled plan (fusions on) whose shader starts with `prefix`. */
static int kernels_named(const char *json, const char *prefix)
{
    Pipeline pipe;
    vc_compile_json(json, &pipe);
    int n = 0;
    for (int k = 0; k < pipe.plan->nkernels; k++)
        n += pipe.plan->kernels[k].target == KT_NPU &&
             strncmp(pipe.plan->kernels[k].shader, prefix, strlen(prefix)) == 0;
    pipeline_free(&pipe);
    return n;
}

/* "y -> OP -> o" for bn_graph_ext: one unary node after the batch norm, shape s; y_out: the
 * batch norm's output y is a graph output too. */
static void act_ext(char *e, size_t cap, const char *op, const char *attrs, const char *s,
                    bool y_out)
{
    char yo[128] = "";
    if (y_out) snprintf(yo, sizeof yo, ",{\"name\":\"y\",\"shape\":%s}", s);
    snprintf(e, cap,
             "|{\"name\":\"o\",\"shape\":%1$s}%4$s|{\"name\":\"o\",\"op_type\":\"%2$s\","
             "\"inputs\":[{\"name\":\"y\",\"shape\":%1$s}],\"outputs\":[{\"name\":\"o\","
             "\"shape\":%1$s}],\"attrs\":{%3$s}}",
             s, op, attrs, yo);
}

/* A batch norm that cannot fold into a conv (here after the input or a pool: DenseNet's
 * pre-activation norm1 -> relu1) joins the elementwise group after it: one generated kernel, no
 * batchnorm kernel, against the CPU reference on random data and running statistics, affine or
 * not, any eps, ranks 2 to 4, channels padded (3 and 20 after a pool) or not. */
static void test_batchnorm_fused(void **state)
{
    (void)state;
    static const struct {
        const char *xs, *bs, *op, *attrs;
        int C;
        bool affine, pool;
        double eps;
    } cases[] = {
        {"[2,32,5,7]", "[2,32,5,7]", "aten.relu.default", "", 32, true, false, 1e-5},
        {"[1,64,3,11]", "[1,64,3,11]", "aten.relu.default", "", 64, false, false, 1e-3},
        {"[2,3,5,7]", "[2,3,5,7]", "aten.relu.default", "", 3, true, false, 1e-5},
        {"[2,3,10,14]", "[2,3,5,7]", "aten.relu.default", "", 3, true, true, 0.1},
        {"[1,20,6,6]", "[1,20,3,3]", "aten.relu.default", "", 20, false, true, 1e-5},
        {"[2,20,8,10]", "[2,20,4,5]", "aten.relu6.default", "", 20, true, true, 1e-5},
        {"[2,20,8,10]", "[2,20,4,5]", "aten.silu.default", "", 20, true, true, 1e-5},
        {"[3,5,37]", "[3,5,37]", "aten.hardswish.default", "", 5, true, false, 1e-5},
        {"[3,5,37]", "[3,5,37]", "aten.gelu.default", "", 5, false, false, 1e-5},
        {"[4,20]", "[4,20]", "aten.relu.default", "", 20, true, false, 1e-5}, /* BatchNorm1d */
        {"[7,3]", "[7,3]", "aten.leaky_relu.default", "\"negative_slope\":0.2", 3, false, false,
         1e-5},
    };
    char b[8192], e[1024];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].pool && !kernel_has_family("pool2d")) continue;
        act_ext(e, sizeof e, cases[i].op, cases[i].attrs, cases[i].bs, false);
        bn_graph_ext(b, sizeof b, cases[i].xs, cases[i].bs, cases[i].C, cases[i].affine,
                     cases[i].pool, cases[i].eps, e);
        assert_int_equal(kernels_named(b, "batchnorm"), 0);
        assert_int_equal(kernels_named(b, "gen_"), 1);
        check_all_dtypes(b, "gen");
    }
    if (!kernel_has_family("pool2d")) return;
    /* ResNet-v2's unit: the batch norm, a residual add, then relu */
    const char *s = "[2,20,4,5]";
    snprintf(e, sizeof e,
             "{\"name\":\"r\",\"shape\":%1$s}|{\"name\":\"o\",\"shape\":%1$s}|"
             "{\"name\":\"a\",\"op_type\":\"aten.add.Tensor\",\"inputs\":[{\"name\":\"y\","
             "\"shape\":%1$s},{\"name\":\"r\",\"shape\":%1$s}],\"outputs\":[{\"name\":\"a\","
             "\"shape\":%1$s}],\"attrs\":{}},{\"name\":\"o\",\"op_type\":\"aten.relu.default\","
             "\"inputs\":[{\"name\":\"a\",\"shape\":%1$s}],\"outputs\":[{\"name\":\"o\","
             "\"shape\":%1$s}],\"attrs\":{}}",
             s);
    bn_graph_ext(b, sizeof b, "[2,20,8,10]", s, 20, true, true, 1e-5, e);
    assert_int_equal(kernels_named(b, "batchnorm"), 0);
    check_all_dtypes(b, "gen");
    /* switched off, the batch norm and the relu are their own kernels again */
    act_ext(e, sizeof e, "aten.relu.default", "", s, false);
    bn_graph_ext(b, sizeof b, "[2,20,8,10]", s, 20, true, true, 1e-5, e);
    vc_set_no_fuse("elementwise");
    assert_int_equal(kernels_named(b, "batchnorm"), 1);
    check_all_dtypes(b, "batchnorm");
    check_all_dtypes(b, "unary");
    vc_set_no_fuse(NULL);
    /* the batch norm's output read elsewhere too (a graph output): it keeps its own kernel */
    act_ext(e, sizeof e, "aten.relu.default", "", s, true);
    bn_graph_ext(b, sizeof b, "[2,20,8,10]", s, 20, true, true, 1e-5, e);
    assert_int_equal(kernels_named(b, "batchnorm"), 1);
    check_all_dtypes(b, "batchnorm");
}

/* ---- rope ------------------------------------------------------------------------------- */

/* The exporter's chain (qwen2_tiny decode/prefill): x [1,H,S,D], cos/sin of shape cshp;
 * swapped: cos*x, sin*cat and add(mul_4, mul_3) instead. ext (NULL: the rope output is the graph
 * output) adds graph inputs, replaces the outputs and adds nodes: "INPUTS|OUTPUTS|NODES". */
static void rope_graph_ext(char *b, size_t cap, int H, int S, int D, const char *cshp, bool swapped,
                           const char *ext)
{
    char xs[64], hs[64], t1[128], t2[128], a1[512], a2[512], add[256];
    snprintf(xs, sizeof xs, "[1,%d,%d,%d]", H, S, D);
    snprintf(hs, sizeof hs, "[1,%d,%d,%d]", H, S, D / 2);
    snprintf(t1, sizeof t1, "{\"name\":\"x\",\"shape\":%s}", xs);
    snprintf(t2, sizeof t2, "{\"name\":\"cat_1\",\"shape\":%s}", xs);
    char c[96], s[96];
    snprintf(c, sizeof c, "{\"name\":\"cos\",\"shape\":%s}", cshp);
    snprintf(s, sizeof s, "{\"name\":\"sin\",\"shape\":%s}", cshp);
    snprintf(a1, sizeof a1, "%s,%s", swapped ? c : t1, swapped ? t1 : c);
    snprintf(a2, sizeof a2, "%s,%s", swapped ? s : t2, swapped ? t2 : s);
    /* ext: ",INPUTS" "OUTPUTS" ",NODES" */
    char ein[4096] = "", eout[4096], enodes[4096] = "";
    snprintf(eout, sizeof eout, "{\"name\":\"add_1\",\"shape\":%s}", xs);
    if (ext) {
        const char *p1 = strchr(ext, '|'), *p2 = p1 ? strchr(p1 + 1, '|') : NULL;
        assert_non_null(p2);
        snprintf(ein, sizeof ein, ",%.*s", (int)(p1 - ext), ext);
        snprintf(eout, sizeof eout, "%.*s", (int)(p2 - p1 - 1), p1 + 1);
        snprintf(enodes, sizeof enodes, ",%s", p2 + 1);
    }
    snprintf(add, sizeof add,
             swapped ? "{\"name\":\"mul_4\",\"shape\":%1$s},{\"name\":\"mul_3\",\"shape\":%1$s}"
                     : "{\"name\":\"mul_3\",\"shape\":%1$s},{\"name\":\"mul_4\",\"shape\":%1$s}",
             xs);
    snprintf(b, cap,
             "{\"model_name\":\"rope\",\"graph_inputs\":[%1$s,%2$s,%3$s%10$s],"
             "\"graph_outputs\":[%11$s],\"nodes\":["
             "{\"name\":\"mul_3\",\"op_type\":\"aten.mul.Tensor\",\"inputs\":[%6$s],"
             "\"outputs\":[{\"name\":\"mul_3\",\"shape\":%4$s}],\"attrs\":{}},"
             "{\"name\":\"slice_1\",\"op_type\":\"aten.slice.Tensor\",\"inputs\":[%1$s],"
             "\"outputs\":[{\"name\":\"slice_1\",\"shape\":%5$s}],\"attrs\":{\"dim\":3,"
             "\"start\":%9$d,\"end\":9223372036854775807}},"
             "{\"name\":\"neg\",\"op_type\":\"aten.neg.default\",\"inputs\":[{\"name\":"
             "\"slice_1\",\"shape\":%5$s}],\"outputs\":[{\"name\":\"neg\",\"shape\":%5$s}],"
             "\"attrs\":{}},"
             "{\"name\":\"slice_2\",\"op_type\":\"aten.slice.Tensor\",\"inputs\":[%1$s],"
             "\"outputs\":[{\"name\":\"slice_2\",\"shape\":%5$s}],\"attrs\":{\"dim\":3,"
             "\"start\":0,\"end\":%9$d}},"
             "{\"name\":\"cat_1\",\"op_type\":\"aten.cat.default\",\"inputs\":[{\"name\":"
             "\"neg\",\"shape\":%5$s},{\"name\":\"slice_2\",\"shape\":%5$s}],\"outputs\":["
             "{\"name\":\"cat_1\",\"shape\":%4$s}],\"attrs\":{\"_tensor_list_sizes\":[2],"
             "\"dim\":-1}},"
             "{\"name\":\"mul_4\",\"op_type\":\"aten.mul.Tensor\",\"inputs\":[%7$s],"
             "\"outputs\":[{\"name\":\"mul_4\",\"shape\":%4$s}],\"attrs\":{}},"
             "{\"name\":\"add_1\",\"op_type\":\"aten.add.Tensor\",\"inputs\":[%8$s],"
             "\"outputs\":[{\"name\":\"add_1\",\"shape\":%4$s}],\"attrs\":{}}%12$s]}",
             t1, c, s, xs, hs, a1, a2, add, D / 2, ein, eout, enodes);
}

static void rope_graph(char *b, size_t cap, int H, int S, int D, const char *cshp, bool swapped)
{
    rope_graph_ext(b, cap, H, S, D, cshp, swapped, NULL);
}

static void test_rope(void **state)
{
    (void)state;
    static const struct {
        int H, S, D;
    } cases[] = {{4, 1, 16}, {2, 1, 64}, {4, 7, 16}, {3, 5, 64}, {1, 33, 64}, {12, 1, 128}};
    char b[8192], cs[64];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(cs, sizeof cs, "[1,1,%d,%d]", cases[i].S, cases[i].D);
        rope_graph(b, sizeof b, cases[i].H, cases[i].S, cases[i].D, cs, false);
        check_all_dtypes(b, "rope");
    }
    /* cos/sin of rank 2 [S, D] and the operands in the other order */
    snprintf(cs, sizeof cs, "[5,16]");
    rope_graph(b, sizeof b, 3, 5, 16, cs, true);
    check_all_dtypes(b, "rope");
}

/* ---- rope_cache ------------------------------------------------------------------------- */

enum { RC_INPUT, RC_LAST, RC_COPY, RC_NEGDIM };

/* rope (as rope_graph, x [1,H,S,D]) whose output index_copy stores into the cache kv [1,H,T,D]
 * along dim 2 at pos [S]: RC_INPUT pos a graph input (random in [0, T), repeats when S > T), in
 * place; RC_LAST pos = arange(T - S, T), the last slots; RC_COPY not in place (kv is read after
 * the index_copy: a transpose of it is an output too), every out element written; RC_NEGDIM dim
 * -2. */
static void rope_cache_graph(char *b, size_t cap, int H, int S, int D, int T, const char *cshp,
                             int how)
{
    char ext[4096], kv[64], xs[64], pos[160], node[1024], tr[512] = "", trout[128] = "";
    snprintf(kv, sizeof kv, "[1,%d,%d,%d]", H, T, D);
    snprintf(xs, sizeof xs, "[1,%d,%d,%d]", H, S, D);
    snprintf(pos, sizeof pos, "{\"name\":\"pos\",\"dtype\":\"int64\",\"shape\":[%d]}", S);
    snprintf(node, sizeof node,
             "%s{\"name\":\"ic\",\"op_type\":\"aten.index_copy.default\",\"inputs\":["
             "{\"name\":\"kv\",\"shape\":%s},%s,{\"name\":\"add_1\",\"shape\":%s}],"
             "\"outputs\":[{\"name\":\"ic\",\"shape\":%s}],\"attrs\":{\"dim\":%d}}",
             "", kv, pos, xs, kv, how == RC_NEGDIM ? -2 : 2);
    if (how == RC_COPY) {
        snprintf(tr, sizeof tr,
                 ",{\"name\":\"kvt\",\"op_type\":\"aten.transpose.int\",\"inputs\":["
                 "{\"name\":\"kv\",\"shape\":%s}],\"outputs\":[{\"name\":\"kvt\","
                 "\"shape\":[1,%d,%d,%d]}],\"attrs\":{\"dim0\":1,\"dim1\":2}}",
                 kv, T, H, D);
        snprintf(trout, sizeof trout, ",{\"name\":\"kvt\",\"shape\":[1,%d,%d,%d]}", T, H, D);
    }
    char ar[512] = "";
    if (how == RC_LAST)
        snprintf(ar, sizeof ar,
                 "{\"name\":\"pos\",\"op_type\":\"aten.arange.start\",\"inputs\":[],"
                 "\"outputs\":[%s],\"attrs\":{\"start\":%d,\"end\":%d}},",
                 pos, T - S, T);
    snprintf(ext, sizeof ext,
             "{\"name\":\"kv\",\"shape\":%s}%s%s|{\"name\":\"ic\",\"shape\":%s}%s|%s%s%s", kv,
             how == RC_LAST ? "" : ",", how == RC_LAST ? "" : pos, kv, trout, ar, node, tr);
    rope_graph_ext(b, cap, H, S, D, cshp, false, ext);
}

/* The compiled plan's rope_cache kernels (fusions on) and the mode word of the first. */
static int rope_cache_kernels(const char *json, uint32_t *mode)
{
    Pipeline pipe;
    vc_compile_json(json, &pipe);
    int n = 0;
    for (int k = 0; k < pipe.plan->nkernels; k++) {
        const PlanKernel *kn = &pipe.plan->kernels[k];
        if (strcmp(kn->shader, "rope_cache") != 0) continue;
        if (n++ == 0) *mode = kn->push[18];
    }
    pipeline_free(&pipe);
    return n;
}

static void test_rope_cache(void **state)
{
    (void)state;
    static const struct {
        int H, S, D, T, how;
    } cases[] = {
        {2, 1, 16, 64, RC_INPUT},  /* qwen2_tiny decode */
        {2, 1, 128, 40, RC_INPUT}, /* qwen2.5-1.5B's kv heads */
        {3, 1, 64, 9, RC_LAST},    /* decode at the last slot */
        {1, 1, 32, 1, RC_INPUT},   /* a cache of one slot */
        {2, 8, 16, 64, RC_INPUT},  /* prefill */
        {3, 7, 16, 5, RC_INPUT},   /* more positions than slots: repeats, the last one wins */
        {2, 3, 64, 9, RC_LAST},    /* prefill into the last slots */
        {2, 1, 16, 11, RC_COPY},   /* not in place: every element of out */
        {3, 6, 32, 4, RC_COPY},    /* not in place with repeats */
        {2, 5, 16, 12, RC_NEGDIM},
    };
    char b[16384], cs[64];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int H = cases[i].H, S = cases[i].S, D = cases[i].D, T = cases[i].T, how = cases[i].how;
        snprintf(cs, sizeof cs, i % 2 ? "[%d,%d]" : "[1,1,%d,%d]", S, D);
        rope_cache_graph(b, sizeof b, H, S, D, T, cs, how);
        uint32_t mode = 99;
        assert_int_equal(rope_cache_kernels(b, &mode), 1);
        assert_int_equal(mode, how == RC_COPY ? 0 : 1);
        check_all_dtypes(b, "rope_cache");
    }
    /* switched off: today's rope and index_copy kernels, same results */
    rope_cache_graph(b, sizeof b, 2, 3, 16, 8, "[1,1,3,16]", RC_INPUT);
    vc_set_no_fuse("rope_cache");
    check_all_dtypes(b, "rope");
    check_all_dtypes(b, "index_copy");
    vc_set_no_fuse(NULL);
}

TU_MAIN(test_rmsnorm, test_layernorm, test_batchnorm_dense, test_batchnorm_padded,
        test_batchnorm_fused, test_rope, test_rope_cache)
