// conv2d, direct (compiler/lower/lower_conv2d.c, docs/kernels.md): the portable tier's conv for a CPU
// device (lavapipe), where it runs 2.3x faster than the implicit GEMM (shaders/conv2d_body.glsl)
// and 20x slower on an H100 (bench/NOTES.md). Stems conv2d_direct, conv2d_direct_b,
// conv2d_direct_r, conv2d_direct_br, and conv2d_direct_s* with the input scale (bindings, push and
// epilogue: conv2d_common.glsl; nsplit 1).
//
// y[n, co, oy, ox] = act(sum_{ci, r, s} w[co, ci, r, s] * x[n, g*Cin_g + ci, oy*sh - ph + r*dh,
//                    ox*sw - pw + s*dw] + bias[co] + res[n, co, oy, ox]), fp32 accumulation.
// Spec 0 = workgroup size, spec 1 = TM output channels per invocation, spec 2 = TP output
// pixels per invocation (at a stride of the workgroup size).
//
// A workgroup computes TM output channels of one group for NPU_WG * TP consecutive output pixels
// (of the flattened N*OH*OW). The weight index depends only on the workgroup and the loop
// counters, so it is uniform: lavapipe (which runs invocations as SIMD lanes and turns per-lane
// loads into gathers) loads it once for all lanes; only the input values are per-lane loads,
// each used TM times from registers. No shared memory and no barriers: lavapipe's barriers are
// expensive and its "shared memory" is ordinary memory.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint TM = 8;
layout(constant_id = 2) const uint TP = 1;

#include "conv2d_common.glsl"

void main()
{
    uint gid = npu_group_index();
    uint pt = gid % pc.ptiles, rest = gid / pc.ptiles;
    uint mt = rest % pc.mtiles, g = rest / pc.mtiles;
    if (g >= pc.groups) return; // the grid was folded past 65535
    uint cing = pc.c / pc.groups, coutg = pc.cout / pc.groups;
    uint khw = pc.kh * pc.kw, hw = pc.h * pc.w, kdim = cing * khw;
    uint ohw = pc.oh * pc.ow, npix = pc.n * ohw;
    uint m0 = mt * TM;
    uint mlast = min(TM, coutg - m0) - 1; // rows past the group's end reread the last one

    int iy0[TP], ix0[TP];
    uint xb[TP], sb[TP];
    bool pv[TP];
    [[unroll]] for (uint t = 0; t < TP; t++) {
        uint p = (pt * TP + t) * NPU_WG + gl_LocalInvocationID.x;
        pv[t] = p < npix;
        uint pn = pv[t] ? p / ohw : 0, pq = pv[t] ? p % ohw : 0;
        iy0[t] = int((pq / pc.ow) * pc.sh) - pc.ph;
        ix0[t] = int((pq % pc.ow) * pc.sw) - pc.pw;
        xb[t] = (pn * pc.xcp + g * cing) * hw;
        sb[t] = CONV_SCALE != 0 ? pn * pc.scn + g * cing : 0u;
    }
    float acc[TM][TP];
    [[unroll]] for (uint i = 0; i < TM; i++)
        [[unroll]] for (uint t = 0; t < TP; t++) acc[i][t] = 0.0;

    uint wb = (g * coutg + m0) * kdim;
    for (uint ci = 0; ci < cing; ci++) {
        float sv[TP]; // the input scale of each pixel's image at this channel (CONV_SCALE)
        [[unroll]] for (uint t = 0; t < TP; t++) {
#if CONV_SCALE
            sv[t] = S_LOAD(sc[sb[t] + ci]);
#else
            sv[t] = 1.0;
#endif
        }
        for (uint r = 0; r < pc.kh; r++) {
            for (uint s = 0; s < pc.kw; s++) {
                float xv[TP];
                [[unroll]] for (uint t = 0; t < TP; t++) {
                    int iy = iy0[t] + int(r * pc.dh), ix = ix0[t] + int(s * pc.dw);
                    bool ok = pv[t] && iy >= 0 && iy < int(pc.h) && ix >= 0 && ix < int(pc.w);
                    xv[t] = ok ? S_LOAD(x[xb[t] + ci * hw + uint(iy) * pc.w + uint(ix)]) : 0.0;
                    if (CONV_SCALE != 0) xv[t] = conv_scaled(xv[t], sv[t]);
                }
                uint wk = wb + ci * khw + r * pc.kw + s;
                [[unroll]] for (uint i = 0; i < TM; i++) {
                    float wv = S_LOAD(w[wk + min(i, mlast) * kdim]);
                    [[unroll]] for (uint t = 0; t < TP; t++) acc[i][t] += wv * xv[t];
                }
            }
        }
    }

    [[unroll]] for (uint t = 0; t < TP; t++) {
        if (!pv[t]) continue;
        uint p = (pt * TP + t) * NPU_WG + gl_LocalInvocationID.x;
        uint pn = p / ohw, pq = p % ohw;
        [[unroll]] for (uint i = 0; i < TM; i++)
            if (i <= mlast) {
                uint co = g * coutg + m0 + i;
                epilogue_store(pn, co, pq, epilogue_value(pn, co, pq, acc[i][t]));
            }
    }
}
