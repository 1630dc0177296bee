// gemv: the 16-byte-load GEMV (M <= 4) with a bias: bindings 0 = A, 1 = B, 2 = bias, 3 = Y.
// The kernel is shaders/gemv.glsl; compiler/lower_matmul.c picks the stem.
#version 450
#define MM_BIAS 1
#define MM_RES 0
#include "gemv.glsl"
