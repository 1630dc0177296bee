// variants: f16 bf16
// matmul_cmx_r: portable emulation of the nv-coopmat tensor-core matmul with a residual: A, B, res, Y (matmul_cm.glsl).
#version 450
#define MM_BIAS 0
#define MM_RES 1
#define CM_EMULATE 1
#include "matmul_cm.glsl"
