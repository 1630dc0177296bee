// The numbers both sides of the kernel contract use (docs/kernels.md "Parameters"), read by the
// C compiler (compiler/lower/kernels.h) and by glslc (the shaders that include it): codes, limits
// and push-constant blocks. Preprocessor text only, so both preprocessors read it.
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
// split, nsplit splits of kchunk); scn, the input scale's stride between images (the CONV_SCALE
// kernels, conv_scale: s[n * scn + c] multiplies input channel c of image n; 0 otherwise).
#define CONV2D_PUSH(X)                                                                             \
    X(U, n) X(U, c) X(U, h) X(U, w) X(U, cout) X(U, oh) X(U, ow) X(U, groups)                      \
    X(U, kh) X(U, kw) X(U, sh) X(U, sw) X(I, ph) X(I, pw) X(U, dh) X(U, dw)                        \
    X(U, xcp) X(U, ycp) X(U, rcp) X(U, rsrc) X(U, act) X(U, mtiles) X(U, ptiles) X(U, nsplit)      \
    X(U, kchunk) X(U, act_lim) X(U, scn)
#define CONV2D_PUSH_WORDS 27

// conv2d_dw (shaders/conv2d_dw.glsl): the depthwise conv, groups = c, mult = cout / c output
// channels per input channel; x, y, the residual and rsrc as CONV2D_PUSH's (the same names: the
// epilogue of conv2d_common.glsl reads them, and the input scale's scn); wtiles tiles of TX outputs (spec) per output row.
// The kernel width, horizontal stride and dilation are spec constants (unrolled loops).
#define DWCONV_PUSH(X)                                                                             \
    X(U, n) X(U, c) X(U, h) X(U, w) X(U, cout) X(U, oh) X(U, ow) X(U, mult)                        \
    X(U, kh) X(U, sh) X(U, dh) X(I, ph) X(I, pw)                                                   \
    X(U, xcp) X(U, ycp) X(U, rcp) X(U, rsrc) X(U, act) X(U, act_lim) X(U, wtiles) X(U, scn)
#define DWCONV_PUSH_WORDS 21

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
// A pointwise conv over a 1x1 map as a matrix-vector product (the conv2d_gemv and conv2d_mv
// rows; compiler/lower/lower_matmul.c lower_conv_matvec): the matmul words, one batch matrix per
// image (A's batch stride sa the input's padded channels), then Y's batch stride (the output's
// padded channels) and ACT_CLAMP's bounds as CONV2D_PUSH's act_lim.
#define MATMUL_CONV_TAIL(X) X(U, y_bs) X(U, act_lim)
#define MATMUL_CONV_PUSH(X) MATMUL_PUSH(X) MATMUL_CONV_TAIL(X)
#define MATMUL_CONV_PUSH_WORDS 26

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
// attention_cache (decode_attention.glsl with ATTN_CACHE, the merge decode_attention_cache): the
// attention's words, then the new rows' sources: the rope tables' batch stride (cos and sin share
// their strides; 0 over heads and the row, contiguous along D), the new K row's source (before its
// rope) and the new V row's by batch and kv head. q's words address the rope's input.
#define ATTN_CACHE_TAIL(X) X(U, c_sb) X(U, kx_sb) X(U, kx_sh) X(U, vx_sb) X(U, vx_sh)
#define ATTN_CACHE_PUSH(X) ATTN_PUSH(X) ATTN_CACHE_TAIL(X)
#define ATTN_CACHE_PUSH_WORDS 31

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

// The dims an elementwise or gather kernel walks (binary, where, the gather: shapes and strides
// right-aligned, leading dims of size 1 and stride 0), and the outer dims of a row kernel's rows
// (reduce, argmax, softmax: the last dim is the row).
#define KERNEL_DIMS 6
#define ROW_OUTER 5

// unary (shaders/unary.comp): y = f(x) over n elements of the physical buffer, f the code, a and
// b its parameters (clamp's bounds, leaky_relu's slope).
#define UN_RELU 1
#define UN_RELU6 2
#define UN_HARDTANH 3
#define UN_HARDSWISH 4
#define UN_HARDSIGMOID 5
#define UN_SIGMOID 6
#define UN_TANH 7
#define UN_GELU_ERF 8
#define UN_GELU_TANH 9
#define UN_SILU 10
#define UN_NEG 11
#define UN_EXP 12
#define UN_LOG 13
#define UN_ABS 14
#define UN_SQRT 15
#define UN_RSQRT 16
#define UN_COS 17
#define UN_SIN 18
#define UN_CLAMP 19
#define UN_LEAKY_RELU 20
#define UNARY_PUSH(X) X(U, n) X(U, code) X(F, a) X(F, b)
#define UNARY_PUSH_WORDS 4

