// layernorm_plain: layer_norm over the trailing dims with inputs x.
// Body and push: shaders/layernorm.glsl (compiler/lower_norm.c). Bindings: those inputs, then y.
#version 450
#define LN_WEIGHT 0
#define LN_BIAS 0
#include "layernorm.glsl"
