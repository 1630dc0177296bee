// layernorm body of the rows layernorm (x, w, b), layernorm_w (x, w) and layernorm_plain (x),
// which define LN_WEIGHT and LN_BIAS (0 or 1): the output binds
// right after the inputs. y = (x - mean) / sqrt(var + eps) [* w] [+ b] over the row, the mean and
// the biased variance in two float32 passes (as runtime/cpu/cpu_reduce.c). One workgroup per row.
// Spec: 0 = workgroup size (a power of two), 1 = LN_E: with LN_E > 0 (a row of at most LN_E *
// NPU_WG elements) each invocation loads its elements j = t + i * NPU_WG into registers at once,
// so x is read once and the loads overlap; with 0 each of the three passes walks x again, a
// dependent trip per NPU_WG elements. Push: shaders/norm_row.glsl.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint LN_E = 0;
#include "layernorm_io.glsl"

#include "norm_row.glsl"

void main()
{
    uint r = npu_group_index();
    if (r >= pc.rows) return; // uniform over the workgroup: the barriers below stay uniform
    uint xb, yb, t = gl_LocalInvocationID.x;
    norm_row_base(r, xb, yb);
    if (LN_E != 0u) {
        float v[LN_E > 0u ? LN_E : 1u];
        float s = 0.0;
        [[unroll]] for (uint i = 0; i < LN_E; i++) {
            uint j = t + i * NPU_WG;
            float e = S_LOAD(x[xb + min(j, pc.n - 1u)]); // in the row: no read past x's end
            v[i] = j < pc.n ? e : 0.0;
            s += v[i];
        }
        float mean = norm_sum(s) / float(pc.n), q = 0.0;
        [[unroll]] for (uint i = 0; i < LN_E; i++) {
            float d = v[i] - mean;
            q += t + i * NPU_WG < pc.n ? d * d : 0.0;
        }
        float rstd = 1.0 / sqrt(norm_sum(q) / float(pc.n) + pc.eps);
        [[unroll]] for (uint i = 0; i < LN_E; i++) {
            uint j = t + i * NPU_WG;
            if (j < pc.n) y[yb + j] = S_STORE(ln_affine((v[i] - mean) * rstd, j));
        }
        return;
    }
    float s = 0.0;
    for (uint j = t; j < pc.n; j += NPU_WG) s += S_LOAD(x[xb + j]);
    float mean = norm_sum(s) / float(pc.n);
    float q = 0.0;
    for (uint j = t; j < pc.n; j += NPU_WG) {
        float d = S_LOAD(x[xb + j]) - mean;
        q += d * d;
    }
    float rstd = 1.0 / sqrt(norm_sum(q) / float(pc.n) + pc.eps);
    for (uint j = t; j < pc.n; j += NPU_WG) {
        float v = ln_affine((S_LOAD(x[xb + j]) - mean) * rstd, j);
        y[yb + j] = S_STORE(v);
    }
}
