/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * torchvision Swin's windowed attention as tests/models/zoo/swin exports it, on Vulkan against
 * the CPU reference of the graph as imported, in f32, f16 and bf16 (f16/bf16: flash_attn_cm's
 * emulation on the nv-coopmat tier, decode_attention on the portable one): the packed projection
 * qkv [B, N, 3C] -> reshape [B, N, 3, H, D] -> permute(2, 0, 3, 1, 4) -> select(0, i) for q, k
 * and v; q * scale (or the scores * scale) -> matmul(q, k.transpose(-2, -1)) -> + the
 * relative-position bias (a weight [H, N, N] unsqueezed to [1, H, N, N]) -> in a shifted block
 * view [B/nW, nW, H, N, N] + the shift mask (a weight [nW, N, N] unsqueezed to [1, nW, 1, N, N])
 * -> view [B, H, N, N] -> softmax -> matmul(., v) -> transpose(1, 2) -> reshape [B, N, C].
 * The plan is one attention kernel and nothing else: q, K and V read in place in qkv (bound three
 * times, fuse_attention.c select_sources), the scale a push constant (the multiply of q joins the
 * instance), the bias read through broadcast strides or, shifted, bias + mask summed at load into
 * one folded constant [B, H, N, N] (fold_terms.c; the reference runs the chain as exported), the
 * transpose after P V written by the kernel. Windows of 7x7 (N 49) and 4x4, head dims 32 and 16,
 * batches of windows B = nW (one image) and 2 nW (two). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/pass.h"
#include "compiler/plan.h"
#include "tests/vk_check.h"

static const char *dts[] = {"fp32", "fp16", "bf16"};
static const double tols[] = {VC_TOL_F32, VC_TOL_F16, VC_TOL_BF16};

typedef struct {
    int B, nW, N, H, D;
    bool shift;        /* the shift mask after the bias */
    bool scale_scores; /* the scale multiplies the scores, not q */
} Win;

/* {"name":NAME,"shape":[...]} appended to dst */
static void tensor(char *dst, size_t cap, const char *name, int rank, const int *shape)
{
    size_t n = strlen(dst);
    int k = tu_tensor_json(dst + n, cap - n, name, rank, shape);
    assert_true(k > 0 && (size_t)k < cap - n);
}

/* node `name` reading in[0..nin) (names and shapes) giving `name` of shape os */
static void node(TuGraph *j, const char *name, const char *op, int nin, const char *const *in,
                 const int *ir, const int *const *is, int orank, const int *os, const char *attrs)
{
    char ins[1024] = "", outs[256] = "";
    for (int i = 0; i < nin; i++) {
        if (i) tu_cat(ins, sizeof ins, ",");
        tensor(ins, sizeof ins, in[i], ir[i], is[i]);
    }
    tensor(outs, sizeof outs, name, orank, os);
    tu_graph_node(j, name, op, ins, outs, attrs);
}

/* one-input node */
static void node1(TuGraph *j, const char *name, const char *op, const char *in, int ir,
                  const int *is, int orank, const int *os, const char *attrs)
{
    node(j, name, op, 1, &in, &ir, &is, orank, os, attrs);
}

/* two-input node */
static void node2(TuGraph *j, const char *name, const char *op, const char *a, int ar,
                  const int *as, const char *b, int br, const int *bs, int orank, const int *os)
{
    const char *in[2] = {a, b};
    int ir[2] = {ar, br};
    const int *is[2] = {as, bs};
    node(j, name, op, 2, in, ir, is, orank, os, "");
}

