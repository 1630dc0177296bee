// variants: none
// argmax pass 1 on f16 input (shaders/argmax_scan.glsl; the module variant follows the int32
// output, so the input's storage is in the stem). Lowering: compiler/lower_argmax.c.
#version 450
#define STORAGE_F16
#include "argmax_scan.glsl"
