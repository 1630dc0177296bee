// decode_attention: out[b,h,r,:] = sum_t softmax_t(s_t) V[b,h/rep_v,t,:] with
// s_t = (q[b,h,r] . K[b,h/rep_k,t]) * scale + mask[b,h,r,t]
// for Tq query rows r (1 in a decode step, the prompt's in a prefill), reading the KV caches
// [B, Hkv, T, D] directly (grouped-query heads, no repeat copy). Roles, pushes and the choice of
// the parameters: compiler/lower/lower_attention.c.
//
// Workgroup (b, group, row, split): the G query heads h0 .. h0 + G - 1 (h0 = group * G; G divides
// rep_k and rep_v, so they share one K head and one V head: each K/V row is read once for all of
// them) of query row r over the positions [split * chunk, min(T, (split + 1) * chunk)). Rows are
// independent workgroups (no K/V reuse across rows); the last rows come first in the grid (under
// a causal mask they see the most positions).
//  - q[G][D] of row r goes to shared memory in fp32; row r's mask from the split's start to T is
//    scanned for the end of the valid prefix (one past the last position whose mask is not -inf,
//    over the G heads): positions past it are not read (each would add exp(-inf) = 0; exact for
//    finite caches), so a split past it reads no row.
//  - Teams of L lanes (spec, a power of two <= 8: lanes of one subgroup; the Vulkan backend
//    refuses devices with subgroups under 8 lanes, and the team mapping counts on full subgroups,
//    as every driver gives a workgroup that is a multiple of its subgroup size) take one key row
//    each: lane tl owns vectors tl, tl + L, ... of
//    the row (VPL per lane): 16-byte loads (VEC 1: uvec4 = 8 f16/bf16, vec4 = 4 f32) where the
//    lowering proved every row start 16-byte aligned, else single elements (VEC 0). Per trip a
//    team issues the K and V loads of RB rows before any arithmetic; the G dot products are summed
//    across the team by subgroupShuffleXor (a butterfly: every lane of the team gets the same
//    bits). Each team keeps its own fp32 online softmax (running max m, sum l, weighted V acc per
//    head), so the trip loop has no barrier and no shared memory.
//  - Teams merge: inside a subgroup by the butterfly over the other lane bits, across subgroups
//    through shared memory in subgroup order (one head per round), always with
//    w = exp(m_part - max m) (0 for a part that saw nothing valid).
//  - nsplit 1: the workgroup writes out = acc / l (an all -inf row gives 0 / 0 = NaN, as the
//    reference's softmax does; 0 under SAFE, as torch's sdpa). nsplit > 1: it writes its partial {m, l, acc[D]} per head in fp32
//    to the scratch binding, then takes a ticket (atomicAdd on the (b, group, row)'s counter, after a
//    device-scope memory barrier; the partials are coherent); the workgroup that draws the last
//    ticket merges the nsplit partials in split order, writes the output and resets the counter
//    to 0 for the next run (the backend zero-fills the scratch once, at load). No workgroup waits
//    for another, so nothing depends on forward progress (the pattern of CUDA's
//    threadFenceReduction and FidelityFX SPD's last-workgroup counter).
//
// ATTN_CACHE (the kernel attention_cache: the merge decode_attention_cache, compiler/fuse_merge.c):
// one query row, and the step's K and V rows are made here and written into the caches at the
// position idx[0] (index_copy in place), with the ropes of the unfused chain:
//  - q is the rope's input (ROPE_Q): each element loaded is rotated, x[d] * cos[d] -+
//    x[d +- D/2] * sin[d] as the rope kernel computes it, and rounded to the storage dtype as the
//    rope kernel's output was; the new K row likewise from its source (ROPE_K), the new V row is
//    its source. Every workgroup whose split holds pos makes both rows into shared memory, rounded
//    to storage, and the first query-head group of each kv head (h0 % rep == 0) also writes them
//    into the caches (kw, vw: writeonly bindings of the caches' storage).
//  - The race: other workgroups of this dispatch read the caches (kc, vc: readonly bindings) while
//    those writes happen, and nothing orders workgroups of one dispatch. So no invocation ever
//    loads row pos from kc or vc here: a trip's row tc == pos loads row `alt` (pos - 1, or 1 for
//    pos 0: a row no one writes; the cache has >= 2 positions) and then takes the fresh row from
//    shared memory instead. Every location is then written by one invocation and read by none, or
//    read and never written: no data race under the Vulkan memory model, whatever the order, and
//    the loads stay branch-free. The next dispatch that reads the caches waits for this one at a
//    barrier (the kernel binds the updated caches as outputs: the plan's hazard tracking).
// Spec: 0 = workgroup size (<= 128: at most 16 subgroups of >= 8 lanes), 1 = G (<= 8),
// 2 = L, 3 = VEC, 4 = NV: vectors (VEC 1) or elements (VEC 0) per row, 5 = RB, 6 = ABLATE;
// ATTN_CACHE: 8 = ROPE_Q, 9 = ROPE_K (1: the rope applies), 10 = SPLIT_ROWS (0: the grid's splits).
#ifndef NPU_DECODE_ATTENTION_GLSL
#define NPU_DECODE_ATTENTION_GLSL
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require
#include "abi.h"
#include "common.glsl"
#include "index.glsl"
#ifndef ATTN_CACHE
#define ATTN_CACHE 0
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint G = 1;
layout(constant_id = 2) const uint L = 8;
layout(constant_id = 3) const uint VEC = 0;
layout(constant_id = 4) const uint NV = 1;
layout(constant_id = 5) const uint RB = 1;
// ABLATE (bench's NPU_ATTN_ABLATE, 0 otherwise): parts left out to measure what they cost; the
// result is wrong by design. Bits: 1 = no mask scan (every position valid), 2 = no trips, 4 = no
// merge of teams and subgroups, 8 = no q load.
layout(constant_id = 6) const uint ABLATE = 0;
// SAFE (1 for an exported scaled_dot_product_attention, compiler/canon_sdpa.c): a row with no
// valid position gives zeros, as torch's sdpa (its _safe_softmax) does, rather than 0 / 0.
layout(constant_id = 7) const uint SAFE = 0;
// K_OFF, V_OFF, Q_OFF: where K, V and q start in their bindings, in elements (q, K and V selected
// from one packed projection: compiler/fuse_attention.c select_sources); multiples of the vector
// where VEC is 1. Ids 11..13: after attention_cache's.
layout(constant_id = 11) const uint K_OFF = 0;
layout(constant_id = 12) const uint V_OFF = 0;
layout(constant_id = 13) const uint Q_OFF = 0;