/* The exporter's JSON of case w (names as torchvision's Swin exports them), into json. */
static void swin_graph(const Win *w, char *json, size_t cap)
{
    static TuGraph j;
    memset(&j, 0, sizeof j);
    int B = w->B, N = w->N, H = w->H, D = w->D, C = H * D, nW = w->nW;
    int x[] = {B, N, 3 * C}, r5[] = {B, N, 3, H, D}, p5[] = {3, B, H, N, D}, q4[] = {B, H, N, D};
    int kt[] = {B, H, D, N}, s4[] = {B, H, N, N}, b3[] = {H, N, N}, b4[] = {1, H, N, N};
    int v5[] = {B / nW, nW, H, N, N}, m3[] = {nW, N, N}, m4[] = {nW, 1, N, N};
    int m5[] = {1, nW, 1, N, N}, t4[] = {B, N, H, D}, out[] = {B, N, C};
    char at[160], bias[32], mask[32];
    tensor(j.in, sizeof j.in, "qkv", 3, x);
    tensor(j.out, sizeof j.out, "out", 3, out);
    snprintf(at, sizeof at, "[%d,%d,%d]", H, N, N);
    tu_graph_weight(&j, "bias", at);
    snprintf(bias, sizeof bias, "p_bias");
    snprintf(at, sizeof at, "[%d,%d,%d]", nW, N, N);
    if (w->shift) tu_graph_weight(&j, "mask", at);
    snprintf(mask, sizeof mask, "p_mask");
    snprintf(at, sizeof at, "\"shape\":[%d,%d,3,%d,%d]", B, N, H, D);
    node1(&j, "reshape_1", "aten.reshape.default", "qkv", 3, x, 5, r5, at);
    node1(&j, "permute_3", "aten.permute.default", "reshape_1", 5, r5, 5, p5,
          "\"dims\":[2,0,3,1,4]");
    static const char *sel[] = {"select", "select_1", "select_2"};
    for (int i = 0; i < 3; i++) {
        snprintf(at, sizeof at, "\"dim\":0,\"index\":%d", i);
        node1(&j, sel[i], "aten.select.int", "permute_3", 5, p5, 4, q4, at);
    }
    snprintf(at, sizeof at, "\"other\":%.17g", 1.0 / sqrt((double)D));
    const char *q = "select";
    if (!w->scale_scores) {
        node1(&j, "mul", "aten.mul.Tensor", "select", 4, q4, 4, q4, at);
        q = "mul";
    }
    node1(&j, "transpose", "aten.transpose.int", "select_1", 4, q4, 4, kt,
          "\"dim0\":-2,\"dim1\":-1");
    node2(&j, "matmul", "aten.matmul.default", q, 4, q4, "transpose", 4, kt, 4, s4);
    const char *s = "matmul";
    if (w->scale_scores) {
        node1(&j, "mul", "aten.mul.Tensor", "matmul", 4, s4, 4, s4, at);
        s = "mul";
    }
    node1(&j, "unsqueeze", "aten.unsqueeze.default", bias, 3, b3, 4, b4, "\"dim\":0");
    node2(&j, "add", "aten.add.Tensor", s, 4, s4, "unsqueeze", 4, b4, 4, s4);
    s = "add";
    if (w->shift) {
        snprintf(at, sizeof at, "\"size\":[%d,%d,%d,%d,%d]", B / nW, nW, H, N, N);
        node1(&j, "view_6", "aten.view.default", "add", 4, s4, 5, v5, at);
        node1(&j, "unsqueeze_4", "aten.unsqueeze.default", mask, 3, m3, 4, m4, "\"dim\":1");
        node1(&j, "unsqueeze_5", "aten.unsqueeze.default", "unsqueeze_4", 4, m4, 5, m5,
              "\"dim\":0");
        node2(&j, "add_4", "aten.add.Tensor", "view_6", 5, v5, "unsqueeze_5", 5, m5, 5, v5);
        snprintf(at, sizeof at, "\"size\":[-1,%d,%d,%d]", H, N, N);
        node1(&j, "view_7", "aten.view.default", "add_4", 5, v5, 4, s4, at);
        s = "view_7";
    }
    node1(&j, "softmax", "aten.softmax.int", s, 4, s4, 4, s4, "\"dim\":-1");
    node2(&j, "matmul_1", "aten.matmul.default", "softmax", 4, s4, "select_2", 4, q4, 4, q4);
    node1(&j, "transpose_1", "aten.transpose.int", "matmul_1", 4, q4, 4, t4,
          "\"dim0\":1,\"dim1\":2");
    snprintf(at, sizeof at, "\"shape\":[%d,%d,%d]", B, N, C);
    node1(&j, "out", "aten.reshape.default", "transpose_1", 4, t4, 3, out, at);
    tu_graph_json(&j, json, cap);
}

