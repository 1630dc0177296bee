// conv2d_part: implicit-GEMM conv2d, portable (SIMT), first pass of a K split: fp32 partials (conv2d_body.glsl).
#version 450
#define CONV_PART 1
#include "conv2d_body.glsl"
