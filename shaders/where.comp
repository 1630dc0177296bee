// where: see where.glsl (bindings {cond, a, b, y}); lowering in compiler/lower_where.c.
#version 450
#include "where.glsl"