/* json's plan in f16 for `tier` (nv-coopmat: emulated) is one attention kernel (flash_attn_cm on
 * the nv-coopmat tier for a head dim multiple of 16) reading q, K and V in qkv (or its pack) and
 * a weight mask (folded when shifted), maybe after the pack of qkv: nothing else. */
static void check_plan(const char *json, const Win *w, PlanTier tier)
{
    CompileOptions o;
    vc_options(&o);
    o.compute = DT_F16;
    o.tier = tier;
    o.cm_emulate = tier == TIER_NV_COOPMAT;
    Pipeline p = tu_compile_json(json, &o);
    int attn = 0;
    for (int i = 0; i < p.plan->nkernels; i++) {
        const PlanKernel *k = &p.plan->kernels[i];
        if (strcmp(k->shader, "pack") == 0) continue;
        bool flash = strncmp(k->shader, "flash_attn_cm", 13) == 0;
        if (!flash && strcmp(k->shader, "decode_attention") != 0)
            fail_msg("kernel %d: %s besides the attention", i, k->shader);
        if (flash != (tier == TIER_NV_COOPMAT && w->D % 16 == 0))
            fail_msg("kernel %d: %s on tier %d for head dim %d", i, k->shader, tier, w->D);
        attn++;
        const PlanTensor *t = p.plan->tensors, *m = &t[k->args[3]];
        /* the mask: unshifted, the bias's view (the weight read through broadcast strides);
         * shifted, bias + mask folded [B, H, N, N] */
        bool ok = k->nin == 4 && k->args[0] == k->args[1] && k->args[1] == k->args[2] &&
                  t[plan_base(p.plan, k->args[3])].kind == PT_WEIGHT &&
                  m->shape[0] == (w->shift ? w->B : 1) &&
                  strcmp(t[k->args[k->nargs - 1]].name, "transpose_1") == 0;
        if (!ok)
            fail_msg("kernel %d: %d inputs, q %s K %s V %s mask %s [%lld ..] -> %s", i, k->nin,
                     t[k->args[0]].name, t[k->args[1]].name, t[k->args[2]].name, m->name,
                     (long long)m->shape[0], t[k->args[k->nargs - 1]].name);
    }
    pipeline_free(&p);
    assert_int_equal(attn, 1);
}

static void check_win(const Win *w)
{
    static char json[1 << 16];
    swin_graph(w, json, sizeof json);
    check_plan(json, w, TIER_PORTABLE);
    check_plan(json, w, TIER_NV_COOPMAT);
    for (int t = 0; t < 3; t++) {
        double e = vc_check_json(json, dts[t], tols[t], "decode_attention");
        fprintf(stderr, "  B%d nW%d N%d H%d D%d%s%s %s: rel_l2 %.3g\n", w->B, w->nW, w->N, w->H,
                w->D, w->shift ? " shifted" : "", w->scale_scores ? " scores*scale" : "", dts[t],
                e);
    }
}

/* an unshifted block: the bias broadcast over the windows, q * scale */
static void test_swin_bias(void **state)
{
    (void)state;
    static const Win w = {4, 4, 49, 3, 32, false, false};
    check_win(&w);
}

/* a shifted block, two images (B = 2 nW): bias + shift mask as one folded constant */
static void test_swin_shift(void **state)
{
    (void)state;
    static const Win cases[] = {
        {8, 4, 49, 2, 32, true, false},
        /* 4x4 windows, head dim 16, the scale on the scores */
        {8, 4, 16, 2, 16, true, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_win(&cases[i]);
}

/* switched off: the chain's own kernels again, and right */
static void test_swin_no_fuse(void **state)
{
    (void)state;
    static const Win w = {8, 4, 16, 2, 16, true, false};
    static char json[1 << 16];
    swin_graph(&w, json, sizeof json);
    vc_set_no_fuse("attention");
    double e = vc_check_json(json, "fp16", VC_TOL_F16, "masked_softmax");
    fprintf(stderr, "  --no-fuse attention f16: rel_l2 %.3g\n", e);
    vc_set_no_fuse(NULL);
}

TU_MAIN(test_swin_bias, test_swin_shift, test_swin_no_fuse)
