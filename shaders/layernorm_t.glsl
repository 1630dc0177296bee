// layernorm_t: layer_norm over rows at any strides, the layernorm_t fusion's kernel (rows
// layernorm_t (x, w, b), layernorm_t_w (x, w), layernorm_t_plain (x); LN_WEIGHT and LN_BIAS 0 or
// 1; the output binds right after the inputs). Row r's element j is x[xo(r) + j * xl] and goes
// to y[yo(r) + j * yl], so a permuted (and channel-padded) input is read in place and the output
// written in a permuted layout: ConvNeXt's norm over the channels of NCHW reads a channel at
// stride H * W. y = (x - mean) / sqrt(var + eps) [* w] [+ b], the mean and the biased variance in
// two float32 passes (as layernorm.glsl and runtime/cpu/cpu_reduce.c).
// A workgroup takes P = NPU_WG / NPU_TPR consecutive rows, NPU_TPR lanes each; a row's lanes
// combine their sums in shared memory in a fixed tree order. Spec: 0 = workgroup size, 1 = lanes
// per row (powers of two), 2 = LN_XJ: 1 when consecutive invocations take consecutive elements
// of a row in the statistics passes (x's rows contiguous), 0 when they take consecutive rows
// (rows side by side in x: NCHW's pixels); 3 = LN_YJ, the same for the pass writing y. The
// writing pass walks the workgroup's P * n elements in that order, so its stores coalesce in
// either layout (its loads of x come again from the cache). Push abi.h LN_T_PUSH.
#include "common.glsl"
#include "abi.h"
#include "rows.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 2) const uint LN_XJ = 1;
layout(constant_id = 3) const uint LN_YJ = 1;
#include "layernorm_io.glsl"
PUSH_BLOCK(LN_T_PUSH)

// each row's statistics and offsets, for the writing pass
shared float ln_mean[NPU_WG], ln_rstd[NPU_WG];
shared int ln_xo[NPU_WG], ln_yo[NPU_WG];

void main()
{
    const uint P = NPU_WG / NPU_TPR;
    uint t = gl_LocalInvocationID.x;
    uint p = LN_XJ != 0u ? t / NPU_TPR : t % P, l = LN_XJ != 0u ? t % NPU_TPR : t / P;
    // the row's lanes' slots in npu_sh: invocation t owns slot t either way
    uint base = LN_XJ != 0u ? p * NPU_TPR : p, step = LN_XJ != 0u ? 1u : P;
    uint first = npu_group_index() * P, r = first + p;
    bool live = r < pc.rows; // rows past the last join the barriers only
    int xo = live ? row_offset(r, pc.oshape, pc.xs) : 0;
    int yo = live ? row_offset(r, pc.oshape, pc.ys) : 0;
    float s = 0.0;
    if (live)
        for (uint j = l; j < pc.n; j += NPU_TPR) s += S_LOAD(x[xo + int(j) * pc.xl]);
    float mean = row_sum_at(s, base, l, step) / float(pc.n);
    float q = 0.0;
    if (live)
        for (uint j = l; j < pc.n; j += NPU_TPR) {
            float d = S_LOAD(x[xo + int(j) * pc.xl]) - mean;
            q += d * d;
        }
    float rstd = 1.0 / sqrt(row_sum_at(q, base, l, step) / float(pc.n) + pc.eps);
    if (l == 0u) {
        ln_mean[p] = mean;
        ln_rstd[p] = rstd;
        ln_xo[p] = xo;
        ln_yo[p] = yo;
    }
    barrier();
    uint rows = first < pc.rows ? min(P, pc.rows - first) : 0u; // a folded grid's spare groups
    for (uint e = t; e < rows * pc.n; e += NPU_WG) {
        uint i = LN_YJ != 0u ? e / pc.n : e % rows, j = LN_YJ != 0u ? e % pc.n : e / rows;
        float v = ln_affine((S_LOAD(x[ln_xo[i] + int(j) * pc.xl]) - ln_mean[i]) * ln_rstd[i], j);
        y[ln_yo[i] + int(j) * pc.yl] = S_STORE(v);
    }
}
