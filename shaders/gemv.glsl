// gemv: the decode matrix-vector product with 16-byte loads, for M <= 4 rows of A and weights
// contiguous along K (linear's [N, K]: b_ks = 1), K a multiple of the vector width and every row
// start 16-byte aligned (compiler/lower/lower_matmul.c proves it, else the scalar paths of
// shaders/matmul.glsl run). Y[b, m, n] = act(alpha * sum_k A[b, m, k] * B[b, k, n] + beta *
// bias[m, n]) (+ res), fp32 accumulation; the epilogue, push constants and the bindings after
// B are shaders/matmul_epi.glsl (same words as matmul). The body of four stems (gemv, gemv_nb,
// gemv_r, gemv_br: MM_BIAS, MM_RES), their prologue rows, and conv2d_gemv(_b) (MM_CONV: a
// pointwise conv over a 1x1 map, one batch matrix per image, Y's batch stride a push word).
// A and B are read as 16-byte vectors (uvec4 = 8 f16/bf16, vec4 = 4 f32): bf16 is widened by a
// shift (exact), f16 by unpackHalf2x16. A set of lanes computes R consecutive outputs n (weight
// rows) for each of the MR rows of A: the lanes split K in 16-byte chunks (lane i of L takes
// chunks i, i + L, ...), U chunks per loop trip with all U * (R + MR) loads issued before any
// arithmetic (the memory-level parallelism a memory-bound GEMV lives on), each A chunk used for
// the R weight rows. Two ways to form the sets (spec G):
//  - G = 0, split-K: the whole workgroup is one set (L = NPU_WG, R rows per workgroup; for long
//    K, e.g. down_proj's 8960); reduction by subgroupAdd, then one shared-memory step across
//    gl_NumSubgroups in a fixed order;
//  - G >= 1, subgroup rows: the workgroup computes G * R rows, subgroup s takes row groups s,
//    s + gl_NumSubgroups, ... < G, its active lanes splitting K (L and the lane index from a
//    ballot: no assumption on the subgroup size, lavapipe 8, the H100 32, or on its layout in
//    the workgroup); reduction by subgroupAdd only: no shared memory, no barrier.
// Spec: 0 = workgroup size (>= R * MR for G = 0), 1 = R (1..8), 2 = MR (= M, 1..4), 3 = NV: the
// chunks per row, K / vector (0: from the push constant K), 4 = U (1..8), 5 = G. The grid is
// nbatch * ceil(N / (R * max(G, 1))) workgroups, folded past 65535 (npu_group_index).
// Prologues (GEMV_PRO, compiler/fuse_fold.c): the A chunk is computed from the loaded ones, in
// fp32, before the dot products; one more operand is bound at binding 2 (MM_FIRST 3):
//  - 1 (rmsnorm_linear): A = x and binding 2 = gamma [K]; each lane also accumulates the sum of
//    squares of the x chunks it loads (every chunk of a row is loaded exactly once by the lanes
//    of a set), reduced as the dot products, and the chunk is x * gamma; the store scales the
//    dot product by r = 1 / sqrt(sum / K + eps) (spec 6 = eps) before bias, act and residual;
//  - 2 (silu_mul_linear): A = gate and binding 2 = up (A's shape); the chunk is silu(gate) * up.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint R = 2;
layout(constant_id = 2) const uint MR = 1;
layout(constant_id = 3) const uint NV = 0;
layout(constant_id = 4) const uint U = 2;
layout(constant_id = 5) const uint G = 0;

#if defined(STORAGE_F32)
#define VEC_T vec4
#define VEC_N 4u
#else
#define VEC_T uvec4
#define VEC_N 8u
#endif

#ifndef GEMV_PRO
#define GEMV_PRO 0
#endif

layout(std430, set = 0, binding = 0) readonly buffer A_ { VEC_T a4[]; };
layout(std430, set = 0, binding = 1) readonly buffer B_ { VEC_T b4[]; };
#if GEMV_PRO != 0
layout(std430, set = 0, binding = 2) readonly buffer P_ { VEC_T p4[]; };
#define MM_FIRST 3
#endif
#if GEMV_PRO == 1
layout(constant_id = 6) const float EPS = 0.0;
#endif
#include "matmul_epi.glsl"

