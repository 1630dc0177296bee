// The part of the matrix-product kernels (shaders/matmul.glsl: tiled and scalar vector paths;
// shaders/gemv.glsl: the 16-byte vector path) that follows the dot products: the bindings after
// A (0) and B (1), the push constants, the activation and the store with its epilogue
//   Y[b, m, n] = post(act(alpha * acc + beta * bias[m, n]) + res[b, m, n])
// (compiler/lower/lower_matmul.c). The kernel's row (shaders/kernels.def) defines MM_BIAS and MM_RES (0 or 1): a bias
// binding, then a residual binding, then Y, each only when present (a pipeline layout must
// have every binding its module declares), so the stems are matmul (bias), matmul_nb (none),
// matmul_r (residual), matmul_br (bias and residual), and gemv, gemv_nb, gemv_r, gemv_br.
// The residual is dense with Y's shape (linear_add: the add's other operand).
// MM_FIRST (default 2) is the binding after A and B where the bias goes: the GEMV prologues
// (shaders/gemv.glsl GEMV_PRO) bind one more operand before it.
// MM_GLU 1 (matmul_glu, matmul_glu_nb: linear_glu, no residual) adds store_glu, which writes
// act(gate) * up from a pair of columns into Y [batch, M, N / 2] (matmul_glu.glsl).
#ifndef MM_BIAS
#error "define MM_BIAS and MM_RES before including matmul_epi.glsl"
#endif
#ifndef MM_GLU
#define MM_GLU 0
#endif
#if MM_GLU && MM_RES
#error "linear_glu has no residual"
#endif
#ifndef MM_FIRST
#define MM_FIRST 2
#endif
// MM_CONV 1 (conv2d_gemv, conv2d_mv: a pointwise conv over a 1x1 map, one batch matrix of one
// row per image): Y's batch matrices lie pc.y_bs apart (the output's padded channels) and the
// activation may be ACT_CLAMP with the bounds pc.act_lim (MATMUL_CONV_PUSH).
#ifndef MM_CONV
#define MM_CONV 0
#endif
#if MM_CONV && (MM_GLU || MM_RES)
#error "the conv's matrix-vector product has no residual and no GLU"
#endif

#if MM_BIAS
layout(std430, set = 0, binding = MM_FIRST) readonly buffer Bias_ { STORAGE_T bias[]; };
#endif
#if MM_RES
layout(std430, set = 0, binding = MM_FIRST + MM_BIAS) readonly buffer Res_ { STORAGE_T res[]; };
#endif
layout(std430, set = 0, binding = MM_FIRST + MM_BIAS + MM_RES) writeonly buffer Y_ { STORAGE_T y[]; };

// The push words: abi.h MATMUL_PUSH (MM_CONV: MATMUL_CONV_PUSH); post, what follows the residual
// add: ACT_NONE or ACT_RELU (linear_add_relu).
// MM_YOFF(bi): the offset of batch matrix bi in Y; MM_ACT_LIM: ACT_CLAMP's bounds.
#include "abi.h"
#if MM_CONV
PUSH_BLOCK(MATMUL_CONV_PUSH)
#define MM_ACT_LIM pc.act_lim
#define MM_YOFF(bi) ((bi) * pc.y_bs)
#else
PUSH_BLOCK(MATMUL_PUSH)
#define MM_ACT_LIM 0u
#define MM_YOFF(bi) ((bi) * pc.M * pc.N)
#endif

#include "activation.glsl"

// Element (m, n) of batch matrix yoff (MM_YOFF(b)) from its fp32 dot product.
void store(uint yoff, uint m, uint n, float acc)
{
    float v = pc.alpha * acc;
#if MM_BIAS
    v += pc.beta * S_LOAD(bias[m * pc.bias_ms + n * pc.bias_ns]);
#endif
    v = npu_activate(v, pc.act, MM_ACT_LIM);
    uint i = yoff + m * pc.N + n;
#if MM_RES
    v += S_LOAD(res[i]);
#endif
    y[i] = S_STORE(npu_activate(v, pc.post));
}

#if MM_GLU
#include "matmul_glu.glsl"

// linear_glu: output element (m, mm_glu_col(n)) of batch matrix yoff (= b * M * N / 2) from the
// fp32 dot products of gate column n and its up column n + GLU_BLOCK.
void store_glu(uint yoff, uint m, uint n, float g, float u)
{
    y[yoff + m * (pc.N / 2u) + mm_glu_col(n)] = S_STORE(MM_GLU_VALUE(m, n, g, u));
}
#endif

#include "matmul_batch.glsl"
