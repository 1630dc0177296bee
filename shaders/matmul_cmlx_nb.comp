// variants: f16 bf16
// matmul_cmlx_nb: portable emulation of the nv-coopmat tensor-core matmul on the large tile (128x128) without a bias term: A, B, Y (matmul_cm.glsl).
#version 450
#define MM_BIAS 0
#define CM_EMULATE 1
#define MM_LARGE 1
#include "matmul_cm.glsl"