// rmsnorm_linear: a sum of squares per row of A
const uint SSQ = GEMV_PRO == 1 ? MR : 0;
// split-K: one partial sum per (output or row's sum of squares, subgroup), at most NPU_WG
// subgroups whatever their size (subgroup rows use none: one float)
const uint RED = G == 0 ? (MR * R + SSQ) * NPU_WG : 1;
shared float red[RED];

// The 8 (16-bit storage) or 4 (f32) elements of a vector as float32: even elements in e, odd
// ones in o (f32: all in e). A and B are split the same way, so dot(e) + dot(o) is the chunk's
// dot product.
void widen(VEC_T v, out vec4 e, out vec4 o)
{
#if defined(STORAGE_BF16)
    e = uintBitsToFloat(v << 16u);
    o = uintBitsToFloat(v & 0xffff0000u);
#elif defined(STORAGE_F16)
    vec2 p0 = unpackHalf2x16(v.x), p1 = unpackHalf2x16(v.y), p2 = unpackHalf2x16(v.z),
         p3 = unpackHalf2x16(v.w);
    e = vec4(p0.x, p1.x, p2.x, p3.x);
    o = vec4(p0.y, p1.y, p2.y, p3.y);
#else
    e = v;
    o = vec4(0.0);
#endif
}

float chunk_dot(vec4 ae, vec4 ao, vec4 be, vec4 bo)
{
#if defined(STORAGE_F32)
    return dot(ae, be);
#else
    return dot(ae, be) + dot(ao, bo);
#endif
}

uint arow[MR], brow[R]; // row starts in vectors
float acc[MR][R];
float ssq[MR]; // rmsnorm_linear: this lane's sum of squares of each row's x

#if GEMV_PRO == 2
vec4 silu4(vec4 v)
{
    return vec4(npu_silu(v.x), npu_silu(v.y), npu_silu(v.z), npu_silu(v.w));
}
#endif

// U chunks c, c + L, ..., c + (U - 1) L of every row into the accumulators: every load first,
// then the arithmetic. guard: chunks at or past nv read nothing and add nothing.
void trip(uint c, uint L, uint nv, bool guard)
{
    VEC_T av[U][MR], bv[U][R];
#if GEMV_PRO == 1
    VEC_T pv[U][1]; // gamma's chunk
#elif GEMV_PRO == 2
    VEC_T pv[U][MR]; // up's chunks
#endif
    [[unroll]] for (uint u = 0; u < U; u++) {
        uint cu = guard ? min(c + u * L, nv - 1) : c + u * L; // loads stay in the row
        [[unroll]] for (uint r = 0; r < R; r++) bv[u][r] = b4[brow[r] + cu];
        [[unroll]] for (uint m = 0; m < MR; m++) av[u][m] = a4[arow[m] + cu];
#if GEMV_PRO == 1
        pv[u][0] = p4[cu];
#elif GEMV_PRO == 2
        [[unroll]] for (uint m = 0; m < MR; m++) pv[u][m] = p4[arow[m] + cu];
#endif
        if (guard && c + u * L >= nv) { // zeros, not 0 * the clamped chunk (inf * 0 is NaN)
            [[unroll]] for (uint r = 0; r < R; r++) bv[u][r] = VEC_T(0);
            [[unroll]] for (uint m = 0; m < MR; m++) av[u][m] = VEC_T(0);
#if GEMV_PRO == 1
            pv[u][0] = VEC_T(0);
#elif GEMV_PRO == 2
            [[unroll]] for (uint m = 0; m < MR; m++) pv[u][m] = VEC_T(0);
#endif
        }
    }
    [[unroll]] for (uint u = 0; u < U; u++) {
        vec4 ae[MR], ao[MR];
        [[unroll]] for (uint m = 0; m < MR; m++) widen(av[u][m], ae[m], ao[m]);
#if GEMV_PRO == 1
        vec4 ge, go;
        widen(pv[u][0], ge, go);
        [[unroll]] for (uint m = 0; m < MR; m++) {
            ssq[m] += dot(ae[m], ae[m]) + dot(ao[m], ao[m]);
            ae[m] *= ge;
            ao[m] *= go;
        }
#elif GEMV_PRO == 2
        [[unroll]] for (uint m = 0; m < MR; m++) {
            vec4 ue, uo;
            widen(pv[u][m], ue, uo);
            ae[m] = silu4(ae[m]) * ue;
            ao[m] = silu4(ao[m]) * uo;
        }
#endif
        [[unroll]] for (uint r = 0; r < R; r++) {
            vec4 be, bo;
            widen(bv[u][r], be, bo);
            [[unroll]] for (uint m = 0; m < MR; m++) acc[m][r] += chunk_dot(ae[m], ao[m], be, bo);
        }
    }
}

