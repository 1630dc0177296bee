// The rotary embedding shared by rope.comp and rope_cache.comp (compiler/lower/lower_rope.c):
// out = x*cos + rotate_half(x)*sin, rotate_half(x) = cat(-x[..., h:], x[..., :h]), in float32.
// One invocation per pair (j, j + h) of a row; rows are addressed through three collapsed outer
// dims with per-tensor strides (0 where cos/sin broadcast over heads).
// Bindings 0 = x, 1 = cos, 2 = sin (the including shader adds the rest).
// Push abi.h ROPE_PUSH (cl, sl: last-dim strides of cos and sin, 1 or 0 when broadcast);
// rope_cache's ROPE_CACHE_PUSH adds {mode, idim, size, m}.
#ifndef NPU_ROPE_GLSL
#define NPU_ROPE_GLSL
#include "abi.h"

layout(std430, set = 0, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, set = 0, binding = 1) readonly buffer C { STORAGE_T cs[]; };
layout(std430, set = 0, binding = 2) readonly buffer S { STORAGE_T sn[]; };
#ifdef ROPE_CACHE
PUSH_BLOCK(ROPE_CACHE_PUSH)
#else
PUSH_BLOCK(ROPE_PUSH)
#endif

// Pair i: its outer coordinates (c) and its index j in the half row.
uint rope_coords(uint i, out uvec3 c)
{
    uint j = i % pc.h, r = i / pc.h;
    c.z = r % pc.od2;
    r /= pc.od2;
    c.y = r % pc.od1;
    c.x = r / pc.od1;
    return j;
}

// The destination offset of out[c, j] (its partner is at + h).
uint rope_out_offset(uvec3 c, uint j)
{
    return c.x * pc.ys0 + c.y * pc.ys1 + c.z * pc.ys2 + j;
}

// (out[c, j], out[c, j + h]).
vec2 rope_pair(uvec3 c, uint j)
{
    uint xb = c.x * pc.xs0 + c.y * pc.xs1 + c.z * pc.xs2 + j;
    uint cb = c.x * pc.cs0 + c.y * pc.cs1 + c.z * pc.cs2;
    uint sb = c.x * pc.ss0 + c.y * pc.ss1 + c.z * pc.ss2;
    float a = S_LOAD(x[xb]), b = S_LOAD(x[xb + pc.h]);
    // as the unfused chain: the two products, then their sum
    float lo = a * S_LOAD(cs[cb + j * pc.cl]) + (-b) * S_LOAD(sn[sb + j * pc.sl]);
    float hi = b * S_LOAD(cs[cb + (j + pc.h) * pc.cl]) + a * S_LOAD(sn[sb + (j + pc.h) * pc.sl]);
    return vec2(lo, hi);
}

#endif
