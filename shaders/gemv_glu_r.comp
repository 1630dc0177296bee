// gemv_glu_r: the GEMV with the silu_mul_linear prologue (A = gate, 2 = up), a residual.
// The kernel is shaders/gemv.glsl (GEMV_PRO); compiler/lower_matmul.c picks the stem.
#version 450
#define GEMV_PRO 2
#define MM_BIAS 0
#define MM_RES 1
#include "gemv.glsl"
