// gemv_rms_br: the GEMV with the rmsnorm_linear prologue (A = x, 2 = gamma), bias and residual.
// The kernel is shaders/gemv.glsl (GEMV_PRO); compiler/lower_matmul.c picks the stem.
#version 450
#define GEMV_PRO 1
#define MM_BIAS 1
#define MM_RES 1
#include "gemv.glsl"
