/* The shared GEMM and the matrix-product kernels against naive double-precision loops written
 * here (the oracles) and hand-computed values: every micro-kernel and thread count agree bit for
 * bit; torch.matmul promotion and batch broadcasting; addmm alpha/beta; shape errors. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runtime/cpu/cpu_gemm.h"
#include "tests/testutil.h"

static float *rand_floats(int64_t n, uint64_t seed)
{
    HTensor t;
    int64_t shape[1] = {n};
    tu_alloc(&t, NULL, 1, shape);
    tu_rand(&t, seed, -1.0, 1.0);
    return t.data; /* the caller frees */
}

/* ---- cpu_gemm ---- */

static void test_gemm_kernels_agree(void **state)
{
    (void)state;
    static const struct {
        int64_t m, n, k;
        int ta, tb, bias;
    } cases[] = {
        {37, 301, 300, 0, 0, 1}, {100, 45, 17, 1, 0, 0}, {3, 50, 70, 0, 1, 1},
        {1, 19, 33, 0, 1, 0},    {400, 9, 20, 1, 1, 1},  {7, 13, 0, 0, 0, 1},
        {64, 520, 9, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t m = cases[i].m, n = cases[i].n, k = cases[i].k;
        float *a = rand_floats(m * k + 1, 1), *b = rand_floats(k * n + 1, 2);
        float *bias = rand_floats(n, 3), *ref = malloc(sizeof(float) * (size_t)(m * n));
        float *c0 = malloc(sizeof(float) * (size_t)(m * n)),
              *c = malloc(sizeof(float) * (size_t)(m * n));
        CpuGemm g = {.m = m,
                     .n = n,
                     .k = k,
                     .a = a,
                     .b = b,
                     .c = c0,
                     .c_rs = n,
                     .alpha = 0.75,
                     .bias = cases[i].bias ? bias : NULL,
                     .bias_rs = 0,
                     .bias_cs = 1,
                     .beta = -1.5,
                     .threads = 1,
                     .kernel = 1};
        g.a_rs = cases[i].ta ? 1 : k, g.a_cs = cases[i].ta ? m : 1;
        g.b_rs = cases[i].tb ? 1 : n, g.b_cs = cases[i].tb ? k : 1;
        for (int64_t r = 0; r < m; r++)
            for (int64_t q = 0; q < n; q++) {
                double s = 0;
                for (int64_t p = 0; p < k; p++)
                    s += (double)a[r * g.a_rs + p * g.a_cs] * b[p * g.b_rs + q * g.b_cs];
                ref[r * n + q] = (float)(0.75 * s + (cases[i].bias ? -1.5 * bias[q] : 0.0));
            }
        assert_int_equal(cpu_gemm(&g), ST_OK);
        /* Same order, exact products, one rounding: the oracle is matched bit for bit. */
        assert_memory_equal(c0, ref, sizeof(float) * (size_t)(m * n));
        for (int kern = 0; kern <= 3; kern++)
            for (int th = 1; th <= 3; th++) {
                g.kernel = kern, g.threads = th, g.c = c;
                memset(c, 0xff, sizeof(float) * (size_t)(m * n));
                assert_int_equal(cpu_gemm(&g), ST_OK);
                assert_memory_equal(c, c0, sizeof(float) * (size_t)(m * n));
            }
        free(a), free(b), free(bias), free(ref), free(c0), free(c);
    }
}

/* ---- kernels through the IR ---- */

typedef struct MmCase {
    const char *aten, *attrs;
    int nin;
    TuSpec in[3];
    TuSpec out;
} MmCase;

static Status run_case(const MmCase *t, HTensor *x, HTensor *y, DiagList *d, uint64_t seed)
{
    for (int i = 0; i < t->nin; i++) {
        tu_alloc(&x[i], NULL, t->in[i].rank, t->in[i].shape);
        tu_rand(&x[i], seed + (uint64_t)i, -1.0, 1.0);
    }
    Graph *g = tu_node_graph(t->aten, t->nin, t->in, 1, &t->out, t->attrs);
    assert_non_null(g);
    Status st = tu_run(g, x, y, d);
    graph_free(g);
    return st;
}

/* Oracle for torch.matmul: promote 1-D operands, broadcast batch dims, naive loops. */
static void ref_matmul(const HTensor *a, const HTensor *b, float *out)
{
    int64_t m = a->rank == 1 ? 1 : a->shape[a->rank - 2], k = a->shape[a->rank - 1];
    int64_t n = b->rank == 1 ? 1 : b->shape[b->rank - 1];
    int na = a->rank > 2 ? a->rank - 2 : 0, nb = b->rank > 2 ? b->rank - 2 : 0;
    int no = na > nb ? na : nb;
    int64_t ob[8], nbatch = 1;
    for (int i = 0; i < no; i++) {
        int64_t da = i - (no - na) >= 0 ? a->shape[i - (no - na)] : 1;
        int64_t db = i - (no - nb) >= 0 ? b->shape[i - (no - nb)] : 1;
        ob[i] = da > db ? da : db;
        nbatch *= ob[i];
    }
    const float *ad = a->data, *bd = b->data;
    for (int64_t bi = 0; bi < nbatch; bi++) {
        int64_t ia = 0, ib = 0, rem = bi, sa = 1, sb = 1;
        for (int i = no - 1; i >= 0; i--) {
            int64_t q = rem % ob[i];
            rem /= ob[i];
            int ja = i - (no - na), jb = i - (no - nb);
            if (ja >= 0) ia += (a->shape[ja] == 1 ? 0 : q) * sa, sa *= a->shape[ja];
            if (jb >= 0) ib += (b->shape[jb] == 1 ? 0 : q) * sb, sb *= b->shape[jb];
        }
        for (int64_t r = 0; r < m; r++)
            for (int64_t q = 0; q < n; q++) {
                double s = 0;
                for (int64_t p = 0; p < k; p++)
                    s += (double)ad[ia * m * k + r * k + p] * bd[ib * k * n + p * n + q];
                out[(bi * m + r) * n + q] = (float)s;
            }
    }
}

#define T(r, ...)                                                                                  \
    {                                                                                              \
        NULL, r,                                                                                   \
        {                                                                                          \
            __VA_ARGS__                                                                            \
        }                                                                                          \
    }
static void test_matmul_shapes(void **state)
{
    (void)state;
    static const MmCase cases[] = {
        {"aten.matmul.default", NULL, 2, {T(1, 7), T(1, 7)}, {NULL, 0, {0}}},
        {"aten.matmul.default", NULL, 2, {T(1, 7), T(2, 7, 5)}, T(1, 5)},
        {"aten.matmul.default", NULL, 2, {T(2, 6, 7), T(1, 7)}, T(1, 6)},
        {"aten.matmul.default", NULL, 2, {T(3, 3, 6, 7), T(1, 7)}, T(2, 3, 6)},
        {"aten.matmul.default", NULL, 2, {T(1, 7), T(3, 3, 7, 5)}, T(2, 3, 5)},
        {"aten.matmul.default", NULL, 2, {T(4, 2, 1, 3, 4), T(3, 5, 4, 6)}, T(4, 2, 5, 3, 6)},
        {"aten.matmul.default", NULL, 2, {T(3, 3, 9, 5), T(2, 5, 6)}, T(3, 3, 9, 6)},
        {"aten.matmul.default", NULL, 2, {T(3, 2, 3, 4), T(3, 1, 4, 5)}, T(3, 2, 3, 5)},
        {"aten.matmul.default", NULL, 2, {T(2, 3, 4), T(4, 2, 3, 4, 5)}, T(4, 2, 3, 3, 5)},
        {"aten.matmul.default", NULL, 2, {T(2, 70, 300), T(2, 300, 130)}, T(2, 70, 130)},
        {"aten.mm.default", NULL, 2, {T(2, 13, 17), T(2, 17, 11)}, T(2, 13, 11)},
        {"aten.bmm.default", NULL, 2, {T(3, 3, 5, 7), T(3, 3, 7, 4)}, T(3, 3, 5, 4)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        HTensor x[2], y;
        DiagList d = {0};
        assert_int_equal(run_case(&cases[i], x, &y, &d, 40 + i), ST_OK);
        float *ref = malloc(sizeof(float) * (size_t)y.numel);
        ref_matmul(&x[0], &x[1], ref);
        assert_true(tu_close(&y, ref, y.numel, cases[i].aten));
        free(ref);
        htensor_free(&x[0]);
        htensor_free(&x[1]);
        htensor_free(&y);
        diag_free(&d);
    }
}

static void test_hand(void **state)
{
    (void)state;
    /* [1,2;3,4] @ [5,6;7,8] and the dot (1,2,3,4).(5,6,7,8) */
    static const MmCase mm = {"aten.mm.default", NULL, 2, {T(2, 2, 2), T(2, 2, 2)}, T(2, 2, 2)};
    static const MmCase dot = {"aten.matmul.default", NULL, 2, {T(1, 4), T(1, 4)}, {NULL, 0, {0}}};
    static const MmCase add = {"aten.addmm.default",
                               "{\"beta\":2,\"alpha\":0.5}",
                               3,
                               {T(1, 2), T(2, 2, 2), T(2, 2, 2)},
                               T(2, 2, 2)};
    const MmCase *cs[3] = {&mm, &dot, &add};
    const float want[3][4] = {
        {19, 22, 43, 50}, {70}, {2 * 1 + 9.5f, 2 * 2 + 11, 2 * 1 + 21.5f, 2 * 2 + 25}};
    for (int i = 0; i < 3; i++) {
        HTensor x[3], y;
        DiagList d = {0};
        for (int j = 0; j < cs[i]->nin; j++)
            tu_alloc(&x[j], NULL, cs[i]->in[j].rank, cs[i]->in[j].shape);
        float *p0 = x[cs[i]->nin - 2].data, *p1 = x[cs[i]->nin - 1].data;
        for (int j = 0; j < 4; j++)
            p0[j] = (float)(j + 1), p1[j] = (float)(j + 5);
        if (cs[i]->nin == 3) ((float *)x[0].data)[0] = 1, ((float *)x[0].data)[1] = 2;
        Graph *g = tu_node_graph(cs[i]->aten, cs[i]->nin, cs[i]->in, 1, &cs[i]->out, cs[i]->attrs);
        assert_int_equal(tu_run(g, x, &y, &d), ST_OK);
        assert_memory_equal(y.data, want[i], sizeof(float) * (size_t)y.numel);
        graph_free(g);
        for (int j = 0; j < cs[i]->nin; j++)
            htensor_free(&x[j]);
        htensor_free(&y);
        diag_free(&d);
    }
}

static void test_linear_addmm(void **state)
{
    (void)state;
    static const struct {
        MmCase t;
        double alpha, beta;
    } cases[] = {
        {{"aten.linear.default", NULL, 3, {T(3, 2, 3, 20), T(2, 7, 20), T(1, 7)}, T(3, 2, 3, 7)},
         1,
         1},
        {{"aten.linear.default", NULL, 2, {T(1, 20), T(2, 7, 20)}, T(1, 7)}, 1, 1},
        {{"aten.linear.default",
          NULL,
          3,
          {T(2, 50, 300), T(2, 130, 300), T(1, 130)},
          T(2, 50, 130)},
         1,
         1},
        {{"aten.addmm.default", NULL, 3, {T(1, 9), T(2, 5, 11), T(2, 11, 9)}, T(2, 5, 9)}, 1, 1},
        {{"aten.addmm.default",
          "{\"beta\":0.5,\"alpha\":-2}",
          3,
          {T(2, 5, 9), T(2, 5, 11), T(2, 11, 9)},
          T(2, 5, 9)},
         -2,
         0.5},
        {{"aten.addmm.default",
          "{\"alpha\":3}",
          3,
          {T(2, 5, 1), T(2, 5, 11), T(2, 11, 9)},
          T(2, 5, 9)},
         3,
         1},
        {{"aten.addmm.default",
          "{\"beta\":2}",
          3,
          {{NULL, 0, {0}}, T(2, 5, 11), T(2, 11, 9)},
          T(2, 5, 9)},
         1,
         2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const MmCase *t = &cases[i].t;
        HTensor x[3], y;
        DiagList d = {0};
        assert_int_equal(run_case(t, x, &y, &d, 60 + i), ST_OK);
        int lin = strstr(t->aten, "linear") != NULL;
        const HTensor *a = &x[lin ? 0 : 1], *b = &x[lin ? 1 : 2];
        const HTensor *bias = lin ? (t->nin == 3 ? &x[2] : NULL) : &x[0];
        int64_t k = a->shape[a->rank - 1], m = a->numel / k, n = y.numel / m;
        const float *ad = a->data, *bd = b->data, *cd = bias ? bias->data : NULL;
        int64_t bm = 1, bn = 1;
        if (bias && bias->rank == 2) bm = bias->shape[0];
        if (bias && bias->rank >= 1) bn = bias->shape[bias->rank - 1];
        float *ref = malloc(sizeof(float) * (size_t)y.numel);
        for (int64_t r = 0; r < m; r++)
            for (int64_t q = 0; q < n; q++) {
                double s = 0;
                for (int64_t p = 0; p < k; p++)
                    s += (double)ad[r * k + p] * (lin ? bd[q * k + p] : bd[p * n + q]);
                double bv = cd ? cd[(bm == 1 ? 0 : r) * bn + (bn == 1 ? 0 : q)] : 0.0;
                ref[r * n + q] = (float)(cases[i].alpha * s + cases[i].beta * bv);
            }
        assert_true(tu_close(&y, ref, y.numel, t->aten));
        free(ref);
        for (int j = 0; j < t->nin; j++)
            htensor_free(&x[j]);
        htensor_free(&y);
        diag_free(&d);
    }
}

/* beta = 0 ignores the bias even when it holds NaN, as ATen does. */
static void test_addmm_beta0(void **state)
{
    (void)state;
    static const MmCase t = {
        "aten.addmm.default", "{\"beta\":0}", 3, {T(2, 3, 4), T(2, 3, 5), T(2, 5, 4)}, T(2, 3, 4)};
    HTensor x[3], y;
    DiagList d = {0};
    for (int j = 0; j < 3; j++) {
        tu_alloc(&x[j], NULL, t.in[j].rank, t.in[j].shape);
        tu_rand(&x[j], 7 + (uint64_t)j, -1, 1);
    }
    for (int j = 0; j < 12; j++)
        ((float *)x[0].data)[j] = NAN;
    Graph *g = tu_node_graph(t.aten, 3, t.in, 1, &t.out, t.attrs);
    assert_int_equal(tu_run(g, x, &y, &d), ST_OK);
    float ref[12];
    ref_matmul(&x[1], &x[2], ref);
    assert_true(tu_close(&y, ref, 12, "beta0"));
    graph_free(g);
    for (int j = 0; j < 3; j++)
        htensor_free(&x[j]);
    htensor_free(&y);
    diag_free(&d);
}

static void test_errors(void **state)
{
    (void)state;
    static const struct {
        MmCase t;
        const char *tensor;
    } cases[] = {
        {{"aten.mm.default", NULL, 2, {T(2, 3, 4), T(2, 5, 6)}, T(2, 3, 6)}, "in1"},
        {{"aten.mm.default", NULL, 2, {T(2, 3, 4), T(2, 4, 6)}, T(2, 3, 5)}, "out0"},
        {{"aten.matmul.default", NULL, 2, {T(3, 2, 3, 4), T(3, 3, 4, 5)}, T(3, 3, 3, 5)}, "in1"},
        {{"aten.matmul.default", NULL, 2, {T(3, 2, 3, 4), T(2, 4, 5)}, T(2, 3, 5)}, "out0"},
        {{"aten.linear.default", NULL, 2, {T(2, 3, 4), T(2, 5, 3)}, T(2, 3, 5)}, "in1"},
        {{"aten.addmm.default", NULL, 3, {T(1, 4), T(2, 3, 5), T(2, 5, 6)}, T(2, 3, 6)}, "in0"},
        {{"aten.bmm.default", NULL, 2, {T(3, 2, 3, 4), T(3, 3, 4, 5)}, T(3, 2, 3, 5)}, "in1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        HTensor x[3], y;
        DiagList d = {0};
        assert_int_equal(run_case(&cases[i].t, x, &y, &d, 1), ST_BAD_INPUT);
        assert_int_equal(d.count, 1);
        assert_string_equal(d.items[0].node, "n0");
        assert_string_equal(d.items[0].tensor, cases[i].tensor);
        for (int j = 0; j < cases[i].t.nin; j++)
            htensor_free(&x[j]);
        htensor_free(&y);
        diag_free(&d);
    }
}

TU_MAIN(test_gemm_kernels_agree, test_matmul_shapes, test_hand, test_linear_addmm, test_addmm_beta0,
        test_errors)
