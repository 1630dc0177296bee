/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * nn.MultiheadAttention's chain as torchvision's ViT exports it (tests/models/zoo/vit), on Vulkan
 * against the CPU reference in f32, f16 and bf16 (f16/bf16: flash_attn_cm's emulation on the
 * nv-coopmat tier, decode_attention on the portable one): the packed projection x [L, N, 3E]
 * -> unflatten -> unsqueeze(0) -> transpose(0, -2) -> squeeze(-2) -> contiguous -> select(0, i)
 * for q, k and v -> view [L, N*H, hd] -> transpose(0, 1) -> view [N, H, L, hd] ->
 * scaled_dot_product_attention -> permute(2, 0, 1, 3) -> view [L*N, E]. Odd L (17, 65), 2 and 4
 * heads, batch 1 and 2. The permute after the attention keeps the head dim last, so it joins
 * the attention and the kernel writes [L, N, H, hd] itself: no transpose kernel for it. q's, k's
 * and v's view -> transpose(0, 1) -> view join too, and so do their selects and the unflatten,
 * unsqueeze, transpose(0, -2), squeeze and contiguous before them (fuse_patterns.c
 * select_sources): the kernel reads q, K and V in place in x through strides and offsets
 * (compiler/strided.c), x bound three times, no copy at all. A permute that moves the head dim
 * (2, 0, 3, 1) cannot be written by the kernel: its transpose kernel stays and the result is
 * still right. Switched off (--no-fuse attention) the permute and transpose_1 are kernels
 * again. */
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
    int L, N, H, hd;
    int perm[4]; /* the permute after the attention */
} Mha;

#define PUT(...) (k += snprintf(b + k, cap - (size_t)k, __VA_ARGS__))

/* one node of one input (two more for the sdpa: in2, in3 with in's shape) */
static int node(char *b, size_t cap, const char *op, const char *in, int ir, const int *is,
                const char *out, int orank, const int *os, const char *attrs, bool sdpa)
{
    int k = 0;
    PUT(",{\"name\":\"%s\",\"op_type\":\"%s\",\"inputs\":[", out, op);
    k += tu_tensor_json(b + k, cap - (size_t)k, in, ir, is);
    if (sdpa) {
        PUT(",");
        k += tu_tensor_json(b + k, cap - (size_t)k, "view_k", ir, is);
        PUT(",");
        k += tu_tensor_json(b + k, cap - (size_t)k, "view_v", ir, is);
    }
    PUT("],\"outputs\":[");
    k += tu_tensor_json(b + k, cap - (size_t)k, out, orank, os);
    PUT("],\"attrs\":{%s}}", attrs);
    return k;
}

/* The exporter's JSON of case m (names as torchvision's ViT: squeeze, select_*, view_*). */
static char *mha_graph(const Mha *m)
{
    size_t cap = 1 << 16;
    char *b = malloc(cap);
    assert_non_null(b);
    int k = 0, L = m->L, N = m->N, H = m->H, hd = m->hd, E = H * hd;
    int x[] = {L, N, 3 * E}, uf[] = {L, N, 3, E}, us[] = {1, L, N, 3, E}, tr[] = {3, L, N, 1, E};
    int sq[] = {3, L, N, E}, sel[] = {L, N, E}, v3[] = {L, N * H, hd}, t3[] = {N * H, L, hd};
    int v4[] = {N, H, L, hd}, pm[4], out[] = {L * N, E};
    for (int i = 0; i < 4; i++)
        pm[i] = v4[m->perm[i]];
    char at[128];
    PUT("{\"model_name\":\"mha\",\"graph_inputs\":[");
    k += tu_tensor_json(b + k, cap - (size_t)k, "x", 3, x);
    PUT("],\"graph_outputs\":[");
    k += tu_tensor_json(b + k, cap - (size_t)k, "out", 2, out);
    PUT("],\"nodes\":[");
    int first = k;
    snprintf(at, sizeof at, "\"dim\":-1,\"sizes\":[3,%d]", E);
    k += node(b + k, cap - (size_t)k, "aten.unflatten.int", "x", 3, x, "unflatten", 4, uf, at,
              false);
    k += node(b + k, cap - (size_t)k, "aten.unsqueeze.default", "unflatten", 4, uf, "unsqueeze", 5,
              us, "\"dim\":0", false);
    k += node(b + k, cap - (size_t)k, "aten.transpose.int", "unsqueeze", 5, us, "transpose_1", 5,
              tr, "\"dim0\":0,\"dim1\":-2", false);
    k += node(b + k, cap - (size_t)k, "aten.squeeze.dim", "transpose_1", 5, tr, "squeeze", 4, sq,
              "\"dim\":-2", false);
    k += node(b + k, cap - (size_t)k, "aten.contiguous.default", "squeeze", 4, sq, "contiguous", 4,
              sq, "", false);
    static const char *role[] = {"q", "k", "v"};
    for (int i = 0; i < 3; i++) {
        char s[32], v[32], t[32], w[32];
        snprintf(s, sizeof s, "select_%s", role[i]);
        snprintf(v, sizeof v, "view3_%s", role[i]);
        snprintf(t, sizeof t, "transpose_%s", role[i]);
        snprintf(w, sizeof w, "view_%s", role[i]);
        snprintf(at, sizeof at, "\"dim\":0,\"index\":%d", i);
        k += node(b + k, cap - (size_t)k, "aten.select.int", "contiguous", 4, sq, s, 3, sel, at,
                  false);
        snprintf(at, sizeof at, "\"size\":[%d,%d,%d]", L, N * H, hd);
        k += node(b + k, cap - (size_t)k, "aten.view.default", s, 3, sel, v, 3, v3, at, false);
        k += node(b + k, cap - (size_t)k, "aten.transpose.int", v, 3, v3, t, 3, t3,
                  "\"dim0\":0,\"dim1\":1", false);
        snprintf(at, sizeof at, "\"size\":[%d,%d,%d,%d]", N, H, L, hd);
        k += node(b + k, cap - (size_t)k, "aten.view.default", t, 3, t3, w, 4, v4, at, false);
    }
    k += node(b + k, cap - (size_t)k, "aten.scaled_dot_product_attention.default", "view_q", 4, v4,
              "sdpa", 4, v4, "", true);
    snprintf(at, sizeof at, "\"dims\":[%d,%d,%d,%d]", m->perm[0], m->perm[1], m->perm[2],
             m->perm[3]);
    k += node(b + k, cap - (size_t)k, "aten.permute.default", "sdpa", 4, v4, "permute", 4, pm, at,
              false);
    snprintf(at, sizeof at, "\"size\":[%d,%d]", L * N, E);
    k += node(b + k, cap - (size_t)k, "aten.reshape.default", "permute", 4, pm, "out", 2, out, at,
              false);
    PUT("]}");
    assert_true((size_t)k < cap - 1);
    memmove(b + first, b + first + 1, (size_t)(k - first));
    return b;
}

