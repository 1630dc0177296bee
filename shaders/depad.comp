// variants: f32 f16 bf16 i32
// depad: the generic strided gather of shaders/gather.glsl (push layout there; lowering:
// compiler/lower_copy.c).
#version 450
#include "gather.glsl"
