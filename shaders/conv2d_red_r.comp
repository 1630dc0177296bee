// conv2d_red_r: conv2d K-split reduce + epilogue with a residual (conv2d_red.glsl).
#version 450
#define CONV_BIAS 0
#define CONV_RES 1
#include "conv2d_red.glsl"
