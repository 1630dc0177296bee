// conv2d_direct: direct conv2d (the portable tier on a CPU device), bias 0, residual 0 (conv2d_direct.glsl).
#version 450
#define CONV_BIAS 0
#define CONV_RES 0
#include "conv2d_direct.glsl"