// out = acc / l; 0 for l == 0 under SAFE
float npu_attn_div(float acc, float l)
{
    return SAFE != 0u && l == 0.0 ? 0.0 : acc / l;
}

#if defined(STORAGE_F32)
#define VEC_T vec4
#define VW 4u
#else
#define VEC_T uvec4
#define VW 8u
#endif
const uint VPL = (NV + L - 1) / L;  // vectors (or elements) per lane and row
const uint EW = VEC == 1 ? VW : 1;  // elements per vector
const uint EPL = VPL * EW;          // elements per lane and row

layout(std430, set = 0, binding = 0) readonly buffer KB { STORAGE_T kc[]; };
layout(std430, set = 0, binding = 0) readonly buffer KB4 { VEC_T kc4[]; };
layout(std430, set = 0, binding = 1) readonly buffer VB { STORAGE_T vc[]; };
layout(std430, set = 0, binding = 1) readonly buffer VB4 { VEC_T vc4[]; };
layout(std430, set = 0, binding = 2) readonly buffer QB { STORAGE_T q[]; };
layout(std430, set = 0, binding = 3) readonly buffer MB { STORAGE_T msk[]; };
// [tickets: one uint per (b, group, row)][pad to 4][partials: (b, group, row, split, head) x
// {m, l, acc[D]}]
#if ATTN_CACHE
layout(constant_id = 8) const uint ROPE_Q = 0;
layout(constant_id = 9) const uint ROPE_K = 0;
// SPLIT_ROWS (attn.split_rows): the splits follow the step's position, not the cache's length:
// ns = ceil((pos + 1) / SPLIT_ROWS) splits (at most the grid's nsplit) of ceil((pos + 1) / ns)
// positions, the last one to the cache's end; the grid's other workgroups return at once. 0 (or
// no valid position): the grid's splits of pc.chunk. A short prefix then runs unsplit (no merge)
// and a long one in fewer, longer splits: a merge costs more than a few trips (bench/NOTES.md).
layout(constant_id = 10) const uint SPLIT_ROWS = 0;
layout(std430, set = 0, binding = 4) readonly buffer CB { STORAGE_T rcos[]; };
layout(std430, set = 0, binding = 5) readonly buffer SNB { STORAGE_T rsin[]; };
layout(std430, set = 0, binding = 6) readonly buffer KXB { STORAGE_T kx[]; };
layout(std430, set = 0, binding = 7) readonly buffer VXB { STORAGE_T vx[]; };
layout(std430, set = 0, binding = 8) readonly buffer IB { int idx[]; };
layout(std430, set = 0, binding = 9) writeonly buffer KWB { STORAGE_T kw[]; };
layout(std430, set = 0, binding = 10) writeonly buffer VWB { STORAGE_T vw[]; };
#define B_SCR 11
#define B_OUT 12
// abi.h ATTN_CACHE_PUSH: ATTN_PUSH, then the rope tables' batch stride and the new rows' sources'
// batch and head strides
PUSH_BLOCK(ATTN_CACHE_PUSH)
#else
#define B_SCR 4
#define B_OUT 5
// abi.h ATTN_PUSH (ngroups = B * Hq / G * Tq: the tickets; q_st, m_sq, o_st: q's, the mask's
// and out's row strides)
PUSH_BLOCK(ATTN_PUSH)
#endif
layout(std430, set = 0, binding = B_SCR) coherent buffer SB { uint scr[]; };
layout(std430, set = 0, binding = B_OUT) writeonly buffer OB { STORAGE_T o[]; };

