// flash_attn_cm: multi-row attention (a prefill's) on the tensor cores, the nv-coopmat tier's
// kernel for the fused attention pattern (compiler/lower_attention.c picks it over
// decode_attention where it applies):
//   out[b,h,r,:] = sum_t softmax_t(s_t) V[b,h/rep_v,t,:],
//   s_t = (q[b,h,r] . K[b,h/rep_k,t]) * scale + mask[b,h,r,t]
// reading the KV caches [B, Hkv, T, D] in place (grouped-query heads: no repeat copy).
//
// One workgroup per (batch, query head, block of BR = 16 * FA_SG query rows); subgroup sg owns
// the block's rows 16 sg .. 16 sg + 15. The key range is walked in tiles of BC = 16 keys, staged
// in shared memory as float16_t (bf16 converted as the tensor-core matmul converts it: exact in
// fp16's normal range, +-inf past 65504, docs/kernels.md "Tiers"). Two passes over the tiles:
//  1. S = Q K^T (one 16x16 fp32 fragment per subgroup and tile, D / 16 MMAs), scaled and masked
//     per element, gives each row's maximum m;
//  2. S again, P = exp(S - m) in [0, 1] as float16_t, the row sum l += P in fp32, and
//     O += P V (D / 16 fragments of fp32 accumulators).
// Knowing m before any P V product means the accumulators never need rescaling: GL_NV_
// cooperative_matrix (v1, the only cooperative matrix our glslc knows) gives no per-row access to
// an accumulator, and a flash-attention online softmax would otherwise take the accumulators
// through shared memory every tile. The price is the Q K^T products twice (1.5x the MMAs).
// At the end each 16x16 block of O goes through shared memory once, divided by l.
//
// Per element work (scale, mask, max, exp, sum) is by invocation pairs: invocation i takes the
// block's row i / 2, columns (i % 2) * 8 .. + 8 of each 16-key tile; the pair combines its max and
// sum by subgroupShuffleXor(., 1) (a pair is always inside one subgroup). Workgroup barriers
// separate the stages, so the shared regions never depend on how the driver maps invocations to
// subgroups, and the emulation (CM_EMULATE 1: its "subgroups" are 32-invocation slices, not
// lavapipe's 8-lane subgroups) runs the same code.
//
// The key range ends at the block's last valid position: one past the last key whose mask is not
// -inf, over the block's rows (scanned first; positions past it would add exp(-inf) = 0): a causal
// prefill's early blocks do less work, and a cache longer than the prompt is not read past it.
// A row with no valid key gives 0 / 0 = NaN as the reference's softmax does, zeros under SAFE
// (an exported sdpa's, compiler/canon_sdpa.c).
//
// Shared: Q [BR][D + 8], K and V tiles [BC][D + 8] float16_t (rows padded by 16 bytes: the
// extension's alignment), S [BR][BC + 4] fp32, P [BR][BC + 8] float16_t: with D = 128 and
// FA_SG = 2, 21504 bytes (under lavapipe's 32 KB, so the emulation runs the same tile).
// Spec: 0 = workgroup size (32 * FA_SG), 1 = D (a multiple of 16, at most FA_DMAX), 2 = SAFE.
// Push: see the block below (strides in elements; 0 for a broadcast mask dimension).
// Bindings: {K, V, q, mask, out}.
#ifndef NPU_FLASH_ATTN_CM_GLSL
#define NPU_FLASH_ATTN_CM_GLSL
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require
#ifndef CM_EMULATE
#define CM_EMULATE 0
#endif
#define GEMM_SH_VEC 0
#include "common.glsl"
#include "gemm_cm.glsl"

#define FA_SG 2
#define FA_BR (16u * FA_SG)
#define FA_BC 16u
#define FA_DMAX 128u
#define FA_DF (FA_DMAX / 16u)
#define QSTR (FA_DMAX + 8u) // row strides of Q, K and V in shared memory (halves)
#define SSTR (FA_BC + 4u)   // of S (floats)
#define PSTR (FA_BC + 8u)   // of P (halves)

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint D = 64;
layout(constant_id = 2) const uint SAFE = 0;
const uint DF = D / 16u;