/* The kernels of json's plan for the nv-coopmat tier (emulated) in f16 whose stem starts with
 * `stem`; *writes_permute: whether the attention kernel's output is the permute's, *reads_x
 * whether its K, V and q are all x. */
static int count_stem(const char *json, const char *stem, bool *writes_permute, bool *reads_x)
{
    CompileOptions o;
    vc_options(&o);
    o.compute = DT_F16;
    o.tier = TIER_NV_COOPMAT;
    o.cm_emulate = true;
    Pipeline p = tu_compile_json(json, &o);
    int n = 0;
    *writes_permute = false;
    for (int i = 0; i < p.plan->nkernels; i++) {
        const PlanKernel *kk = &p.plan->kernels[i];
        n += strncmp(kk->shader, stem, strlen(stem)) == 0;
        if (!strstr(kk->shader, "flash_attn") && !strstr(kk->shader, "attention")) continue;
        *writes_permute = strcmp(p.plan->tensors[kk->args[kk->nargs - 1]].name, "permute") == 0;
        *reads_x = kk->nin == 4;
        for (int a = 0; a < 3 && *reads_x; a++)
            *reads_x = strcmp(p.plan->tensors[kk->args[a]].name, "x") == 0;
    }
    pipeline_free(&p);
    return n;
}

/* Checks case m in the three dtypes; `folds`: whether the permute joins the attention (one
 * transpose kernel, transpose_1's, in the plan) or keeps its own kernel (two). */
static void check_mha(const Mha *m, bool folds)
{
    char *g = mha_graph(m);
    bool wp, rx;
    assert_int_equal(count_stem(g, "transpose", &wp, &rx), folds ? 0 : 1);
    assert_true(wp == folds);
    /* q, K and V read in place in x: no transpose_1, no copy of a select or a chain */
    assert_true(rx);
    assert_int_equal(count_stem(g, "gen_", &wp, &rx), 0);
    assert_int_equal(count_stem(g, "slice", &wp, &rx), 0);
    assert_int_equal(count_stem(g, "copy", &wp, &rx), 0);
    for (int t = 0; t < 3; t++) {
        double e = vc_check_json(g, dts[t], tols[t], "decode_attention");
        fprintf(stderr, "  L%d N%d H%d hd%d perm %d%d%d%d %s: rel_l2 %.3g\n", m->L, m->N, m->H,
                m->hd, m->perm[0], m->perm[1], m->perm[2], m->perm[3], dts[t], e);
    }
    free(g);
}

/* ViT's permute(2, 0, 1, 3) written by the attention kernel: odd L, heads 2 and 4, batch 1, 2 */
static void test_mha_permute_folds(void **state)
{
    (void)state;
    static const Mha cases[] = {
        {17, 1, 2, 16, {2, 0, 1, 3}},
        {65, 2, 4, 16, {2, 0, 1, 3}},
        {17, 2, 2, 32, {0, 2, 1, 3}},
        /* E = 12: K and V start 12 and 24 elements in, no 16-byte vector (element loads) */
        {9, 1, 3, 4, {2, 0, 1, 3}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_mha(&cases[i], true);
}

/* a permute that moves the head dim keeps its transpose kernel, and is right */
static void test_mha_permute_stays(void **state)
{
    (void)state;
    static const Mha m = {17, 2, 2, 16, {2, 0, 3, 1}};
    check_mha(&m, false);
}

/* switched off: the attention's chain and the permute are kernels of their own again */
static void test_mha_no_fuse(void **state)
{
    (void)state;
    static const Mha m = {17, 1, 2, 16, {2, 0, 1, 3}};
    char *g = mha_graph(&m);
    vc_set_no_fuse("attention");
    Pipeline p;
    vc_compile_json_as(g, "fp16", &p);
    int tr = 0;
    for (int i = 0; i < p.plan->nkernels; i++) {
        const char *s = p.plan->kernels[i].shader;
        tr += strcmp(s, "transpose") == 0;
        assert_null(strstr(s, "attention"));
    }
    assert_int_equal(tr, 2);
    pipeline_free(&p);
    double e = vc_check_json(g, "fp16", VC_TOL_F16, "masked_softmax");
    fprintf(stderr, "  --no-fuse attention f16: rel_l2 %.3g\n", e);
    vc_set_no_fuse(NULL);
    free(g);
}

TU_MAIN(test_mha_permute_folds, test_mha_permute_stays, test_mha_no_fuse)
