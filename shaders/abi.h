// The numbers both sides of the kernel contract use (docs/kernels.md "Parameters"), read by the
// C compiler (compiler/lower/kernels.h) and by glslc (the shaders that include it): codes, limits and
// push-constant blocks. Preprocessor text only, so both preprocessors read it.
//
// A push block is an X-macro, NAME_PUSH(X), listing its words in order as X(T, name): T is U
// (32-bit unsigned), I (signed) or F (float32); an array is name[n]. C builds a struct of it
// (kernels.h: typedef struct { NAME_PUSH(PUSH_FIELD) }, a _Static_assert on its size against
// NAME_PUSH_WORDS), GLSL the block (PUSH_BLOCK(NAME_PUSH)), so the two cannot drift apart.
#ifndef NPU_ABI_H
#define NPU_ABI_H

// The activation of a fused epilogue (conv2d's push word act; the matmul family's act and post):
// one code per function of shaders/activation.glsl npu_activate, chosen by compiler/act.c. CLAMP
// clamps to [lo, hi] (relu6, hardtanh), lo and hi the halves of the conv's push word act_lim.
#define ACT_NONE 0
#define ACT_RELU 1
#define ACT_GELU_ERF 2
#define ACT_GELU_TANH 3
#define ACT_SILU 4
#define ACT_SIGMOID 5
#define ACT_TANH 6
#define ACT_HARDSWISH 7
#define ACT_CLAMP 8
#define ACT_HARDSIGMOID 9

// The most rows of A the GEMV takes (shaders/gemv.glsl spec MR: registers per lane grow with
// it); the prologue folds and linear_glu leave the products with more rows to the tiled matmul.
#define GEMV_MAX_ROWS 4

// decode_attention (shaders/decode_attention.glsl): the largest head dim (q is held in shared
// memory), the most query heads per workgroup, the most splits of the cache (the merging
// workgroup holds every split's {m, l} per head).
#define ATTN_MAX_D 256
#define ATTN_MAX_G 8
#define ATTN_MAX_SPLIT 16

// conv2d, conv2d_direct, conv2d_red, the tensor-core conv: x [n, c, h, w] with xcp physical
// channels, y [n, cout, oh, ow] with ycp, the residual's rcp; rsrc: 0 none, 1 the res binding,
// 2 x, 3 the conv output itself; the tiles and K split (mtiles x ptiles workgroups per group and
// split, nsplit splits of kchunk).
#define CONV2D_PUSH(X)                                                                             \
    X(U, n) X(U, c) X(U, h) X(U, w) X(U, cout) X(U, oh) X(U, ow) X(U, groups)                      \
    X(U, kh) X(U, kw) X(U, sh) X(U, sw) X(I, ph) X(I, pw) X(U, dh) X(U, dw)                        \
    X(U, xcp) X(U, ycp) X(U, rcp) X(U, rsrc) X(U, act) X(U, mtiles) X(U, ptiles) X(U, nsplit)      \
    X(U, kchunk) X(U, act_lim)
#define CONV2D_PUSH_WORDS 26

// conv2d_dw (shaders/conv2d_dw.glsl): the depthwise conv, groups = c, mult = cout / c output
// channels per input channel; x, y, the residual and rsrc as CONV2D_PUSH's (the same names: the
// epilogue of conv2d_common.glsl reads them); wtiles tiles of TX outputs (spec) per output row.
// The kernel width, horizontal stride and dilation are spec constants (unrolled loops).
#define DWCONV_PUSH(X)                                                                             \
    X(U, n) X(U, c) X(U, h) X(U, w) X(U, cout) X(U, oh) X(U, ow) X(U, mult)                        \
    X(U, kh) X(U, sh) X(U, dh) X(I, ph) X(I, pw)                                                   \
    X(U, xcp) X(U, ycp) X(U, rcp) X(U, rsrc) X(U, act) X(U, act_lim) X(U, wtiles)
#define DWCONV_PUSH_WORDS 20

// The matmul family (matmul, gemv; shaders/matmul_epi.glsl): Y[b, m, n] = post(act(alpha *
// sum_k A[b, m, k] B[b, k, n] + beta * bias[m * bias_ms + n * bias_ns]) + res), B[k, n] at
// k * b_ks + n * b_ns, the batch as up to 4 dims bdim with A's and B's strides sa, sb (0:
// broadcast).
#define MATMUL_PUSH(X)                                                                             \
    X(U, M) X(U, N) X(U, K) X(U, b_ks) X(U, b_ns) X(U, nbatch)                                     \
    X(U, bdim[4]) X(U, sa[4]) X(U, sb[4])                                                          \
    X(U, bias_ms) X(U, bias_ns) X(U, act) X(F, alpha) X(F, beta) X(U, post)
