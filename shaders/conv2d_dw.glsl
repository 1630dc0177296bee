// conv2d, depthwise (compiler/lower/lower_conv2d.c, docs/kernels.md): groups = C, one input
// channel per group and mult = Cout / C output channels per input channel (channel co reads input
// channel co / mult). Stems conv2d_dw, conv2d_dw_b, conv2d_dw_r, conv2d_dw_br, and conv2d_dw_s*
// with the input scale (bindings and epilogue: conv2d_common.glsl with CONV_DW; push: abi.h
// DWCONV_PUSH).
//
// y[n, co, oy, ox] = act(sum_{r, s} w[co, 0, r, s] * x[n, co / mult, oy*sh - ph + r*dh,
//                    ox*sw - pw + s*dw] + bias[co] + res[n, co, oy, ox]), fp32 accumulation.
// Spec 0 = workgroup size, 1 = TX outputs per invocation, 2 = KW, 3 = SW, 4 = DW (the kernel
// width, horizontal stride and dilation: the loops over them are unrolled).
//
// A depthwise conv does KH * KW multiply-adds per output: it is memory-bound, and the implicit GEMM
// (one input channel per group: 15 of its 16 tile rows idle) ran ConvNeXt-Tiny's 7x7 one at
// 56x56x96 (1.2 MB in and out) in 71 us on an H200. Here each invocation
// computes TX adjacent outputs of one output row (n, co, oy): per kernel row it loads the SEG =
// (TX - 1) * SW + (KW - 1) * DW + 1 input elements they read into registers once (branch-free:
// clamped coordinates, out-of-image elements selected to 0) and does the TX * KW multiply-adds
// from them, the KW weights of the row being the same for every invocation of the channel. The
// KH rows of neighbouring output rows are shared through the cache. No shared memory, no barrier.
// Consecutive invocations take consecutive tiles of a row, then the next rows: a workgroup reads a
// contiguous band of one channel plane.
#extension GL_EXT_control_flow_attributes : require
#define CONV_DW 1
#include "common.glsl"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint TX = 4;
layout(constant_id = 2) const uint KW = 3;
layout(constant_id = 3) const uint SW = 1;
layout(constant_id = 4) const uint DW = 1;
const uint SEG = (TX - 1u) * SW + (KW - 1u) * DW + 1u;

#include "conv2d_common.glsl"

void main()
{
    uint i = npu_global_index();
    if (i >= pc.n * pc.cout * pc.oh * pc.wtiles) return;
    uint tile = i % pc.wtiles, rest = i / pc.wtiles;
    uint oy = rest % pc.oh;
    rest /= pc.oh;
    uint co = rest % pc.cout, n = rest / pc.cout;
    uint ox0 = tile * TX;
    int ix0 = int(ox0 * SW) - pc.pw, iy0 = int(oy * pc.sh) - pc.ph;
    int ih = int(pc.h), iw = int(pc.w);
    uint xb = (n * pc.xcp + co / pc.mult) * pc.h * pc.w, wb = co * pc.kh * KW;
#if CONV_SCALE
    float sv = S_LOAD(sc[n * pc.scn + co / pc.mult]);
#endif

    float acc[TX];
    [[unroll]] for (uint t = 0; t < TX; t++) acc[t] = 0.0;
    for (uint r = 0; r < pc.kh; r++) {
        int iy = iy0 + int(r * pc.dh);
        bool rok = iy >= 0 && iy < ih;
        uint rb = xb + uint(clamp(iy, 0, ih - 1)) * pc.w;
        float seg[SEG];
        [[unroll]] for (uint j = 0; j < SEG; j++) {
            int ix = ix0 + int(j);
            float v = S_LOAD(x[rb + uint(clamp(ix, 0, iw - 1))]);
#if CONV_SCALE
            v = conv_scaled(v, sv);
#endif
            seg[j] = rok && ix >= 0 && ix < iw ? v : 0.0;
        }
        [[unroll]] for (uint s = 0; s < KW; s++) {
            float wv = S_LOAD(w[wb + r * KW + s]);
            [[unroll]] for (uint t = 0; t < TX; t++) acc[t] += wv * seg[t * SW + s * DW];
        }
    }

    uint q0 = oy * pc.ow + ox0;
    [[unroll]] for (uint t = 0; t < TX; t++)
        if (ox0 + t < pc.ow) epilogue_store(n, co, q0 + t, epilogue_value(n, co, q0 + t, acc[t]));
}
