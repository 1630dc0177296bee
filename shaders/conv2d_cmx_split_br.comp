// variants: f16
// conv2d_cmx_split_br: portable emulation of the nv-coopmat tensor-core implicit-GEMM conv2d, a K split reduced in the same dispatch, with bias and residual (conv2d_body.glsl).
#version 450
#define CONV_BIAS 1
#define CONV_RES 1
#define CONV_FIXUP 1
#define GEMM_CM 1
#define CM_EMULATE 1
#include "conv2d_body.glsl"
