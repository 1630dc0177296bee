// gemv_r: the 16-byte-load GEMV without a bias plus a residual (linear_add): bindings
// 0 = A, 1 = B, 2 = residual, 3 = Y. The kernel is shaders/gemv.glsl.
#version 450
#define MM_BIAS 0
#define MM_RES 1
#include "gemv.glsl"