// The partial dot products of lane i of L over rows brow (the row starts must be set).
void dots(uint i, uint L, uint nv)
{
    [[unroll]] for (uint m = 0; m < MR; m++) {
        ssq[m] = 0.0;
        [[unroll]] for (uint r = 0; r < R; r++) acc[m][r] = 0.0;
    }
    uint c = i;
    for (; c + (U - 1) * L < nv; c += U * L) trip(c, L, nv, false);
    if (c < nv) trip(c, L, nv, true); // fewer than U chunks left
}

// Row starts of rows n0 .. n0 + R - 1 of batch matrix ob (rows past N read row N - 1 and are
// not stored).
void set_rows(uint oa, uint ob, uint n0)
{
    [[unroll]] for (uint m = 0; m < MR; m++) arow[m] = (oa + m * pc.K) / VEC_N;
    [[unroll]] for (uint r = 0; r < R; r++)
        brow[r] = (ob + min(n0 + r, pc.N - 1) * pc.b_ns) / VEC_N;
}

// The factor the prologue puts on row m's dot products from that row's whole sum of squares
// (rmsnorm_linear; 1 otherwise), as shaders/rmsnorm.comp computes it.
float row_scale(float ss)
{
#if GEMV_PRO == 1
    return 1.0 / sqrt(ss / float(pc.K) + EPS);
#else
    return 1.0;
#endif
}

void main()
{
    const uint GR = G == 0 ? 1 : G;
    uint g = npu_group_index();
    uint tiles = (pc.N + R * GR - 1) / (R * GR);
    if (g >= pc.nbatch * tiles) return; // the whole workgroup: no barrier is skipped
    uint bi = 0, n0 = g * (R * GR), oa = 0, ob = 0;
    if (pc.nbatch > 1) {
        bi = g / tiles;
        n0 = (g % tiles) * (R * GR);
        mm_batch_offsets(bi, oa, ob);
    }
    uint yoff = MM_YOFF(bi);
    uint nv = NV > 0 ? NV : pc.K / VEC_N;

    if (G == 0) {
        set_rows(oa, ob, n0);
        dots(gl_LocalInvocationID.x, NPU_WG, nv);
        [[unroll]] for (uint m = 0; m < MR; m++) {
            [[unroll]] for (uint r = 0; r < R; r++) {
                float s = subgroupAdd(acc[m][r]);
                if (subgroupElect()) red[(m * R + r) * NPU_WG + gl_SubgroupID] = s;
            }
            if (SSQ > 0) {
                float s = subgroupAdd(ssq[m]);
                if (subgroupElect()) red[(MR * R + m) * NPU_WG + gl_SubgroupID] = s;
            }
        }
        barrier();
        uint o = gl_LocalInvocationID.x;
        if (o < MR * R) {
            uint m = o / R, r = o % R, n = n0 + r;
            if (n < pc.N) {
                float t = 0.0, q = 0.0;
                for (uint s = 0; s < gl_NumSubgroups; s++) t += red[o * NPU_WG + s];
                if (SSQ > 0)
                    for (uint s = 0; s < gl_NumSubgroups; s++) q += red[(MR * R + m) * NPU_WG + s];
                store(yoff, m, n, t * row_scale(q));
            }
        }
        return;
    }

    uvec4 lanes = subgroupBallot(true);
    uint L = subgroupBallotBitCount(lanes), i = subgroupBallotExclusiveBitCount(lanes);
    for (uint s = gl_SubgroupID; s < G; s += gl_NumSubgroups) {
        uint ns = n0 + s * R;
        if (ns >= pc.N) break; // uniform in the subgroup
        set_rows(oa, ob, ns);
        dots(i, L, nv);
        [[unroll]] for (uint m = 0; m < MR; m++) {
            float q = SSQ > 0 ? subgroupAdd(ssq[m]) : 0.0;
            [[unroll]] for (uint r = 0; r < R; r++) {
                float t = subgroupAdd(acc[m][r]);
                if (i == (m * R + r) % L && ns + r < pc.N) store(yoff, m, ns + r, t * row_scale(q));
            }
        }
    }
}
