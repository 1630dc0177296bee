// The rotary embedding shared by rope.comp and rope_cache.comp (compiler/lower/lower_rope.c):
// out = x*cos + rotate_half(x)*sin, rotate_half(x) = cat(-x[..., h:], x[..., :h]), in float32.
// One invocation per pair (j, j + h) of a row; rows are addressed through three collapsed outer
// dims with per-tensor strides (0 where cos/sin broadcast over heads).
// Bindings 0 = x, 1 = cos, 2 = sin (the including shader adds the rest).
// Push {total, h, od1, od2, xs0..2, cs0..2, ss0..2, ys0..2, cl, sl} (cl, sl: last-dim strides
// of cos and sin, 1 or 0 when broadcast), then rope_cache's {mode, idim, size, m}.
#ifndef NPU_ROPE_GLSL
#define NPU_ROPE_GLSL

layout(std430, set = 0, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, set = 0, binding = 1) readonly buffer C { STORAGE_T cs[]; };
layout(std430, set = 0, binding = 2) readonly buffer S { STORAGE_T sn[]; };
layout(push_constant) uniform Push {
    uint total, h, od1, od2;
    uint xs0, xs1, xs2, cs0, cs1, cs2, ss0, ss1, ss2, ys0, ys1, ys2;
    uint cl, sl;
#ifdef ROPE_CACHE
    uint mode, idim, size, m;
#endif
} pc;

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
