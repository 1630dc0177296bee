// variants: f16 bf16
// matmul_red_nb: matmul K-split reduce + epilogue without a bias term: partials, Y (matmul_red.glsl).
#version 450
#define MM_BIAS 0
#include "matmul_red.glsl"
