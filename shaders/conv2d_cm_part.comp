// variants: f16
// conv2d_cm_part: nv-coopmat tensor-core (GL_NV_cooperative_matrix) implicit-GEMM conv2d, first pass of a K split: fp32 partials (conv2d_body.glsl).
#version 450
#define CONV_PART 1
#define GEMM_CM 1
#define CM_EMULATE 0
#include "conv2d_body.glsl"
