// Tensor-core matmul for M > 1 (compiler/lower/lower_matmul_cm.c, docs/kernels.md): the nv-coopmat
// tier's kernel for the matmul family with f16 or bf16 storage, Y[b, m, n] = post(act(alpha *
// sum_k A[b, m, k] B[b, k, n] + beta * bias[m, n]) + res[b, m, n]) with fp32 accumulation, on the
// tile loop of shaders/gemm_tile.glsl (GEMM_CM 1; CM_EMULATE 1 builds the portable emulation,
// stems *_cmx). One workgroup computes a BM x BN tile of one batch matrix over one K split.
// Stems: matmul_cm (bindings A, B, bias, Y), matmul_cm_nb (A, B, Y), matmul_cm_r (A, B, res, Y),
// matmul_cm_br (A, B, bias, res, Y), matmul_cm_part (A, B, partials, Y: the fp32 partial sums
// [nsplit, batch, mtiles * BM, ntiles * BN] of a K split, whole tiles, on the 64 tile stored
// straight from the accumulators: gemm_tile.glsl GEMM_PART; Y is not accessed), and their
// emulations; the split's reduce is matmul_red, _nb, _r, _br (shaders/matmul_red.glsl), which
// does the epilogue.
// Two compile-time tiles (gemm_tile.glsl): 64 x 64 x 32 with 128 invocations (2 x 2 subgroups of
// 32 x 32), and with MM_LARGE 1 (stems matmul_cml, _nb, _r, _br, _part, emulations matmul_cmlx*)
// 128 x 128 with 256 invocations (2 x 4 subgroups of 64 x 32, the result through 16-row
// stripes of shared memory): each staged byte feeds twice the MMAs, and the operands' traffic
// (A read once per N tile, B once per M tile) halves. Its K step is 64 on the GPU (half the
// barrier pairs of 32: 45 KB of shared memory; on an H100 ViT-B/16's GPU step went 1579 -> 1469
// us, Qwen2.5-1.5B prefill-128's 9181 -> 8888, ConvNeXt-T's 1139 -> 1113: bench/NOTES.md "K
// steps of 64"); the emulation (and the 128 x 64 layout) keep 32, as 45 KB is past lavapipe's
// 32 KB, so the GPU's conformance run (tier nv-coopmat) is what tests the 64 step.
// A is dense [.., M, K]; B[k, n] is at k*b_ks + n*b_ns: a linear weight [N, K] (b_ks = 1) is
// staged transposed (B_KMAJOR, spec 4), so both operands are read along K.
// Operands reach the tensor cores as float16_t: f16 storage as it is; bf16 converted while it is
// staged. That conversion is exact for magnitudes in fp16's normal range [2^-14, 65504] (bf16 has
// 8 significant bits, fp16 11); smaller ones become fp16 subnormals (absolute error below 2^-25,
// far under an fp32-accumulated dot product's rounding), larger ones overflow to +-inf, which
// the output then shows (never a silently clamped finite value): see docs/kernels.md "Tiers".
// Staging loads (spec 7 VEC): 0 = one element per load, any strides; 1 = 16-byte vectors of 8
// elements (the lowering proves A's rows and B's weight rows contiguous along K, K and every
// batch and binding offset multiples of 8 elements, B_KMAJOR): 4 loads per invocation and K
// step of 32 instead of 32. Either way shared memory takes one 16-byte store per 8 elements
// (GEMM_SH_VEC, shaders/gemm_tile.glsl).
// linear_glu (MM_GLU 1, stems matmul_cm_glu, _glu_nb, matmul_cml_glu, _glu_nb and their
// emulations): B is the gate's and up's weights interleaved (N = 2F columns, matmul_glu.glsl);
// the tile's SH_C pairs reach gemm_emit_glu (gemm_tile.glsl GEMM_GLU), which writes
// act(alpha * gate + beta * bias) * (alpha * up + beta * bias) into Y [batch, M, N / 2]. A K
// split's first pass is matmul_cm_part as for any product; its reduce, matmul_red_glu, pairs.
// Push: the matmul block {M, N, K, b_ks, b_ns, nbatch, bdim[4], sa[4], sb[4], bias_ms, bias_ns,
// act, alpha, beta, post}, then {mtiles, ntiles, nsplit, kchunk}. Spec: 0 = 128 (256 with
// MM_LARGE), 1..4 = BM, BN, BK, B_KMAJOR, 7 = VEC, 8 = CM_ABLATE (a measuring aid, 0 outside
// bench/: gemm_tile.glsl).
#define GEMM_CM 1
#define GEMM_SH_VEC 1
#ifndef CM_EMULATE
#define CM_EMULATE 0
#endif
#ifndef MM_PART
#define MM_PART 0
#endif
#ifndef MM_RES
#define MM_RES 0
#endif
#ifndef MM_LARGE
#define MM_LARGE 0
#endif
#ifndef MM_GLU
#define MM_GLU 0
#endif
#if MM_GLU && (MM_RES || MM_PART)
#error "linear_glu has no residual, and a K split's first pass writes plain partial sums"
#endif
#define GEMM_GLU MM_GLU
#ifndef MM_SHAPE
#define MM_SHAPE 0
#endif
#if MM_LARGE
// the large tile's two layouts (kernel key N, tuning knob cm.shape): 0 = 128 x 128 on 2 x 4
// subgroups of 64 x 32 (256 invocations); 1 = 128 x 64 on 2 x 2 subgroups of 64 x 32 (128
// invocations: a third of the registers, so several workgroups share an SM)
#define GEMM_CM_BM 128
#define GEMM_CM_SGM 2
#define GEMM_CM_STRIPE 16
#if !CM_EMULATE && MM_SHAPE == 0
#define GEMM_CM_BK 64 // KC_CM_BK_LARGE; the emulation keeps 32 (lavapipe's 32 KB of shared memory)
#endif
#if MM_SHAPE == 0
#define GEMM_CM_BN 128
#define GEMM_CM_SGN 4
#else
#define GEMM_CM_BN 64
#define GEMM_CM_SGN 2
#endif
#endif
#include "common.glsl"
#include "index.glsl"

