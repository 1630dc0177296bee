// conv2d_red_b: conv2d K-split reduce + epilogue with bias (conv2d_red.glsl).
#version 450
#define CONV_BIAS 1
#define CONV_RES 0
#include "conv2d_red.glsl"
