// softmax core, the body of the rows softmax and masked_softmax (shaders/kernels.def): softmax (code bit 0 clear) or
// log_softmax (set) over the last dim of v, v = x (+ x again with code bit 1: a mask add whose
// two operands are one tensor) or, with SM_MASKED, v = x + mask with the mask broadcast by
// strides. Statistics in fp32: the row max, then the sum of exp(v - max), then the outputs; an
// all -inf row gives NaN as the reference does. Rows as in rows.glsl. Lowering:
// compiler/lower/lower_softmax.c. Spec: 0 = workgroup size, 1 = lanes per row.
// Push abi.h SOFTMAX_PUSH (ls: last-dim strides).
#include "common.glsl"
#include "abi.h"
#include "rows.glsl"

layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer X { STORAGE_T x[]; };
#ifdef SM_MASKED
layout(std430, set = 0, binding = 1) readonly buffer M { STORAGE_T m[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Y { STORAGE_T y[]; };
#else
layout(std430, set = 0, binding = 1) writeonly buffer Y { STORAGE_T y[]; };
#endif
PUSH_BLOCK(SOFTMAX_PUSH)

int xb, mb;

float val(uint j)
{
    float v = S_LOAD(x[xb + int(j) * pc.xls]);
#ifdef SM_MASKED
    v += S_LOAD(m[mb + int(j) * pc.mls]);
#else
    if ((pc.code & 2u) != 0u) v += v;
#endif
    return v;
}

void main()
{
    uint r = row_index(), lane = row_lane();
    bool live = r < pc.rows;
    xb = live ? row_offset(r, pc.oshape, pc.xs) : 0;
    mb = live ? row_offset(r, pc.oshape, pc.ms) : 0;
    float mx = uintBitsToFloat(0xff800000u);
    if (live)
        for (uint j = lane; j < pc.len; j += NPU_TPR) mx = nan_max(mx, val(j));
    mx = row_max(mx);
    float s = 0.0;
    if (live)
        for (uint j = lane; j < pc.len; j += NPU_TPR) s += exp(val(j) - mx);
    s = row_sum(s);
    if (!live) return;
    int yb = row_offset(r, pc.oshape, pc.ys);
    bool logsm = (pc.code & 1u) != 0u;
    // safe (code bit 2, an exported sdpa's softmax): a row of -inf alone gives zeros
    bool empty = (pc.code & 4u) != 0u && isinf(mx) && mx < 0.0;
    float lse = log(s);
    for (uint j = lane; j < pc.len; j += NPU_TPR) {
        float d = val(j) - mx;
        float r = logsm ? d - lse : exp(d) / s;
        y[yb + int(j) * pc.yls] = S_STORE(empty ? (logsm ? mx : 0.0) : r);
    }
}
