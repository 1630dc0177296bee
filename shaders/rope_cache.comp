// rope_cache: rope whose output is the source of index_copy(cache, index, .) along one dim
// (compiler/lower/lower_rope.c): the rotated rows are written straight into the cache. The outer
// coordinate c[idim] is the index_copy dim (never collapsed with another).
//   mode 1 (in place: out aliases the cache, compiler/pass_views.c): one invocation per pair of
//     the rope output (c[idim] = source slice < m) writes it to the row the index names
//     (index_copy.glsl: a later slice with the same index wins). total = rope pairs.
//   mode 0 (out has its own storage): one invocation per pair of out (c[idim] = row < size)
//     copies the cache's pair or computes the last source slice's. total = out pairs.
// x/cos/sin strides address the rope output (c[idim] = the slice), ys the cache and out (dense,
// one shape). Spec: 0 = workgroup size.
// Bindings: 0 = x, 1 = cos, 2 = sin, 3 = cache (self), 4 = index (int), 5 = out.
// Push as rope.glsl with {mode, idim, size, m}.
#version 450
#include "common.glsl"
#include "index.glsl"

#define ROPE_CACHE
layout(local_size_x_id = 0) in;
#include "rope.glsl"
layout(std430, set = 0, binding = 3) readonly buffer K { STORAGE_T self_[]; };
layout(std430, set = 0, binding = 4) readonly buffer I { int idx[]; };
layout(std430, set = 0, binding = 5) writeonly buffer Y { STORAGE_T y[]; };
#include "index_copy.glsl"

void main()
{
    uint i = npu_global_index();
    if (i >= pc.total) return;
    uvec3 c;
    uint j = rope_coords(i, c);
    int src, dst;
    if (pc.mode == 1u) {
        src = int(c[pc.idim]);
        dst = ic_target(uint(src));
        if (dst < 0) return;
    } else {
        dst = int(c[pc.idim]);
        src = ic_source(uint(dst));
    }
    uvec3 d = c;
    d[pc.idim] = uint(dst);
    uint yb = rope_out_offset(d, j);
    if (src < 0) { // mode 0, a row no slice writes: the cache's
        y[yb] = self_[yb];
        y[yb + pc.h] = self_[yb + pc.h];
        return;
    }
    c[pc.idim] = uint(src);
    vec2 v = rope_pair(c, j);
    y[yb] = S_STORE(v.x);
    y[yb + pc.h] = S_STORE(v.y);
}
