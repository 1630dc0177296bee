// decode_attention: out[b,h,0,:] = sum_t softmax_t(s_t) V[b,h/rep_v,t,:] with
// s_t = (q[b,h] . K[b,h/rep_k,t]) * scale + mask[b,h,t]
// for one query row, reading the KV caches [B, Hkv, T, D] directly (grouped-query heads, no
// repeat copy). Roles, pushes and the design choice: compiler/lower_attention.c.
// One workgroup per (batch, query head) walks the cache in chunks of NPU_WG positions:
//   scores: LANES invocations share one key row (coalesced reads along D), partial dots meet in
//           shared memory and are summed in a fixed order;
//   online softmax across chunks in fp32: running max m, sum l and weighted V, rescaled by
//           exp(m_old - m_new) when the max grows;
//   V: invocation (row group rg, dim d) accumulates p_t * V[t, d] for the rows of its group,
//      row groups are summed at the end.
// Positions past the last one whose mask is not -inf are not read at all: each of them would add
// exp(-inf) = 0 to the sum and 0 * V to the output (exact for finite caches).
// ATTN_SPLIT 1 (decode_attention_split.comp, flash-decoding): workgroup (b, h, s) walks only
// positions [s * chunk, min((s + 1) * chunk, T)) and writes the unnormalised partial (max m, sum l,
// weighted V[D]) in fp32 to the scratch binding; decode_attention_combine.comp merges the splits.
// ATTN_SPLIT 0 (decode_attention.comp): one workgroup per (b, h) writes the output.
// Bindings: 0 = K, 1 = V, 2 = q, 3 = mask, 4 = out (split: 4 = partials [B*Hq, nsplit, D + 2]
// float, 5 = out, bound only so the module variant follows the output's dtype; not accessed).
// Spec: 0 = workgroup size (power of two), 1 = lanes per key row (power of two, <= workgroup
// size).
#ifndef NPU_DECODE_ATTENTION_GLSL
#define NPU_DECODE_ATTENTION_GLSL
#include "common.glsl"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint LANES = 16;
layout(std430, set = 0, binding = 0) readonly buffer KB { STORAGE_T kc[]; };
layout(std430, set = 0, binding = 1) readonly buffer VB { STORAGE_T vc[]; };
layout(std430, set = 0, binding = 2) readonly buffer QB { STORAGE_T q[]; };
layout(std430, set = 0, binding = 3) readonly buffer MB { STORAGE_T msk[]; };
#if ATTN_SPLIT
layout(std430, set = 0, binding = 4) writeonly buffer PB { float partials[]; };
#else
layout(std430, set = 0, binding = 4) writeonly buffer OB { STORAGE_T o[]; };
#endif
layout(push_constant) uniform Push {
    uint T; uint D; uint Hq; uint rep_k; uint rep_v; float scale;
    uint k_sb; uint k_sh; uint k_st; uint v_sb; uint v_sh; uint v_st;
    uint q_sb; uint q_sh; uint m_sb; uint m_sh; uint m_st; uint o_sb; uint o_sh;
#if ATTN_SPLIT
    uint nsplit; uint chunk;
#endif
} pc;

#define MAXD 256   // compiler/lower_attention.c ATTN_MAX_D
#define MAXWG 256  // the largest workgroup the shared arrays hold
#define MAXPART 4096
#define NINF uintBitsToFloat(0xff800000u)

shared float qs[MAXD];
shared float part[MAXPART]; // [row][lane] partial dots of one chunk (NPU_WG * LANES <= MAXPART)
shared float red[MAXWG];    // chunk max, then the final per-thread weighted V and sums
shared float ps[MAXWG];     // the chunk's exp(s - m)
shared float vred[2 * MAXWG];
shared uint tend;

