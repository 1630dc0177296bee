// variants: f16 bf16
// flash_attn_cmx: the portable emulation of flash_attn_cm (tests: lavapipe has no cooperative matrix).
#version 450
#define CM_EMULATE 1
#include "flash_attn_cm.glsl"
