// conv2d: implicit-GEMM conv2d, portable (SIMT), no bias, no residual (conv2d_body.glsl).
#version 450
#define CONV_BIAS 0
#define CONV_RES 0
#include "conv2d_body.glsl"
