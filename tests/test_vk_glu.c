/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * linear_glu on Vulkan against the CPU reference: silu(x Wg^T) * (x Wu^T) as one matmul over the
 * weights interleaved in runs of 16 rows with the GLU in its epilogue (shaders/matmul_glu.glsl),
 * on the portable SIMT tile (matmul_glu*), the tensor-core tiles' emulations on lavapipe
 * (matmul_cmx_glu*, matmul_cmlx_glu*: 64 and 128 tiles) and the tensor cores where the device
 * has them, and with a K split (matmul_cm*_part, then the reduce matmul_red_glu*, which pairs).
 * Odd M, F not a multiple of the tile (partial last tiles), K not a multiple of 8 (one-element
 * staging loads), with and without biases, both node and operand orders, f32, f16 and bf16,
 * buffers poisoned with NaN. Which kernels lowering picks for each case is checked by compiling
 * (test_glu_stems), so the cases cannot pass on another path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/ir_json.h"
#include "compiler/pass.h"
#include "compiler/plan.h"
#include "tests/concat_graph.h"
#include "tests/vk_check.h"

static const char *dts[] = {"fp32", "fp16", "bf16"};
static const double tols[] = {VC_TOL_F32, VC_TOL_F16, VC_TOL_BF16};

/* The cases: rows, K, F (the plan's N is 2F), and what they exercise. */
static const struct {
    int64_t rows, k, f;
} cases[] = {
    {5, 16, 16},     /* the smallest: one pair run, M under the tensor-core kernel's 16 */
    {37, 72, 48},    /* odd M; N 96: a partial second tile (SIMT 64, tensor-core 64) */
    {21, 35, 80},    /* K odd: one-element loads; N 160 */
    {130, 96, 176},  /* the 128 tile (cm.tile=128: 6 unsplit tiles take the 64 one by default),
                      * partial in M (130) and N (352) */
    {40, 1000, 32},  /* one tile, long K: split (64 tile), the GLU reduce */
    {128, 1003, 64}, /* one 128 tile, long K not a multiple of 8: split, element loads */
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

static GluSpec spec(int c, int v)
{
    return (GluSpec){.rows = cases[c].rows,
                     .k = cases[c].k,
                     .f = cases[c].f,
                     .bias = v & 1,
                     .bias_up = v & 1,
                     .up_first = v & 2,
                     .up_node_first = (v + c) & 1};
}

static void glu_check(const GluSpec *s, int t)
{
    char *json = glu_graph_json(s);
    assert_non_null(json);
    vc_check_json(json, dts[t], tols[t], s->bias ? "matmul_glu" : "matmul_glu_nb");
    free(json);
}

/* Every case in every dtype, biases and operand orders varied across them. */
static void test_glu(void **state)
{
    (void)state;
    for (int t = 0; t < 3; t++)
        for (int c = 0; c < NCASES; c++) {
            GluSpec s = spec(c, c + t);
            glu_check(&s, t);
        }
}

/* The other bias and operand order of each case, f16 and bf16 (the tensor-core tier's). */
static void test_glu_variants(void **state)
{
    (void)state;
    for (int t = 1; t < 3; t++)
        for (int c = 0; c < NCASES; c++) {
            GluSpec s = spec(c, c + t + 1);
            s.up_first = !s.up_first;
            glu_check(&s, t);
        }
}

/* The NPU kernels' stems of case c compiled for tier (emulated: cm_emulate) in bf16,
 * space-separated (but the input's pack), and the K split of the first (push word nsplit of the
 * tensor-core kernels; 1 for the SIMT one). */
static void stems_of(const GluSpec *s, PlanTier tier, bool emu, char *buf, size_t n,
                     uint32_t *nsplit)
{
    char *json = glu_graph_json(s);
    CompileOptions o;
    vc_options(&o);
    o.compute = DT_BF16;
    o.tier = tier;
    o.cm_emulate = emu;
    Pipeline p = tu_compile_json(json, &o);
    buf[0] = 0;
    *nsplit = 1;
    for (int k = 0; k < p.plan->nkernels; k++) {
        const PlanKernel *pk = &p.plan->kernels[k];
        if (strcmp(pk->shader, "pack") == 0) continue; /* x from its host form (pack-inputs) */
        if (!buf[0] && strstr(pk->shader, "_cm")) *nsplit = pk->push[pk->npush - 2];
        snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", buf[0] ? " " : "", pk->shader);
    }
    pipeline_free(&p);
    free(json);
}

static void expect_stems(const GluSpec *s, PlanTier tier, bool emu, const char *want,
                         uint32_t want_split)
{
    char got[256];
    uint32_t nsplit;
    stems_of(s, tier, emu, got, sizeof got, &nsplit);
    if (strcmp(got, want) != 0 || nsplit != want_split)
        fail_msg("rows %lld, K %lld, F %lld: kernels '%s' split %u, expected '%s' split %u",
                 (long long)s->rows, (long long)s->k, (long long)s->f, got, nsplit, want,
                 want_split);
}

/* Which kernels the cases run: no silu_mul, one matmul (or its split's two passes) for the
 * pair; Qwen2.5-1.5B's prefill-128 gate|up (M 128, K 1536, F 8960) on the 128 tile, 140 tiles,
 * split in 3 (the GLU kernels' target, 3 workgroups per SM), in 2 or none as cm.glu_target
 * asks. */
static void test_glu_stems(void **state)
{
    (void)state;
    vc_tune(NULL);
    static const char *emulated[] = {
        "matmul_glu_nb",  /* M 5: the SIMT kernel on either tier */
        "matmul_cmx_glu", /* 64 tile, bias */
        "matmul_cmx_glu_nb",
        "matmul_cmx_glu",                    /* 6 unsplit tiles of 128: the 64 tile */
        "matmul_cmx_part matmul_red_glu_nb", /* 64 tile, split */
        "matmul_cmlx_part matmul_red_glu",   /* 128 tile, split, bias */
    };
    static const uint32_t splits[] = {1, 1, 1, 1, 8, 8}; /* 32 steps of 32, 4 per split */
    for (int c = 0; c < NCASES; c++) {
        GluSpec s = spec(c, c == 1 || c == 3 || c == 5);
        expect_stems(&s, TIER_PORTABLE, false, s.bias ? "matmul_glu" : "matmul_glu_nb", 1);
        expect_stems(&s, TIER_NV_COOPMAT, true, emulated[c], splits[c]);
    }
    GluSpec q = {.rows = 128, .k = 1536, .f = 8960};
    expect_stems(&q, TIER_NV_COOPMAT, false, "matmul_cml_part matmul_red_glu_nb", 3);
    vc_tune("cm.glu_target=264");
    expect_stems(&q, TIER_NV_COOPMAT, false, "matmul_cml_part matmul_red_glu_nb", 2);
    vc_tune("cm.glu_target=132");
    expect_stems(&q, TIER_NV_COOPMAT, false, "matmul_cml_glu_nb", 1);
    /* the large tile's narrow layout (128 x 64): 280 tiles of gate|up, split in 2 */
    vc_tune("cm.tile=128");
    GluSpec c3 = spec(3, 1);
    expect_stems(&c3, TIER_NV_COOPMAT, true, "matmul_cmlx_glu", 1);
    vc_tune(NULL);
    vc_tune("cm.shape=1");
    expect_stems(&q, TIER_NV_COOPMAT, false, "matmul_cmh_part matmul_red_glu_nb", 2);
    expect_stems(&c3, TIER_NV_COOPMAT, true, "matmul_cmhx_glu", 1);
    vc_tune(NULL);
}

/* The 128-tile cases on the large tile's narrow layout (cm.shape=1, matmul_cmhx_glu*: 64
 * columns, two 32-column pairs per tile), unsplit and split, f16 and bf16. */
static void test_glu_narrow(void **state)
{
    (void)state;
    vc_tune("cm.shape=1");
    for (int t = 1; t < 3; t++) {
        GluSpec a = spec(3, t), b = spec(5, t + 1);
        glu_check(&a, t);
        glu_check(&b, t);
    }
    vc_tune(NULL);
}

/* The large tile's unsplit GLU kernel (matmul_cmlx_glu), which case 3 takes under cm.tile=128,
 * f16 and bf16, both operand orders. */
static void test_glu_large(void **state)
{
    (void)state;
    vc_tune("cm.tile=128");
    for (int t = 1; t < 3; t++) {
        GluSpec a = spec(3, t);
        glu_check(&a, t);
        a.up_first = !a.up_first;
        glu_check(&a, t);
    }
    vc_tune(NULL);
}

TU_MAIN(test_glu_stems, test_glu, test_glu_variants, test_glu_narrow, test_glu_large)
