// conv2d_red: conv2d K-split reduce + epilogue, no bias, no residual (conv2d_red.glsl).
#version 450
#define CONV_BIAS 0
#define CONV_RES 0
#include "conv2d_red.glsl"
