// conv2d_split_b: implicit-GEMM conv2d, portable (SIMT), a K split reduced in the same dispatch, with bias (conv2d_body.glsl).
#version 450
#define CONV_BIAS 1
#define CONV_RES 0
#define CONV_FIXUP 1
#include "conv2d_body.glsl"
