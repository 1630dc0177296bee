// conv2d_r: conv2d with bias 0, residual 1 (bindings and parameters: conv2d_body.glsl).
#version 450
#define CONV_BIAS 0
#define CONV_RES 1
#include "conv2d_body.glsl"
