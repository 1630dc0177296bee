// index_copy(self, index, source) along one dim, the tensors seen as [outer, size, inner]
// (self, out) and [outer, m, inner] (source) around it (index logic: index_copy.glsl).
// Lowering: compiler/lower/lower_index_copy.c.
//   mode 1 (in place: out aliases self's storage, compiler/pass_views.c): one invocation per
//     source element writes its row; self is never read. n = outer * m * inner.
//   mode 0 (out has its own storage): one invocation per out element copies self or the last
//     matching source slice. n = outer * size * inner.
// Bindings: 0 = self, 1 = index (int), 2 = source, 3 = out. Push abi.h INDEX_COPY_PUSH: source
// element (o, j, e) at o * so + j * sm + e (a transposed source: index_copy_t).
#version 450
#include "common.glsl"
#include "abi.h"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer S { STORAGE_T self_[]; };
layout(std430, set = 0, binding = 1) readonly buffer I { int idx[]; };
layout(std430, set = 0, binding = 2) readonly buffer R { STORAGE_T src[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Y { STORAGE_T y[]; };
PUSH_BLOCK(INDEX_COPY_PUSH)

#include "index_copy.glsl"

void main()
{
    uint i = npu_global_index();
    if (i >= pc.n) return;
    uint e = i % pc.inner, t = i / pc.inner;
    if (pc.mode == 1u) {
        uint j = t % pc.m, o = t / pc.m;
        int at = ic_target(j);
        if (at >= 0) y[(o * pc.size + uint(at)) * pc.inner + e] = src[o * pc.so + j * pc.sm + e];
        return;
    }
    uint at = t % pc.size, o = t / pc.size;
    int k = ic_source(at);
    y[i] = k >= 0 ? src[o * pc.so + uint(k) * pc.sm + e] : self_[i];
}
