// Declarations shared by the conv2d kernels (compiler/lower/lower_conv2d.c, docs/kernels.md): the
// push-constant block, the bindings of each stem, and the fused epilogue (bias, residual, activation,
// store). The including kernel defines CONV_BIAS and CONV_RES (0 or 1: which bindings the stem
// has), CONV_PART (1: the first pass of a K split, which writes fp32 partial sums instead) and
// CONV_REDUCE (1: the second pass, which reads them instead of x and w); CONV_DW (1: the depthwise
// kernel, conv2d_dw.glsl, whose push block is abi.h DWCONV_PUSH: the epilogue's words by the same
// names); CONV_SCALE (1: the input is x * s, s one value per (image, input channel): the
// conv_scale fusion's squeeze-excite multiply, applied as x is loaded, conv_scaled).
//
// Bindings: GEMM pass: 0 = x, 1 = w, [2 = s], then [bias], [res], y; with CONV_PART: 0 = x,
// 1 = w, [2 = s], then partials (float), y (not accessed: it sets the module variant and orders
// the reduce after this pass). Reduce pass: 0 = partials, then [bias], [res], y.
// x, y and res are [N, Cp, H, W] with their own physical channel counts (padding never read);
// w is dense [Cout, Cin_g, KH, KW]; partials are [nsplit, Cout, N*OH*OW rounded up to 4] fp32.
#ifndef NPU_CONV2D_COMMON_GLSL
#define NPU_CONV2D_COMMON_GLSL

#include "abi.h"
#include "common.glsl"
#include "activation.glsl"

#ifndef CONV_BIAS
#define CONV_BIAS 0
#endif
#ifndef CONV_RES
#define CONV_RES 0
#endif
#ifndef CONV_PART
#define CONV_PART 0
#endif
#ifndef CONV_REDUCE
#define CONV_REDUCE 0
#endif
#ifndef CONV_DW
#define CONV_DW 0
#endif
#ifndef CONV_SCALE
#define CONV_SCALE 0
#endif

#if CONV_REDUCE
layout(std430, set = 0, binding = 0) restrict readonly buffer Part { float part[]; };
#define BIAS_BINDING 1
#else
layout(std430, set = 0, binding = 0) restrict readonly buffer X { STORAGE_T x[]; };
layout(std430, set = 0, binding = 1) restrict readonly buffer Wt { STORAGE_T w[]; };
// x and w again as 32-bit words (the GEMM's prefetch: GEMM_LOAD_WORD in gemm_tile.glsl)
layout(std430, set = 0, binding = 0) readonly buffer XW { uint xw[]; };
layout(std430, set = 0, binding = 1) readonly buffer WW { uint ww[]; };
#if CONV_SCALE
// s at (n, c): sc[n * pc.scn + c] (scn 0: one vector for every image); again as 32-bit words
// (the GEMM's prefetch)
layout(std430, set = 0, binding = 2) restrict readonly buffer Sc { STORAGE_T sc[]; };
layout(std430, set = 0, binding = 2) readonly buffer ScW { uint scw[]; };
#endif
#define BIAS_BINDING (2 + CONV_SCALE)
#endif

#if CONV_PART
// the SIMT kernel stores 4 pixels at a time (part4), the tensor-core kernel one (part)
layout(std430, set = 0, binding = BIAS_BINDING) writeonly buffer Part { float part[]; };
layout(std430, set = 0, binding = BIAS_BINDING) writeonly buffer Part4 { vec4 part4[]; };
#else
#if CONV_BIAS
layout(std430, set = 0, binding = BIAS_BINDING) restrict readonly buffer Bias { STORAGE_T bias[]; };
#define RES_BINDING (BIAS_BINDING + 1)
#else
#define RES_BINDING BIAS_BINDING
#endif
#if CONV_RES
layout(std430, set = 0, binding = RES_BINDING) restrict readonly buffer Res { STORAGE_T res[]; };
#define Y_BINDING (RES_BINDING + 1)
#else
#define Y_BINDING RES_BINDING
#endif
layout(std430, set = 0, binding = Y_BINDING) restrict writeonly buffer Y { STORAGE_T y[]; };
#endif

// A row of partials (one output channel of one split) holds npix pixels, rounded up to a multiple
// of 4 so every row starts 16-byte aligned.
uint conv_part_stride(uint npix)
{
    return (npix + 3u) & ~3u;
}

// Buffers are restrict: no binding aliases another (xw, ww, scw, part4 are x, w, sc, part
// declared again with another element type, never written through both) (a loaded value may then
// be read ahead of an earlier store).
// The push words: abi.h CONV2D_PUSH. rsrc: 0 no residual, 1 the res binding (bound exactly when
// rsrc is 1), 2 the residual is x itself (conv(x) + x, x unscaled where CONV_SCALE; the reduce
// pass binds x as res instead), 3 the add adds the conv output to itself. scn: the scale's
// stride between images (CONV_SCALE). act (applied last): abi.h ACT_* (activation.glsl;
// act_lim: ACT_CLAMP's bounds). Tiles: ptiles pixel tiles (BN) x mtiles channel tiles (BM) x
// groups x nsplit K splits of kchunk (a multiple of BK) each.
#if CONV_DW
PUSH_BLOCK(DWCONV_PUSH)
#else
PUSH_BLOCK(CONV2D_PUSH)
#endif

// An input element v of x times its scale s (CONV_SCALE), rounded to the storage dtype as the
// multiply's kernel would have stored the product: the fused conv reads what the unfused one did.
// A padding position is 0 either way.
float conv_scaled(float v, float s)
{
    return S_ROUND(v * s);
}

#if !CONV_PART
// Bias, residual and activation of output element (n, co, q = oy*OW + ox). Its loads are not under a
// branch (a res binding means rsrc 1), so a caller's loads for several elements issue together.
float epilogue_value(uint n, uint co, uint q, float v)
{
    uint ohw = pc.oh * pc.ow;
#if CONV_BIAS
    v += S_LOAD(bias[co]);
#endif
#if CONV_RES
    v += S_LOAD(res[(n * pc.rcp + co) * ohw + q]);
#endif
#if !CONV_REDUCE
    if (pc.rsrc == 2) v += S_LOAD(x[(n * pc.xcp + co) * ohw + q]);
#endif
    if (pc.rsrc == 3) v += v;
    return npu_activate(v, pc.act, pc.act_lim);
}

void epilogue_store(uint n, uint co, uint q, float v)
{
    y[(n * pc.ycp + co) * pc.oh * pc.ow + q] = S_STORE(v);
}
#endif

#endif
