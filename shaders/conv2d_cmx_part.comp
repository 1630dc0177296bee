// variants: f16
// conv2d_cmx_part: portable emulation of the nv-coopmat tensor-core implicit-GEMM conv2d, first pass of a K split: fp32 partials (conv2d_body.glsl).
#version 450
#define CONV_PART 1
#define GEMM_CM 1
#define CM_EMULATE 1
#include "conv2d_body.glsl"
