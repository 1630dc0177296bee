// conv2d_red_br: conv2d K-split reduce + epilogue with bias and residual (conv2d_red.glsl).
#version 450
#define CONV_BIAS 1
#define CONV_RES 1
#include "conv2d_red.glsl"
