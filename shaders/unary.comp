// unary: y[i] = f(x[i]) over the physical buffer, computed in float32. The op's parameters:
// compiler/lower/lower_unary.c. Spec: 0 = workgroup size. Bindings: 0 = x, 1 = y. Push abi.h
// UNARY_PUSH (the code UN_*).
#version 450
#include "common.glsl"
#include "abi.h"
#include "index.glsl"
#include "eltwise.glsl"

layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { STORAGE_T y[]; };
PUSH_BLOCK(UNARY_PUSH)

void main()
{
    uint i = npu_global_index();
    if (i >= pc.n) return;
    float v = S_LOAD(x[i]), r = v;
    switch (pc.code) {
    case UN_RELU: r = npu_relu(v); break;
    case UN_RELU6: r = npu_clamp(v, 0.0, 6.0); break;
    case UN_HARDTANH: r = npu_clamp(v, pc.a, pc.b); break;
    case UN_HARDSWISH: r = npu_hardswish(v); break;
    case UN_HARDSIGMOID: r = npu_hardsigmoid(v); break;
    case UN_SIGMOID: r = npu_sigmoid(v); break;
    case UN_TANH: r = npu_tanh(v); break;
    case UN_GELU_ERF: r = npu_gelu(v); break;
    case UN_GELU_TANH: r = npu_gelu_tanh(v); break;
    case UN_SILU: r = npu_silu(v); break;
    case UN_NEG: r = -v; break;
    case UN_EXP: r = exp(v); break;
    case UN_LOG: r = log(v); break;
    case UN_ABS: r = abs(v); break;
    case UN_SQRT: r = sqrt(v); break;
    case UN_RSQRT: r = inversesqrt(v); break;
    case UN_COS: r = cos(v); break;
    case UN_SIN: r = sin(v); break;
    case UN_CLAMP: r = npu_clamp(v, pc.a, pc.b); break;
    case UN_LEAKY_RELU: r = v > 0.0 ? v : v * pc.a; break; // leaky_relu (NaN: NaN * a)
    }
    y[i] = S_STORE(r);
}
