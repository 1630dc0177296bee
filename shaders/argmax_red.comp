// argmax pass 2 (compiler/lower/lower_argmax.c): a row's nsplit (value, index) pairs from pass 1,
// combined by NPU_TPR lanes (one pair each: nsplit <= the workgroup size) in the order of
// argmax.glsl; lane 0 writes the index. Bindings: 0 = partials, 1 = y (int32). Push as pass 1.
#version 450
#include "common.glsl"
#include "argmax.glsl"

layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer P { uint part[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { int y[]; };

void main()
{
    uint r = row_index(), lane = row_lane();
    bool live = r < pc.rows;
    float bv = 0.0;
    int bi = -1;
    for (uint s = lane; live && s < pc.nsplit; s += NPU_TPR) {
        uint at = 2u * (r * pc.nsplit + s);
        float v = uintBitsToFloat(part[at]);
        int i = int(part[at + 1u]);
        if (am_better(v, i, bv, bi)) {
            bv = v;
            bi = i;
        }
    }
    am_combine(bv, bi);
    if (live && lane == 0u) y[row_offset(r, pc.oshape, pc.ys)] = bi;
}
