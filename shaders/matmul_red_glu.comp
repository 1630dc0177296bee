// variants: f16 bf16
// matmul_red_glu: linear_glu's K-split reduce + epilogue (act(gate) * up) with a bias term: partials, bias, Y (matmul_red.glsl).
#version 450
#define MM_BIAS 1
#define MM_GLU 1
#include "matmul_red.glsl"
