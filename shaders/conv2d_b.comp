// conv2d_b: implicit-GEMM conv2d, portable (SIMT), with bias (conv2d_body.glsl).
#version 450
#define CONV_BIAS 1
#define CONV_RES 0
#include "conv2d_body.glsl"
