// conv2d_direct_br: direct conv2d (the portable tier on a CPU device), bias 1, residual 1 (conv2d_direct.glsl).
#version 450
#define CONV_BIAS 1
#define CONV_RES 1
#include "conv2d_direct.glsl"
