// fill: out[i] = value (+ i when the spec constant RAMP is non-zero), for i < n.
// Spec constants: 0 = workgroup size (x), 1 = RAMP. Bindings: 0 = out. Push: {n, value}.
#version 450
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint RAMP = 0;

layout(std430, set = 0, binding = 0) writeonly buffer Out { STORAGE_T out_[]; };
layout(push_constant) uniform Push { uint n; float value; } pc;

void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.n) return;
    out_[i] = S_STORE(pc.value + (RAMP != 0u ? float(i) : 0.0));
}
