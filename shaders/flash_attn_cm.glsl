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
// Spec: 0 = workgroup size (FA_WG = 32 * FA_SG), 1 = D (a multiple of 16, at most FA_DMAX),
// 2 = SAFE, 3 = MVEC.
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
#define FA_WG (32u * FA_SG)
#define FA_BR (16u * FA_SG)
// keys per tile: 64 on the tensor cores; 32 in the emulation, to stay under lavapipe's 32 KB of
// shared memory (the code is the same for both)
#if CM_EMULATE
#define FA_BC 32u
#else
#define FA_BC 64u
#endif
#define FA_NF (FA_BC / 16u)   // S fragments per subgroup and tile
#define FA_CPI (FA_BC / 2u)   // columns of a tile per invocation
#define FA_SV (FA_BC * FA_DMAX / 8u / FA_WG) // 16-byte vectors of a K or V tile per invocation
#define FA_DMAX 128u
#define FA_DF (FA_DMAX / 16u)
#define QSTR (FA_DMAX + 8u) // row strides of Q, K and V in shared memory (halves)
#define SSTR (FA_BC + 4u)   // of S (floats)
#define PSTR (FA_BC + 8u)   // of P (halves)

layout(local_size_x_id = 0) in; // FA_WG (lowering)
layout(constant_id = 1) const uint D = 64;
layout(constant_id = 2) const uint SAFE = 0;
// MVEC 1: the mask is read as 16-byte vectors in the key-range scan (its keys contiguous, T, its
// row, head and batch strides multiples of 8 elements, its binding offset 16-byte aligned)
layout(constant_id = 3) const uint MVEC = 0;
const uint DF = D / 16u;

// K and V as 16-byte vectors (the lowering proves their strides multiples of 8 elements and
// their bindings aligned)
layout(std430, set = 0, binding = 0) readonly buffer KB4 { uvec4 kc4[]; };
layout(std430, set = 0, binding = 1) readonly buffer VB4 { uvec4 vc4[]; };
layout(std430, set = 0, binding = 2) readonly buffer QB { STORAGE_T q[]; };
layout(std430, set = 0, binding = 3) readonly buffer MB { STORAGE_T msk[]; };
layout(std430, set = 0, binding = 3) readonly buffer MB4 { uvec4 msk4[]; };
layout(std430, set = 0, binding = 4) writeonly buffer OB { STORAGE_T o[]; };
layout(push_constant) uniform Push {
    uint T; uint Tq; uint Hq; uint rep_k; uint rep_v; float scale;
    uint k_sb; uint k_sh; uint k_st; uint v_sb; uint v_sh; uint v_st;
    uint q_sb; uint q_sh; uint q_st; uint m_sb; uint m_sh; uint m_sq; uint m_st;
    uint o_sb; uint o_sh; uint o_st;
    uint nqb; // query blocks per (batch, head)
} pc;

#define NINF uintBitsToFloat(0xff800000u)
#if defined(STORAGE_BF16)
#define NINF16 0xff80u // -inf's 16 bits in the storage type
#else
#define NINF16 0xfc00u
#endif
#define NINF2 (NINF16 | (NINF16 << 16))

shared float16_t sh_q[FA_BR * QSTR];
shared float16_t sh_kv[FA_BC * QSTR]; // the tile of K, then (pass 2, once S is done) of V
shared float sh_s[FA_BR * SSTR];
shared float16_t sh_p[FA_BR * PSTR];

// The tile's 16-byte vectors into registers (vector i of this invocation: tile row
// (lid + i * FA_WG) / (D / 8), zeros past T), then from the registers into sh_kv.
#define FA_LOAD_TILE(reg, src4, base, st, t0)                                                   \
    [[unroll]] for (uint i = 0u; i < FA_SV; i++) {                                              \
        uint e = gl_LocalInvocationID.x + i * FA_WG, tr = e / (D / 8u), t = (t0) + tr;        \
        reg[i] = e < FA_BC * D / 8u && t < pc.T ? src4[((base) + t * (st)) / 8u + e % (D / 8u)] \
                                                : uvec4(0u);                                   \
    }
#define FA_PUT_TILE(reg)                                                                        \
    [[unroll]] for (uint i = 0u; i < FA_SV; i++) {                                              \
        uint e = gl_LocalInvocationID.x + i * FA_WG, tr = e / (D / 8u), d = (e % (D / 8u)) * 8u; \
        if (e < FA_BC * D / 8u) fa_put8(tr * QSTR + d, reg[i]);                               \
    }

