// conv2d body shared by the four conv2d stems, which differ only in their bindings (the runtime
// binds exactly the kernel's tensors, so an absent bias or residual needs a module without that
// binding): conv2d (x, w, y), conv2d_b (x, w, bias, y), conv2d_r (x, w, res, y), conv2d_br (x, w,
// bias, res, y). The including stem defines CONV_BIAS and CONV_RES (0 or 1).
//
// y[n, co, oy, ox] = relu?(sum_{ci, r, s} w[co, ci, r, s] * x[n, g*Cin_g + ci, oy*sh - ph + r*dh,
//                    ox*sw - pw + s*dw] + bias[co] + res[n, co, oy, ox]), fp32 accumulation.
// x, y and res are [N, Cp, H, W] with their own physical channel counts (padding never read);
// w is dense [Cout, Cin_g, KH, KW]. Parameters: compiler/lower_conv2d.c (docs/kernels.md).
//
// Spec 0 = workgroup size, spec 1 = mode:
//   0: implicit GEMM. Per group, M = Cout_g output channels x P = N*OH*OW output pixels over
//      K = Cin_g*KH*KW. A workgroup of 256 computes a 64 x 64 tile, staging 16-deep slices of
//      the weights and of the (virtual) im2col matrix in shared memory; each invocation keeps a
//      4 x 4 register tile. The k -> (channel offset, dy, dx) decomposition of each slice is a
//      16-entry shared table (double-buffered) so the im2col loads do no divisions.
//   1: direct, one invocation per output element (depthwise and other few-channel groups, where
//      a 64-row tile would be mostly empty).
#include "common.glsl"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint MODE = 0;

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
// adds the conv output to itself. relu: 1 applies relu last.
layout(push_constant) uniform Push {
    uint n, c, h, w;
    uint cout, oh, ow, groups;
    uint kh, kw, sh, sw;
    int ph, pw;
    uint dh, dw;
    uint xcp, ycp, rcp, rsrc;
    uint relu, mtiles, ptiles, total;
} pc;

// Bias, residual and relu of output element (n, co, q = oy*OW + ox); then the store.
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
    if (pc.relu != 0 && !(v > 0.0 || isnan(v))) v = 0.0;
    y[(n * pc.ycp + co) * ohw + q] = S_STORE(v);
}

void conv_direct()
{
    uint i = npu_global_index();
    if (i >= pc.total) return;
    uint ohw = pc.oh * pc.ow;
    uint q = i % ohw, co = (i / ohw) % pc.cout, n = i / (ohw * pc.cout);
    uint oy = q / pc.ow, ox = q % pc.ow;
    uint cing = pc.c / pc.groups, coutg = pc.cout / pc.groups;
    uint g = co / coutg;
    int iy0 = int(oy * pc.sh) - pc.ph, ix0 = int(ox * pc.sw) - pc.pw;
    uint xb = (n * pc.xcp + g * cing) * pc.h * pc.w;
    uint wb = co * cing * pc.kh * pc.kw;
    float acc = 0.0;
    for (uint ci = 0; ci < cing; ci++) {
        for (uint r = 0; r < pc.kh; r++) {
            int iy = iy0 + int(r * pc.dh);
            if (iy < 0 || iy >= int(pc.h)) continue;
            for (uint s = 0; s < pc.kw; s++) {
                int ix = ix0 + int(s * pc.dw);
                if (ix < 0 || ix >= int(pc.w)) continue;
                acc += S_LOAD(w[wb + (ci * pc.kh + r) * pc.kw + s]) *
                       S_LOAD(x[xb + (ci * pc.h + uint(iy)) * pc.w + uint(ix)]);
            }
        }
    }
    epilogue(n, co, q, acc);
}

const uint BM = 64, BN = 64, BK = 16;
shared float As[BK][BM];
shared float Bs[BK][BN];
shared int Toff[2][BK], Tdy[2][BK], Tdx[2][BK];

