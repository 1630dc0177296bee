// layernorm: layer_norm over the trailing dims with inputs x, w, b.
// Body and push: shaders/layernorm.glsl (compiler/lower_norm.c). Bindings: those inputs, then y.
#version 450
#define LN_WEIGHT 1
#define LN_BIAS 1
#include "layernorm.glsl"
