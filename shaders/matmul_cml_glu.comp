// variants: f16 bf16
// matmul_cml_glu: nv-coopmat tensor-core (GL_NV_cooperative_matrix) matmul on the large tile (128x128) for linear_glu (act(gate) * up in the epilogue) with a bias term: A, B, bias, Y (matmul_cm.glsl).
#version 450
#define MM_BIAS 1
#define MM_GLU 1
#define CM_EMULATE 0
#define MM_LARGE 1
#include "matmul_cm.glsl"
