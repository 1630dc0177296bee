// pool2d: max, average and adaptive average pooling, LANES invocations per logical output element
// (n, c, oy, ox); x and y are [N, Cp, H, W] with their own physical channel counts (padding never
// read). Codes and parameters: compiler/lower/lower_pool2d.c; semantics: runtime/cpu/cpu_conv.c (ATen).
// With LANES 1 an invocation walks its window's rows and columns; a wide window (a global
// average pool: 7x7 in resnet) is spread over LANES invocations, element e of the window to lane
// e % LANES, their partial sums (maxima) combined through shared memory in a tree.
// Spec: 0 = workgroup size, 1 = LANES (a power of two dividing it). Bindings: 0 = x, 1 = y.
// Push: abi.h POOL2D_PUSH.
#version 450
#include "abi.h"
#include "common.glsl"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint LANES = 1;
layout(std430, set = 0, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { STORAGE_T y[]; };
PUSH_BLOCK(POOL2D_PUSH)

shared float part[NPU_WG];

// max: padding never wins; NaN wins as in ATen. avg: the sum.
float pool_add(float r, float v)
{
    return pc.code == POOL_MAX ? (v > r || isnan(v) ? v : r) : r + v;
}

void main()
{
    uint gi = npu_global_index(), lx = gl_LocalInvocationID.x;
    uint i = gi / LANES, lane = gi % LANES;
    bool live = i < pc.total;
    uint ox = i % pc.ow, oy = (i / pc.ow) % pc.oh, t = i / (pc.ow * pc.oh);
    uint c = t % pc.c, n = t / pc.c;
    uint xb = (n * pc.xcp + c) * uint(pc.h * pc.w);
    // the window: rows x cols elements from (y0, x0), dy and dx apart (bounds checked per element)
    int y0, x0, rows, cols, dy = 1, dx = 1, div = 1;
    if (pc.code == POOL_MAX) {
        y0 = int(oy) * pc.sh - pc.ph, x0 = int(ox) * pc.sw - pc.pw;
        rows = pc.kh, cols = pc.kw, dy = pc.dh, dx = pc.dw;
    } else if (pc.code == POOL_AVG) {
        // the window clipped to input + padding counts with count_include_pad
        int hs = int(oy) * pc.sh - pc.ph, he = min(hs + pc.kh, pc.h + pc.ph);
        int ws = int(ox) * pc.sw - pc.pw, we = min(ws + pc.kw, pc.w + pc.pw);
        int pool = (he - hs) * (we - ws);
        y0 = max(hs, 0), x0 = max(ws, 0);
        rows = min(he, pc.h) - y0, cols = min(we, pc.w) - x0;
        div = pc.divisor != 0 ? pc.divisor : pc.include_pad != 0 ? pool : rows * cols;
    } else {
        // adaptive: [floor(o * in / out), ceil((o + 1) * in / out))
        y0 = int(oy) * pc.h / int(pc.oh);
        rows = ((int(oy) + 1) * pc.h + int(pc.oh) - 1) / int(pc.oh) - y0;
        x0 = int(ox) * pc.w / int(pc.ow);
        cols = ((int(ox) + 1) * pc.w + int(pc.ow) - 1) / int(pc.ow) - x0;
        div = rows * cols;
    }
    if (!live) rows = 0;
    float r = pc.code == POOL_MAX ? uintBitsToFloat(0xff800000u) : 0.0; // -inf
    if (LANES == 1) {
        for (int a = 0; a < rows; a++) {
            int iy = y0 + a * dy;
            if (iy < 0 || iy >= pc.h) continue;
            for (int b = 0; b < cols; b++) {
                int ix = x0 + b * dx;
                if (ix >= 0 && ix < pc.w) r = pool_add(r, S_LOAD(x[xb + uint(iy * pc.w + ix)]));
            }
        }
    } else {
        for (int e = int(lane); e < rows * cols; e += int(LANES)) {
            int iy = y0 + e / cols * dy, ix = x0 + e % cols * dx;
            if (iy >= 0 && iy < pc.h && ix >= 0 && ix < pc.w)
                r = pool_add(r, S_LOAD(x[xb + uint(iy * pc.w + ix)]));
        }
        part[lx] = r;
        barrier();
        for (uint s = LANES / 2; s > 0; s >>= 1) {
            if (lane < s) {
                r = pool_add(r, part[lx + s]);
                part[lx] = r;
            }
            barrier();
        }
    }
    if (!live || lane != 0) return;
    if (pc.code != POOL_MAX) r /= float(div);
    y[(n * pc.ycp + c) * pc.oh * pc.ow + oy * pc.ow + ox] = S_STORE(r);
}
