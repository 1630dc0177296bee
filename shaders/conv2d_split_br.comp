// conv2d_split_br: implicit-GEMM conv2d, portable (SIMT), a K split reduced in the same dispatch, with bias and residual (conv2d_body.glsl).
#version 450
#define CONV_BIAS 1
#define CONV_RES 1
#define CONV_FIXUP 1
#include "conv2d_body.glsl"
