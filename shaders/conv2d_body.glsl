// conv2d as an implicit GEMM (compiler/lower/lower_conv2d.c, docs/kernels.md): per group g,
// C[co, p] = sum_k W[co, k] * X[k, p] with M = Cout/groups rows (output channels), N = N*OH*OW
// columns (output pixels), K = Cin_g*KH*KW (k = (ci*KH + r)*KW + s); X is gathered from x on
// the fly (im2col: padding, stride, dilation) while it is staged in shared memory; the tile loop
// is shaders/gemm_tile.glsl. One workgroup computes a BM x BN tile of one group over one K split.
// Then the fused epilogue (bias, residual, activation; shaders/conv2d_common.glsl), or, with
// CONV_PART, the fp32 partial sums of the split, which conv2d_red* adds up in a fixed order.
//
// The including stem defines CONV_BIAS, CONV_RES, CONV_PART, CONV_SCALE (conv2d_common.glsl) and
// GEMM_CM / CM_EMULATE (gemm_tile.glsl): conv2d, conv2d_b, conv2d_r, conv2d_br, conv2d_part are
// the portable tier's SIMT kernels (conv2d_s, conv2d_sb, conv2d_sr, conv2d_sbr, conv2d_spart with
// the input scale); conv2d_cm* are the nv-coopmat tier's tensor-core kernels (f16), conv2d_cmx*
// their portable emulations (tests). With CONV_SCALE each staged element of X is x times the scale
// of its (image, channel), loaded beside it (rsc, as raw words like rb) and applied at the staging.
// Spec: 0 = workgroup size, 1..4 = BM, BN, BK, 0, 5..6 = TR, TC (gemm_tile.glsl), 7 = KH, 8 = KW
// (so the im2col index divisions are by constants), 9 = CM_ABLATE (gemm_tile.glsl; 0 but in
// bench), 10 = KORD (the order of K, below).
// Each invocation loads the same A column (ak) and B column (bn: one output pixel, whose
// coordinates it computes once) in every step, so neighbouring invocations read neighbouring
// weights along K and neighbouring pixels.
#ifndef GEMM_CM
#define GEMM_CM 0
#endif
#ifndef CM_EMULATE
#define CM_EMULATE 0
#endif
#include "common.glsl"
#include "index.glsl"

layout(local_size_x_id = 0) in;

#include "conv2d_common.glsl"
#define GEMM_ABLATE_ID 9
// the tensor-core tile: 64 x 64 on 2 x 4 subgroups (256 invocations, 8 staging loads of each
// operand per invocation and K step)
#define GEMM_CM_SGN 4
#include "gemm_tile.glsl"

layout(constant_id = 7) const uint KH = 1;
layout(constant_id = 8) const uint KW = 1;
// KORD 1 (Cin_g a multiple of BK): the K steps go through the channels in blocks of BK, all nine
// (KH * KW) kernel positions of a block before the next: step t is channels (t / (KH*KW)) * BK
// .. + BK - 1 at kernel position t % (KH*KW). A step's im2col rows then share one (r, s), so
// its bounds and base address are computed once per step rather than per element; a weight
// row's step is every (KH*KW)-th element of a span the block's later steps read from L1 again.
// KORD 0: k = (ci * KH + r) * KW + s in order, the general case.
layout(constant_id = 10) const uint KORD = 0;

// What the hooks need: the tile (group g, rows m0.., pixels p0..), the split, and the pixel
// of this invocation's B column.
uint g_wrow, m0, p0, coutg, kdim, kend, npix, split;
int iy0, ix0;
uint xb;
bool pv;
#if CONV_SCALE
uint sb; // the scales of this invocation's image and group start at sc[sb]
uint rsc[BEL], rsc_bits;
#define CONV_LOAD_SCALE(j, ok, c) GEMM_LOAD_WORD(rsc[j], rsc_bits, j, scw, ok, sb + (c))
#else
#define CONV_LOAD_SCALE(j, ok, c)
#endif

