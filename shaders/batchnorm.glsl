// batchnorm body of the rows batchnorm (x, w, b, mean, var) and batchnorm_plain (x, mean,
// var), which define BN_AFFINE (1 or 0). Eval mode: y = x * a + c per channel with
// a = [w] / sqrt(var + eps), c = [b] - mean * a (as runtime/cpu/cpu_reduce.c). One invocation per
// logical element of [N, C, inner]; x and y may each have dim 1 padded (strides xs0/xs1, ys0/ys1),
// padding is neither read nor written. Spec: 0 = workgroup size.
// Push abi.h BATCHNORM_PUSH.
#include "common.glsl"
#include "abi.h"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer X { STORAGE_T x[]; };
#if BN_AFFINE
layout(std430, set = 0, binding = 1) readonly buffer W { STORAGE_T w[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { STORAGE_T b[]; };
#endif
layout(std430, set = 0, binding = 1 + 2 * BN_AFFINE) readonly buffer M { STORAGE_T rm[]; };
layout(std430, set = 0, binding = 2 + 2 * BN_AFFINE) readonly buffer V { STORAGE_T rv[]; };
layout(std430, set = 0, binding = 3 + 2 * BN_AFFINE) writeonly buffer Y { STORAGE_T y[]; };
PUSH_BLOCK(BATCHNORM_PUSH)

void main()
{
    uint i = npu_global_index();
    if (i >= pc.total) return;
    uint j = i % pc.inner, t = i / pc.inner;
    uint ch = t % pc.C, nb = t / pc.C;
    float a = 1.0 / sqrt(S_LOAD(rv[ch]) + pc.eps);
#if BN_AFFINE
    a *= S_LOAD(w[ch]);
    float c = S_LOAD(b[ch]) - S_LOAD(rm[ch]) * a;
#else
    float c = -S_LOAD(rm[ch]) * a;
#endif
    y[nb * pc.ys0 + ch * pc.ys1 + j] = S_STORE(S_LOAD(x[nb * pc.xs0 + ch * pc.xs1 + j]) * a + c);
}
