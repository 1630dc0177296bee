// where core, the body of the rows where and where_s: y = cond != 0 ? a : b elementwise with
// broadcasting, over the logical (dense) output shape, each operand addressed with its own
// strides (0 on broadcast dims). Bool conditions are 0/1 in the storage dtype; NaN counts as true.
// Push abi.h WHERE_PUSH; masked_fill's mapping: compiler/lower/lower_where.c. Spec: 0 = workgroup size.
// WHERE_SCALAR: bindings {cond, t, y}, one operand the scalar push word (flag 1: a, 2: b).
// otherwise:    bindings {cond, a, b, y}.
#include "common.glsl"
#include "abi.h"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer C { STORAGE_T c[]; };
#ifdef WHERE_SCALAR
layout(std430, set = 0, binding = 1) readonly buffer X { STORAGE_T t[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Y { STORAGE_T y[]; };
#else
layout(std430, set = 0, binding = 1) readonly buffer A { STORAGE_T a[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { STORAGE_T b[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Y { STORAGE_T y[]; };
#endif
PUSH_BLOCK(WHERE_PUSH)

void main()
{
    uint i = npu_global_index();
    if (i >= pc.n) return;
    uint rem = i;
    int oc = 0, oa = 0, ob = 0;
    for (int d = KERNEL_DIMS - 1; d >= 0; d--) {
        uint q = rem % pc.shape[d];
        rem /= pc.shape[d];
        oc += int(q) * pc.sc[d];
        oa += int(q) * pc.sa[d];
        ob += int(q) * pc.sb[d];
    }
    bool pick_a = S_LOAD(c[oc]) != 0.0;
#ifdef WHERE_SCALAR
    float r;
    if ((pc.flags & WF_A_SCALAR) != 0u)
        r = pick_a ? pc.sa_val : S_LOAD(t[ob]);
    else
        r = pick_a ? S_LOAD(t[oa]) : pc.sb_val;
#else
    float r = pick_a ? S_LOAD(a[oa]) : S_LOAD(b[ob]);
#endif
    y[i] = S_STORE(r);
}
