// reduce: sum (code RD_SUM), mean (RD_MEAN) or amax (RD_AMAX) over the last dim, fp32
// accumulation, rows as in rows.glsl. Lowering: compiler/lower/lower_reduce.c. Spec: 0 =
// workgroup size, 1 = lanes per row. Bindings: 0 = x, 1 = y. Push abi.h REDUCE_PUSH.
#version 450
#include "common.glsl"
#include "abi.h"
#include "rows.glsl"

layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { STORAGE_T y[]; };
PUSH_BLOCK(REDUCE_PUSH)

void main()
{
    uint r = row_index(), lane = row_lane();
    bool live = r < pc.rows;
    bool mx = pc.code == RD_AMAX;
    float acc = mx ? uintBitsToFloat(0xff800000u) : 0.0;
    if (live) {
        int base = row_offset(r, pc.oshape, pc.xs);
        for (uint j = lane; j < pc.len; j += NPU_TPR) {
            float v = S_LOAD(x[base + int(j) * pc.lstride]);
            acc = mx ? nan_max(acc, v) : acc + v;
        }
    }
    float res = mx ? row_max(acc) : row_sum(acc);
    if (pc.code == RD_MEAN) res = res / float(pc.len);
    if (live && lane == 0u) y[row_offset(r, pc.oshape, pc.ys)] = S_STORE(res);
}
