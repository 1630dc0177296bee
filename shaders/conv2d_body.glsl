// conv2d as an implicit GEMM (compiler/lower_conv2d.c, docs/kernels.md): per group g,
// C[co, p] = sum_k W[co, k] * X[k, p] with M = Cout/groups rows (output channels), N = N*OH*OW
// columns (output pixels), K = Cin_g*KH*KW (k = (ci*KH + r)*KW + s); X is gathered from x on
// the fly (im2col: padding, stride, dilation) while it is staged in shared memory; the tile loop
// is shaders/gemm_tile.glsl. One workgroup computes a BM x BN tile of one group over one K split.
// Then the fused epilogue (bias, residual, activation; shaders/conv2d_common.glsl), or, with
// CONV_PART, the fp32 partial sums of the split, which conv2d_red* adds up in a fixed order, or,
// with CONV_FIXUP (stems *_split*), those partials and the reduce in this same dispatch
// (conv_fixup: the last split of a tile to finish).
//
// The including stem defines CONV_BIAS, CONV_RES, CONV_PART (conv2d_common.glsl) and GEMM_CM /
// CM_EMULATE (gemm_tile.glsl): conv2d, conv2d_b, conv2d_r, conv2d_br, conv2d_part are the
// portable tier's SIMT kernels; conv2d_cm* are the nv-coopmat tier's tensor-core kernels (f16),
// conv2d_cmx* their portable emulations (tests).
// Spec: 0 = workgroup size, 1..4 = BM, BN, BK, 0 (gemm_tile.glsl), 5 = KH, 6 = KW (so the
// im2col index divisions are by constants).
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
#include "gemm_tile.glsl"

layout(constant_id = 7) const uint KH = 1;
layout(constant_id = 8) const uint KW = 1;

// What the hooks need: the tile (group g, rows m0.., pixels p0..), the split, and the pixel
// of this invocation's B column.
uint g_wrow, m0, p0, coutg, kdim, kend, npix, split;
#if CONV_FIXUP
uint fix_base; // the partials' first word: past the tickets
shared uint fix_last;
// The fixup of a K split, after this workgroup wrote its partials: it takes a ticket (atomicAdd
// on the tile's counter after a device-scope memory barrier; the partials are coherent); the
// workgroup that draws the last one adds the nsplit partials of every tile element in split
// order (the order, and so the bits, of the conv2d_red pass it replaces), runs the epilogue,
// and resets the counter to 0 for the next run (the backend zero-fills the scratch once, at
// load). No workgroup waits for another: the pattern of decode_attention's merge.
void conv_fixup(uint tile)
{
    const uint EPT = (BM * BN + GEMM_WG - 1) / GEMM_WG; // tile elements per invocation
    uint lid = gl_LocalInvocationID.x;
    memoryBarrierBuffer();
    barrier();
    if (lid == 0) fix_last = atomicAdd(fix[tile], 1u) == pc.nsplit - 1 ? 1u : 0u;
    barrier();
    if (fix_last == 0) return; // uniform
    memoryBarrierBuffer();
    uint ix[EPT];
    float v[EPT];
    [[unroll]] for (uint j = 0; j < EPT; j++) {
        uint e = min(lid + j * GEMM_WG, BM * BN - 1);
        uint m = min(m0 + e / BN, coutg - 1), p = min(p0 + e % BN, npix - 1);
        ix[j] = fix_base + (g_wrow + m) * npix + p;
        v[j] = 0.0;
    }
    // one split at a time, every element's load of it in flight together
    for (uint s = 0; s < pc.nsplit; s++) {
        float t[EPT];
        [[unroll]] for (uint j = 0; j < EPT; j++) t[j] = uintBitsToFloat(fix[ix[j] + s * pc.cout * npix]);
        [[unroll]] for (uint j = 0; j < EPT; j++) v[j] += t[j];
    }
    uint ohw = pc.oh * pc.ow;
    [[unroll]] for (uint j = 0; j < EPT; j++) {
        uint e = lid + j * GEMM_WG, m = m0 + e / BN, p = p0 + e % BN;
        bool ok = all(bvec3(e < BM * BN, m < coutg, p < npix));
        m = min(m, coutg - 1);
        p = min(p, npix - 1);
        uint n = p / ohw, q = p % ohw;
        float r = epilogue_value(n, g_wrow + m, q, v[j]);
        if (ok) epilogue_store(n, g_wrow + m, q, r);
    }
    if (lid == 0) atomicExchange(fix[tile], 0u);
}
#endif
int iy0, ix0;
uint xb;
bool pv;

void gemm_load(uint k0)
{
    uint tid = gl_LocalInvocationID.x;
    uint ak = tid % BK, am0 = tid / BK, k = k0 + ak;
    [[unroll]] for (uint j = 0; j < AEL; j++) {
        uint m = m0 + am0 + j * AROWS;
        GEMM_LOAD(ra[j], w, all(bvec2(m < coutg, k < kend)), (g_wrow + m) * kdim + k);
    }
    uint bk0 = tid / BN, hw = pc.h * pc.w;
    [[unroll]] for (uint j = 0; j < BEL; j++) {
        uint kb = k0 + bk0 + j * BROWS;
        uint ci = kb / (KH * KW), rs = kb - ci * (KH * KW), r = rs / KW, s = rs - r * KW;
        int iy = iy0 + int(r * pc.dh), ix = ix0 + int(s * pc.dw);
        bool ok = all(bvec4(pv, kb < kend, uint(iy) < pc.h, uint(ix) < pc.w)); // iy < 0: huge
        GEMM_LOAD(rb[j], x, ok, xb + ci * hw + uint(iy) * pc.w + uint(ix));
    }
}

void gemm_stage()
{
    uint tid = gl_LocalInvocationID.x;
    uint ak = tid % BK, am0 = tid / BK, bn = tid % BN, bk0 = tid / BN;
    [[unroll]] for (uint j = 0; j < AEL; j++) SH_A[(am0 + j * AROWS) * (BK + A_PAD) + ak] = SH_T(ra[j]);
    [[unroll]] for (uint j = 0; j < BEL; j++) SH_B[(bk0 + j * BROWS) * (BN + B_PAD) + bn] = SH_T(rb[j]);
}

void gemm_emit(uint mm, uint nn, float v)
{
    // loads at clamped coordinates, the store only for elements inside the output
    uint m = m0 + mm, p = p0 + nn;
    bool ok = all(bvec2(m < coutg, p < npix));
    m = min(m, coutg - 1);
    p = min(p, npix - 1);
#if CONV_PART
    if (ok) part[(split * pc.cout + g_wrow + m) * npix + p] = v;
#elif CONV_FIXUP
    if (ok) fix[fix_base + (split * pc.cout + g_wrow + m) * npix + p] = floatBitsToUint(v);
#else
    uint ohw = pc.oh * pc.ow, n = p / ohw, q = p % ohw;
    v = epilogue_value(n, g_wrow + m, q, v);
    if (ok) epilogue_store(n, g_wrow + m, q, v);
#endif
}

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
    uint kbeg = split * pc.kchunk;
    kend = min(kdim, kbeg + pc.kchunk);
#if CONV_FIXUP
    uint tiles = pc.ptiles * pc.mtiles * pc.groups;
    fix_base = (tiles + 3u) / 4u * 4u;
#endif
    gemm_run(kbeg, kend);
#if CONV_FIXUP
    conv_fixup(gid % tiles);
#endif
}