#define MATMUL_PUSH_WORDS 24
// The tensor-core matmul and its K split's reduce (shaders/matmul_cm_common.glsl): the matmul
// words, then the tiles and the split.
#define MATMUL_CM_TAIL(X) X(U, mtiles) X(U, ntiles) X(U, nsplit) X(U, kchunk)
#define MATMUL_CM_PUSH(X) MATMUL_PUSH(X) MATMUL_CM_TAIL(X)
#define MATMUL_CM_PUSH_WORDS 28

// decode_attention: T positions of D per head, Hq query heads (Hq / rep_k K heads, Hq / rep_v V
// heads), the caches' (k_, v_) and q's, the mask's (m_) and the output's (o_) strides per batch
// (sb), head (sh) and position or query row (st, q_st, m_sq, o_st); nsplit splits of chunk
// positions; ngroups tickets, one per (batch, head group, query row); Tq query rows.
#define ATTN_PUSH(X)                                                                               \
    X(U, T) X(U, D) X(U, Hq) X(U, rep_k) X(U, rep_v) X(F, scale)                                   \
    X(U, k_sb) X(U, k_sh) X(U, k_st) X(U, v_sb) X(U, v_sh) X(U, v_st)                              \
    X(U, q_sb) X(U, q_sh) X(U, m_sb) X(U, m_sh) X(U, m_st) X(U, o_sb) X(U, o_sh)                   \
    X(U, nsplit) X(U, chunk) X(U, ngroups) X(U, Tq) X(U, q_st) X(U, m_sq) X(U, o_st)
#define ATTN_PUSH_WORDS 26

// pool2d (shaders/pool2d.comp): x [n, c, h, w] with xcp physical channels, y [n, c, oh, ow] with
// ycp; the window (kernel, stride, padding, dilation), code POOL_*, include_pad and divisor
// (divisor_override, 0: none) for averages; total output elements.
#define POOL_MAX 1
#define POOL_AVG 2
#define POOL_ADAPTIVE 3
#define POOL2D_PUSH(X)                                                                             \
    X(U, n) X(U, c) X(I, h) X(I, w) X(U, oh) X(U, ow) X(I, kh) X(I, kw) X(I, sh) X(I, sw)          \
    X(I, ph) X(I, pw) X(I, dh) X(I, dw) X(U, xcp) X(U, ycp) X(U, code) X(U, include_pad)           \
    X(I, divisor) X(U, total)
#define POOL2D_PUSH_WORDS 20

// flash_attn_cm (shaders/flash_attn_cm.glsl): the largest head dim, query rows per workgroup and
// its invocations (4 subgroups of 32 lanes); the push words: the caches' and q's strides (batch,
// head, row), the mask's (batch, head, query row, key: 0 where it broadcasts), the output's, and
// the query blocks per (batch, head).
#define FLASH_MAX_D 128
#define FLASH_ROWS 16
#define FLASH_WG 128
#define FLASH_PUSH(X)                                                                              \
    X(U, T) X(U, Tq) X(U, Hq) X(U, rep_k) X(U, rep_v) X(F, scale)                                  \
    X(U, k_sb) X(U, k_sh) X(U, k_st) X(U, v_sb) X(U, v_sh) X(U, v_st)                              \
    X(U, q_sb) X(U, q_sh) X(U, q_st) X(U, m_sb) X(U, m_sh) X(U, m_sq) X(U, m_st)                   \
    X(U, o_sb) X(U, o_sh) X(U, o_st) X(U, nqb)
#define FLASH_PUSH_WORDS 23

// cat2..cat4 (shaders/cat.glsl): out rows [start, start + span) along the cat dim of [outer,
// total, inner], input k's rows [start + end(k-1), start + end(k)); n elements written.
#define CAT_PUSH(X)                                                                                \
    X(U, n) X(U, total) X(U, inner) X(U, end0) X(U, end1) X(U, end2) X(U, start) X(U, span)
#define CAT_PUSH_WORDS 8

// A block's field as each language spells it.
#ifdef VULKAN
#define PUSH_T_U uint
#define PUSH_T_I int
#define PUSH_T_F float
#else
#include <stdint.h>
#define PUSH_T_U uint32_t
#define PUSH_T_I int32_t
#define PUSH_T_F float
// C: a number above as a string literal, for messages ("more than " ABI_STR(GEMV_MAX_ROWS)).
#define ABI_STR_(x) #x
#define ABI_STR(x) ABI_STR_(x)
#endif
#define PUSH_FIELD(T, name) PUSH_T_##T name;
// GLSL: the push_constant block of a list, as `pc`.
#define PUSH_BLOCK(LIST) layout(push_constant) uniform Push { LIST(PUSH_FIELD) } pc;

#endif
