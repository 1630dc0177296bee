// variants: f16 bf16
// matmul_cmx_glu: portable emulation of the nv-coopmat tensor-core matmul for linear_glu (act(gate) * up in the epilogue) with a bias term: A, B, bias, Y (matmul_cm.glsl).
#version 450
#define MM_BIAS 1
#define MM_GLU 1
#define CM_EMULATE 1
#include "matmul_cm.glsl"
