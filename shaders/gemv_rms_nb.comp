// gemv_rms_nb: the GEMV with the rmsnorm_linear prologue (A = x, 2 = gamma), no bias.
// The kernel is shaders/gemv.glsl (GEMV_PRO); compiler/lower_matmul.c picks the stem.
#version 450
#define GEMV_PRO 1
#define MM_BIAS 0
#define MM_RES 0
#include "gemv.glsl"
