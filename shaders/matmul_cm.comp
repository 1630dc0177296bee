// variants: f16 bf16
// matmul_cm: nv-coopmat tensor-core (GL_NV_cooperative_matrix) matmul with a bias term: A, B, bias, Y (matmul_cm.glsl).
#version 450
#define MM_BIAS 1
#define CM_EMULATE 0
#include "matmul_cm.glsl"
