/* Blocked SGEMM with double accumulation. Loop order (Goto style): column blocks of NC, K blocks
 * of KC packed once into doubles, row blocks of MC packed into doubles, then MRxNR micro-kernels
 * that accumulate into a double tile buffer `cd` covering MB rows x NC columns; only when every K
 * block is summed is cd rounded into C with alpha, beta and the bias. Products of floats are exact
 * in double, so FMA and non-FMA kernels give bit-identical sums. */
#include "runtime/cpu/cpu_gemm.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define GEMM_X86 1
#include <immintrin.h>
#endif

enum { KC = 256, MC = 96, NC = 256, MB = 384, MAX_THREADS = 4 };

typedef void (*UkrFn)(int64_t kc, const double *a, const double *b, double *c, int64_t ldc,
                      int acc);

typedef struct Ukr {
    int mr, nr;
    UkrFn fn;
} Ukr;

/* Portable kernel: 4x8; the compiler vectorises what it can. */
static void ukr_generic(int64_t kc, const double *a, const double *b, double *c, int64_t ldc,
                        int acc)
{
    double t[4][8];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 8; j++)
            t[i][j] = acc ? c[i * ldc + j] : 0.0;
    for (int64_t k = 0; k < kc; k++, a += 4, b += 8)
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 8; j++)
                t[i][j] += a[i] * b[j];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 8; j++)
            c[i * ldc + j] = t[i][j];
}

