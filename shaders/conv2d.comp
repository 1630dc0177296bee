// conv2d: conv2d with bias 0, residual 0 (bindings and parameters: conv2d_body.glsl).
#version 450
#define CONV_BIAS 0
#define CONV_RES 0
#include "conv2d_body.glsl"
