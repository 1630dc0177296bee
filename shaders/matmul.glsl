// matmul: Y[b, m, n] = act(alpha * sum_k A[b, m, k] * B[b, k, n] + beta * bias[m, n]) (+ res)
// for linear, addmm, matmul, bmm, mm, linear_act and linear_add (compiler/lower/lower_matmul.c), fp32
// accumulation. The body of the stems that differ only in their bindings (matmul, matmul_nb,
// matmul_r, matmul_br, the GLU's: MM_BIAS, MM_RES, MM_GLU in shaders/kernels.def; the bindings
// after B, the push constants and the epilogue are shaders/matmul_epi.glsl). A is dense [.., M, K]; B[k, n] is at
// k*b_ks + n*b_ns (linear weights [N, K] have b_ks = 1); Y is dense [batch, M, N].
// Spec: 0 = workgroup size, 1 = path (0 tiled, 1 vector), 2 = TM (tiled rows per workgroup),
// 3 = TN (tiled columns per workgroup; vector: columns per workgroup), 4 = TK.
// Tiled: a workgroup computes a TM x TN tile, staging TM x TK of A and TK x TN of B in shared
// memory per K step; each invocation owns a 4 x 4 register tile (rows tm + r*TM/4, columns
// tn + c*TN/4, so neighbouring invocations store neighbouring columns).
// Vector (M == 1 when the 16-byte path, shaders/gemv.glsl, cannot be proven safe; conv2d_mv(_b),
// MM_CONV: a pointwise conv over a 1x1 map, one batch matrix per image): a workgroup
// computes TN columns; KS = NPU_WG / TN invocations split K per column and reduce in shared
// memory in a fixed order. Lanes of one column are adjacent when B is contiguous along k (weight
// rows), else lanes of one k-slice are adjacent along n: either way neighbouring lanes load
// neighbouring elements.
// linear_glu (MM_GLU, stems matmul_glu, matmul_glu_nb): B is the gate's and up's weights
// interleaved (N = 2F columns, matmul_glu.glsl), the tiled path only (TN 32 or 64), and each
// invocation writes act(gate) * up for the pairs among its columns into Y [batch, M, N / 2].
// Batch: index b unravels over bdim (4 dims, innermost last); A and B offsets are its
// coordinates times sa / sb (0 broadcasts).
#include "common.glsl"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint VECTOR = 0;
layout(constant_id = 2) const uint TM = 64;
layout(constant_id = 3) const uint TN = 64;
layout(constant_id = 4) const uint TK = 16;

layout(std430, set = 0, binding = 0) readonly buffer A_ { STORAGE_T a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B_ { STORAGE_T b[]; };
#include "matmul_epi.glsl"

// tiled: TK * (TM + TN) <= 2048; vector: NPU_WG <= 2048 (lower_matmul.c keeps both)
shared float sh[2048];

void gemm_tiled()
{
    uint g = npu_group_index();
    uint tiles_n = (pc.N + TN - 1) / TN, per_batch = ((pc.M + TM - 1) / TM) * tiles_n;
    if (g >= pc.nbatch * per_batch) return; // the whole workgroup: no barrier is skipped
    uint bi = g / per_batch, t = g % per_batch;
    uint m0 = (t / tiles_n) * TM, n0 = (t % tiles_n) * TN;
    uint oa, ob;
    mm_batch_offsets(bi, oa, ob);
    const uint CM = TM / 4, CN = TN / 4;
    uint tid = gl_LocalInvocationID.x, tn = tid % CN, tm = tid / CN;
    float acc[16];
    for (int i = 0; i < 16; i++) acc[i] = 0.0;
    for (uint k0 = 0; k0 < pc.K; k0 += TK) {
        for (uint i = tid; i < TM * TK; i += NPU_WG) {
            uint mm = i / TK, kk = i % TK, gm = m0 + mm, gk = k0 + kk;
            sh[kk * TM + mm] = (gm < pc.M && gk < pc.K) ? S_LOAD(a[oa + gm * pc.K + gk]) : 0.0;
        }
        for (uint i = tid; i < TN * TK; i += NPU_WG) {
            uint nn, kk;
            if (pc.b_ks == 1) {
                nn = i / TK;
                kk = i % TK;
            } else {
                kk = i / TN;
                nn = i % TN;
            }
            uint gn = n0 + nn, gk = k0 + kk;
            sh[TM * TK + kk * TN + nn] =
                (gn < pc.N && gk < pc.K) ? S_LOAD(b[ob + gk * pc.b_ks + gn * pc.b_ns]) : 0.0;
        }
        barrier();
        for (uint kk = 0; kk < TK; kk++) {
            float av[4], bv[4];
            for (uint r = 0; r < 4; r++) av[r] = sh[kk * TM + tm + r * CM];
            for (uint c = 0; c < 4; c++) bv[c] = sh[TM * TK + kk * TN + tn + c * CN];
            for (uint r = 0; r < 4; r++)
                for (uint c = 0; c < 4; c++) acc[r * 4 + c] += av[r] * bv[c];
        }
        barrier();
    }
#if MM_GLU
    // linear_glu (TN 32 or 64, so n0 is a multiple of 32): the invocation's columns tn + c * CN
    // hold both columns of each of their pairs, gate column c's up column being c + 16 / CN
    uint yoff = bi * pc.M * (pc.N / 2u);
    const uint CP = GLU_BLOCK / CN;
    for (uint r = 0; r < 4; r++)
        for (uint c = 0; c < 4; c++) {
            uint m = m0 + tm + r * CM, n = n0 + tn + c * CN;
            if (mm_glu_gate(n) && c + CP < 4 && m < pc.M && n < pc.N)
                store_glu(yoff, m, n, acc[r * 4 + c], acc[r * 4 + c + CP]);
        }
#else
    uint yoff = bi * pc.M * pc.N;
    for (uint r = 0; r < 4; r++)
        for (uint c = 0; c < 4; c++) {
            uint m = m0 + tm + r * CM, n = n0 + tn + c * CN;
            if (m < pc.M && n < pc.N) store(yoff, m, n, acc[r * 4 + c]);
        }
#endif
}

void gemv()
{
    uint g = npu_group_index();
    uint tiles_n = (pc.N + TN - 1) / TN;
    if (g >= pc.nbatch * tiles_n) return; // the whole workgroup
    uint bi = g / tiles_n, n0 = (g % tiles_n) * TN;
    uint oa, ob;
    mm_batch_offsets(bi, oa, ob);
    const uint KS = NPU_WG / TN;
    uint tid = gl_LocalInvocationID.x, c, s;
    if (pc.b_ks == 1) {
        c = tid / KS;
        s = tid % KS;
    } else {
        c = tid % TN;
        s = tid / TN;
    }
    uint n = n0 + c;
    float sum = 0.0;
    if (n < pc.N) {
        uint bo = ob + n * pc.b_ns;
        for (uint k = s; k < pc.K; k += KS) sum += S_LOAD(a[oa + k]) * S_LOAD(b[bo + k * pc.b_ks]);
    }
    sh[s * TN + c] = sum;
    barrier();
    for (uint h = KS / 2; h > 0; h >>= 1) {
        if (s < h) sh[s * TN + c] += sh[(s + h) * TN + c];
        barrier();
    }
    if (s == 0 && n < pc.N) store(MM_YOFF(bi), 0, n, sh[c]);
}

void main()
{
    if (VECTOR != 0)
        gemv();
    else
        gemm_tiled();
}
