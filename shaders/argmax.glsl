// argmax helpers (compiler/lower/lower_argmax.c): the push block both passes read (abi.h
// ARGMAX_PUSH), the order of
// (value, index) pairs and their combination over a segment's lanes, rows as in rows.glsl.
#ifndef NPU_ARGMAX_GLSL
#define NPU_ARGMAX_GLSL
#include "abi.h"
#include "rows.glsl"

PUSH_BLOCK(ARGMAX_PUSH)

// Does (v, i) come before (bv, bi) as "the first maximum"? i < 0 is nothing; NaN is above every
// number (pairs hold NaN only when it is not skipped); equal values: the smaller index. A total
// order on the pairs, so any order of combination gives the same result.
bool am_better(float v, int i, float bv, int bi)
{
    if (i < 0) return false;
    if (bi < 0) return true;
    bool n = isnan(v), bn = isnan(bv);
    if (n || bn) return n && (!bn || i < bi);
    return v > bv || (v == bv && i < bi);
}

shared float am_v[NPU_WG];
shared int am_i[NPU_WG];

// Every invocation of the workgroup calls it (barriers): the best pair of the NPU_TPR lanes of
// this invocation's segment, by a tree in shared memory.
void am_combine(inout float v, inout int i)
{
    uint t = gl_LocalInvocationID.x, lane = row_lane();
    am_v[t] = v;
    am_i[t] = i;
    barrier();
    for (uint s = NPU_TPR / 2u; s > 0u; s >>= 1) {
        if (lane < s && am_better(am_v[t + s], am_i[t + s], am_v[t], am_i[t])) {
            am_v[t] = am_v[t + s];
            am_i[t] = am_i[t + s];
        }
        barrier();
    }
    v = am_v[t - lane];
    i = am_i[t - lane];
}

#endif
