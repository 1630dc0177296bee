// matmul K-split second pass (compiler/lower_matmul_cm.c): one invocation per output element of
// the batch*M*N adds the nsplit fp32 partial sums of matmul_cm_part in split order, then the
// epilogue act(alpha * sum + beta * bias). Stems matmul_red (bindings partials, bias, Y) and
// matmul_red_nb (partials, Y). Push: the matmul_cm block; spec 0 = workgroup size.
#include "common.glsl"
#include "index.glsl"

layout(local_size_x_id = 0) in;

#include "matmul_cm_common.glsl"

layout(std430, set = 0, binding = 0) restrict readonly buffer Part { float part[]; };
#if MM_BIAS
layout(std430, set = 0, binding = 1) restrict readonly buffer Bias_ { STORAGE_T bias[]; };
layout(std430, set = 0, binding = 2) restrict writeonly buffer Y_ { STORAGE_T y[]; };
#else
layout(std430, set = 0, binding = 1) restrict writeonly buffer Y_ { STORAGE_T y[]; };
#endif

void main()
{
    uint total = pc.nbatch * pc.M * pc.N, i = npu_global_index();
    if (i >= total) return;
    float v = 0.0;
    for (uint s = 0; s < pc.nsplit; s++) v += part[s * total + i];
    v *= pc.alpha;
#if MM_BIAS
    uint m = (i / pc.N) % pc.M, n = i % pc.N;
    v += pc.beta * S_LOAD(bias[m * pc.bias_ms + n * pc.bias_ns]);
#endif
    y[i] = S_STORE(npu_activate(v, pc.act));
}
