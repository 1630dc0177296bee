// pool2d_global: a pool whose one window is the whole input (adaptive average to 1x1; an average
// or max pool with the input's size as kernel, no padding, no dilation): per (n, c) a reduction
// over the H * W elements of the row x[n, c, :, :], which is contiguous in x's [N, Cp, H, W]
// layout whatever its physical channel count. Rows as in rows.glsl: a workgroup of NPU_WG holds
// NPU_WG / NPU_TPR rows, NPU_TPR lanes each; lane j folds units j, j + TPR, ... of its row, U
// loads issued per trip before any arithmetic (a memory-bound reduction lives on loads in
// flight; lowering gives a row lanes enough for one trip where the workgroup allows), then the
// row's lanes combine in rows.glsl's fixed tree (deterministic). A unit is one
// element, or with VEC > 1 a 16-byte vector (8 f16/bf16, 4 f32; lowering takes it when H * W is
// a multiple of it and x's binding is 16-byte aligned), folded element by element in order.
// Lowering: compiler/lower/lower_pool2d.c; semantics: runtime/cpu/cpu_conv.c (ATen).
// Spec: 0 = workgroup size, 1 = TPR (a power of two dividing it), 2 = VEC (1, or the vector's
// elements). Bindings: 0 = x, 1 = y. Push: abi.h POOL2D_PUSH as pool2d (this kernel reads c, h,
// w, xcp, ycp, code, divisor and total = N * C, the rows).
#version 450
#extension GL_EXT_control_flow_attributes : require
#include "abi.h"
#include "common.glsl"
#include "rows.glsl"

#if defined(STORAGE_F32)
#define VEC_T vec4
#else
#define VEC_T uvec4
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 2) const uint VEC = 1;
layout(std430, set = 0, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, set = 0, binding = 0) readonly buffer X4 { VEC_T x4[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { STORAGE_T y[]; };
PUSH_BLOCK(POOL2D_PUSH)

const uint U = 4; // loads per trip (lower_pool2d.c GLOBAL_PER_LANE)

// max: NaN wins as in ATen; averages: the sum
float fold(float r, float v)
{
    return pc.code == POOL_MAX ? nan_max(r, v) : r + v;
}

// a 16-bit pair (elements 2i, 2i + 1 of a vector) as two floats
vec2 pair(uint w)
{
#if defined(STORAGE_BF16)
    return vec2(uintBitsToFloat(w << 16), uintBitsToFloat(w & 0xffff0000u));
#else
    return unpackHalf2x16(w);
#endif
}

float fold_vec(float r, VEC_T v)
{
#if defined(STORAGE_F32)
    return fold(fold(fold(fold(r, v.x), v.y), v.z), v.w);
#else
    for (int i = 0; i < 4; i++) {
        vec2 p = pair(v[i]);
        r = fold(fold(r, p.x), p.y);
    }
    return r;
#endif
}

void main()
{
    uint row = row_index(), lane = row_lane();
    bool live = row < pc.total;
    uint c = row % pc.c, n = row / pc.c;
    uint len = uint(pc.h * pc.w);
    uint base = (n * pc.xcp + c) * len; // the row's first element
    float r = pc.code == POOL_MAX ? uintBitsToFloat(0xff800000u) : 0.0; // -inf
    // each trip issues its U loads first, at clamped indices (in bounds, so no branch around a
    // load), then folds those inside the row in order
    if (live && VEC == 1) {
        for (uint e = lane; e < len; e += U * NPU_TPR) {
            float v[U];
            [[unroll]] for (uint u = 0; u < U; u++)
                v[u] = S_LOAD(x[base + min(e + u * NPU_TPR, len - 1)]);
            [[unroll]] for (uint u = 0; u < U; u++)
                if (e + u * NPU_TPR < len) r = fold(r, v[u]);
        }
    } else if (live) {
        uint nv = len / VEC, vb = base / VEC;
        for (uint e = lane; e < nv; e += U * NPU_TPR) {
            VEC_T v[U];
            [[unroll]] for (uint u = 0; u < U; u++)
                v[u] = x4[vb + min(e + u * NPU_TPR, nv - 1)];
            [[unroll]] for (uint u = 0; u < U; u++)
                if (e + u * NPU_TPR < nv) r = fold_vec(r, v[u]);
        }
    }
    r = pc.code == POOL_MAX ? row_max(r) : row_sum(r);
    if (!live || lane != 0) return;
    if (pc.code != POOL_MAX) r /= float(pc.divisor != 0 ? pc.divisor : int(len));
    y[n * pc.ycp + c] = S_STORE(r);
}
