// conv2d_r: implicit-GEMM conv2d, portable (SIMT), with a residual (conv2d_body.glsl).
#version 450
#define CONV_BIAS 0
#define CONV_RES 1
#include "conv2d_body.glsl"
