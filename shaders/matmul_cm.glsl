// Tensor-core matmul for M > 1 (compiler/lower_matmul_cm.c, docs/kernels.md): the nv-coopmat
// tier's kernel for the matmul family with f16 storage, Y[b, m, n] = act(alpha * sum_k A[b, m, k]
// B[b, k, n] + beta * bias[m, n]) with fp32 accumulation, on the tile loop of
// shaders/gemm_tile.glsl (GEMM_CM 1; CM_EMULATE 1 builds the portable emulation, stems *_cmx).
// One workgroup computes a BM x BN tile of one batch matrix over one K split.
// Stems: matmul_cm (bindings A, B, bias, Y), matmul_cm_nb (A, B, Y), matmul_cm_part (A, B,
// partials, Y: the fp32 partial sums [nsplit, batch*M*N] of a K split; Y is not accessed), and
// their emulations; the split's reduce is matmul_red / matmul_red_nb (shaders/matmul_red.glsl).
// A is dense [.., M, K]; B[k, n] is at k*b_ks + n*b_ns: a linear weight [N, K] (b_ks = 1) is
// staged transposed (B_KMAJOR, spec 4), so both operands are read along K.
// Push: the matmul block {M, N, K, b_ks, b_ns, nbatch, bdim[4], sa[4], sb[4], bias_ms, bias_ns,
// act, alpha, beta}, then {mtiles, ntiles, nsplit, kchunk}. Spec: 0 = 128, 1..4 = BM, BN, BK,
// B_KMAJOR.
#define GEMM_CM 1
#ifndef CM_EMULATE
#define CM_EMULATE 0
#endif
#ifndef MM_PART
#define MM_PART 0
#endif
#include "common.glsl"
#include "index.glsl"

layout(local_size_x_id = 0) in;

#include "matmul_cm_common.glsl"
#include "gemm_tile.glsl"

layout(std430, set = 0, binding = 0) restrict readonly buffer A_ { STORAGE_T a[]; };
layout(std430, set = 0, binding = 1) restrict readonly buffer B_ { STORAGE_T b[]; };
#if MM_PART
layout(std430, set = 0, binding = 2) restrict writeonly buffer Part { float part[]; };
#elif MM_BIAS
layout(std430, set = 0, binding = 2) restrict readonly buffer Bias_ { STORAGE_T bias[]; };
layout(std430, set = 0, binding = 3) restrict writeonly buffer Y_ { STORAGE_T y[]; };
#else
layout(std430, set = 0, binding = 2) restrict writeonly buffer Y_ { STORAGE_T y[]; };
#endif

uint oa, ob, m0, n0, kend, bi, split;

void gemm_load(uint k0)
{
    uint tid = gl_LocalInvocationID.x;
    uint ak = tid % BK, am0 = tid / BK, k = k0 + ak;
    [[unroll]] for (uint j = 0; j < AEL; j++) {
        uint m = m0 + am0 + j * AROWS;
        GEMM_LOAD(ra[j], a, all(bvec2(m < pc.M, k < kend)), oa + m * pc.K + k);
    }
    if (B_KMAJOR != 0) {
        uint bk = tid % BK, bn0 = tid / BK, kb = k0 + bk; // GEMM_WG / BK columns per pass
        [[unroll]] for (uint j = 0; j < BEL; j++) {
            uint n = n0 + bn0 + j * (GEMM_WG / BK);
            GEMM_LOAD(rb[j], b, all(bvec2(n < pc.N, kb < kend)), ob + kb * pc.b_ks + n * pc.b_ns);
        }
    } else {
        uint bn = tid % BN, bk0 = tid / BN, n = n0 + bn;
        [[unroll]] for (uint j = 0; j < BEL; j++) {
            uint kb = k0 + bk0 + j * BROWS;
            GEMM_LOAD(rb[j], b, all(bvec2(n < pc.N, kb < kend)), ob + kb * pc.b_ks + n * pc.b_ns);
        }
    }
}

void gemm_stage()
{
    uint tid = gl_LocalInvocationID.x;
    uint ak = tid % BK, am0 = tid / BK;
    [[unroll]] for (uint j = 0; j < AEL; j++) SH_A[(am0 + j * AROWS) * (BK + A_PAD) + ak] = SH_T(ra[j]);
    if (B_KMAJOR != 0) {
        uint bk = tid % BK, bn0 = tid / BK;
        [[unroll]] for (uint j = 0; j < BEL; j++)
            SH_B[(bn0 + j * (GEMM_WG / BK)) * (BK + B_PAD) + bk] = SH_T(rb[j]);
    } else {
        uint bn = tid % BN, bk0 = tid / BN;
        [[unroll]] for (uint j = 0; j < BEL; j++) SH_B[(bk0 + j * BROWS) * (BN + B_PAD) + bn] = SH_T(rb[j]);
    }
}

void gemm_emit(uint mm, uint nn, float v)
{
    // the bias load at clamped coordinates, the store only inside the output
    uint m = m0 + mm, n = n0 + nn;
    bool ok = all(bvec2(m < pc.M, n < pc.N));
    m = min(m, pc.M - 1);
    n = min(n, pc.N - 1);
#if MM_PART
    if (ok) part[((split * pc.nbatch + bi) * pc.M + m) * pc.N + n] = v;
#else
    v *= pc.alpha;
#if MM_BIAS
    v += pc.beta * S_LOAD(bias[m * pc.bias_ms + n * pc.bias_ns]);
#endif
    v = npu_activate(v, pc.act);
    if (ok) y[(bi * pc.M + m) * pc.N + n] = S_STORE(v);
#endif
}

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
    gemm_run(kbeg, kend);
}
