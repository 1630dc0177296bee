// variants: f32 f16 bf16 i32
// cat2: cat of 2 inputs (shaders/cat.glsl; lowering: compiler/lower_cat.c).
#version 450
#define CAT_N 2
#include "cat.glsl"
