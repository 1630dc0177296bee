/* The nv-coopmat tier's matmul for M > 1 (shaders/matmul_cm.glsl): tensor cores for f16
 * storage, chosen by lower_matmul.c's M > 1 branch through matmul_cm_applies. lower_matmul has
 * pushed the family's words {M, N, K, b_ks, b_ns, nbatch, bdim[4], sa[4], sb[4], bias_ms,
 * bias_ns, act, alpha, beta}; this adds {mtiles, ntiles, nsplit, kchunk}, the spec constants
 * {128, BM, BN, BK, B_KMAJOR}, the stem and the grid (kc_gemm_tile picks the tiles and the K
 * split). A split writes fp32 partials [nsplit, batch*M*N] (kc_scratch) with matmul_cm_part and
 * a reduce pass (kc_append: matmul_red / matmul_red_nb) adds them up with the epilogue.
 *
 * bf16 storage keeps the SIMT kernel (shaders/matmul.glsl): our glslc has no bf16 cooperative
 * matrices, and staging bf16 as f16 overflows above 65504 (LLM activations reach that; see
 * docs/kernels.md "Tiers"). f32 keeps it too (f16 operands would lose its precision). */
#include "kernels.h"

enum { MM_RED_WG = 256 };

bool matmul_cm_applies(const KernelCtx *c, const PlanKernel *k, int64_t m, int64_t n,
                       int64_t kdim, bool bias)
{
    /* tiles of 32 rows and columns at least; only the A, B, [bias], Y bindings (an operand or
     * epilogue input this kernel does not know keeps the SIMT path) */
    return c->tier == TIER_NV_COOPMAT && kc_out(k, c->p)->storage == DT_F16 && m >= 16 &&
           n >= 16 && kdim >= 16 && k->nargs == 3 + (bias ? 1 : 0);
}

Status lower_matmul_cm(const KernelCtx *c, PlanKernel *k, int64_t m, int64_t n, int64_t kdim,
                       int64_t nbatch, bool kmajor, bool bias)
{
    KcTile t = kc_gemm_tile(m, n, kdim, nbatch, true, KC_MATMUL_TARGET);
    if (t.nsplit * nbatch * m * n > UINT32_MAX)
        return kc_error(c, "matmul kernel: the K-split partials pass 2^32 elements");
    int64_t words[] = {t.mtiles, t.ntiles, t.nsplit, t.kchunk};
    Status st = ST_OK;
    for (int i = 0; i < 4 && st == ST_OK; i++) st = kc_push_i(c, k, words[i]);
    uint32_t spec[] = {(uint32_t)t.wg, (uint32_t)t.bm, (uint32_t)t.bn, (uint32_t)t.bk,
                       kmajor ? 1u : 0u};
    for (int i = 0; i < 5 && st == ST_OK; i++) st = kc_spec(c, k, spec[i]);
    if (st != ST_OK) return st;
    kc_grid(k, t.tiles * t.nsplit, 1);
    bool emu = c->cm_emulate;
    if (t.nsplit == 1) {
        k->shader = bias ? (emu ? "matmul_cmx" : "matmul_cm") : (emu ? "matmul_cmx_nb" : "matmul_cm_nb");
        return ST_OK;
    }
    int64_t pshape[2] = {t.nsplit, nbatch * m * n};
    int part = kc_scratch(c, k, ".partials", 2, pshape, DT_F32);
    if (part < 0) return ST_BAD_INPUT;
    int out = k->args[k->nargs - 1], barg = bias ? k->args[2] : -1;
    int pargs[4] = {k->args[0], k->args[1], part, out};
    st = kc_set_args(c, k, pargs, 2, 4);
    if (st != ST_OK) return st;
    k->shader = emu ? "matmul_cmx_part" : "matmul_cm_part";
    int rargs[3] = {part, bias ? barg : out, out};
    PlanKernel *rk = kc_append(c, k, bias ? "matmul_red" : "matmul_red_nb", rargs, bias ? 2 : 1,
                               bias ? 3 : 2);
    if (!rk) return ST_BAD_INPUT;
    for (int i = 0; i < k->npush && st == ST_OK; i++) st = kc_push_u(c, rk, k->push[i]);
    if (st == ST_OK) st = kc_spec(c, rk, MM_RED_WG);
    kc_grid(rk, nbatch * m * n, MM_RED_WG);
    return st;
}