layout(std430, set = 0, binding = 0) readonly buffer KB { STORAGE_T kc[]; };
layout(std430, set = 0, binding = 1) readonly buffer VB { STORAGE_T vc[]; };
layout(std430, set = 0, binding = 2) readonly buffer QB { STORAGE_T q[]; };
layout(std430, set = 0, binding = 3) readonly buffer MB { STORAGE_T msk[]; };
layout(std430, set = 0, binding = 4) writeonly buffer OB { STORAGE_T o[]; };
layout(push_constant) uniform Push {
    uint T; uint Tq; uint Hq; uint rep_k; uint rep_v; float scale;
    uint k_sb; uint k_sh; uint k_st; uint v_sb; uint v_sh; uint v_st;
    uint q_sb; uint q_sh; uint q_st; uint m_sb; uint m_sh; uint m_sq; uint m_st;
    uint o_sb; uint o_sh; uint o_st;
    uint nqb; // query blocks per (batch, head)
} pc;

#define NINF uintBitsToFloat(0xff800000u)

shared float16_t sh_q[FA_BR * QSTR];
shared float16_t sh_k[FA_BC * QSTR];
shared float16_t sh_v[FA_BC * QSTR];
shared float sh_s[FA_BR * SSTR];
shared float16_t sh_p[FA_BR * PSTR];

// Stages rows t0 .. t0 + FA_BC - 1 of a cache (zeros past T) as float16_t.
#define FA_STAGE_TILE(dst, src, base, st, t0)                                                   \
    for (uint e = gl_LocalInvocationID.x; e < FA_BC * D; e += gl_WorkGroupSize.x) {            \
        uint tr = e / D, d = e % D, t = (t0) + tr;                                             \
        dst[tr * QSTR + d] = float16_t(t < pc.T ? S_LOAD(src[(base) + t * (st) + d]) : 0.0);   \
    }

float fa_mask(uint mbase, uint r, uint t)
{
    return S_LOAD(msk[mbase + r * pc.m_sq + t * pc.m_st]);
}

