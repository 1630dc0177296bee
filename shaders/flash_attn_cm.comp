// variants: f16 bf16
// flash_attn_cm: nv-coopmat tensor-core (GL_NV_cooperative_matrix) multi-row attention (flash_attn_cm.glsl).
#version 450
#define CM_EMULATE 0
#include "flash_attn_cm.glsl"
