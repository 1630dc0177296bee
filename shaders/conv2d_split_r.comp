// conv2d_split_r: implicit-GEMM conv2d, portable (SIMT), a K split reduced in the same dispatch, with a residual (conv2d_body.glsl).
#version 450
#define CONV_BIAS 0
#define CONV_RES 1
#define CONV_FIXUP 1
#include "conv2d_body.glsl"
