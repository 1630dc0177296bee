// matmul K-split second pass (compiler/lower/lower_matmul_cm.c): one invocation per output element of
// the batch*M*N adds the nsplit fp32 partial sums of matmul_cm_part in split order, then the
// epilogue post(act(alpha * sum + beta * bias) + res). Stems matmul_red (bindings partials,
// bias, Y), matmul_red_nb (partials, Y), matmul_red_r (partials, res, Y) and matmul_red_br
// (partials, bias, res, Y). Push: the matmul_cm block; spec 0 = workgroup size, 1, 2 = the first
// pass's tile BM, BN: its partials are whole tiles, [nsplit, batch, mtiles * BM, ntiles * BN].
// MM_GLU 1 (matmul_red_glu: partials, bias, Y; matmul_red_glu_nb: partials, Y): linear_glu's
// reduce, one invocation per element of Y [batch, M, N / 2] adding both columns of its pair
// (matmul_glu.glsl) and writing act(gate) * up.
#ifndef MM_RES
#define MM_RES 0
#endif
#ifndef MM_GLU
#define MM_GLU 0
#endif
#if MM_GLU && MM_RES
#error "linear_glu has no residual"
#endif
#include "common.glsl"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BM = 64;
layout(constant_id = 2) const uint BN = 64;

#include "matmul_cm_common.glsl"

layout(std430, set = 0, binding = 0) restrict readonly buffer Part { float part[]; };
#if MM_BIAS
layout(std430, set = 0, binding = 1) restrict readonly buffer Bias_ { STORAGE_T bias[]; };
#endif
#if MM_RES
layout(std430, set = 0, binding = 1 + MM_BIAS) restrict readonly buffer Res_ { STORAGE_T res[]; };
#endif
layout(std430, set = 0, binding = 1 + MM_BIAS + MM_RES) restrict writeonly buffer Y_ { STORAGE_T y[]; };

// element (row, n) of Y's [batch * M, N] rows in split 0's partials; split s is s * part_split()
// further
uint part_at(uint row, uint n)
{
    uint b = row / pc.M, m = row % pc.M;
    return (b * pc.mtiles * BM + m) * (pc.ntiles * BN) + n;
}
uint part_split()
{
    return pc.nbatch * pc.mtiles * BM * pc.ntiles * BN;
}

#if MM_GLU
#include "matmul_glu.glsl"

void main()
{
    uint total = pc.nbatch * pc.M * pc.N, half_n = pc.N / 2u, i = npu_global_index();
    if (i >= total / 2u) return;
    uint row = i / half_n, n = mm_glu_pair(i % half_n), j = part_at(row, n), ps = part_split();
    float g = 0.0, u = 0.0;
    for (uint s = 0; s < pc.nsplit; s++) {
        g += part[s * ps + j];
        u += part[s * ps + j + GLU_BLOCK];
    }
    uint m = row % pc.M;
    y[i] = S_STORE(MM_GLU_VALUE(m, n, g, u));
}
#else
void main()
{
    uint total = pc.nbatch * pc.M * pc.N, i = npu_global_index();
    if (i >= total) return;
    uint j = part_at(i / pc.N, i % pc.N), ps = part_split();
    float v = 0.0;
    for (uint s = 0; s < pc.nsplit; s++) v += part[s * ps + j];
    v *= pc.alpha;
#if MM_BIAS
    uint m = (i / pc.N) % pc.M, n = i % pc.N;
    v += pc.beta * S_LOAD(bias[m * pc.bias_ms + n * pc.bias_ns]);
#endif
    v = npu_activate(v, pc.act);
#if MM_RES
    v = npu_activate(v + S_LOAD(res[i]), pc.post);
#endif
    y[i] = S_STORE(v);
}
#endif
