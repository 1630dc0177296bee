// layernorm_w: layer_norm over the trailing dims with inputs x, w.
// Body and push: shaders/layernorm.glsl (compiler/lower_norm.c). Bindings: those inputs, then y.
#version 450
#define LN_WEIGHT 1
#define LN_BIAS 0
#include "layernorm.glsl"
