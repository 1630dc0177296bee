// gemv_br: the 16-byte-load GEMV with a bias plus a residual (linear_add): bindings 0 = A,
// 1 = B, 2 = bias, 3 = residual, 4 = Y. The kernel is shaders/gemv.glsl.
#version 450
#define MM_BIAS 1
#define MM_RES 1
#include "gemv.glsl"
