// variants: f32 f16 bf16 i32
// cat4: cat of 4 inputs (shaders/cat.glsl; lowering: compiler/lower_cat.c).
#version 450
#define CAT_N 4
#include "cat.glsl"
