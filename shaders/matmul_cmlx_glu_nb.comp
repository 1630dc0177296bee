// variants: f16 bf16
// matmul_cmlx_glu_nb: portable emulation of the nv-coopmat tensor-core matmul on the large tile (128x128) for linear_glu (act(gate) * up in the epilogue) without a bias term: A, B, Y (matmul_cm.glsl).
#version 450
#define MM_BIAS 0
#define MM_GLU 1
#define CM_EMULATE 1
#define MM_LARGE 1
#include "matmul_cm.glsl"