void main()
{
    uint lid = gl_LocalInvocationID.x;
    uint grp = npu_group_index();
    uint D = pc.D, T = pc.T;
#if ATTN_SPLIT
    uint split = grp % pc.nsplit;
    grp /= pc.nsplit;
    uint lo = split * pc.chunk, hi = min(T, lo + pc.chunk);
#else
    uint lo = 0, hi = T;
#endif
    uint b = grp / pc.Hq, h = grp % pc.Hq;
    uint kbase = b * pc.k_sb + (h / pc.rep_k) * pc.k_sh;
    uint vbase = b * pc.v_sb + (h / pc.rep_v) * pc.v_sh;
    uint mbase = b * pc.m_sb + h * pc.m_sh;

    for (uint d = lid; d < D; d += NPU_WG) qs[d] = S_LOAD(q[b * pc.q_sb + h * pc.q_sh + d]);
    // the end of the valid prefix: one past the last position whose mask is not -inf (a split
    // looks from its own start on, so every split skips exactly what the whole walk would)
    if (lid == 0) tend = 0;
    barrier();
    uint last = 0;
    for (uint t = lo + lid; t < T; t += NPU_WG)
        if (S_LOAD(msk[mbase + t * pc.m_st]) != NINF) last = t + 1;
    atomicMax(tend, last);
    barrier();
    uint tn = min(hi, tend);

    // V phase layout: DW consecutive dims per row group, NJ dims per invocation
    uint DW = min(D, NPU_WG), NRG = NPU_WG / DW, NJ = (D + DW - 1) / DW;
    uint d0 = lid % DW, rg = lid / DW;
    uint lane = lid % LANES, r0 = lid / LANES, RP = NPU_WG / LANES;
    float m = NINF, l = 0.0;
    float acc[2] = float[2](0.0, 0.0);

    for (uint c0 = lo; c0 < tn; c0 += NPU_WG) {
        uint n = min(NPU_WG, tn - c0);
        for (uint r = r0; r < n; r += RP) {
            uint kb = kbase + (c0 + r) * pc.k_st;
            float s = 0.0;
            for (uint d = lane; d < D; d += LANES) s += qs[d] * S_LOAD(kc[kb + d]);
            part[r * LANES + lane] = s;
        }
        barrier();
        float s = NINF;
        if (lid < n) {
            float dot = 0.0;
            for (uint i = 0; i < LANES; i++) dot += part[lid * LANES + i];
            s = dot * pc.scale + S_LOAD(msk[mbase + (c0 + lid) * pc.m_st]);
        }
        red[lid] = s;
        barrier();
        for (uint w = NPU_WG / 2; w > 0; w >>= 1) {
            if (lid < w) red[lid] = max(red[lid], red[lid + w]);
            barrier();
        }
        float mn = max(m, red[0]);
        // an all -inf prefix keeps m = -inf: nothing has weight yet, so nothing to rescale
        float alpha = mn == NINF ? 1.0 : exp(m - mn);
        ps[lid] = (lid < n && mn != NINF) ? exp(s - mn) : 0.0;
        barrier();
        if (rg < NRG) {
            float psum = 0.0;
            acc[0] *= alpha;
            acc[1] *= alpha;
            for (uint r = rg; r < n; r += NRG) {
                float p = ps[r];
                psum += p;
                uint vb = vbase + (c0 + r) * pc.v_st + d0;
                acc[0] += p * S_LOAD(vc[vb]);
                if (NJ > 1 && d0 + DW < D) acc[1] += p * S_LOAD(vc[vb + DW]);
            }
            l = l * alpha + psum;
        }
        m = mn;
        barrier(); // part, red and ps are rewritten by the next chunk
    }

    // sum the row groups in a fixed order
    vred[lid] = acc[0];
    vred[NPU_WG + lid] = acc[1];
    red[lid] = l;
    barrier();
#if ATTN_SPLIT
    // partial of split s: {m, l, acc[D]} unnormalised; an empty or all -inf split leaves
    // {-inf, 0, 0...}, which the combine weighs 0
    uint pbase = (grp * pc.nsplit + split) * (D + 2);
    if (lid == 0) {
        float sl = 0.0;
        for (uint g = 0; g < NRG; g++) sl += red[g * DW];
        partials[pbase] = m;
        partials[pbase + 1] = sl;
    }
#endif
    for (uint d = lid; d < D; d += NPU_WG) {
        uint j = d / DW, dd = d % DW;
        float sv = 0.0, sl = 0.0;
        for (uint g = 0; g < NRG; g++) {
            sv += vred[j * NPU_WG + g * DW + dd];
            sl += red[g * DW];
        }
#if ATTN_SPLIT
        partials[pbase + 2 + d] = sv;
#else
        // an all -inf row gives 0 / 0 = NaN, as the reference's exp(-inf - -inf) does
        o[b * pc.o_sb + h * pc.o_sh + d] = S_STORE(sv / sl);
#endif
    }
}

#endif
