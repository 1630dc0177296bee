// Shared by the row-normalisation kernels (rmsnorm, layernorm*): one workgroup per row, the row's
// elements contiguous, rows addressed through three collapsed outer dims with physical strides
// (compiler/lower/lower_norm.c push_rows). Statistics are float32, reduced in shared memory in a fixed
// order (no subgroup-size assumption). NPU_WG must be a power of two (the lowering picks it).
// Push abi.h NORM_ROW_PUSH: n, the row length (logical elements of the normalised dims).
#ifndef NPU_NORM_ROW_GLSL
#define NPU_NORM_ROW_GLSL
#include "abi.h"

PUSH_BLOCK(NORM_ROW_PUSH)

shared float npu_red[NPU_WG];

// Offsets of row r's first element in x and y.
void norm_row_base(uint r, out uint xb, out uint yb)
{
    uint i2 = r % pc.od2;
    r /= pc.od2;
    uint i1 = r % pc.od1, i0 = r / pc.od1;
    xb = i0 * pc.xs0 + i1 * pc.xs1 + i2 * pc.xs2;
    yb = i0 * pc.ys0 + i1 * pc.ys1 + i2 * pc.ys2;
}

// Sum of v over the workgroup; every invocation gets the total. Call from uniform control flow.
float norm_sum(float v)
{
    uint t = gl_LocalInvocationID.x;
    npu_red[t] = v;
    barrier();
    for (uint s = NPU_WG / 2; s > 0; s >>= 1) {
        if (t < s) npu_red[t] += npu_red[t + s];
        barrier();
    }
    float r = npu_red[0];
    barrier(); // the next call overwrites npu_red
    return r;
}

#endif
