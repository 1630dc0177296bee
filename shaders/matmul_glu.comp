// matmul_glu: linear_glu, the gate and up products with a bias and act(gate) * up in the
// epilogue: bindings 0 = A, 1 = B (the interleaved weights), 2 = bias, 3 = Y. The kernel is
// shaders/matmul.glsl (MM_GLU).
#version 450
#define MM_BIAS 1
#define MM_RES 0
#define MM_GLU 1
#include "matmul.glsl"