// binary, binary_s, add_relu, silu_mul (shaders/binary.glsl): y = a OP b over n elements of the
// logical shape, each operand at its own strides (0 where it broadcasts); code is BN_* with the
// BF_* flags above it; alpha scales b (add, sub, rsub); scalar is binary_s's operand b.
// Comparisons and logical ops write bool as 0/1 in the compute dtype.
#define BN_ADD 1
#define BN_SUB 2
#define BN_RSUB 3
#define BN_MUL 4
#define BN_DIV 5
#define BN_DIV_TRUNC 6
#define BN_DIV_FLOOR 7
#define BN_POW 8
#define BN_EQ 9
#define BN_NE 10
#define BN_LT 11
#define BN_LE 12
#define BN_GT 13
#define BN_GE 14
#define BN_AND 15
#define BN_OR 16
#define BF_RELU (1u << 8)   // add_relu: relu after the op
#define BF_SILU_A (1u << 9) // silu_mul: silu on operand a before the op
#define BF_SELF (1u << 10)  // binary_s: operand b is operand a (the same element)
#define BF_DENSE (1u << 11) // every tensor dense in the output's shape: offset = index
#define BINARY_PUSH(X)                                                                             \
    X(U, n) X(U, code) X(F, alpha) X(F, scalar) X(U, shape[KERNEL_DIMS]) X(I, sa[KERNEL_DIMS])     \
    X(I, sb[KERNEL_DIMS]) X(I, so[KERNEL_DIMS])
#define BINARY_PUSH_WORDS 28

// where, where_s (shaders/where.glsl): y = cond != 0 ? a : b over n elements of the logical
// shape, each operand at its own strides; where_s takes one operand as a scalar: WF_A_SCALAR
// (sa_val; the tensor is b), WF_B_SCALAR (sb_val; the tensor is a).
#define WF_A_SCALAR 1u
#define WF_B_SCALAR 2u
#define WHERE_PUSH(X)                                                                              \
    X(U, n) X(U, flags) X(F, sa_val) X(F, sb_val) X(U, shape[KERNEL_DIMS]) X(I, sc[KERNEL_DIMS])   \
    X(I, sa[KERNEL_DIMS]) X(I, sb[KERNEL_DIMS])
#define WHERE_PUSH_WORDS 28

// The gather (copy, transpose, expand, slice, depad; cast, pack; shaders/gather.glsl): output
// element i (of n, row-major over oshape) is written at its offset by ostride; its input element
// is i unravelled over ishape with istride, plus in_off.
#define GATHER_PUSH(X)                                                                             \
    X(U, n) X(U, in_off) X(U, oshape[KERNEL_DIMS]) X(I, ostride[KERNEL_DIMS])                      \
    X(U, ishape[KERNEL_DIMS]) X(I, istride[KERNEL_DIMS])
#define GATHER_PUSH_WORDS 26

// The window gather (pad, roll; shaders/gather.glsl with WINDOW_MODE): output element i (of n,
// row-major over oshape) is written at its offset by ostride; per dim its input coordinate is
// its own minus lo, brought into [0, ishape) by the row's mode (kernels.def: 0 constant, whose
// outside elements are fill, 1 reflect, 2 replicate, 3 circular, also roll with lo its shift),
// then read by istride. fill: float bits, or an int for i32 storage.
#define WINDOW_PUSH(X)                                                                             \
    X(U, n) X(U, fill) X(U, oshape[KERNEL_DIMS]) X(I, ostride[KERNEL_DIMS])                        \
    X(U, ishape[KERNEL_DIMS]) X(I, istride[KERNEL_DIMS]) X(I, lo[KERNEL_DIMS])
#define WINDOW_PUSH_WORDS 32

// embedding (shaders/embedding.comp): y[r, c] = w[ids[r], c] for n = rows * d elements, ids
// below v; the row pitches of w and y.
#define EMBEDDING_PUSH(X) X(U, n) X(U, d) X(U, v) X(U, w_stride) X(U, y_stride)
#define EMBEDDING_PUSH_WORDS 5

// index_copy (shaders/index_copy.comp): n elements written; mode 1 writes the source rows into
// out in place, mode 0 every out element; out as [outer, size, inner], the source [outer, m,
// inner] with its element (o, j, e) at o * so + j * sm + e.
#define INDEX_COPY_PUSH(X) X(U, n) X(U, mode) X(U, size) X(U, inner) X(U, m) X(U, so) X(U, sm)
#define INDEX_COPY_PUSH_WORDS 7

// reduce (shaders/reduce.comp): rows of len along the last dim (x's stride lstride), each row's
// outer coordinates over oshape with x's and y's strides xs, ys.
#define RD_SUM 1
#define RD_MEAN 2
#define RD_AMAX 3
#define REDUCE_PUSH(X)                                                                             \
    X(U, rows) X(U, len) X(U, code) X(I, lstride) X(U, oshape[ROW_OUTER]) X(I, xs[ROW_OUTER])      \
    X(I, ys[ROW_OUTER])
