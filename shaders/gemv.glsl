// gemv: the decode matrix-vector product with 16-byte loads, for M <= 4 rows of A and weights
// contiguous along K (linear's [N, K]: b_ks = 1), K a multiple of the vector width and every row
// start 16-byte aligned (compiler/lower_matmul.c proves it, else the scalar paths of
// shaders/matmul.glsl run). Y[b, m, n] = act(alpha * sum_k A[b, m, k] * B[b, k, n] + beta *
// bias[m, n]) (+ res), fp32 accumulation; the epilogue, push constants and the bindings after
// B are shaders/matmul_epi.glsl (same words as matmul). The body of four stems (gemv, gemv_nb,
// gemv_r, gemv_br: MM_BIAS, MM_RES).
// A and B are read as 16-byte vectors (uvec4 = 8 f16/bf16, vec4 = 4 f32): bf16 is widened by a
// shift (exact), f16 by unpackHalf2x16. A workgroup computes R outputs n (consecutive weight
// rows) for each of the MR rows of A: its NPU_WG lanes split K in 16-byte chunks (lane t takes
// chunks t, t + NPU_WG, ...), each chunk of A loaded once into registers and used for the R
// weight rows (R independent 16-byte loads in flight per chunk, two chunks per loop trip).
// Reduction: subgroupAdd per output, then one shared-memory step across gl_NumSubgroups in a
// fixed order: nothing assumes a subgroup size (lavapipe 8, the H100 32) or a relation between
// gl_SubgroupInvocationID and gl_LocalInvocationID.
// Spec: 0 = workgroup size (>= R * MR), 1 = R (1..4), 2 = MR (= M, 1..4). The grid is
// nbatch * ceil(N / R) workgroups, folded past 65535 (npu_group_index).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint R = 2;
layout(constant_id = 2) const uint MR = 1;

#if defined(STORAGE_F32)
#define VEC_T vec4
#define VEC_N 4u
#else
#define VEC_T uvec4
#define VEC_N 8u
#endif

layout(std430, set = 0, binding = 0) readonly buffer A_ { VEC_T a4[]; };
layout(std430, set = 0, binding = 1) readonly buffer B_ { VEC_T b4[]; };
#include "matmul_epi.glsl"

// one partial sum per (output, subgroup): at most NPU_WG subgroups whatever their size
shared float red[MR][R][NPU_WG];

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

// Chunk c (16 bytes of every row) into the accumulators.
void accumulate(uint c)
{
    vec4 ae[MR], ao[MR];
    [[unroll]] for (uint m = 0; m < MR; m++) widen(a4[arow[m] + c], ae[m], ao[m]);
    [[unroll]] for (uint r = 0; r < R; r++) {
        vec4 be, bo;
        widen(b4[brow[r] + c], be, bo);
        [[unroll]] for (uint m = 0; m < MR; m++) acc[m][r] += chunk_dot(ae[m], ao[m], be, bo);
    }
}

void main()
{
    uint g = npu_group_index();
    uint tiles = (pc.N + R - 1) / R;
    if (g >= pc.nbatch * tiles) return; // the whole workgroup: no barrier is skipped
    uint bi = g / tiles, n0 = (g % tiles) * R;
    uint oa, ob;
    batch_offsets(bi, oa, ob);
    [[unroll]] for (uint m = 0; m < MR; m++) arow[m] = (oa + m * pc.K) / VEC_N;
    // rows past N (the last workgroup) read row N - 1 and are not stored
    [[unroll]] for (uint r = 0; r < R; r++) brow[r] = (ob + min(n0 + r, pc.N - 1) * pc.b_ns) / VEC_N;
    [[unroll]] for (uint m = 0; m < MR; m++)
        [[unroll]] for (uint r = 0; r < R; r++) acc[m][r] = 0.0;

    uint nv = pc.K / VEC_N, c = gl_LocalInvocationID.x;
    for (; c + NPU_WG < nv; c += 2 * NPU_WG) {
        accumulate(c);
        accumulate(c + NPU_WG);
    }
    if (c < nv) accumulate(c);

    [[unroll]] for (uint m = 0; m < MR; m++)
        [[unroll]] for (uint r = 0; r < R; r++) {
            float s = subgroupAdd(acc[m][r]);
            if (subgroupElect()) red[m][r][gl_SubgroupID] = s;
        }
    barrier();
    uint o = gl_LocalInvocationID.x;
    if (o < MR * R) {
        uint m = o / R, r = o % R, n = n0 + r;
        if (n < pc.N) {
            float t = 0.0;
            for (uint s = 0; s < gl_NumSubgroups; s++) t += red[m][r][s];
            store(bi * pc.M * pc.N, m, n, t);
        }
    }
}