void gemm_load(uint k0)
{
    uint tid = gl_LocalInvocationID.x;
    uint ak = tid % BK, am0 = tid / BK, k = k0 + ak, hw = pc.h * pc.w;
    ra_bits = 0u;
    rb_bits = 0u;
#if CONV_SCALE
    rsc_bits = 0u;
#endif
    if (KORD != 0) {
        // every k of the step is inside K (K and the split's ends are multiples of BK)
        uint t = k0 / BK, cb = t / (KH * KW), rs = t - cb * (KH * KW), r = rs / KW, s = rs - r * KW;
        uint wk = (cb * BK + ak) * (KH * KW) + rs; // this invocation's weight column
        [[unroll]] for (uint j = 0; j < AEL; j++) {
            uint m = m0 + am0 + j * AROWS;
            GEMM_LOAD_WORD(ra[j], ra_bits, j, ww, m < coutg, (g_wrow + m) * kdim + wk);
        }
        uint bk0 = tid / BN;
        int iy = iy0 + int(r * pc.dh), ix = ix0 + int(s * pc.dw);
        bool ok = all(bvec3(pv, uint(iy) < pc.h, uint(ix) < pc.w)); // iy < 0: huge
        uint xo = xb + (cb * BK + bk0) * hw + uint(iy) * pc.w + uint(ix);
        [[unroll]] for (uint j = 0; j < BEL; j++) {
            GEMM_LOAD_WORD(rb[j], rb_bits, j, xw, ok, xo + j * BROWS * hw);
            CONV_LOAD_SCALE(j, ok, cb * BK + bk0 + j * BROWS);
        }
        return;
    }
    [[unroll]] for (uint j = 0; j < AEL; j++) {
        uint m = m0 + am0 + j * AROWS;
        GEMM_LOAD_WORD(ra[j], ra_bits, j, ww, all(bvec2(m < coutg, k < kend)), (g_wrow + m) * kdim + k);
    }
    uint bk0 = tid / BN;
    [[unroll]] for (uint j = 0; j < BEL; j++) {
        uint kb = k0 + bk0 + j * BROWS;
        uint ci = kb / (KH * KW), rs = kb - ci * (KH * KW), r = rs / KW, s = rs - r * KW;
        int iy = iy0 + int(r * pc.dh), ix = ix0 + int(s * pc.dw);
        bool ok = all(bvec4(pv, kb < kend, uint(iy) < pc.h, uint(ix) < pc.w)); // iy < 0: huge
        GEMM_LOAD_WORD(rb[j], rb_bits, j, xw, ok, xb + ci * hw + uint(iy) * pc.w + uint(ix));
        CONV_LOAD_SCALE(j, ok, ci);
    }
}

void gemm_stage()
{
    uint tid = gl_LocalInvocationID.x;
    uint ak = tid % BK, am0 = tid / BK, bn = tid % BN, bk0 = tid / BN;
    [[unroll]] for (uint j = 0; j < AEL; j++) GEMM_SH_A(am0 + j * AROWS, ak) = SH_T(GEMM_RAW(ra[j], ra_bits, j));
    [[unroll]] for (uint j = 0; j < BEL; j++) {
        float b = GEMM_RAW(rb[j], rb_bits, j);
#if CONV_SCALE
        b = conv_scaled(b, GEMM_RAW(rsc[j], rsc_bits, j));
#endif
        GEMM_SH_B(bk0 + j * BROWS, bn) = SH_T(b);
    }
}

void gemm_emit(uint mm, uint nn, float v)
{
    // loads at clamped coordinates, the store only for elements inside the output
    uint m = m0 + mm, p = p0 + nn;
    bool ok = all(bvec2(m < coutg, p < npix));
    m = min(m, coutg - 1);
    p = min(p, npix - 1);
#if CONV_PART
    if (ok) part[(split * pc.cout + g_wrow + m) * conv_part_stride(npix) + p] = v;
#else
    uint ohw = pc.oh * pc.ow, n = p / ohw, q = p % ohw;
    v = epilogue_value(n, g_wrow + m, q, v);
    if (ok) epilogue_store(n, g_wrow + m, q, v);
#endif
}

#if !GEMM_CM
// Elements (mm, nn .. nn + 3): the partials as one 16-byte store (p is a multiple of 4, and the
// rows of partials are 16-byte aligned), the epilogue one element at a time.
void gemm_emit4(uint mm, uint nn, vec4 v)
{
#if CONV_PART
    uint m = m0 + mm, p = p0 + nn;
    if (all(bvec2(m < coutg, p < npix)))
        part4[((split * pc.cout + g_wrow + m) * conv_part_stride(npix) + p) / 4u] = v;
#else
    [[unroll]] for (uint i = 0; i < 4; i++) gemm_emit(mm, nn + i, v[i]);
#endif
}
#endif

void main()
{
    uint gid = npu_group_index();
    uint pt = gid % pc.ptiles, rest = gid / pc.ptiles;
    uint mt = rest % pc.mtiles;
    rest /= pc.mtiles;
    uint g = rest % pc.groups;
    split = rest / pc.groups;
    if (split >= pc.nsplit) return; // the grid was folded past 65535: the whole workgroup
    uint cing = pc.c / pc.groups, ohw = pc.oh * pc.ow;
    coutg = pc.cout / pc.groups;
    kdim = cing * KH * KW;
    npix = pc.n * ohw;
    g_wrow = g * coutg;
    m0 = mt * BM;
    p0 = pt * BN;
    uint p = p0 + gl_LocalInvocationID.x % BN;
    pv = p < npix;
    uint pn = pv ? p / ohw : 0, pq = pv ? p % ohw : 0;
    iy0 = int((pq / pc.ow) * pc.sh) - pc.ph;
    ix0 = int((pq % pc.ow) * pc.sw) - pc.pw;
    xb = (pn * pc.xcp + g * cing) * pc.h * pc.w;
#if CONV_SCALE
    sb = pn * pc.scn + g * cing;
#endif
    uint kbeg = split * pc.kchunk;
    kend = min(kdim, kbeg + pc.kchunk);
    gemm_run(kbeg, kend);
}