#define MAXD ATTN_MAX_D
#define MAXG ATTN_MAX_G
#define MAXSG 16  // subgroups in a workgroup: NPU_WG <= 128, subgroups of >= 8 lanes
#define MAXSPLIT ATTN_MAX_SPLIT // splits of a group (sml holds their {m, l} per head)
#define NINF uintBitsToFloat(0xff800000u)

shared float qs[MAXG * MAXD];
shared float mrg[MAXSG * MAXD]; // one head's weighted V sums per subgroup; split weights
shared float sml[(MAXSG > MAXSPLIT ? MAXSG : MAXSPLIT) * MAXG * 2];
shared uint tend, lastf;
#if ATTN_CACHE
shared float fresh[2 * MAXD]; // the step's K row, then its V row, rounded to storage
#endif

float acc[G][EPL];
float m[G], l[G];

// element e of vector v as float32 (e a constant after unrolling)
float vel(VEC_T v, uint e)
{
#if defined(STORAGE_F32)
    return v[e];
#elif defined(STORAGE_BF16)
    uint w = v[e / 2];
    return uintBitsToFloat((e & 1) == 0 ? w << 16 : w & 0xffff0000u);
#else
    return unpackHalf2x16(v[e / 2])[e & 1];
#endif
}

#if ATTN_CACHE
// element d of a rope output from a = x[d] and its partner p = x[d +- D/2], with the rope
// kernel's operations (shaders/rope.glsl: the two products, then their sum), cos and sin of row
// cb, rounded to storage (common.glsl S_ROUND: fp32 operations only)
float attn_rope(float a, float p, uint d, uint cb)
{
    float c = S_LOAD(rcos[cb + d]), s = S_LOAD(rsin[cb + d]);
    return S_ROUND(d < pc.D / 2u ? a * c + (-p) * s : a * c + p * s);
}

// vector j of the fresh row at fresh[at..] in the loads' format (the values are exact in the
// storage dtype, so packing them is exact)
VEC_T fresh_vec(uint at, uint j)
{
    uint e0 = at + j * VW;
#if defined(STORAGE_F32)
    return vec4(fresh[e0], fresh[e0 + 1], fresh[e0 + 2], fresh[e0 + 3]);
#else
    uvec4 v;
    [[unroll]] for (uint e = 0; e < 4; e++) {
        float lo = fresh[e0 + 2 * e], hi = fresh[e0 + 2 * e + 1];
#if defined(STORAGE_BF16)
        v[e] = (floatBitsToUint(lo) >> 16) | (floatBitsToUint(hi) & 0xffff0000u);
#else
        v[e] = packHalf2x16(vec2(lo, hi));
#endif
    }
    return v;
#endif
}
#endif

