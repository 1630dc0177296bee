// binary_s: see binary.glsl (bindings {a, y}, b a scalar push word or a itself); lowering in
// compiler/lower_binary.c.
#version 450
#define BIN_SCALAR
#include "binary.glsl"
