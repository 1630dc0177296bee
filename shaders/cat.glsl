// cat of CAT_N dense inputs along one dim into their slice of the output, the body of cat2, cat3,
// cat4 (the binding count is static, so each input count is its own module; a cat of more inputs
// is one such kernel per group of them: compiler/lower/lower_cat.c). The tensors are seen as
// [outer, size, inner] around the cat dim; this kernel writes out rows [start, start + span) along
// it, its input k rows [start + end(k-1), start + end(k)) (ends relative to start). Raw storage
// moves (exact for i32 and bf16 bits).
// Bindings: 0..CAT_N-1 = inputs, CAT_N = y. Push abi.h CAT_PUSH (n = outer * span * inner: one
// invocation per element written).
#include "common.glsl"
#include "abi.h"
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
PUSH_BLOCK(CAT_PUSH)

void main()
{
    uint i = npu_global_index();
    if (i >= pc.n) return;
    uint e = i % pc.inner, t = i / pc.inner;
    uint c = t % pc.span, o = t / pc.span;
    uint yi = (o * pc.total + pc.start + c) * pc.inner + e;
    if (c < pc.end0) {
        y[yi] = x0[(o * pc.end0 + c) * pc.inner + e];
        return;
    }
    uint end1 = CAT_N > 2 ? pc.end1 : pc.span;
    if (c < end1) {
        y[yi] = x1[(o * (end1 - pc.end0) + c - pc.end0) * pc.inner + e];
        return;
    }
#if CAT_N > 2
    uint end2 = CAT_N > 3 ? pc.end2 : pc.span;
    if (c < end2) {
        y[yi] = x2[(o * (end2 - end1) + c - end1) * pc.inner + e];
        return;
    }
#endif
#if CAT_N > 3
    y[yi] = x3[(o * (pc.span - end2) + c - end2) * pc.inner + e];
#endif
}
