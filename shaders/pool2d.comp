// pool2d: max, average and adaptive average pooling, one invocation per logical output element
// (n, c, oy, ox); x and y are [N, Cp, H, W] with their own physical channel counts (padding never
// read). Codes and parameters: compiler/lower_pool2d.c; semantics: runtime/cpu_conv.c (ATen).
// Spec: 0 = workgroup size. Bindings: 0 = x, 1 = y.
// Push {n, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw, xcp, ycp, code, include_pad,
//       divisor_override (0 = none), total}.
#version 450
#include "common.glsl"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { STORAGE_T y[]; };
layout(push_constant) uniform Push {
    uint n, c;
    int h, w;
    uint oh, ow;
    int kh, kw, sh, sw, ph, pw, dh, dw;
    uint xcp, ycp, code, include_pad;
    int divisor;
    uint total;
} pc;

void main()
{
    uint i = npu_global_index();
    if (i >= pc.total) return;
    uint ox = i % pc.ow, oy = (i / pc.ow) % pc.oh, t = i / (pc.ow * pc.oh);
    uint c = t % pc.c, n = t / pc.c;
    uint xb = (n * pc.xcp + c) * uint(pc.h * pc.w);
    float r;
    if (pc.code == 1) {
        // max: padding never wins; NaN wins as in ATen
        r = uintBitsToFloat(0xff800000u); // -inf
        int iy0 = int(oy) * pc.sh - pc.ph, ix0 = int(ox) * pc.sw - pc.pw;
        for (int a = 0; a < pc.kh; a++) {
            int iy = iy0 + a * pc.dh;
            if (iy < 0 || iy >= pc.h) continue;
            for (int b = 0; b < pc.kw; b++) {
                int ix = ix0 + b * pc.dw;
                if (ix < 0 || ix >= pc.w) continue;
                float v = S_LOAD(x[xb + uint(iy * pc.w + ix)]);
                if (v > r || isnan(v)) r = v;
            }
        }
    } else {
        int hs, he, ws, we, div;
        if (pc.code == 2) {
            // the window clipped to input + padding counts with count_include_pad
            hs = int(oy) * pc.sh - pc.ph;
            he = min(hs + pc.kh, pc.h + pc.ph);
            ws = int(ox) * pc.sw - pc.pw;
            we = min(ws + pc.kw, pc.w + pc.pw);
            int pool = (he - hs) * (we - ws);
            hs = max(hs, 0);
            ws = max(ws, 0);
            he = min(he, pc.h);
            we = min(we, pc.w);
            div = pc.divisor != 0 ? pc.divisor : pc.include_pad != 0 ? pool : (he - hs) * (we - ws);
        } else {
            // adaptive: [floor(o * in / out), ceil((o + 1) * in / out))
            hs = int(oy) * pc.h / int(pc.oh);
            he = ((int(oy) + 1) * pc.h + int(pc.oh) - 1) / int(pc.oh);
            ws = int(ox) * pc.w / int(pc.ow);
            we = ((int(ox) + 1) * pc.w + int(pc.ow) - 1) / int(pc.ow);
            div = (he - hs) * (we - ws);
        }
        float acc = 0.0;
        for (int iy = hs; iy < he; iy++)
            for (int ix = ws; ix < we; ix++) acc += S_LOAD(x[xb + uint(iy * pc.w + ix)]);
        r = acc / float(div);
    }
    y[(n * pc.ycp + c) * pc.oh * pc.ow + oy * pc.ow + ox] = S_STORE(r);
}
