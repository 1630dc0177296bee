// binary: see binary.glsl (bindings {a, b, y}); lowering in compiler/lower_binary.c.
#version 450
#include "binary.glsl"
