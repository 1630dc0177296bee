// The activation codes of the matmul family's fused epilogues (compiler/lower_matmul.c ACT_*):
// 0 none, 1 relu, 2 gelu (erf), 3 gelu (tanh), 4 silu, 5 sigmoid, 6 tanh, 7 hardswish. The
// functions themselves are the elementwise ones (eltwise.glsl), so every kernel computes an
// activation the same way. Used by matmul/gemv (matmul_epi.glsl) and the tensor-core matmul.
#ifndef NPU_ACTIVATION_GLSL
#define NPU_ACTIVATION_GLSL

#include "eltwise.glsl"

float npu_activate(float v, uint act)
{
    switch (act) {
    case 1: return npu_relu(v);
    case 2: return npu_gelu(v);
    case 3: return npu_gelu_tanh(v);
    case 4: return npu_silu(v);
    case 5: return npu_sigmoid(v);
    case 6: return npu_tanh(v);
    case 7: return npu_hardswish(v);
    }
    return v;
}

#endif
