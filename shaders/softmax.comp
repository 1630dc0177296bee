// softmax, log_softmax over the last dim: see softmax.glsl. Bindings: 0 = x, 1 = y.
#version 450
#include "softmax.glsl"
