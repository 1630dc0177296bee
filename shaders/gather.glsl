// Generic strided gather shared by the data-movement stems (copy, transpose, expand, slice,
// depad): output element i (row-major over the logical out shape) is written at its physical
// offset (out strides) with the input element found by unravelling the same i over the input
// "walk" shape with the input strides. A reshape walks the input's own shape; a transpose,
// expand or slice walks the output's shape with per-out-dim input strides (permuted, 0 for a
// broadcast dim, times the step) and an element offset (slice start). Raw storage moves (no
// float round trip): exact for i32 ids and bf16 bits. Lowering: compiler/lower/lower_copy.c.
// With WINDOW_MODE (the pad rows: pad, roll) the same walk of the output, each dim's input
// coordinate its own minus lo, out of range handled by the mode (abi.h WINDOW_PUSH; as
// runtime/cpu/cpu_more.c pad_src).
// Bindings: 0 = x, 1 = y. Push abi.h GATHER_PUSH, WINDOW_PUSH with WINDOW_MODE.
#include "common.glsl"
#include "abi.h"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { STORAGE_T y[]; };

#ifndef WINDOW_MODE
PUSH_BLOCK(GATHER_PUSH)

void main()
{
    uint i = npu_global_index();
    if (i >= pc.n) return;
    y[npu_offset6(i, pc.oshape, pc.ostride)] = x[pc.in_off + npu_offset6(i, pc.ishape, pc.istride)];
}
#else
PUSH_BLOCK(WINDOW_PUSH)

// The input coordinate of coordinate s (the output's minus lo) of a dim of size n, or -1 for the
// fill value.
int window_src(int s, int n)
{
    if (s >= 0 && s < n) return s;
#if WINDOW_MODE == 1 // reflect: mirror without repeating the edge
    if (n == 1) return 0;
    s = abs(s) % (2 * (n - 1));
    return s < n ? s : 2 * (n - 1) - s;
#elif WINDOW_MODE == 2 // replicate
    return s < 0 ? 0 : n - 1;
#elif WINDOW_MODE == 3 // circular
    // % only on non-negative operands: GLSL leaves a negative one undefined, and NVIDIA's
    // driver gave other values than lavapipe's C-like remainder (wrong rolls on the H200)
    return s >= 0 ? s % n : n - 1 - (-s - 1) % n;
#else // constant
    return -1;
#endif
}

void main()
{
    uint i = npu_global_index();
    if (i >= pc.n) return;
    uint r = i;
    int off = 0;
    for (int d = KERNEL_DIMS - 1; d >= 0 && off >= 0; d--) {
        int c = int(r % pc.oshape[d]);
        r /= pc.oshape[d];
        int s = window_src(c - pc.lo[d], int(pc.ishape[d]));
        off = s < 0 ? -1 : off + s * pc.istride[d];
    }
    uint o = npu_offset6(i, pc.oshape, pc.ostride);
#ifdef STORAGE_I32
    y[o] = off < 0 ? int(pc.fill) : x[off];
#else
    y[o] = off < 0 ? S_STORE(uintBitsToFloat(pc.fill)) : x[off];
#endif
}
#endif
