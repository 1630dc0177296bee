/* The CPU reference's one matrix product: a blocked, packed SGEMM that accumulates every dot
 * product in double over the whole K (float products are exact in double, so the result does not
 * depend on the instruction set or the thread count: summation order is fixed by the blocking).
 * Used by cpu_conv.c (im2col, implicit or strided) and cpu_matmul.c only. */
#ifndef NPU_CPU_GEMM_H
#define NPU_CPU_GEMM_H

#include <stdint.h>
#include "common/status.h"

/* Writes columns j0..j0+nc-1, rows k0..k0+kc-1 of B into dst as panels of `nr` columns: panel p
 * holds kc rows of nr doubles (columns past nc zero-filled). Lets conv pack im2col on the fly. */
typedef void (*CpuPackFn)(const void *ctx, int64_t k0, int64_t kc, int64_t j0, int64_t nc, int nr,
                          double *dst);

/* C[i*c_rs + j] = alpha * sum_k A[i,k] B[k,j] + beta * bias[i*bias_rs + j*bias_cs], computed in
 * double and rounded once. A[i,k] = a[i*a_rs + k*a_cs]; B[k,j] = b[k*b_rs + j*b_cs] unless pack_b
 * is set. A bias stride of 0 broadcasts; bias NULL or beta == 0 drops the term (as ATen does). */
typedef struct CpuGemm {
    int64_t m, n, k;
    const float *a;
    int64_t a_rs, a_cs;
    const float *b;
    int64_t b_rs, b_cs;
    CpuPackFn pack_b; /* NULL: strided B */
    const void *pack_ctx;
    float *c;
    int64_t c_rs;
    double alpha;
    const float *bias;
    int64_t bias_rs, bias_cs;
    double beta;
    int threads; /* 0: as many as the machine has (capped), 1: the calling thread only */
    int kernel;  /* 0: best available; 1 portable, 2 AVX2, 3 AVX-512: best available up to it */
} CpuGemm;

/* Computes the product described by g. ST_NOMEM if scratch cannot be allocated. */
Status cpu_gemm(const CpuGemm *g);

#endif
