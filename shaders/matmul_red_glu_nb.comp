// variants: f16 bf16
// matmul_red_glu_nb: linear_glu's K-split reduce + epilogue (act(gate) * up) without a bias term: partials, Y (matmul_red.glsl).
#version 450
#define MM_BIAS 0
#define MM_GLU 1
#include "matmul_red.glsl"