layout(local_size_x_id = 0) in;

#include "matmul_cm_common.glsl"
#if MM_PART
// the partials of whole tiles: this tile's origin and row stride (set in main)
layout(std430, set = 0, binding = 2) restrict writeonly buffer Part { float part[]; };
uint part_base, part_ld;
#if !MM_LARGE
#define GEMM_PART 1 // stored from the accumulators (the large tile's emit writes them)
#endif
#endif
#define GEMM_ABLATE_ID 8
#include "gemm_tile.glsl"

layout(constant_id = 7) const uint VEC = 0;

layout(std430, set = 0, binding = 0) readonly buffer A_ { STORAGE_T a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B_ { STORAGE_T b[]; };
// the same operands as 16-byte vectors (VEC 1)
layout(std430, set = 0, binding = 0) readonly buffer A4_ { uvec4 a4[]; };
layout(std430, set = 0, binding = 1) readonly buffer B4_ { uvec4 b4[]; };
#if !MM_PART
#if MM_BIAS
layout(std430, set = 0, binding = 2) restrict readonly buffer Bias_ { STORAGE_T bias[]; };
#endif
#if MM_RES
layout(std430, set = 0, binding = 2 + MM_BIAS) restrict readonly buffer Res_ { STORAGE_T res[]; };
#endif
layout(std430, set = 0, binding = 2 + MM_BIAS + MM_RES) restrict writeonly buffer Y_ { STORAGE_T y[]; };
#endif

uint oa, ob, m0, n0, kend, bi, split;

// Per invocation and step: SV_A vector slots of A and SV_B of B (gemm_tile.glsl, GEMM_SH_VEC):
// slot v holds 8 consecutive elements along K of tile row v / KV (A, K-major B), or along N of
// tile row v / (BN / 8) (B along N). VEC 1: the raw 16-byte loads (bf16 converted in
// gemm_stage); VEC 0: 8 one-element loads, packed as halves when loaded.
uvec4 va[SV_A], vb[SV_B];

// One 16-byte vector of 8 elements from buffer v4 at element index idx (a multiple of 8), or
// zeros when !ok (the load is issued at index 0 then: no branch, see GEMM_LOAD)
#define VEC_LOAD(dst, v4, ok, idx)                                                             \
    {                                                                                          \
        bool ok_ = (ok);                                                                       \
        uvec4 t_ = v4[mix(0u, (idx) / 8u, ok_)];                                               \
        dst = mix(uvec4(0u), t_, bvec4(ok_));                                                  \
    }

// 8 one-element loads of buf at idx + i * step (i < 8, each while i < lim), packed as halves
uvec4 pack8(float f[8])
{
    return uvec4(packHalf2x16(vec2(f[0], f[1])), packHalf2x16(vec2(f[2], f[3])),
                 packHalf2x16(vec2(f[4], f[5])), packHalf2x16(vec2(f[6], f[7])));
}
#define LOAD8(dst, buf, ok, idx, step, lim)                                                    \
    {                                                                                          \
        float f_[8];                                                                           \
        [[unroll]] for (uint i_ = 0; i_ < 8u; i_++)                                            \
            GEMM_LOAD(f_[i_], buf, all(bvec2(ok, i_ < (lim))), (idx) + i_ * (step));           \
        dst = pack8(f_);                                                                       \
    }

// A loaded vector as 8 halves: f16 as it is; bf16 widened (a shift, exact) and converted
// (exact in fp16's normal range, +-inf past 65504)
uvec4 to_f16(uvec4 v)
{
#if defined(STORAGE_BF16)
    uvec4 r;
    [[unroll]] for (uint i = 0; i < 4u; i++)
        r[i] = packHalf2x16(vec2(uintBitsToFloat(v[i] << 16), uintBitsToFloat(v[i] & 0xffff0000u)));
    return r;
#else
    return v;
#endif
}

void gemm_load(uint k0)
{
    uint tid = gl_LocalInvocationID.x;
    [[unroll]] for (uint j = 0; j < SV_A; j++) {
        uint v = tid + j * GEMM_WG, m = m0 + v / KV, k = k0 + (v % KV) * 8u;
        if ((CM_ABLATE & 32u) != 0) va[j] = uvec4(0u); else
        if (VEC != 0)
            VEC_LOAD(va[j], a4, all(bvec2(m < pc.M, k < kend)), oa + m * pc.K + k)
        else
            LOAD8(va[j], a, m < pc.M, oa + m * pc.K + k, 1u, kend - min(k, kend))
    }
    if (B_KMAJOR != 0) {
        [[unroll]] for (uint j = 0; j < SV_B; j++) {
            uint v = tid + j * GEMM_WG, n = n0 + v / KV, k = k0 + (v % KV) * 8u;
            if ((CM_ABLATE & 64u) != 0) vb[j] = uvec4(0u); else
            if (VEC != 0)
                VEC_LOAD(vb[j], b4, all(bvec2(n < pc.N, k < kend)), ob + n * pc.b_ns + k)
            else
                LOAD8(vb[j], b, n < pc.N, ob + k * pc.b_ks + n * pc.b_ns, pc.b_ks, kend - min(k, kend))
        }
    } else {
        const uint NV8 = BN / 8u;
        [[unroll]] for (uint j = 0; j < SV_B; j++) {
            uint v = tid + j * GEMM_WG, k = k0 + v / NV8, n = n0 + (v % NV8) * 8u;
            LOAD8(vb[j], b, k < kend, ob + k * pc.b_ks + n * pc.b_ns, pc.b_ns, pc.N - min(n, pc.N))
        }
    }
}

void gemm_stage()
{
    uint tid = gl_LocalInvocationID.x;
    [[unroll]] for (uint j = 0; j < SV_A; j++) {
        uint v = tid + j * GEMM_WG;
        SH_A[(v / KV) * ROWA + v % KV] = VEC != 0 ? to_f16(va[j]) : va[j];
    }
    [[unroll]] for (uint j = 0; j < SV_B; j++) {
        uint v = tid + j * GEMM_WG;
        if (B_KMAJOR != 0)
            SH_B[(v / KV) * ROWB + v % KV] = VEC != 0 ? to_f16(vb[j]) : vb[j];
        else
            SH_B[(v / (BN / 8u)) * ROWN + v % (BN / 8u)] = vb[j];
    }
}

#if MM_GLU
// gate column nn of the tile (nn % 32 < 16) with its up column nn + 16: output element
// (m, mm_glu_col(n)); loads at clamped coordinates (N - 17 is a gate column: N % 32 == 0), the
// store only inside the output
void gemm_emit_glu(uint mm, uint nn, float g, float u)
{
    uint m = m0 + mm, n = n0 + nn;
    bool ok = all(bvec2(m < pc.M, n < pc.N));
    m = min(m, pc.M - 1);
    n = min(n, pc.N - 1u - GLU_BLOCK);
    float v = MM_GLU_VALUE(m, n, g, u);
    if (ok) y[(bi * pc.M + m) * (pc.N / 2u) + mm_glu_col(n)] = S_STORE(v);
}
#else
void gemm_emit(uint mm, uint nn, float v)
{
    // the bias load at clamped coordinates, the store only inside the output
    uint m = m0 + mm, n = n0 + nn;
    bool ok = all(bvec2(m < pc.M, n < pc.N));
    m = min(m, pc.M - 1);
    n = min(n, pc.N - 1);
#if MM_PART
    if (ok) part[part_base + mm * part_ld + nn] = v; // the large tile (the 64 tile: GEMM_PART)
#else
    v *= pc.alpha;
#if MM_BIAS
    v += pc.beta * S_LOAD(bias[m * pc.bias_ms + n * pc.bias_ns]);
#endif
    v = npu_activate(v, pc.act);
    uint i = (bi * pc.M + m) * pc.N + n;
#if MM_RES
    v = npu_activate(v + S_LOAD(res[i]), pc.post);
#endif
    if (ok) y[i] = S_STORE(v);
#endif
}
#endif

void main()
{
    uint g = npu_group_index();
    uint nt = g % pc.ntiles, rest = g / pc.ntiles;
    uint mt = rest % pc.mtiles;
    rest /= pc.mtiles;
    bi = rest % pc.nbatch;
    split = rest / pc.nbatch;
    if (split >= pc.nsplit) return; // the grid was folded past 65535: the whole workgroup
    mm_batch_offsets(bi, oa, ob);
    m0 = mt * BM;
    n0 = nt * BN;
    uint kbeg = split * pc.kchunk;
    kend = min(pc.K, kbeg + pc.kchunk);
#if MM_PART
    part_ld = pc.ntiles * BN;
    part_base = ((split * pc.nbatch + bi) * pc.mtiles * BM + m0) * part_ld + n0;
#endif
    if ((CM_ABLATE & 1u) != 0) {
        [[unroll]] for (uint j = 0; j < SV_A; j++) va[j] = uvec4(0u);
        [[unroll]] for (uint j = 0; j < SV_B; j++) vb[j] = uvec4(0u);
    }
    // The tiles of one M row and split read the same A rows: each starts its K steps at its N
    // tile's place in the split (gemm_tile.glsl gemm_rot), so at a time they read different
    // parts of A, not one part from the same L2 lines (Qwen2.5-1.5B prefill-128 on an H100:
    // GPU step 8909 -> 8481 us; bench/NOTES.md "K steps rotated"). Partial sums then add in
    // another order per tile (fp32; the result is deterministic).
    gemm_rot = nt;
    gemm_run(kbeg, kend);
}
