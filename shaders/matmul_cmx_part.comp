// variants: f16 bf16
// matmul_cmx_part: portable emulation of the nv-coopmat tensor-core matmul, first pass of a K split: A, B, partials, Y (matmul_cm.glsl).
#version 450
#define MM_BIAS 0
#define MM_PART 1
#define CM_EMULATE 1
#include "matmul_cm.glsl"
