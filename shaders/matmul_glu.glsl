// linear_glu's column pairs (compiler/fuse_patterns.c match_linear_glu, compiler/fuse_concat.c):
// the product's N columns are the gate's and the up's weight rows interleaved in runs of
// GLU_BLOCK = 16 (a concat recipe with that block, runtime/bind.c), so column n with
// n % 32 < 16 is a gate column, its up column is n + 16, and the pair is column
// (n / 32) * 16 + n % 32 of the output, a row of N / 2: y = act(gate) * up (act: the gate's
// activation, silu). N is a multiple of 32; a tile whose columns start at a multiple of 32 and
// span a multiple of 32 holds both columns of each of its pairs. Used by the SIMT matmul's
// epilogue (matmul_epi.glsl), the tensor-core matmul's (matmul_cm.glsl, gemm_tile.glsl
// GEMM_GLU) and the K-split reduce (matmul_red.glsl).
#ifndef NPU_MATMUL_GLU_GLSL
#define NPU_MATMUL_GLU_GLSL

const uint GLU_BLOCK = 16u;

// Is column n a gate column?
bool mm_glu_gate(uint n)
{
    return n % (2u * GLU_BLOCK) < GLU_BLOCK;
}

// The output column of gate column n
uint mm_glu_col(uint n)
{
    return (n / (2u * GLU_BLOCK)) * GLU_BLOCK + n % (2u * GLU_BLOCK);
}

// The gate column of output column q (mm_glu_col's inverse)
uint mm_glu_pair(uint q)
{
    return (q / GLU_BLOCK) * (2u * GLU_BLOCK) + q % GLU_BLOCK;
}

// The output of gate column n of row m from the fp32 dot products g (gate) and u (its up column):
// act(alpha * g + beta * bias[m, n]) * (alpha * u + beta * bias[m, n + GLU_BLOCK]). A macro: `pc`
// and, with MM_BIAS, `bias` are the including kernel's, declared after this file in some.
#if MM_BIAS
#define MM_GLU_BIAS(m, n) (pc.beta * S_LOAD(bias[(m) * pc.bias_ms + (n) * pc.bias_ns]))
#else
#define MM_GLU_BIAS(m, n) 0.0
#endif
#define MM_GLU_VALUE(m, n, g, u)                                                               \
    (npu_activate(pc.alpha * (g) + MM_GLU_BIAS(m, n), pc.act) *                               \
     (pc.alpha * (u) + MM_GLU_BIAS(m, (n) + GLU_BLOCK)))

#endif
