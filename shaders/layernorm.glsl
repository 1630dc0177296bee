// layernorm body of the rows layernorm (x, w, b), layernorm_w (x, w) and layernorm_plain (x),
// which define LN_WEIGHT and LN_BIAS (0 or 1): the output binds
// right after the inputs. y = (x - mean) / sqrt(var + eps) [* w] [+ b] over the row, the mean and
// the biased variance in two float32 passes (as runtime/cpu/cpu_reduce.c). One workgroup per row.
// Spec: 0 = workgroup size (a power of two). Push: shaders/norm_row.glsl.
#include "common.glsl"
#include "index.glsl"

layout(local_size_x_id = 0) in;
#include "layernorm_io.glsl"

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
        float v = ln_affine((S_LOAD(x[xb + j]) - mean) * rstd, j);
        y[yb + j] = S_STORE(v);
    }
}
