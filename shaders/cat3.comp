// variants: f32 f16 bf16 i32
// cat3: cat of 3 inputs (shaders/cat.glsl; lowering: compiler/lower_cat.c).
#version 450
#define CAT_N 3
#include "cat.glsl"
