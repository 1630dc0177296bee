// rmsnorm: y = w * (x * 1/sqrt(mean(x^2) + eps)) over the last dim, one workgroup per row, the
// sum of squares in float32 (the fused pow/mean/add/rsqrt/mul/mul chain; compiler/lower/lower_norm.c).
// Spec: 0 = workgroup size (a power of two). Bindings: 0 = x, 1 = w [n], 2 = y.
// Push {n, rows, eps, od1, od2, xs0, xs1, xs2, ys0, ys1, ys2} (shaders/norm_row.glsl).
#version 450
#include "common.glsl"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, set = 0, binding = 1) readonly buffer W { STORAGE_T w[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Y { STORAGE_T y[]; };

#include "norm_row.glsl"

void main()
{
    uint r = npu_group_index();
    if (r >= pc.rows) return; // uniform over the workgroup: the barriers below stay uniform
    uint xb, yb;
    norm_row_base(r, xb, yb);
    float ss = 0.0;
    for (uint j = gl_LocalInvocationID.x; j < pc.n; j += NPU_WG) {
        float v = S_LOAD(x[xb + j]);
        ss += v * v;
    }
    float rs = 1.0 / sqrt(norm_sum(ss) / float(pc.n) + pc.eps);
    for (uint j = gl_LocalInvocationID.x; j < pc.n; j += NPU_WG)
        y[yb + j] = S_STORE(S_LOAD(w[j]) * (S_LOAD(x[xb + j]) * rs));
}
