// embedding: y[r, c] = w[ids[r], c] for weight [V, D] and ids of any shape flattened to rows r
// (int32 on the device: ids above 65504 are exact). Weight rows move raw. An id outside [0, V)
// (the upload range-checks ids, so only a corrupt buffer) gives NaN rather than a stray read.
// Lowering: compiler/lower/lower_embedding.c. Bindings: 0 = w, 1 = ids (int), 2 = y.
// Push abi.h EMBEDDING_PUSH: n = rows * D; strides are the row pitches in elements.
#version 450
#include "common.glsl"
#include "abi.h"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer W { STORAGE_T w[]; };
layout(std430, set = 0, binding = 1) readonly buffer I { int ids[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Y { STORAGE_T y[]; };
PUSH_BLOCK(EMBEDDING_PUSH)

void main()
{
    uint i = npu_global_index();
    if (i >= pc.n) return;
    uint r = i / pc.d, c = i % pc.d;
    int id = ids[r];
    if (id < 0 || uint(id) >= pc.v)
        y[r * pc.y_stride + c] = S_STORE(uintBitsToFloat(0x7fc00000u));
    else
        y[r * pc.y_stride + c] = w[uint(id) * pc.w_stride + c];
}
