// variants: f16 bf16
// matmul_cml_r: nv-coopmat tensor-core (GL_NV_cooperative_matrix) matmul on the large tile (128x128) with a residual: A, B, res, Y (matmul_cm.glsl).
#version 450
#define MM_BIAS 0
#define MM_RES 1
#define CM_EMULATE 0
#define MM_LARGE 1
#include "matmul_cm.glsl"
