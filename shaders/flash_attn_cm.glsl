// flash_attn_cm: multi-row attention (a prefill's) on the tensor cores, the nv-coopmat tier's
// kernel for the fused attention pattern (compiler/lower/lower_attention.c picks it over
// decode_attention where it applies):
//   out[b,h,r,:] = sum_t softmax_t(s_t) V[b,h/rep_v,t,:],
//   s_t = (q[b,h,r] . K[b,h/rep_k,t]) * scale + mask[b,h,r,t]
// reading the KV caches [B, Hkv, T, D] in place (grouped-query heads: no repeat copy).
//
// One workgroup of 4 subgroups (128 invocations) per (batch, query head, block of 16 query rows).
// The key range is walked in tiles of 64 keys, staged in shared memory as float16_t (bf16
// converted as the tensor-core matmul converts it: exact in fp16's normal range, +-inf past
// 65504, docs/kernels.md "Tiers"). Subgroup j computes the tile's scores for keys 16 j .. 16 j + 15
// (one 16x16 fp32 fragment, D / 16 MMAs) and owns the output columns of fragments j and j + 4
// (D / 16 fragments in all, so the P V work is spread over the subgroups and each keeps at most
// two accumulators). Two passes over the tiles:
//  1. S = Q K^T, scaled and masked per element, gives each row's maximum m;
//  2. S again, P = exp(S - m) in [0, 1] as float16_t, the row sum l += P in fp32, and O += P V.
// Knowing m before any P V product means the accumulators never need rescaling: GL_NV_
// cooperative_matrix (v1, the only cooperative matrix our glslc knows) gives no per-row access to
// an accumulator, and a flash-attention online softmax would otherwise take the accumulators
// through shared memory every tile. The price is the Q K^T products twice (1.5x the MMAs).
// At the end each 16x16 block of O goes through shared memory once, divided by l.
//
// Per element work (scale, mask, max, exp, sum) is by 8 invocations per row: invocation i takes
// the block's row i / 8, keys (i % 8) * 8 .. + 8 of each tile; the 8 combine their max and sum
// by subgroupShuffleXor (always inside one subgroup: lavapipe's have 8 lanes). Workgroup barriers
// separate the stages, so the shared regions never depend on how the driver maps invocations to
// subgroups, and the emulation (CM_EMULATE 1: its "subgroups" are 32-invocation slices) runs the
// same code. Each tile's K and mask loads are issued together, and the V tile's right after
// the S fragments (into the registers K came through), so their latencies overlap.
//
// The key range ends at the block's last valid position: one past the last key whose mask is not
// -inf, over the block's rows (positions past it would add exp(-inf) = 0): a causal prefill's
// early blocks do less work, and a cache longer than the prompt is not read past it. A row with
// no valid key gives 0 / 0 = NaN as the reference's softmax does, zeros under SAFE (an exported
// sdpa's, compiler/canon_sdpa.c).
//
// Shared: Q [16][D + 8], the K-then-V tile [64][D + 8] float16_t (rows padded by 16 bytes: the
// extension's alignment), S [16][64 + 4] fp32, P [16][64 + 8] float16_t: 28416 bytes with
// D = 128, under lavapipe's 32 KB, so the emulation runs the same tile.
// Spec: 0 = workgroup size (FA_WG), 1 = D (a multiple of 16, at most FA_DMAX), 2 = SAFE,
// 3 = MVEC (the mask as 16-byte vectors: its keys contiguous, T and its other strides multiples
// of 8 elements, an aligned binding). K and V are always read as 16-byte vectors (lowering proves
// their strides and bindings aligned).
// Push: abi.h FLASH_PUSH (strides in elements; 0 for a broadcast mask dimension).
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
#include "abi.h"
#include "gemm_cm.glsl"

#define FA_SG 4u                        // subgroups of 32 lanes
#define FA_WG uint(FLASH_WG)            // invocations: 32 * FA_SG
#define FA_BR uint(FLASH_ROWS)          // query rows per workgroup
#define FA_BC (16u * FA_SG)             // keys per tile: one S fragment per subgroup
#define FA_TPR (FA_WG / FA_BR)          // invocations per row: 8
#define FA_CPT (FA_BC / FA_TPR)         // keys of a tile per invocation: 8
#define FA_DMAX uint(FLASH_MAX_D)
#define FA_DF (FA_DMAX / 16u)           // O fragments at most
#define FA_OF (FA_DF / FA_SG)           // per subgroup
#define FA_SV (FA_BC * FA_DMAX / 8u / FA_WG) // 16-byte vectors of a tile per invocation
#define QSTR (FA_DMAX + 8u)             // row strides of Q and the tile in shared memory (halves)
#define SSTR (FA_BC + 4u)               // of S (floats)
#define PSTR (FA_BC + 8u)               // of P (halves)

