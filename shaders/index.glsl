// Index helpers shared by kernels: the linear workgroup index of a grid folded into y and z
// (compiler/lower/kernels.c kc_grid), and unravelling a linear element index over a logical shape of
// up to 6 dims into an offset with any strides (physical, broadcast 0, permuted, sliced).
#ifndef NPU_INDEX_GLSL
#define NPU_INDEX_GLSL
#include "abi.h"

// The workgroup size along x, spec constant 0 as in `layout(local_size_x_id = 0) in;`, which
// every kernel declares. glslang (Debian's 11.13) folds gl_WorkGroupSize.x to its default of 1
// when the size comes from local_size_x_id, so kernels must read this constant instead; it
// carries the same SpecId, which SPIR-V allows (spirv-val accepts it).
layout(constant_id = 0) const uint NPU_WG = 64;

uint npu_group_index()
{
    return (gl_WorkGroupID.z * gl_NumWorkGroups.y + gl_WorkGroupID.y) * gl_NumWorkGroups.x +
           gl_WorkGroupID.x;
}

// Global invocation index along x of a folded grid.
uint npu_global_index()
{
    return npu_group_index() * NPU_WG + gl_LocalInvocationID.x;
}

// Offset of logical element i of a KERNEL_DIMS-d shape (leading dims 1 for lower ranks) with
// strides st.
uint npu_offset6(uint i, uint shape[KERNEL_DIMS], int st[KERNEL_DIMS])
{
    int off = 0;
    for (int d = KERNEL_DIMS - 1; d >= 0; d--) {
        uint c = i % shape[d];
        i /= shape[d];
        off += int(c) * st[d];
    }
    return uint(off);
}

#endif
