// conv2d body shared by the four conv2d stems, which differ only in their bindings (the runtime
// binds exactly the kernel's tensors, so an absent bias or residual needs a module without that
// binding): conv2d (x, w, y), conv2d_b (x, w, bias, y), conv2d_r (x, w, res, y), conv2d_br (x, w,
// bias, res, y). The including stem defines CONV_BIAS and CONV_RES (0 or 1).
//
// y[n, co, oy, ox] = act(sum_{ci, r, s} w[co, ci, r, s] * x[n, g*Cin_g + ci, oy*sh - ph + r*dh,
//                    ox*sw - pw + s*dw] + bias[co] + res[n, co, oy, ox]), fp32 accumulation.
// x, y and res are [N, Cp, H, W] with their own physical channel counts (padding never read);
// w is dense [Cout, Cin_g, KH, KW]. Parameters: compiler/lower_conv2d.c (docs/kernels.md).
//
// Spec 0 = workgroup size, spec 1 = TM output channels per invocation, spec 2 = TP output
// pixels per invocation (at a stride of the workgroup size).
//
// A workgroup computes TM output channels of one group for NPU_WG * TP consecutive output pixels
// (of the flattened N*OH*OW). The weight index depends only on the workgroup and the loop
// counters, so it is uniform: a GPU broadcasts it, and lavapipe (which runs invocations as SIMD
// lanes and turns per-lane loads into gathers) loads it once for all lanes; only the input
// values are per-lane loads, each used TM times from registers. No shared memory and no
// barriers: lavapipe's barriers are expensive and its "shared memory" is ordinary memory.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "index.glsl"
#include "eltwise.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint TM = 8;
layout(constant_id = 2) const uint TP = 1;

layout(std430, set = 0, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Wt { STORAGE_T w[]; };
#if CONV_BIAS
layout(std430, set = 0, binding = 2) readonly buffer Bias { STORAGE_T bias[]; };
#define RES_BINDING 3
#else
#define RES_BINDING 2
#endif
#if CONV_RES
layout(std430, set = 0, binding = RES_BINDING) readonly buffer Res { STORAGE_T res[]; };
#define Y_BINDING (RES_BINDING + 1)
#else
#define Y_BINDING RES_BINDING
#endif
layout(std430, set = 0, binding = Y_BINDING) writeonly buffer Y { STORAGE_T y[]; };

// rsrc: 0 no residual, 1 the res binding, 2 the residual is x itself (conv(x) + x), 3 the add
// adds the conv output to itself. act (applied last): 0 none, 1 relu, 2 clamp to [lo, hi] (relu6,
// hardtanh; act_lim holds lo and hi as two halves), 3 hardswish, 4 hardsigmoid.
layout(push_constant) uniform Push {
    uint n, c, h, w;
    uint cout, oh, ow, groups;
    uint kh, kw, sh, sw;
    int ph, pw;
    uint dh, dw;
    uint xcp, ycp, rcp, rsrc;
    uint act, mtiles, ptiles, act_lim;
} pc;

// The fused activation, NaN kept as the CPU reference keeps it.
float conv_act(float v)
{
    if (pc.act == 1u) return npu_relu(v);
    if (pc.act == 2u) {
        vec2 lim = unpackHalf2x16(pc.act_lim);
        return npu_clamp(v, lim.x, lim.y);
    }
    if (pc.act == 3u) return npu_hardswish(v);
    if (pc.act == 4u) return npu_hardsigmoid(v);
    return v;
}

// Bias, residual and activation of output element (n, co, q = oy*OW + ox); then the store.
void epilogue(uint n, uint co, uint q, float v)
{
    uint ohw = pc.oh * pc.ow;
#if CONV_BIAS
    v += S_LOAD(bias[co]);
#endif
#if CONV_RES
    if (pc.rsrc == 1) v += S_LOAD(res[(n * pc.rcp + co) * ohw + q]);
#endif
    if (pc.rsrc == 2) v += S_LOAD(x[(n * pc.xcp + co) * ohw + q]);
    if (pc.rsrc == 3) v += v;
    y[(n * pc.ycp + co) * ohw + q] = S_STORE(conv_act(v));
}

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
    uint xb[TP];
    bool pv[TP];
    [[unroll]] for (uint t = 0; t < TP; t++) {
        uint p = (pt * TP + t) * NPU_WG + gl_LocalInvocationID.x;
        pv[t] = p < npix;
        uint pn = pv[t] ? p / ohw : 0, pq = pv[t] ? p % ohw : 0;
        iy0[t] = int((pq / pc.ow) * pc.sh) - pc.ph;
        ix0[t] = int((pq % pc.ow) * pc.sw) - pc.pw;
        xb[t] = (pn * pc.xcp + g * cing) * hw;
    }
    float acc[TM][TP];
    [[unroll]] for (uint i = 0; i < TM; i++)
        [[unroll]] for (uint t = 0; t < TP; t++) acc[i][t] = 0.0;

    uint wb = (g * coutg + m0) * kdim;
    for (uint ci = 0; ci < cing; ci++) {
        for (uint r = 0; r < pc.kh; r++) {
            for (uint s = 0; s < pc.kw; s++) {
                float xv[TP];
                [[unroll]] for (uint t = 0; t < TP; t++) {
                    int iy = iy0[t] + int(r * pc.dh), ix = ix0[t] + int(s * pc.dw);
                    bool ok = pv[t] && iy >= 0 && iy < int(pc.h) && ix >= 0 && ix < int(pc.w);
                    xv[t] = ok ? S_LOAD(x[xb[t] + ci * hw + uint(iy) * pc.w + uint(ix)]) : 0.0;
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
            if (i <= mlast) epilogue(pn, g * coutg + m0 + i, pq, acc[i][t]);
    }
}
