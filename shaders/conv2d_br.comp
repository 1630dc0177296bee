// conv2d_br: conv2d with bias 1, residual 1 (bindings and parameters: conv2d_body.glsl).
#version 450
#define CONV_BIAS 1
#define CONV_RES 1
#include "conv2d_body.glsl"
