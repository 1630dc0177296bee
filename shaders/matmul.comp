// matmul: matrix product with a bias: bindings 0 = A, 1 = B, 2 = bias, 3 = Y.
// The kernel is shaders/matmul.glsl; compiler/lower_matmul.c picks the stem.
#version 450
#define MM_BIAS 1
#define MM_RES 0
#include "matmul.glsl"
