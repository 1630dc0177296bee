// gemv_glu: the GEMV with the silu_mul_linear prologue (A = gate, 2 = up), bias.
// The kernel is shaders/gemv.glsl (GEMV_PRO); compiler/lower_matmul.c picks the stem.
#version 450
#define GEMV_PRO 2
#define MM_BIAS 1
#define MM_RES 0
#include "gemv.glsl"
