// masked_softmax: softmax(x + mask) over the last dim, mask broadcast: see softmax.glsl.
// Bindings: 0 = x, 1 = mask, 2 = y.
#version 450
#define SM_MASKED
#include "softmax.glsl"