#ifdef GEMM_X86
/* 6x8: twelve ymm accumulators. */
__attribute__((target("avx2,fma"))) static void
ukr_avx2(int64_t kc, const double *a, const double *b, double *c, int64_t ldc, int acc)
{
#define A2_DECL(i) __m256d c##i##0, c##i##1;
#define A2_LOAD(i)                                                                                 \
    c##i##0 = acc ? _mm256_loadu_pd(c + i * ldc) : _mm256_setzero_pd();                            \
    c##i##1 = acc ? _mm256_loadu_pd(c + i * ldc + 4) : _mm256_setzero_pd();
#define A2_FMA(i)                                                                                  \
    {                                                                                              \
        __m256d ai = _mm256_broadcast_sd(a + i);                                                   \
        c##i##0 = _mm256_fmadd_pd(ai, b0, c##i##0);                                                \
        c##i##1 = _mm256_fmadd_pd(ai, b1, c##i##1);                                                \
    }
#define A2_STORE(i)                                                                                \
    _mm256_storeu_pd(c + i * ldc, c##i##0);                                                        \
    _mm256_storeu_pd(c + i * ldc + 4, c##i##1);
#define A2_ALL(X) X(0) X(1) X(2) X(3) X(4) X(5)
    A2_ALL(A2_DECL)
    A2_ALL(A2_LOAD)
    for (int64_t k = 0; k < kc; k++, a += 6, b += 8) {
        __m256d b0 = _mm256_loadu_pd(b), b1 = _mm256_loadu_pd(b + 4);
        A2_ALL(A2_FMA)
    }
    A2_ALL(A2_STORE)
}

/* 8x16: sixteen zmm accumulators. */
__attribute__((target("avx512f"))) static void
ukr_avx512(int64_t kc, const double *a, const double *b, double *c, int64_t ldc, int acc)
{
#define A5_DECL(i) __m512d c##i##0, c##i##1;
#define A5_LOAD(i)                                                                                 \
    c##i##0 = acc ? _mm512_loadu_pd(c + i * ldc) : _mm512_setzero_pd();                            \
    c##i##1 = acc ? _mm512_loadu_pd(c + i * ldc + 8) : _mm512_setzero_pd();
#define A5_FMA(i)                                                                                  \
    {                                                                                              \
        __m512d ai = _mm512_set1_pd(a[i]);                                                         \
        c##i##0 = _mm512_fmadd_pd(ai, b0, c##i##0);                                                \
        c##i##1 = _mm512_fmadd_pd(ai, b1, c##i##1);                                                \
    }
#define A5_STORE(i)                                                                                \
    _mm512_storeu_pd(c + i * ldc, c##i##0);                                                        \
    _mm512_storeu_pd(c + i * ldc + 8, c##i##1);
#define A5_ALL(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
    A5_ALL(A5_DECL)
    A5_ALL(A5_LOAD)
    for (int64_t k = 0; k < kc; k++, a += 8, b += 16) {
        __m512d b0 = _mm512_loadu_pd(b), b1 = _mm512_loadu_pd(b + 8);
        A5_ALL(A5_FMA)
    }
    A5_ALL(A5_STORE)
}
#endif

static Ukr pick_ukr(int want)
{
    Ukr u = {4, 8, ukr_generic};
#ifdef GEMM_X86
    __builtin_cpu_init();
    int has512 = __builtin_cpu_supports("avx512f");
    int has2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if ((want == 0 || want >= 3) && has512) return (Ukr){8, 16, ukr_avx512};
    if ((want == 0 || want >= 2) && has2) return (Ukr){6, 8, ukr_avx2};
#else
    (void)want;
#endif
    return u;
}

/* Packs rows i0..i0+mc-1, k0..k0+kc-1 of A as panels of mr rows (k-major), zero-padded. */
static void pack_a(const CpuGemm *g, int64_t i0, int64_t mc, int64_t k0, int64_t kc, int mr,
                   double *dst)
{
    for (int64_t ir = 0; ir < mc; ir += mr) {
        int64_t rows = mc - ir < mr ? mc - ir : mr;
        const float *src = g->a + (i0 + ir) * g->a_rs + k0 * g->a_cs;
        for (int64_t k = 0; k < kc; k++) {
            const float *s = src + k * g->a_cs;
            int64_t i = 0;
            for (; i < rows; i++)
                dst[i] = s[i * g->a_rs];
            for (; i < mr; i++)
                dst[i] = 0.0;
            dst += mr;
        }
    }
}

static void pack_b_strided(const CpuGemm *g, int64_t k0, int64_t kc, int64_t j0, int64_t nc, int nr,
                           double *dst)
{
    for (int64_t jr = 0; jr < nc; jr += nr) {
        int64_t cols = nc - jr < nr ? nc - jr : nr;
        const float *src = g->b + k0 * g->b_rs + (j0 + jr) * g->b_cs;
        for (int64_t k = 0; k < kc; k++) {
            const float *s = src + k * g->b_rs;
            int64_t j = 0;
            if (g->b_cs == 1)
                for (; j < cols; j++)
                    dst[j] = s[j];
            else
                for (; j < cols; j++)
                    dst[j] = s[j * g->b_cs];
            for (; j < nr; j++)
                dst[j] = 0.0;
            dst += nr;
        }
    }
}

/* Rounds the finished double tile (rows i0.., columns j0..) into C. */
static void store_c(const CpuGemm *g, const double *cd, int64_t ldcd, int64_t i0, int64_t mc,
                    int64_t j0, int64_t nc)
{
    int bias = g->bias && g->beta != 0.0;
    for (int64_t i = 0; i < mc; i++) {
        const double *s = cd + i * ldcd;
        float *d = g->c + (i0 + i) * g->c_rs + j0;
        if (!bias && g->alpha == 1.0) {
            for (int64_t j = 0; j < nc; j++)
                d[j] = (float)s[j];
        } else if (!bias) {
            for (int64_t j = 0; j < nc; j++)
                d[j] = (float)(g->alpha * s[j]);
        } else {
            const float *bp = g->bias + (i0 + i) * g->bias_rs + j0 * g->bias_cs;
            for (int64_t j = 0; j < nc; j++)
                d[j] = (float)(g->alpha * s[j] + g->beta * (double)bp[j * g->bias_cs]);
        }
    }
}

typedef struct Part {
    const CpuGemm *g;
    Ukr u;
    int64_t m0, m1, n0, n1;
    Status st;
} Part;

static void *run_part(void *arg)
{
    Part *p = arg;
    const CpuGemm *g = p->g;
    Ukr u = p->u;
    int64_t ncmax = (NC + u.nr - 1) / u.nr * u.nr, mbmax = (MB + u.mr - 1) / u.mr * u.mr;
    int64_t kcmax = g->k < 1 ? 1 : g->k < KC ? g->k : KC;
    double *bp = malloc(sizeof(double) * (size_t)(kcmax * ncmax));
    double *ap = malloc(sizeof(double) * (size_t)(kcmax * (MC + u.mr)));
    double *cd = malloc(sizeof(double) * (size_t)(mbmax * ncmax));
    p->st = ST_NOMEM;
    if (!bp || !ap || !cd) goto out;
    for (int64_t mb = p->m0; mb < p->m1; mb += MB) {
        int64_t mbn = p->m1 - mb < MB ? p->m1 - mb : MB;
        for (int64_t jc = p->n0; jc < p->n1; jc += NC) {
            int64_t nc = p->n1 - jc < NC ? p->n1 - jc : NC;
            for (int64_t pc = 0; pc < g->k; pc += KC) {
                int64_t kc = g->k - pc < KC ? g->k - pc : KC;
                if (g->pack_b)
                    g->pack_b(g->pack_ctx, pc, kc, jc, nc, u.nr, bp);
                else
                    pack_b_strided(g, pc, kc, jc, nc, u.nr, bp);
                for (int64_t ic = 0; ic < mbn; ic += MC) {
                    int64_t mc = mbn - ic < MC ? mbn - ic : MC;
                    pack_a(g, mb + ic, mc, pc, kc, u.mr, ap);
                    for (int64_t jr = 0; jr < nc; jr += u.nr)
                        for (int64_t ir = 0; ir < mc; ir += u.mr)
                            u.fn(kc, ap + ir * kc, bp + jr * kc, cd + (ic + ir) * ncmax + jr, ncmax,
                                 pc > 0);
                }
            }
            if (g->k == 0)
                for (int64_t i = 0; i < mbn; i++)
                    memset(cd + i * ncmax, 0, sizeof(double) * (size_t)nc);
            store_c(g, cd, ncmax, mb, mbn, jc, nc);
        }
    }
    p->st = ST_OK;
out:
    free(bp);
    free(ap);
    free(cd);
    return NULL;
}

/* Few rows (matrix-vector products, decode steps): no packing, eight columns at a time, each
 * summed over k in order exactly as the packed path does. */
static void *run_small(void *arg)
{
    Part *p = arg;
    const CpuGemm *g = p->g;
    int bias = g->bias && g->beta != 0.0;
    for (int64_t i = p->m0; i < p->m1; i++) {
        const float *a = g->a + i * g->a_rs;
        for (int64_t j0 = p->n0; j0 < p->n1; j0 += 8) {
            int cols = (int)(p->n1 - j0 < 8 ? p->n1 - j0 : 8);
            double t[8] = {0};
            const float *b = g->b + j0 * g->b_cs;
            for (int64_t k = 0; k < g->k; k++) {
                double av = a[k * g->a_cs];
                const float *bk = b + k * g->b_rs;
                for (int j = 0; j < cols; j++)
                    t[j] += av * bk[j * g->b_cs];
            }
            for (int j = 0; j < cols; j++) {
                double v = g->alpha * t[j];
                if (bias) v += g->beta * (double)g->bias[i * g->bias_rs + (j0 + j) * g->bias_cs];
                g->c[i * g->c_rs + j0 + j] = (float)v;
            }
        }
    }
    p->st = ST_OK;
    return NULL;
}

static int default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
}

Status cpu_gemm(const CpuGemm *g)
{
    if (g->m <= 0 || g->n <= 0) return ST_OK;
    Ukr u = pick_ukr(g->kernel);
    int small = g->m < 4 && !g->pack_b;
    void *(*fn)(void *) = small ? run_small : run_part;
    if (small) u.nr = 8;
    int nt = g->threads > 0 ? g->threads : default_threads();
    if (nt > MAX_THREADS) nt = MAX_THREADS;
    double work = (double)g->m * (double)g->n * (double)(g->k > 0 ? g->k : 1);
    if (work < (double)(1 << 21)) nt = 1;
    /* Split the larger side in whole micro-tiles; each part packs its own panels. */
    int by_n = small || g->n >= g->m;
    int64_t len = by_n ? g->n : g->m, step = by_n ? u.nr : u.mr;
    int64_t tiles = (len + step - 1) / step;
    if (tiles < nt) nt = (int)tiles;
    Part parts[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    for (int t = 0; t < nt; t++) {
        int64_t a = tiles * t / nt * step, b = tiles * (t + 1) / nt * step;
        if (b > len) b = len;
        parts[t] = (Part){g, u, 0, g->m, 0, g->n, ST_OK};
        if (by_n)
            parts[t].n0 = a, parts[t].n1 = b;
        else
            parts[t].m0 = a, parts[t].m1 = b;
    }
    for (int t = 1; t < nt; t++)
        started[t] = pthread_create(&tid[t], NULL, fn, &parts[t]) == 0;
    fn(&parts[0]);
    Status st = parts[0].st;
    for (int t = 1; t < nt; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        else
            fn(&parts[t]); /* no thread: do its share here */
        if (parts[t].st != ST_OK) st = parts[t].st;
    }
    return st;
}
