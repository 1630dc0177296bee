// variants: f16 bf16
// matmul_red: matmul K-split reduce + epilogue with a bias term: partials, bias, Y (matmul_red.glsl).
#version 450
#define MM_BIAS 1
#include "matmul_red.glsl"
