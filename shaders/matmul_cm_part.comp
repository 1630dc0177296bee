// variants: f16 bf16
// matmul_cm_part: nv-coopmat tensor-core (GL_NV_cooperative_matrix) matmul, first pass of a K split: A, B, partials, Y (matmul_cm.glsl).
#version 450
#define MM_BIAS 0
#define MM_PART 1
#define CM_EMULATE 0
#include "matmul_cm.glsl"