#define REDUCE_PUSH_WORDS 19

// argmax, both passes (shaders/argmax.glsl): rows as reduce's, each cut into nsplit chunks of
// chunk elements (1: pass 1 writes the index); skip_nan 1: NaN ignored (a row of NaN gives -1),
// 0: NaN is the maximum, as in torch.
#define ARGMAX_PUSH(X)                                                                             \
    X(U, rows) X(U, len) X(I, lstride) X(U, nsplit) X(U, chunk) X(U, skip_nan)                     \
    X(U, oshape[ROW_OUTER]) X(I, xs[ROW_OUTER]) X(I, ys[ROW_OUTER])
#define ARGMAX_PUSH_WORDS 21

// softmax, masked_softmax (shaders/softmax.glsl): rows as reduce's, the mask's strides ms and
// each operand's along the row (xls, mls, yls); code of the SM_* bits.
#define SM_LOG 1u    // log_softmax
#define SM_DOUBLE 2u // v = x + x: a mask add of one tensor to itself
#define SM_SAFE 4u   // a row of -inf alone gives zeros (an exported sdpa's softmax)
#define SOFTMAX_PUSH(X)                                                                            \
    X(U, rows) X(U, len) X(U, code) X(I, xls) X(I, mls) X(I, yls) X(U, oshape[ROW_OUTER])          \
    X(I, xs[ROW_OUTER]) X(I, ms[ROW_OUTER]) X(I, ys[ROW_OUTER])
#define SOFTMAX_PUSH_WORDS 26

// rmsnorm, layernorm (shaders/norm_row.glsl): rows of n contiguous elements, addressed through
// three collapsed outer dims (dim 0 implied by rows) with x's and y's strides.
#define NORM_ROW_PUSH(X)                                                                           \
    X(U, n) X(U, rows) X(F, eps) X(U, od1) X(U, od2) X(U, xs0) X(U, xs1) X(U, xs2) X(U, ys0)       \
    X(U, ys1) X(U, ys2)
#define NORM_ROW_PUSH_WORDS 11

// layernorm_t (shaders/layernorm_t.glsl): rows of n elements at any strides, element j of row r
// at xo(r) + j * xl in x and yo(r) + j * yl in y, xo and yo over the outer shape oshape (as
// reduce's) with x's and y's strides xs, ys.
#define LN_T_PUSH(X)                                                                               \
    X(U, rows) X(U, n) X(F, eps) X(I, xl) X(I, yl) X(U, oshape[ROW_OUTER]) X(I, xs[ROW_OUTER])     \
    X(I, ys[ROW_OUTER])
#define LN_T_PUSH_WORDS 20

// batchnorm (shaders/batchnorm.glsl): total elements of [N, C, inner], x's and y's strides of
// dims 0 and 1 (the channels padded or not).
#define BATCHNORM_PUSH(X)                                                                          \
    X(U, total) X(U, C) X(U, inner) X(U, xs0) X(U, xs1) X(U, ys0) X(U, ys1) X(F, eps)
#define BATCHNORM_PUSH_WORDS 8

// rope (shaders/rope.glsl): total pairs (j, j + h); three collapsed outer dims (od0 implied)
// with the strides of x, cos, sin and the destination; cl, sl: the last-dim strides of cos and
// sin (1, or 0 where they broadcast). rope_cache adds index_copy's mode and geometry, idim the
// outer dim that is the index_copy dim.
#define ROPE_PUSH(X)                                                                               \
    X(U, total) X(U, h) X(U, od1) X(U, od2) X(U, xs0) X(U, xs1) X(U, xs2) X(U, cs0) X(U, cs1)      \
    X(U, cs2) X(U, ss0) X(U, ss1) X(U, ss2) X(U, ys0) X(U, ys1) X(U, ys2) X(U, cl) X(U, sl)
#define ROPE_PUSH_WORDS 18
#define ROPE_CACHE_TAIL(X) X(U, mode) X(U, idim) X(U, size) X(U, m)
#define ROPE_CACHE_PUSH(X) ROPE_PUSH(X) ROPE_CACHE_TAIL(X)
#define ROPE_CACHE_PUSH_WORDS 22

// corrupt (shaders/corrupt.comp, --break): n elements of the physical buffer.
#define CORRUPT_PUSH(X) X(U, n)
#define CORRUPT_PUSH_WORDS 1

// A block's field as each language spells it.
#ifdef VULKAN
#define PUSH_T_U uint
#define PUSH_T_I int
#define PUSH_T_F float
#else
// C: the includer has <stdint.h> (none is included here: a shader's includes expanded as text,
// compiler/codegen, are one source with none left)
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
