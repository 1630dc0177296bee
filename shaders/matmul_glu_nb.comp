// matmul_glu_nb: linear_glu without a bias: bindings 0 = A, 1 = B (the interleaved weights),
// 2 = Y. The kernel is shaders/matmul.glsl (MM_GLU).
#version 450
#define MM_BIAS 0
#define MM_RES 0
#define MM_GLU 1
#include "matmul.glsl"