layout(local_size_x_id = 0) in; // FA_WG (lowering)
layout(constant_id = 1) const uint D = 64;
layout(constant_id = 2) const uint SAFE = 0;
layout(constant_id = 3) const uint MVEC = 0;
// K_OFF, V_OFF, Q_OFF: where K, V and q start in their bindings, in elements (q, K and V selected
// from one packed projection); K's and V's multiples of 8 (16-byte vectors).
layout(constant_id = 4) const uint K_OFF = 0;
layout(constant_id = 5) const uint V_OFF = 0;
layout(constant_id = 6) const uint Q_OFF = 0;
const uint DF = D / 16u;

layout(std430, set = 0, binding = 0) readonly buffer KB4 { uvec4 kc4[]; };
layout(std430, set = 0, binding = 1) readonly buffer VB4 { uvec4 vc4[]; };
layout(std430, set = 0, binding = 2) readonly buffer QB { STORAGE_T q[]; };
layout(std430, set = 0, binding = 3) readonly buffer MB { STORAGE_T msk[]; };
layout(std430, set = 0, binding = 3) readonly buffer MB4 { uvec4 msk4[]; };
layout(std430, set = 0, binding = 4) writeonly buffer OB { STORAGE_T o[]; };
PUSH_BLOCK(FLASH_PUSH)

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

// max and sum over the FA_TPR invocations of a row
float fa_row_max(float x)
{
    [[unroll]] for (uint s = 1u; s < FA_TPR; s *= 2u) x = max(x, subgroupShuffleXor(x, s));
    return x;
}

float fa_row_sum(float x)
{
    [[unroll]] for (uint s = 1u; s < FA_TPR; s *= 2u) x += subgroupShuffleXor(x, s);
    return x;
}

