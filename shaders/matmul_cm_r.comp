// variants: f16 bf16
// matmul_cm_r: nv-coopmat tensor-core (GL_NV_cooperative_matrix) matmul with a residual: A, B, res, Y (matmul_cm.glsl).
#version 450
#define MM_BIAS 0
#define MM_RES 1
#define CM_EMULATE 0
#include "matmul_cm.glsl"
