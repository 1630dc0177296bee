// decode_attention_combine: the flash-decoding second pass. For each (batch, query head) merges
// the nsplit fp32 partials {m_s, l_s, acc_s[D]} of decode_attention_split.comp:
//   M = max_s m_s,  w_s = exp(m_s - M) (0 for a split with nothing valid, m_s = -inf),
//   out[d] = sum_s w_s acc_s[d] / sum_s w_s l_s
// in a fixed split order. All splits -inf gives 0 / 0 = NaN, as the reference's softmax does.
// One workgroup per (batch, query head), one invocation per head dim (looping past NPU_WG).
// Bindings: 0 = partials [B*Hq, nsplit, D + 2] (float, whatever the compute dtype), 1 = out.
// Push {nsplit, D, Hq, o_sb, o_sh}. Spec: 0 = workgroup size. Lowering:
// compiler/lower_attention.c.
#version 450
#include "common.glsl"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer PB { float partials[]; };
layout(std430, set = 0, binding = 1) writeonly buffer OB { STORAGE_T o[]; };
layout(push_constant) uniform Push { uint nsplit; uint D; uint Hq; uint o_sb; uint o_sh; } pc;

#define NINF uintBitsToFloat(0xff800000u)

void main()
{
    uint lid = gl_LocalInvocationID.x;
    uint grp = npu_group_index();
    uint b = grp / pc.Hq, h = grp % pc.Hq;
    uint D = pc.D, stride = D + 2, base = grp * pc.nsplit * stride;
    float M = NINF;
    for (uint s = 0; s < pc.nsplit; s++) M = max(M, partials[base + s * stride]);
    for (uint d = lid; d < D; d += NPU_WG) {
        float sv = 0.0, sl = 0.0;
        for (uint s = 0; s < pc.nsplit; s++) {
            uint pb = base + s * stride;
            float ms = partials[pb];
            float w = ms == NINF ? 0.0 : exp(ms - M);
            sl += w * partials[pb + 1];
            sv += w * partials[pb + 2 + d];
        }
        o[b * pc.o_sb + h * pc.o_sh + d] = S_STORE(sv / sl);
    }
}
