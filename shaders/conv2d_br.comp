// conv2d_br: implicit-GEMM conv2d, portable (SIMT), with bias and residual (conv2d_body.glsl).
#version 450
#define CONV_BIAS 1
#define CONV_RES 1
#include "conv2d_body.glsl"
