// unary: y[i] = f(x[i]) over the physical buffer, computed in float32. Codes and parameters:
// compiler/lower/lower_unary.c. Spec: 0 = workgroup size. Bindings: 0 = x, 1 = y. Push {n, code, a, b}.
#version 450
#include "common.glsl"
#include "index.glsl"
#include "eltwise.glsl"

layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { STORAGE_T y[]; };
layout(push_constant) uniform Push { uint n; uint code; float a; float b; } pc;

void main()
{
    uint i = npu_global_index();
    if (i >= pc.n) return;
    float v = S_LOAD(x[i]), r = v;
    switch (pc.code) {
    case 1: r = npu_relu(v); break;
    case 2: r = npu_clamp(v, 0.0, 6.0); break;
    case 3: r = npu_clamp(v, pc.a, pc.b); break;
    case 4: r = npu_hardswish(v); break;
    case 5: r = npu_hardsigmoid(v); break;
    case 6: r = npu_sigmoid(v); break;
    case 7: r = npu_tanh(v); break;
    case 8: r = npu_gelu(v); break;
    case 9: r = npu_gelu_tanh(v); break;
    case 10: r = npu_silu(v); break;
    case 11: r = -v; break;
    case 12: r = exp(v); break;
    case 13: r = log(v); break;
    case 14: r = abs(v); break;
    case 15: r = sqrt(v); break;
    case 16: r = inversesqrt(v); break;
    case 17: r = cos(v); break;
    case 18: r = sin(v); break;
    case 19: r = npu_clamp(v, pc.a, pc.b); break;
    case 20: r = v > 0.0 ? v : v * pc.a; break; // leaky_relu (NaN: NaN * a)
    }
    y[i] = S_STORE(r);
}