void main()
{
    const uint lid = gl_LocalInvocationID.x, sg = CM_SUBGROUP;
    const uint wg = gl_WorkGroupID.x;
    // the last query blocks first: under a causal mask they see the most keys
    const uint qb = pc.nqb - 1u - wg % pc.nqb, bh = wg / pc.nqb;
    const uint b = bh / pc.Hq, h = bh % pc.Hq;
    const uint q0 = qb * FA_BR;
    const uint kbase = b * pc.k_sb + (h / pc.rep_k) * pc.k_sh;
    const uint vbase = b * pc.v_sb + (h / pc.rep_v) * pc.v_sh;
    const uint mbase = b * pc.m_sb + h * pc.m_sh;
    // this invocation's row of the block and its half of every key tile
    const uint pr = lid / 2u, half_ = lid % 2u, r = q0 + pr;
    const bool row_ok = r < pc.Tq;

    // Q block -> shared (rows past Tq as zeros)
    const uint qbase = b * pc.q_sb + h * pc.q_sh;
    for (uint e = lid; e < FA_BR * D; e += gl_WorkGroupSize.x) {
        uint rr = e / D, d = e % D, qr = q0 + rr;
        sh_q[rr * QSTR + d] = float16_t(qr < pc.Tq ? S_LOAD(q[qbase + qr * pc.q_st + d]) : 0.0);
    }

    // the block's key range: one past its rows' last valid key (each pair scans its row)
    uint rend = 0u;
    if (row_ok) {
        if (pc.m_st == 0u) {
            rend = fa_mask(mbase, r, 0u) == NINF ? 0u : pc.T;
        } else {
            for (uint t = pc.T - half_; t > 0u; t -= min(t, 2u)) {
                if (fa_mask(mbase, r, t - 1u) != NINF) {
                    rend = t;
                    break;
                }
            }
        }
    }
    rend = max(rend, subgroupShuffleXor(rend, 1u));
    sh_s[lid] = float(rend); // exact: T < 2^24 (lowering)
    barrier();
    uint kend = 0u;
    for (uint i = 0u; i < gl_WorkGroupSize.x; i++) kend = max(kend, uint(sh_s[i]));

    CM_FRAG(fq, FA_DF);
    CM_FRAG(fk, 1);
    CM_FRAG(fp, 1);
    CM_FRAG(fv, 1);
    CM_ACC(sacc, 1);
    CM_ACC(oacc, FA_DF);
    [[unroll]] for (uint n = 0u; n < FA_DF; n++) if (n < DF) CM_ZERO(oacc[n]);
    float m = NINF, l = 0.0;
#define SH_A sh_q
    // the subgroup's Q rows as A fragments, loaded once (the barrier above ordered the staging)
    [[unroll]] for (uint kk = 0u; kk < FA_DF; kk++)
        if (kk < DF) CM_LOAD_A(fq[kk], sg * 16u * QSTR + kk * 16u, QSTR, false);
#undef SH_A

    for (uint pass_ = 0u; pass_ < 2u; pass_++) {
        for (uint t0 = 0u; t0 < kend; t0 += FA_BC) {
            barrier(); // the previous tile's readers are done (and, first, the Q block is staged)
            FA_STAGE_TILE(sh_k, kc, kbase, pc.k_st, t0)
            if (pass_ == 1u) FA_STAGE_TILE(sh_v, vc, vbase, pc.v_st, t0)
            barrier();
            // S = Q K^T for the subgroup's 16 rows: A = Q row-major, B (d, key) = K column-major
#define SH_A sh_q
#define SH_B sh_k
            CM_ZERO(sacc[0]);
            [[unroll]] for (uint kk = 0u; kk < FA_DF; kk++) {
                if (kk < DF) {
                    CM_LOAD_B(fk[0], kk * 16u, QSTR, true);
                    CM_MMA(sacc[0], fq[kk], fk[0]);
                }
            }
#undef SH_A
#undef SH_B
            CM_STORE(sacc[0], sh_s, sg * 16u * SSTR, SSTR);
            barrier();
            // scale, mask, max (pass 1) or P and its sum (pass 2)
            float sv[8];
            [[unroll]] for (uint c = 0u; c < 8u; c++) {
                uint col = half_ * 8u + c, t = t0 + col;
                sv[c] = row_ok && t < kend ? sh_s[pr * SSTR + col] * pc.scale +
                                                 fa_mask(mbase, r, t)
                                           : NINF;
            }
            if (pass_ == 0u) {
                [[unroll]] for (uint c = 0u; c < 8u; c++) m = max(m, sv[c]);
                continue;
            }
            [[unroll]] for (uint c = 0u; c < 8u; c++) {
                float p = m == NINF || sv[c] == NINF ? 0.0 : exp(sv[c] - m);
                l += p;
                sh_p[pr * PSTR + half_ * 8u + c] = float16_t(p);
            }
            barrier();
            // O += P V: A = P row-major (16 x 16 keys), B (key, d) = V row-major
#define SH_A sh_p
#define SH_B sh_v
            CM_LOAD_A(fp[0], sg * 16u * PSTR, PSTR, false);
            [[unroll]] for (uint n = 0u; n < FA_DF; n++) {
                if (n < DF) {
                    CM_LOAD_B(fv[0], n * 16u, QSTR, false);
                    CM_MMA(oacc[n], fp[0], fv[0]);
                }
            }
#undef SH_A
#undef SH_B
        }
        if (pass_ == 0u) m = max(m, subgroupShuffleXor(m, 1u));
    }
    l += subgroupShuffleXor(l, 1u);

    // out = O / l, one 16-column block at a time through S's shared rows
    const uint obase = b * pc.o_sb + h * pc.o_sh;
    [[unroll]] for (uint n = 0u; n < FA_DF; n++) {
        if (n < DF) {
            barrier();
            CM_STORE(oacc[n], sh_s, sg * 16u * SSTR, SSTR);
            barrier();
            if (row_ok) {
                [[unroll]] for (uint c = 0u; c < 8u; c++) {
                    uint d = n * 16u + half_ * 8u + c;
                    float v = sh_s[pr * SSTR + half_ * 8u + c];
                    o[obase + r * pc.o_st + d] = S_STORE(SAFE != 0u && l == 0.0 ? 0.0 : v / l);
                }
            }
        }
    }
}
#endif
