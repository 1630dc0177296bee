// gemv_glu_br: the GEMV with the silu_mul_linear prologue (A = gate, 2 = up), bias and residual.
// The kernel is shaders/gemv.glsl (GEMV_PRO); compiler/lower_matmul.c picks the stem.
#version 450
#define GEMV_PRO 2
#define MM_BIAS 1
#define MM_RES 1
#include "gemv.glsl"
