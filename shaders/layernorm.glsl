// layernorm body of the rows layernorm (x, w, b), layernorm_w (x, w) and layernorm_plain (x),
// which define LN_WEIGHT and LN_BIAS (0 or 1): the output binds
// right after the inputs. y = (x - mean) / sqrt(var + eps) [* w] [+ b] over the row, the mean and
// the biased variance in two float32 passes (as runtime/cpu/cpu_reduce.c). One workgroup per row.
// Spec: 0 = workgroup size (a power of two). Push: shaders/norm_row.glsl.
#include "common.glsl"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer X { STORAGE_T x[]; };
#if LN_WEIGHT
layout(std430, set = 0, binding = 1) readonly buffer W { STORAGE_T w[]; };
#endif
#if LN_BIAS
layout(std430, set = 0, binding = 2) readonly buffer B { STORAGE_T b[]; };
#endif
layout(std430, set = 0, binding = 1 + LN_WEIGHT + LN_BIAS) writeonly buffer Y { STORAGE_T y[]; };

#include "norm_row.glsl"

void main()
{
    uint r = npu_group_index();
    if (r >= pc.rows) return; // uniform over the workgroup: the barriers below stay uniform
    uint xb, yb;
    norm_row_base(r, xb, yb);
    float s = 0.0;
    for (uint j = gl_LocalInvocationID.x; j < pc.n; j += NPU_WG) s += S_LOAD(x[xb + j]);
    float mean = norm_sum(s) / float(pc.n);
    float q = 0.0;
    for (uint j = gl_LocalInvocationID.x; j < pc.n; j += NPU_WG) {
        float d = S_LOAD(x[xb + j]) - mean;
        q += d * d;
    }
    float rstd = 1.0 / sqrt(norm_sum(q) / float(pc.n) + pc.eps);
    for (uint j = gl_LocalInvocationID.x; j < pc.n; j += NPU_WG) {
        float v = (S_LOAD(x[xb + j]) - mean) * rstd;
#if LN_WEIGHT
        v *= S_LOAD(w[j]);
#endif
#if LN_BIAS
        v += S_LOAD(b[j]);
#endif
        y[yb + j] = S_STORE(v);
    }
}
