// The activations of the matmul family's fused epilogues by their codes (abi.h MM_ACT_*). The
// functions themselves are the elementwise ones (eltwise.glsl), so every kernel computes an
// activation the same way. Used by matmul/gemv (matmul_epi.glsl) and the tensor-core matmul.
#ifndef NPU_ACTIVATION_GLSL
#define NPU_ACTIVATION_GLSL

#include "abi.h"
#include "eltwise.glsl"

float npu_activate(float v, uint act)
{
    switch (act) {
    case MM_ACT_RELU: return npu_relu(v);
    case MM_ACT_GELU_ERF: return npu_gelu(v);
    case MM_ACT_GELU_TANH: return npu_gelu_tanh(v);
    case MM_ACT_SILU: return npu_silu(v);
    case MM_ACT_SIGMOID: return npu_sigmoid(v);
    case MM_ACT_TANH: return npu_tanh(v);
    case MM_ACT_HARDSWISH: return npu_hardswish(v);
    }
    return v;
}

#endif
