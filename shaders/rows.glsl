// Row helpers for the last-dim reductions (reduce.comp, softmax.glsl): a workgroup of NPU_WG
// invocations holds NPU_WG / NPU_TPR rows, NPU_TPR invocations per row (spec constant 1, a power
// of two). Each invocation folds a strided slice of its row, then the row's lanes combine their
// partials in shared memory in a fixed tree order (deterministic, no subgroup-size assumption).
#ifndef NPU_ROWS_GLSL
#define NPU_ROWS_GLSL
#include "index.glsl"

layout(constant_id = 1) const uint NPU_TPR = 64;

shared float npu_sh[NPU_WG];

uint row_lane()
{
    return gl_LocalInvocationID.x % NPU_TPR;
}

// The row this invocation works on (may be past the last row: then it only joins the barriers).
uint row_index()
{
    return npu_group_index() * (NPU_WG / NPU_TPR) + gl_LocalInvocationID.x / NPU_TPR;
}

// Offset of row r's first element over an outer shape of ROW_OUTER dims with strides st.
int row_offset(uint r, uint shape[ROW_OUTER], int st[ROW_OUTER])
{
    int off = 0;
    for (int d = ROW_OUTER - 1; d >= 0; d--) {
        uint c = r % shape[d];
        r /= shape[d];
        off += int(c) * st[d];
    }
    return off;
}

// max that lets NaN win, as torch.amax / the softmax reference do.
float nan_max(float a, float b)
{
    return (b > a || isnan(b)) ? b : a;
}

// Every invocation of the workgroup calls these (barriers): returns the row's combined value.
// row_sum_at: the invocation is lane `lane` of a row whose lanes own the slots base,
// base + step, ... of npu_sh (layernorm_t maps invocations to rows its own way, step > 1 where
// consecutive invocations take consecutive rows, so they own consecutive slots); row_sum: the
// mapping of row_lane and row_index, a row's lanes side by side.
float row_sum_at(float v, uint base, uint lane, uint step)
{
    uint t = base + lane * step;
    barrier(); // a previous reduction may still read npu_sh
    npu_sh[t] = v;
    barrier();
    for (uint s = NPU_TPR / 2u; s > 0u; s >>= 1) {
        if (lane < s) npu_sh[t] += npu_sh[t + s * step];
        barrier();
    }
    return npu_sh[base];
}

float row_sum(float v)
{
    uint lane = row_lane();
    return row_sum_at(v, gl_LocalInvocationID.x - lane, lane, 1u);
}

float row_max(float v)
{
    uint t = gl_LocalInvocationID.x, lane = row_lane();
    barrier();
    npu_sh[t] = v;
    barrier();
    for (uint s = NPU_TPR / 2u; s > 0u; s >>= 1) {
        if (lane < s) npu_sh[t] = nan_max(npu_sh[t], npu_sh[t + s]);
        barrier();
    }
    return npu_sh[t - lane];
}

#endif
