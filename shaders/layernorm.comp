// layernorm: layer_norm over the trailing dims with inputs x, w, b (compiler/lower_norm.c); the body and
// its push layout are in shaders/layernorm.glsl. Bindings: the inputs in that order, then y.
#version 450
#define LN_WEIGHT 1
#define LN_BIAS 1
#include "layernorm.glsl"