void main()
{
    const uint lid = gl_LocalInvocationID.x, sg = CM_SUBGROUP;
    const uint wg = gl_WorkGroupID.x;
    // the last query blocks first: under a causal mask they see the most keys
    const uint qb = pc.nqb - 1u - wg % pc.nqb, bh = wg / pc.nqb;
    const uint b = bh / pc.Hq, h = bh % pc.Hq;
    const uint q0 = qb * FA_BR;
    const uint kbase = K_OFF + b * pc.k_sb + (h / pc.rep_k) * pc.k_sh;
    const uint vbase = V_OFF + b * pc.v_sb + (h / pc.rep_v) * pc.v_sh;
    const uint mbase = b * pc.m_sb + h * pc.m_sh;
    // this invocation's row of the block and its keys of every tile
    const uint pr = lid / FA_TPR, part = lid % FA_TPR, r = q0 + pr;
    const bool row_ok = r < pc.Tq;

    // Q block -> shared (rows past Tq as zeros)
    const uint qbase = Q_OFF + b * pc.q_sb + h * pc.q_sh;
    for (uint e = lid; e < FA_BR * D; e += FA_WG) {
        uint rr = e / D, d = e % D, qr = q0 + rr;
        sh_q[rr * QSTR + d] = float16_t(qr < pc.Tq ? S_LOAD(q[qbase + qr * pc.q_st + d]) : 0.0);
    }

    // the block's key range: one past its rows' last valid key. The whole [rows, T] mask of the
    // block is read without an early exit (each invocation's loads are independent, so they are
    // in flight together: a scan that stops at the first valid key from the end chains one
    // load's latency per step)
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

    CM_FRAG(fa, 1);
    CM_FRAG(fb, 1);
    CM_ACC(sacc, 1);
    CM_ACC(oacc, FA_OF);
    [[unroll]] for (uint a = 0u; a < FA_OF; a++) if (sg + a * FA_SG < DF) CM_ZERO(oacc[a]);
    float m = NINF, l = 0.0;
    uvec4 reg[FA_SV];

    for (uint pass_ = 0u; pass_ < 2u; pass_++) {
        for (uint t0 = 0u; t0 < kend; t0 += FA_BC) {
            // this invocation's mask values of the tile (-inf past kend and on rows past Tq)
            // and the K tile, loaded together
            float mv[FA_CPT];
            const uint tm = t0 + part * FA_CPT;
            if (MVEC == 1u && pc.m_st == 1u) {
                uvec4 w = row_ok && tm < kend ? msk4[(mbase + r * pc.m_sq + tm) / 8u] : uvec4(NINF2);
                [[unroll]] for (uint c = 0u; c < FA_CPT; c++) {
                    uint x = w[c / 2u], bits = (c & 1u) == 0u ? x & 0xffffu : x >> 16;
                    mv[c] = tm + c < kend ? fa_bits(bits) : NINF;
                }
            } else {
                [[unroll]] for (uint c = 0u; c < FA_CPT; c++)
                    mv[c] = row_ok && tm + c < kend ? fa_mask(mbase, r, tm + c) : NINF;
            }
            FA_LOAD_TILE(reg, kc4, kbase, pc.k_st, t0)
            barrier(); // the previous tile's readers are done (and, first, the Q block is staged)
            FA_PUT_TILE(reg)
            barrier();
            // S[:, 16 sg ..] = Q K^T: A = Q row-major, B (d, key) = K column-major
#define SH_A sh_q
#define SH_B sh_kv
            CM_ZERO(sacc[0]);
            [[unroll]] for (uint kk = 0u; kk < FA_DF; kk++) {
                if (kk < DF) {
                    CM_LOAD_A(fa[0], kk * 16u, QSTR, false);
                    CM_LOAD_B(fb[0], sg * 16u * QSTR + kk * 16u, QSTR, true);
                    CM_MMA(sacc[0], fa[0], fb[0]);
                }
            }
#undef SH_A
#undef SH_B
            CM_STORE(sacc[0], sh_s, sg * 16u, SSTR);
            if (pass_ == 1u) FA_LOAD_TILE(reg, vc4, vbase, pc.v_st, t0)
            barrier(); // S is in shared memory, and every subgroup is done with the K tile
            float sv[FA_CPT];
            [[unroll]] for (uint c = 0u; c < FA_CPT; c++)
                sv[c] = mv[c] == NINF ? NINF : sh_s[pr * SSTR + part * FA_CPT + c] * pc.scale + mv[c];
            if (pass_ == 0u) {
                [[unroll]] for (uint c = 0u; c < FA_CPT; c++) m = max(m, sv[c]);
                continue;
            }
            FA_PUT_TILE(reg)
            [[unroll]] for (uint c = 0u; c < FA_CPT; c++) {
                float p = m == NINF || sv[c] == NINF ? 0.0 : exp(sv[c] - m);
                l += p;
                sh_p[pr * PSTR + part * FA_CPT + c] = float16_t(p);
            }
            barrier(); // P and the V tile are in shared memory
            // O[:, fragment sg + 4 a] += P V: A = P row-major (16 rows x 64 keys), B (key, d) =
            // V row-major
#define SH_A sh_p
#define SH_B sh_kv
            [[unroll]] for (uint a = 0u; a < FA_OF; a++) {
                uint n = sg + a * FA_SG;
                if (n < DF) {
                    [[unroll]] for (uint kk = 0u; kk < FA_BC / 16u; kk++) {
                        CM_LOAD_A(fa[0], kk * 16u, PSTR, false);
                        CM_LOAD_B(fb[0], kk * 16u * QSTR + n * 16u, QSTR, false);
                        CM_MMA(oacc[a], fa[0], fb[0]);
                    }
                }
            }
#undef SH_A
#undef SH_B
        }
        if (pass_ == 0u) m = fa_row_max(m);
    }
    l = fa_row_sum(l);

    // out = O / l: per round a, subgroup j's fragment j + 4 a through S's shared columns
    // 16 j .. 16 j + 15; invocation i writes row i / 8, 8 of those 64 columns
    const uint obase = b * pc.o_sb + h * pc.o_sh;
    [[unroll]] for (uint a = 0u; a < FA_OF; a++) {
        barrier();
        if (sg + a * FA_SG < DF) CM_STORE(oacc[a], sh_s, sg * 16u, SSTR);
        barrier();
        const uint j = part / 2u, c0 = (part % 2u) * 8u, n = j + a * FA_SG;
        if (row_ok && n < DF) {
            [[unroll]] for (uint c = 0u; c < 8u; c++) {
                float v = sh_s[pr * SSTR + j * 16u + c0 + c];
                o[obase + r * pc.o_st + n * 16u + c0 + c] =
                    S_STORE(SAFE != 0u && l == 0.0 ? 0.0 : v / l);
            }
        }
    }
}
#endif
