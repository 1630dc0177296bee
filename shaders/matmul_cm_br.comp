// variants: f16 bf16
// matmul_cm_br: nv-coopmat tensor-core (GL_NV_cooperative_matrix) matmul with a bias term and a residual: A, B, bias, res, Y (matmul_cm.glsl).
#version 450
#define MM_BIAS 1
#define MM_RES 1
#define CM_EMULATE 0
#include "matmul_cm.glsl"
