// cast: integer (int32 on the device) to float storage, y = float(x) rounded once to the
// storage dtype; float to float is lowered as a copy (compiler/lower/lower_copy.c). Same walk as
// shaders/gather.glsl. Bindings: 0 = x (int), 1 = y.
// Push abi.h GATHER_PUSH.
#version 450
#include "common.glsl"
#include "abi.h"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer X { int x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { STORAGE_T y[]; };
PUSH_BLOCK(GATHER_PUSH)

void main()
{
    uint i = npu_global_index();
    if (i >= pc.n) return;
    int v = x[pc.in_off + npu_offset6(i, pc.ishape, pc.istride)];
    y[npu_offset6(i, pc.oshape, pc.ostride)] = S_STORE(float(v));
}
