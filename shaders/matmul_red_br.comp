// variants: f16 bf16
// matmul_red_br: matmul K-split reduce + epilogue with a bias term and a residual: partials, bias, res, Y (matmul_red.glsl).
#version 450
#define MM_BIAS 1
#define MM_RES 1
#include "matmul_red.glsl"
