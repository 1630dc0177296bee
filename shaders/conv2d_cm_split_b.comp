// variants: f16
// conv2d_cm_split_b: nv-coopmat tensor-core (GL_NV_cooperative_matrix) implicit-GEMM conv2d, a K split reduced in the same dispatch, with bias (conv2d_body.glsl).
#version 450
#define CONV_BIAS 1
#define CONV_RES 0
#define CONV_FIXUP 1
#define GEMM_CM 1
#define CM_EMULATE 0
#include "conv2d_body.glsl"
