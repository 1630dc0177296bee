// unary: y[i] = f(x[i]) over the physical buffer, computed in float32. Codes and parameters:
// compiler/lower_unary.c. Spec: 0 = workgroup size. Bindings: 0 = x, 1 = y. Push {n, code, a, b}.
#version 450
#include "common.glsl"
#include "index.glsl"

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
    case 1: r = (v > 0.0 || isnan(v)) ? v : 0.0; break;
    case 2: r = npu_clamp(v, 0.0, 6.0); break;
    case 3: r = npu_clamp(v, pc.a, pc.b); break;
    case 4: r = v * npu_clamp(v + 3.0, 0.0, 6.0) / 6.0; break;
    case 5: r = npu_clamp(v + 3.0, 0.0, 6.0) / 6.0; break;
    case 6: r = 1.0 / (1.0 + exp(-v)); break;
    case 7: r = tanh(clamp(v, -15.0, 15.0)); break;
    case 8: {
        // erf by Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7): GLSL has no erf
        float z = abs(v) * 0.70710678;
        float t = 1.0 / (1.0 + 0.3275911 * z);
        float e = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * exp(-z * z);
        r = 0.5 * v * (1.0 + sign(v) * e);
        break;
    }
    case 9: {
        float u = 0.7978845608 * (v + 0.044715 * v * v * v);
        r = 0.5 * v * (1.0 + tanh(clamp(u, -15.0, 15.0)));
        break;
    }
    case 10: r = v / (1.0 + exp(-v)); break;
    case 11: r = -v; break;
    case 12: r = exp(v); break;
    case 13: r = log(v); break;
    case 14: r = abs(v); break;
    case 15: r = sqrt(v); break;
    case 16: r = inversesqrt(v); break;
    case 17: r = cos(v); break;
    case 18: r = sin(v); break;
    case 19: r = npu_clamp(v, pc.a, pc.b); break;
    }
    y[i] = S_STORE(r);
}
