// Generic strided gather shared by the data-movement stems (copy, transpose, expand, slice,
// depad): output element i (row-major over the logical out shape) is written at its physical
// offset (out strides) with the input element found by unravelling the same i over the input
// "walk" shape with the input strides. A reshape walks the input's own shape; a transpose,
// expand or slice walks the output's shape with per-out-dim input strides (permuted, 0 for a
// broadcast dim, times the step) and an element offset (slice start). Raw storage moves (no
// float round trip): exact for i32 ids and bf16 bits. Lowering: compiler/lower/lower_copy.c.
// Bindings: 0 = x, 1 = y. Push abi.h GATHER_PUSH.
#include "common.glsl"
#include "abi.h"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { STORAGE_T y[]; };
PUSH_BLOCK(GATHER_PUSH)

void main()
{
    uint i = npu_global_index();
    if (i >= pc.n) return;
    y[npu_offset6(i, pc.oshape, pc.ostride)] = x[pc.in_off + npu_offset6(i, pc.ishape, pc.istride)];
}
