// where_s: see where.glsl (bindings {cond, t, y}, one operand a scalar push word); lowering
// in compiler/lower_where.c (masked_fill, where.ScalarOther/ScalarSelf).
#version 450
#define WHERE_SCALAR
#include "where.glsl"
