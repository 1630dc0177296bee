// rope: the fused 7-op chain (rope.glsl; compiler/lower/lower_rope.c). Spec: 0 = workgroup size.
// Bindings: 0 = x, 1 = cos, 2 = sin, 3 = out. Push as rope.glsl.
#version 450
#include "common.glsl"
#include "index.glsl"

layout(local_size_x_id = 0) in;
#include "rope.glsl"
layout(std430, set = 0, binding = 3) writeonly buffer Y { STORAGE_T y[]; };

void main()
{
    uint i = npu_global_index();
    if (i >= pc.total) return;
    uvec3 c;
    uint j = rope_coords(i, c);
    uint yb = rope_out_offset(c, j);
    vec2 v = rope_pair(c, j);
    y[yb] = S_STORE(v.x);
    y[yb + pc.h] = S_STORE(v.y);
}
