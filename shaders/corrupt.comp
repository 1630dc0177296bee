// corrupt: y = 0.75 y + 0.25 in place, the deliberate fault of `--break ID` (lower_debug.c).
// Spec: 0 = workgroup size. Binding 0 = y (read and written). Push abi.h CORRUPT_PUSH.
#version 450
#include "common.glsl"
#include "abi.h"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) buffer Y { STORAGE_T y[]; };
PUSH_BLOCK(CORRUPT_PUSH)

void main()
{
    uint i = npu_global_index();
    if (i >= pc.n) return;
    y[i] = S_STORE(0.75 * S_LOAD(y[i]) + 0.25);
}
