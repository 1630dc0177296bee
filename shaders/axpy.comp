// axpy: y[i] = a * x[i] + y[i] for i < n, computed in float32 whatever the storage type.
// Spec constants: 0 = workgroup size (x). Bindings: 0 = x, 1 = y. Push: {n, a}.
#version 450
#include "common.glsl"

layout(local_size_x_id = 0) in;

layout(std430, set = 0, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, set = 0, binding = 1) buffer Y { STORAGE_T y[]; };
layout(push_constant) uniform Push { uint n; float a; } pc;

void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.n) return;
    y[i] = S_STORE(pc.a * S_LOAD(x[i]) + S_LOAD(y[i]));
}
