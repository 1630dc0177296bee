// cat of CAT_N dense inputs along one dim, the body of cat2, cat3, cat4 (the binding count is
// static, so each input count is its own module; lowering: compiler/lower/lower_cat.c). The tensors
// are seen as [outer, size, inner] around the cat dim; input k covers out rows
// [end(k-1), end(k)) along it. Raw storage moves (exact for i32 and bf16 bits).
// Bindings: 0..CAT_N-1 = inputs, CAT_N = y. Push {n, total, inner, end0, end1, end2}.
#include "common.glsl"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer X0 { STORAGE_T x0[]; };
layout(std430, set = 0, binding = 1) readonly buffer X1 { STORAGE_T x1[]; };
#if CAT_N > 2
layout(std430, set = 0, binding = 2) readonly buffer X2 { STORAGE_T x2[]; };
#endif
#if CAT_N > 3
layout(std430, set = 0, binding = 3) readonly buffer X3 { STORAGE_T x3[]; };
#endif
layout(std430, set = 0, binding = CAT_N) writeonly buffer Y { STORAGE_T y[]; };
layout(push_constant) uniform Push { uint n; uint total; uint inner; uint end0, end1, end2; } pc;

void main()
{
    uint i = npu_global_index();
    if (i >= pc.n) return;
    uint e = i % pc.inner, t = i / pc.inner;
    uint c = t % pc.total, o = t / pc.total;
    if (c < pc.end0) {
        y[i] = x0[(o * pc.end0 + c) * pc.inner + e];
        return;
    }
    uint end1 = CAT_N > 2 ? pc.end1 : pc.total;
    if (c < end1) {
        y[i] = x1[(o * (end1 - pc.end0) + c - pc.end0) * pc.inner + e];
        return;
    }
#if CAT_N > 2
    uint end2 = CAT_N > 3 ? pc.end2 : pc.total;
    if (c < end2) {
        y[i] = x2[(o * (end2 - end1) + c - end1) * pc.inner + e];
        return;
    }
#endif
#if CAT_N > 3
    y[i] = x3[(o * (pc.total - end2) + c - end2) * pc.inner + e];
#endif
}
