// gemv_nb: the 16-byte-load GEMV (M <= 4) without a bias: bindings 0 = A, 1 = B, 2 = Y.
// The kernel is shaders/gemv.glsl.
#version 450
#define MM_BIAS 0
#define MM_RES 0
#include "gemv.glsl"
