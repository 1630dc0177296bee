// pack: a graph input uploaded as the host holds it (f32, dense row-major; compiler/pass_pack.c)
// to its device form, y = x rounded once to the storage dtype, written at the output's physical
// offsets (its layout). Same walk as shaders/gather.glsl (lowering: compiler/lower/lower_copy.c).
// Bindings: 0 = x (f32), 1 = y. Push abi.h GATHER_PUSH.
#version 450
#include "common.glsl"
#include "abi.h"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { STORAGE_T y[]; };
PUSH_BLOCK(GATHER_PUSH)

void main()
{
    uint i = npu_global_index();
    if (i >= pc.n) return;
    y[npu_offset6(i, pc.oshape, pc.ostride)] = S_STORE(x[pc.in_off + npu_offset6(i, pc.ishape, pc.istride)]);
}
