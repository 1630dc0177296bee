// conv2d_split: implicit-GEMM conv2d, portable (SIMT), a K split reduced in the same dispatch, no bias, no residual (conv2d_body.glsl).
#version 450
#define CONV_BIAS 0
#define CONV_RES 0
#define CONV_FIXUP 1
#include "conv2d_body.glsl"