// Slice table entry t of buffer b for reduction index k: channel offset and window offsets.
void table(uint b, uint t, uint k, uint kdim)
{
    if (k >= kdim) {
        Toff[b][t] = -1;
        return;
    }
    uint khw = pc.kh * pc.kw, rs = k % khw;
    Toff[b][t] = int((k / khw) * pc.h * pc.w);
    Tdy[b][t] = int((rs / pc.kw) * pc.dh);
    Tdx[b][t] = int((rs % pc.kw) * pc.dw);
}

void conv_gemm()
{
    uint gid = npu_group_index();
    uint pt = gid % pc.ptiles, rest = gid / pc.ptiles;
    uint mt = rest % pc.mtiles, g = rest / pc.mtiles;
    if (g >= pc.groups) return; // whole workgroup: the grid was folded past 65535
    uint tid = gl_LocalInvocationID.x;
    uint cing = pc.c / pc.groups, coutg = pc.cout / pc.groups;
    uint kdim = cing * pc.kh * pc.kw;
    uint ohw = pc.oh * pc.ow, npix = pc.n * ohw;

    // the im2col column this invocation loads: one output pixel, rows bk, bk + 4, ...
    uint bj = tid % BN, bk = tid / BN;
    uint p = pt * BN + bj;
    bool pv = p < npix;
    uint pn = pv ? p / ohw : 0, pq = pv ? p % ohw : 0;
    int iy0 = int((pq / pc.ow) * pc.sh) - pc.ph, ix0 = int((pq % pc.ow) * pc.sw) - pc.pw;
    uint xb = (pn * pc.xcp + g * cing) * pc.h * pc.w;
    // the weight rows it loads: am, am + 16, ... at column ak
    uint ak = tid % BK, am = tid / BK;
    uint m0 = mt * BM;
    uint wb = (g * coutg + m0) * kdim;
    // its output tile: channels tm + 16 i, pixels tn + 16 j
    uint tn = tid % 16, tm = tid / 16;

    float acc[4][4];
    for (uint i = 0; i < 4; i++)
        for (uint j = 0; j < 4; j++) acc[i][j] = 0.0;

    if (tid < BK) table(0, tid, tid, kdim);
    barrier();
    uint cur = 0;
    for (uint k0 = 0; k0 < kdim; k0 += BK) {
        uint k = k0 + ak;
        for (uint i = 0; i < 4; i++) {
            uint m = am + 16 * i;
            As[ak][m] = (m0 + m < coutg && k < kdim) ? S_LOAD(w[wb + m * kdim + k]) : 0.0;
        }
        for (uint i = 0; i < 4; i++) {
            uint kk = bk + 4 * i;
            int off = Toff[cur][kk];
            float v = 0.0;
            if (pv && off >= 0) {
                int iy = iy0 + Tdy[cur][kk], ix = ix0 + Tdx[cur][kk];
                if (iy >= 0 && iy < int(pc.h) && ix >= 0 && ix < int(pc.w))
                    v = S_LOAD(x[xb + uint(off) + uint(iy) * pc.w + uint(ix)]);
            }
            Bs[kk][bj] = v;
        }
        if (tid < BK) table(cur ^ 1, tid, k0 + BK + tid, kdim);
        barrier();
        for (uint kk = 0; kk < BK; kk++) {
            float a[4], b[4];
            for (uint i = 0; i < 4; i++) a[i] = As[kk][tm + 16 * i];
            for (uint j = 0; j < 4; j++) b[j] = Bs[kk][tn + 16 * j];
            for (uint i = 0; i < 4; i++)
                for (uint j = 0; j < 4; j++) acc[i][j] += a[i] * b[j];
        }
        barrier();
        cur ^= 1;
    }

    for (uint i = 0; i < 4; i++) {
        uint m = m0 + tm + 16 * i;
        if (m >= coutg) continue;
        for (uint j = 0; j < 4; j++) {
            uint pp = pt * BN + tn + 16 * j;
            if (pp >= npix) continue;
            epilogue(pp / ohw, g * coutg + m, pp % ohw, acc[i][j]);
        }
    }
}

void main()
{
    if (MODE == 1)
        conv_direct();
    else
        conv_gemm();
}