// 8 storage elements (a 16-byte vector) -> sh_kv[at ..] as float16_t
void fa_put8(uint at, uvec4 w)
{
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
#if defined(STORAGE_BF16)
        vec2 f = vec2(uintBitsToFloat(w[i] << 16), uintBitsToFloat(w[i] & 0xffff0000u));
#else
        vec2 f = unpackHalf2x16(w[i]);
#endif
        sh_kv[at + 2u * i] = float16_t(f.x);
        sh_kv[at + 2u * i + 1u] = float16_t(f.y);
    }
}

// a mask element from its 16 storage bits
float fa_bits(uint bits)
{
#if defined(STORAGE_BF16)
    return uintBitsToFloat(bits << 16);
#else
    return unpackHalf2x16(bits).x;
#endif
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
    for (uint e = lid; e < FA_BR * D; e += FA_WG) {
        uint rr = e / D, d = e % D, qr = q0 + rr;
        sh_q[rr * QSTR + d] = float16_t(qr < pc.Tq ? S_LOAD(q[qbase + qr * pc.q_st + d]) : 0.0);
    }

    // the block's key range: one past its rows' last valid key. The whole [rows, T] mask of the
    // block is read without an early exit (each invocation's loads are independent, so they are
    // in flight together: a scan that stops at the first valid key from the end chains one
    // load's latency per step), as 16-byte vectors where the lowering proved them aligned (MVEC)
    uint rend = 0u;
    if (pc.m_st == 0u) {
        if (lid < FA_BR && q0 + lid < pc.Tq && fa_mask(mbase, q0 + lid, 0u) != NINF) rend = pc.T;
    } else if (MVEC == 1u) {
        const uint TV = pc.T / 8u, n = FA_BR * TV;
        for (uint e0 = lid; e0 < n; e0 += 16u * FA_WG) {
            uvec4 v[16];
            [[unroll]] for (uint j = 0u; j < 16u; j++) {
                uint e = e0 + j * FA_WG, qr = q0 + e / TV;
                v[j] = e < n && qr < pc.Tq ? msk4[(mbase + qr * pc.m_sq) / 8u + e % TV]
                                           : uvec4(NINF2);
            }
            [[unroll]] for (uint j = 0u; j < 16u; j++) {
                uint e = e0 + j * FA_WG;
                [[unroll]] for (uint h2 = 0u; h2 < 8u; h2++) {
                    uint w = v[j][h2 / 2u], bits = (h2 & 1u) == 0u ? w & 0xffffu : w >> 16;
                    if (bits != NINF16) rend = max(rend, (e % TV) * 8u + h2 + 1u);
                }
            }
        }
    } else {
        const uint n = FA_BR * pc.T;
        for (uint e0 = lid; e0 < n; e0 += 8u * FA_WG) {
            float v[8];
            [[unroll]] for (uint j = 0u; j < 8u; j++) {
                uint e = e0 + j * FA_WG, qr = q0 + e / pc.T;
                v[j] = e < n && qr < pc.Tq ? fa_mask(mbase, qr, e % pc.T) : NINF;
            }
            [[unroll]] for (uint j = 0u; j < 8u; j++)
                if (v[j] != NINF) rend = max(rend, (e0 + j * FA_WG) % pc.T + 1u);
        }
    }
    sh_s[lid] = float(rend); // exact: T < 2^24 (lowering)
    barrier();
    uint kend = 0u;
    for (uint i = 0u; i < FA_WG; i++) kend = max(kend, uint(sh_s[i]));

    CM_FRAG(fq, FA_DF);
    CM_FRAG(fk, 1);
    CM_FRAG(fp, 1);
    CM_FRAG(fv, 1);
    CM_ACC(sacc, FA_NF);
    CM_ACC(oacc, FA_DF);
    [[unroll]] for (uint n = 0u; n < FA_DF; n++) if (n < DF) CM_ZERO(oacc[n]);
    float m = NINF, l = 0.0;
#define SH_A sh_q
    // the subgroup's Q rows as A fragments, loaded once (the barrier above ordered the staging)
    [[unroll]] for (uint kk = 0u; kk < FA_DF; kk++)
        if (kk < DF) CM_LOAD_A(fq[kk], sg * 16u * QSTR + kk * 16u, QSTR, false);
#undef SH_A
    uvec4 kreg[FA_SV], vreg[FA_SV];

    for (uint pass_ = 0u; pass_ < 2u; pass_++) {
        for (uint t0 = 0u; t0 < kend; t0 += FA_BC) {
            // this invocation's mask values of the tile and its vectors of the K and V tiles
            // (V in pass 2; V reaches shared memory once S is done), all loaded
            // before the first barrier so their latencies overlap (-inf past kend, rows past Tq)
            float mv[FA_CPI];
            const uint tm = t0 + half_ * FA_CPI;
            if (MVEC == 1u && pc.m_st == 1u) {
                [[unroll]] for (uint v8 = 0u; v8 < FA_CPI / 8u; v8++) {
                    uint t8 = tm + v8 * 8u;
                    uvec4 w = row_ok && t8 < kend ? msk4[(mbase + r * pc.m_sq + t8) / 8u]
                                                  : uvec4(NINF2);
                    [[unroll]] for (uint c = 0u; c < 8u; c++) {
                        uint x = w[c / 2u], bits = (c & 1u) == 0u ? x & 0xffffu : x >> 16;
                        mv[v8 * 8u + c] = t8 + c < kend ? fa_bits(bits) : NINF;
                    }
                }
            } else {
                [[unroll]] for (uint c = 0u; c < FA_CPI; c++)
                    mv[c] = row_ok && tm + c < kend ? fa_mask(mbase, r, tm + c) : NINF;
            }
            FA_LOAD_TILE(kreg, kc4, kbase, pc.k_st, t0)
            if (pass_ == 1u) FA_LOAD_TILE(vreg, vc4, vbase, pc.v_st, t0)
            barrier(); // the previous tile's readers are done (and, first, the Q block is staged)
            FA_PUT_TILE(kreg)
            barrier();
            // S = Q K^T for the subgroup's 16 rows: A = Q row-major, B (d, key) = K column-major
#define SH_A sh_q
#define SH_B sh_kv
            [[unroll]] for (uint j = 0u; j < FA_NF; j++) CM_ZERO(sacc[j]);
            [[unroll]] for (uint kk = 0u; kk < FA_DF; kk++) {
                if (kk < DF) {
                    [[unroll]] for (uint j = 0u; j < FA_NF; j++) {
                        CM_LOAD_B(fk[0], j * 16u * QSTR + kk * 16u, QSTR, true);
                        CM_MMA(sacc[j], fq[kk], fk[0]);
                    }
                }
            }
#undef SH_A
#undef SH_B
            [[unroll]] for (uint j = 0u; j < FA_NF; j++)
                CM_STORE(sacc[j], sh_s, sg * 16u * SSTR + j * 16u, SSTR);
            barrier(); // S is in shared memory, and every subgroup is done with the K tile
            if (pass_ == 1u) FA_PUT_TILE(vreg)
            // scale, mask, max (pass 1) or P and its sum (pass 2)
            float sv[FA_CPI];
            [[unroll]] for (uint c = 0u; c < FA_CPI; c++)
                sv[c] = mv[c] == NINF ? NINF : sh_s[pr * SSTR + half_ * FA_CPI + c] * pc.scale + mv[c];
            if (pass_ == 0u) {
                [[unroll]] for (uint c = 0u; c < FA_CPI; c++) m = max(m, sv[c]);
                continue;
            }
            [[unroll]] for (uint c = 0u; c < FA_CPI; c++) {
                float p = m == NINF || sv[c] == NINF ? 0.0 : exp(sv[c] - m);
                l += p;
                sh_p[pr * PSTR + half_ * FA_CPI + c] = float16_t(p);
            }
            barrier(); // P and the V tile are in shared memory
            // O += P V: A = P row-major (16 rows x FA_BC keys), B (key, d) = V row-major
#define SH_A sh_p
#define SH_B sh_kv
            [[unroll]] for (uint kk = 0u; kk < FA_NF; kk++) {
                CM_LOAD_A(fp[0], sg * 16u * PSTR + kk * 16u, PSTR, false);
                [[unroll]] for (uint n = 0u; n < FA_DF; n++) {
                    if (n < DF) {
                        CM_LOAD_B(fv[0], kk * 16u * QSTR + n * 16u, QSTR, false);
                        CM_MMA(oacc[n], fp[0], fv[0]);
                    }
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
