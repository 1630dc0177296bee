// variants: f16 bf16
// matmul_red_r: matmul K-split reduce + epilogue with a residual: partials, res, Y (matmul_red.glsl).
#version 450
#define MM_BIAS 0
#define MM_RES 1
#include "matmul_red.glsl"