// merges another part's (m2, l2) of head g into this lane's state; returns the other's weight
// after scaling acc and l by this part's (w1)
float merge_ml(uint g, float m2, float l2, out float w1)
{
    float mx = max(m[g], m2);
    w1 = m[g] == NINF ? 0.0 : exp(m[g] - mx);
    float w2 = m2 == NINF ? 0.0 : exp(m2 - mx);
    l[g] = l[g] * w1 + l2 * w2;
    m[g] = mx;
    return w2;
}

void main()
{
    uint lid = gl_LocalInvocationID.x;
    uint grp = npu_group_index();
    if (grp >= pc.ngroups * pc.nsplit) return; // a folded grid's padding (uniform)
    uint split = grp % pc.nsplit;
    grp /= pc.nsplit; // (b, group, row): the ticket's index
    uint row = pc.Tq - 1 - grp % pc.Tq, bg = grp / pc.Tq;
    uint ngrp = pc.Hq / G, b = bg / ngrp, h0 = (bg % ngrp) * G, D = pc.D, T = pc.T;
    uint qrow = Q_OFF + b * pc.q_sb + row * pc.q_st, mrow = b * pc.m_sb + row * pc.m_sq;
    uint orow = b * pc.o_sb + row * pc.o_st;
    // the splits in use (ns) and their length: the grid's, or by the step's position
    uint ns = pc.nsplit, chunk = pc.chunk;
#if ATTN_CACHE
    // the step's position (negative from the end; out of range: none, the index_copy writes
    // nothing), and the row loaded in its place
    int pi = idx[0];
    pi = pi < 0 ? pi + int(T) : pi;
    uint pos = pi >= 0 && pi < int(T) ? uint(pi) : 0xffffffffu;
    uint alt = pos == 0u ? 1u : pos - 1u;
    if (SPLIT_ROWS != 0u && pos != 0xffffffffu) {
        ns = min((pos + SPLIT_ROWS) / SPLIT_ROWS, pc.nsplit); // ceil((pos + 1) / SPLIT_ROWS)
        chunk = (pos + ns) / ns;                              // ceil((pos + 1) / ns)
    }
    if (split >= ns) return; // a split not in use (uniform): no partial, no ticket
#endif
    // the last split in use reaches the cache's end (the mask decides what is valid there)
    uint lo = split * chunk, hi = split == ns - 1u ? T : min(T, lo + chunk);
    uint kbase = K_OFF + b * pc.k_sb + (h0 / pc.rep_k) * pc.k_sh;
    uint vbase = V_OFF + b * pc.v_sb + (h0 / pc.rep_v) * pc.v_sh;

    // Loads in flight together wherever a loop would wait for each (a load, then its use, then
    // the next load: ~0.15-0.5 us per round trip on a GPU): q in QI unrolled slots, the mask in
    // batches of MB per lane, the merger's partials in batches of MS splits.
    const uint QI = (G * MAXD + NPU_WG - 1) / NPU_WG, MB = 8u, MS = 16u;
    if ((ABLATE & 8u) == 0)
    [[unroll]] for (uint j = 0; j < QI; j++) {
        uint i = lid + j * NPU_WG, ic = min(i, G * D - 1);
        uint qb = qrow + (h0 + ic / D) * pc.q_sh, d = ic % D;
        float v = S_LOAD(q[qb + d]);
#if ATTN_CACHE
        if (ROPE_Q != 0u) v = attn_rope(v, S_LOAD(q[qb + (d + D / 2u) % D]), d, b * pc.c_sb);
#endif
        if (i < G * D) qs[i] = v;
    }
#if ATTN_CACHE
    // the new rows where this split holds the position
    if (pos >= lo && pos < hi) { // uniform
        uint kh = h0 / pc.rep_k, vh = h0 / pc.rep_v;
        uint kxr = b * pc.kx_sb + kh * pc.kx_sh, vxr = b * pc.vx_sb + vh * pc.vx_sh;
        for (uint d = lid; d < D; d += NPU_WG) {
            float kn = S_LOAD(kx[kxr + d]), vn = S_LOAD(vx[vxr + d]);
            if (ROPE_K != 0u) kn = attn_rope(kn, S_LOAD(kx[kxr + (d + D / 2u) % D]), d, b * pc.c_sb);
            fresh[d] = kn;
            fresh[MAXD + d] = vn;
            if (h0 % pc.rep_k == 0u) kw[kbase + pos * pc.k_st + d] = S_STORE(kn);
            if (h0 % pc.rep_v == 0u) vw[vbase + pos * pc.v_st + d] = S_STORE(vn);
        }
    }
#endif
    if (lid == 0) tend = 0;
    barrier();
    // the end of the valid prefix over the G heads' masks (one mask when it broadcasts over
    // heads); a split looks from its own start on, so every split skips exactly what one walk
    // of the whole cache would
    uint last = (ABLATE & 1u) != 0 ? T : 0;
    for (uint g = 0; g < ((ABLATE & 1u) != 0 ? 0 : pc.m_sh == 0 ? 1 : G); g++) {
        uint mb = mrow + (h0 + g) * pc.m_sh;
        for (uint t0 = lo + lid; t0 < T; t0 += MB * NPU_WG) {
            float mv[MB];
            [[unroll]] for (uint j = 0; j < MB; j++)
                mv[j] = S_LOAD(msk[mb + min(t0 + j * NPU_WG, T - 1) * pc.m_st]);
            [[unroll]] for (uint j = 0; j < MB; j++)
                if (t0 + j * NPU_WG < T && mv[j] != NINF) last = max(last, t0 + j * NPU_WG + 1);
        }
    }
    // the subgroup's maximum first (a butterfly), then one shared atomic per subgroup: 128
    // atomics on one shared word serialize
    for (uint x = 1; x < gl_SubgroupSize; x <<= 1) last = max(last, subgroupShuffleXor(last, x));
    if (gl_SubgroupInvocationID == 0) atomicMax(tend, last);
    barrier();
    uint tn = min(hi, tend);

    // teams of L lanes inside a subgroup (gl_SubgroupSize >= L, a power of two)
    uint S = gl_SubgroupSize, sl = gl_SubgroupInvocationID, sg = gl_SubgroupID;
    uint tps = S / L, NT = min(gl_NumSubgroups * tps, NPU_WG / L);
    uint tm = sg * tps + sl / L, tl = sl % L;
    [[unroll]] for (uint g = 0; g < G; g++) {
        m[g] = NINF;
        l[g] = 0.0;
        [[unroll]] for (uint e = 0; e < EPL; e++) acc[g][e] = 0.0;
    }

    for (uint c0 = lo; c0 < ((ABLATE & 2u) != 0 ? lo : tn); c0 += NT * RB) { // uniform in the workgroup
        VEC_T kv[RB][VPL], vv[RB][VPL];
        float kf[RB][VPL], vf[RB][VPL], mv0[RB];
        uint t[RB];
        // every load of the trip first: rows past tn and vectors past the row read a valid
        // place (row tn - 1, the last vector) and are discarded below
        [[unroll]] for (uint r = 0; r < RB; r++) {
            t[r] = c0 + tm + NT * r;
            uint tc = min(t[r], tn - 1);
            mv0[r] = S_LOAD(msk[mrow + h0 * pc.m_sh + tc * pc.m_st]); // head h0's mask
#if ATTN_CACHE
            uint tk = tc == pos ? alt : tc; // never row pos, written by this dispatch
#else
            uint tk = tc;
#endif
            [[unroll]] for (uint i = 0; i < VPL; i++) {
                uint j = min(tl + L * i, NV - 1);
                if (VEC == 1) {
                    kv[r][i] = kc4[(kbase + tk * pc.k_st) / VW + j];
                    vv[r][i] = vc4[(vbase + tk * pc.v_st) / VW + j];
                } else {
                    kf[r][i] = S_LOAD(kc[kbase + tk * pc.k_st + j]);
                    vf[r][i] = S_LOAD(vc[vbase + tk * pc.v_st + j]);
                }
            }
        }
#if ATTN_CACHE
        // row pos: the rows made above (shared memory, written before the last barrier)
        [[unroll]] for (uint r = 0; r < RB; r++)
            if (min(t[r], tn - 1) == pos)
                [[unroll]] for (uint i = 0; i < VPL; i++) {
                    uint j = min(tl + L * i, NV - 1);
                    if (VEC == 1) {
                        kv[r][i] = fresh_vec(0u, j);
                        vv[r][i] = fresh_vec(MAXD, j);
                    } else {
                        kf[r][i] = fresh[j];
                        vf[r][i] = fresh[MAXD + j];
                    }
                }
#endif
        float s[RB][G];
        [[unroll]] for (uint r = 0; r < RB; r++) {
            uint tc = min(t[r], tn - 1);
            [[unroll]] for (uint g = 0; g < G; g++) {
                float dot = 0.0;
                [[unroll]] for (uint i = 0; i < VPL; i++) {
                    uint j = tl + L * i, jc = min(j, NV - 1);
                    [[unroll]] for (uint e = 0; e < EW; e++) {
                        float kx = VEC == 1 ? vel(kv[r][i], e) : kf[r][i];
                        float x = qs[g * D + jc * EW + e] * kx;
                        dot += j < NV ? x : 0.0;
                    }
                }
                [[unroll]] for (uint x = 1; x < L; x <<= 1) dot += subgroupShuffleXor(dot, x);
                float mv = g == 0 || pc.m_sh == 0 ? mv0[r] : S_LOAD(msk[mrow + (h0 + g) * pc.m_sh + tc * pc.m_st]);
                s[r][g] = t[r] < tn ? dot * pc.scale + mv : NINF;
            }
        }
        // the team's online softmax: one rescale per trip
        [[unroll]] for (uint g = 0; g < G; g++) {
            float mx = m[g];
            [[unroll]] for (uint r = 0; r < RB; r++) mx = max(mx, s[r][g]);
            // nothing valid yet keeps m = -inf: nothing has weight, nothing to rescale
            float alpha = mx == NINF ? 1.0 : exp(m[g] - mx);
            float p[RB];
            float ps = 0.0;
            [[unroll]] for (uint r = 0; r < RB; r++) {
                p[r] = mx == NINF ? 0.0 : exp(s[r][g] - mx);
                ps += p[r];
            }
            l[g] = l[g] * alpha + ps;
            m[g] = mx;
            [[unroll]] for (uint i = 0; i < VPL; i++)
                [[unroll]] for (uint e = 0; e < EW; e++) {
                    float a = acc[g][i * EW + e] * alpha;
                    [[unroll]] for (uint r = 0; r < RB; r++)
                        a += p[r] * (VEC == 1 ? vel(vv[r][i], e) : vf[r][i]);
                    acc[g][i * EW + e] = a;
                }
        }
    }

    // merge the teams of a subgroup (a butterfly: every lane ends with the same sums)
    for (uint x = L; x < ((ABLATE & 4u) != 0 ? L : S); x <<= 1) {
        [[unroll]] for (uint g = 0; g < G; g++) {
            float w1, w2 = merge_ml(g, subgroupShuffleXor(m[g], x), subgroupShuffleXor(l[g], x), w1);
            [[unroll]] for (uint e = 0; e < EPL; e++)
                acc[g][e] = acc[g][e] * w1 + subgroupShuffleXor(acc[g][e], x) * w2;
        }
    }
    // merge the subgroups in subgroup order, one head per round
    uint nsg = gl_NumSubgroups;
    if (sl == 0)
        [[unroll]] for (uint g = 0; g < G; g++) {
            sml[(sg * G + g) * 2] = m[g];
            sml[(sg * G + g) * 2 + 1] = l[g];
        }
    barrier();
    float wown[G], lt[G], mt[G];
    [[unroll]] for (uint g = 0; g < G; g++) {
        float mx = NINF, ls = 0.0;
        for (uint s2 = 0; s2 < nsg; s2++) mx = max(mx, sml[(s2 * G + g) * 2]);
        for (uint s2 = 0; s2 < nsg; s2++) {
            float ms = sml[(s2 * G + g) * 2];
            ls += (ms == NINF ? 0.0 : exp(ms - mx)) * sml[(s2 * G + g) * 2 + 1];
        }
        wown[g] = m[g] == NINF ? 0.0 : exp(m[g] - mx);
        mt[g] = mx;
        lt[g] = ls;
    }
    uint pbase = (pc.ngroups + 3) / 4 * 4, rstride = D + 2;
    uint rec0 = pbase + (grp * pc.nsplit + split) * G * rstride;
    [[unroll]] for (uint g = 0; g < G; g++) {
        if (sl < L)
            [[unroll]] for (uint i = 0; i < VPL; i++) {
                uint j = tl + L * i;
                if (j < NV)
                    [[unroll]] for (uint e = 0; e < EW; e++)
                        mrg[sg * D + j * EW + e] = wown[g] * acc[g][i * EW + e];
            }
        barrier();
        for (uint d = lid; d < D; d += NPU_WG) {
            float sv = 0.0;
            for (uint s2 = 0; s2 < nsg; s2++) sv += mrg[s2 * D + d];
            if (ns == 1u) o[orow + (h0 + g) * pc.o_sh + d] = S_STORE(npu_attn_div(sv, lt[g]));
            else scr[rec0 + g * rstride + 2 + d] = floatBitsToUint(sv);
        }
        if (ns > 1u && lid == 0) {
            scr[rec0 + g * rstride] = floatBitsToUint(mt[g]);
            scr[rec0 + g * rstride + 1] = floatBitsToUint(lt[g]);
        }
        barrier();
    }
    if (ns == 1u) return;

    // the last split of the group to finish merges the partials
    memoryBarrierBuffer();
    barrier();
    if (lid == 0) lastf = atomicAdd(scr[grp], 1u) == ns - 1u ? 1u : 0u;
    barrier();
    if (lastf == 0) return; // uniform
    memoryBarrierBuffer();
    uint grec = pbase + grp * pc.nsplit * G * rstride; // record (s, g) at grec + (s*G + g)*rstride
    // {m, l} of every (split, head) record into sml (ns * G <= MAXSPLIT * MAXG)
    for (uint i = lid; i < ns * G; i += NPU_WG) {
        sml[i * 2] = uintBitsToFloat(scr[grec + i * rstride]);
        sml[i * 2 + 1] = uintBitsToFloat(scr[grec + i * rstride + 1]);
    }
    barrier();
    // per head: the splits' weights w_s = exp(m_s - max m) into mrg[s * G + g], the total l into
    // mrg[MAXSPLIT * MAXG + g]
    if (lid < G) {
        float mx = NINF, ls = 0.0;
        for (uint s2 = 0; s2 < ns; s2++) mx = max(mx, sml[(s2 * G + lid) * 2]);
        for (uint s2 = 0; s2 < ns; s2++) {
            float ms = sml[(s2 * G + lid) * 2];
            float w = ms == NINF ? 0.0 : exp(ms - mx);
            mrg[s2 * G + lid] = w;
            ls += w * sml[(s2 * G + lid) * 2 + 1];
        }
        mrg[MAXSPLIT * MAXG + lid] = ls;
    }
    barrier();
    for (uint i = lid; i < G * D; i += NPU_WG) {
        uint g = i / D, d = i % D;
        float sv = 0.0;
        for (uint s0 = 0; s0 < ns; s0 += MS) {
            float pv[MS];
            [[unroll]] for (uint j = 0; j < MS; j++)
                pv[j] = uintBitsToFloat(scr[grec + (min(s0 + j, ns - 1u) * G + g) * rstride + 2 + d]);
            [[unroll]] for (uint j = 0; j < MS; j++)
                sv += s0 + j < ns ? mrg[(s0 + j) * G + g] * pv[j] : 0.0;
        }
        o[orow + (h0 + g) * pc.o_sh + d] = S_STORE(npu_attn_div(sv, mrg[MAXSPLIT * MAXG + g]));
    }
    if (lid == 0) atomicExchange(scr[grp], 0u);
}

#endif
