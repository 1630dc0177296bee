// rope: out = x*cos + rotate_half(x)*sin, rotate_half(x) = cat(-x[..., h:], x[..., :h]), in
// float32 (the fused 7-op chain; compiler/lower_rope.c). One invocation per pair (j, j + h) of a
// row; rows are addressed through three collapsed outer dims with per-tensor strides (0 where
// cos/sin broadcast over heads). Spec: 0 = workgroup size.
// Bindings: 0 = x, 1 = cos, 2 = sin, 3 = out.
// Push {total, h, od1, od2, xs0..2, cs0..2, ss0..2, ys0..2, cl, sl}.
#version 450
#include "common.glsl"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, set = 0, binding = 1) readonly buffer C { STORAGE_T cs[]; };
layout(std430, set = 0, binding = 2) readonly buffer S { STORAGE_T sn[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Y { STORAGE_T y[]; };
layout(push_constant) uniform Push {
    uint total, h, od1, od2;
    uint xs0, xs1, xs2, cs0, cs1, cs2, ss0, ss1, ss2, ys0, ys1, ys2;
    uint cl, sl; // last-dim strides of cos and sin: 1, or 0 when broadcast
} pc;

void main()
{
    uint i = npu_global_index();
    if (i >= pc.total) return;
    uint j = i % pc.h, r = i / pc.h;
    uint i2 = r % pc.od2;
    r /= pc.od2;
    uint i1 = r % pc.od1, i0 = r / pc.od1;
    uint xb = i0 * pc.xs0 + i1 * pc.xs1 + i2 * pc.xs2 + j;
    uint cb = i0 * pc.cs0 + i1 * pc.cs1 + i2 * pc.cs2;
    uint sb = i0 * pc.ss0 + i1 * pc.ss1 + i2 * pc.ss2;
    uint yb = i0 * pc.ys0 + i1 * pc.ys1 + i2 * pc.ys2 + j;
    float a = S_LOAD(x[xb]), b = S_LOAD(x[xb + pc.h]);
    // as the unfused chain: the two products, then their sum
    float lo = a * S_LOAD(cs[cb + j * pc.cl]) + (-b) * S_LOAD(sn[sb + j * pc.sl]);
    float hi = b * S_LOAD(cs[cb + (j + pc.h) * pc.cl]) + a * S_LOAD(sn[sb + (j + pc.h) * pc.sl]);
    y[yb] = S_STORE(lo);
    y[yb + pc.h] = S_STORE(hi);
}
