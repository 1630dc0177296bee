// The activations of the fused epilogues (conv2d's: conv2d_common.glsl; the matmul family's:
// matmul_epi.glsl, the tensor-core matmul) by their codes (abi.h ACT_*, chosen by compiler/act.c).
// The functions themselves are the elementwise ones (eltwise.glsl), so every kernel computes an
// activation the same way, NaN kept as the CPU reference keeps it. lim: ACT_CLAMP's bounds as two
// halves (lo in the low half).
#ifndef NPU_ACTIVATION_GLSL
#define NPU_ACTIVATION_GLSL

#include "abi.h"
#include "eltwise.glsl"

float npu_activate(float v, uint act, uint lim)
{
    switch (act) {
    case ACT_RELU: return npu_relu(v);
    case ACT_GELU_ERF: return npu_gelu(v);
    case ACT_GELU_TANH: return npu_gelu_tanh(v);
    case ACT_SILU: return npu_silu(v);
    case ACT_SIGMOID: return npu_sigmoid(v);
    case ACT_TANH: return npu_tanh(v);
    case ACT_HARDSWISH: return npu_hardswish(v);
    case ACT_CLAMP: {
        vec2 b = unpackHalf2x16(lim);
        return npu_clamp(v, b.x, b.y);
    }
    case ACT_HARDSIGMOID: return npu_hardsigmoid(v);
    }
    return v;
}

// The matmul family's: its push block has no bounds, and its lowering never fuses a CLAMP.
float npu_activate(float v, uint act)
{
    return npu_activate(v, act, 0u);
}

#endif
