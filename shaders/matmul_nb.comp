// matmul_nb: matrix product without a bias (linear without one, matmul, bmm, mm, addmm with
// beta = 0): bindings 0 = A, 1 = B, 2 = Y. The kernel is shaders/matmul.glsl.
#version 450
#define MM_BIAS 0
#define MM_RES 0
#include "matmul.glsl"
