// variants: f16 bf16
// matmul_cmx_nb: portable emulation of the nv-coopmat tensor-core matmul without a bias term: A, B, Y (matmul_cm.glsl).
#version 450
#define MM_BIAS 0
#define CM_EMULATE 1
#include "matmul_cm.glsl"
