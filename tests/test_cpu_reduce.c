/* CPU reference, reduction family: mean/sum/amax, softmax, layer_norm, batch_norm and cumsum on
 * hand-computed cases and on random data against independent double-precision loops; bad
 * attributes reported by node name. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runtime/cpu/cpu_kernels.h"
#include "tests/testutil.h"

#include "tests/kernel_check.h"

/* Random tensor of `s` with values in [lo, hi]. */
static void rnd(HTensor *t, TuSpec s, uint64_t seed, double lo, double hi)
{
    tu_alloc(t, s.dtype, s.rank, s.shape);
    tu_rand(t, seed, lo, hi);
}

static float fv(const HTensor *t, int64_t i)
{
    return ((const float *)t->data)[i];
}

static void test_reduce_hand(void **state)
{
    (void)state;
    const TuSpec *x = S(F32(2, {2, 3}));
    const double *xv = D(1, 2, 3, 4, 5, 6);
    kc_expect("aten.mean.dim", 1, x, V(xv), F32(1, {2}), "{\"dim\":[1]}", D(2, 5), 0);
    kc_expect("aten.mean.dim", 1, x, V(xv), F32(2, {2, 1}), "{\"dim\":[-1],\"keepdim\":true}",
              D(2, 5), 0);
    kc_expect("aten.mean.dim", 1, x, V(xv), F32(1, {3}), "{\"dim\":[-2]}", D(2.5, 3.5, 4.5), 0);
    kc_expect("aten.mean.dim", 1, x, V(xv), F32(1, {3}), "{\"dim\":0,\"keepdim\":false}",
              D(2.5, 3.5, 4.5), 0);
    kc_expect("aten.mean.dim", 1, x, V(xv), F32(0, {0}), NULL, D(3.5), 0);
    kc_expect("aten.mean.dim", 1, x, V(xv), F32(0, {0}), "{\"dim\":null}", D(3.5), 0);
    kc_expect("aten.mean.dim", 1, x, V(xv), F32(2, {1, 1}), "{\"dim\":[],\"keepdim\":true}", D(3.5),
              0);
    kc_expect("aten.mean.default", 1, x, V(xv), F32(0, {0}), NULL, D(3.5), 0);
    kc_expect("aten.sum.dim_IntList", 1, x, V(xv), F32(0, {0}), "{\"dim\":[0,1]}", D(21), 0);
    kc_expect("aten.sum.dim_IntList", 1, x, V(xv), F32(2, {2, 1}),
              "{\"dim\":[-1],\"keepdim\":true}", D(6, 15), 0);
    kc_expect("aten.sum.default", 1, x, V(xv), F32(0, {0}), NULL, D(21), 0);
    kc_expect("aten.amax.default", 1, x, V(xv), F32(1, {2}), "{\"dim\":[1]}", D(3, 6), 0);
    kc_expect("aten.amax.default", 1, x, V(D(1, -7, 3, -4, 5, 6)), F32(2, {1, 3}),
              "{\"dim\":[0],\"keepdim\":true}", D(1, 5, 6), 0);
    kc_expect("aten.amax.default", 1, x, V(D(1, NAN, 3, -4, -5, -6)), F32(1, {2}), "{\"dim\":[1]}",
              D(NAN, -4), 0);
    kc_expect("aten.amax.default", 1, S(F32(1, {3})), V(D(-INFINITY, -INFINITY, -INFINITY)),
              F32(0, {0}), NULL, D(-INFINITY), 0);
    /* integers sum in int64 (2^52 + 2^52 + 1 is not a double), bools count, amax stays int */
    const TuSpec *xi = S(I64(1, {3}));
    HTensor in, r;
    DiagList d = {0};
    tu_alloc(&in, "int64", 1, (int64_t[]){3});
    int64_t *iv = in.data;
    iv[0] = iv[1] = INT64_C(1) << 52;
    iv[2] = 1;
    assert_int_equal(kc_run_node("aten.sum.default", 1, xi, NULL, I64(0, {0}), NULL, &in, &r, &d),
                     ST_OK);
    assert_int_equal(r.dtype, DT_I64);
    assert_true(((int64_t *)r.data)[0] == (INT64_C(1) << 53) + 1);
    htensor_free(&r);
    htensor_free(&in);
    kc_expect("aten.amax.default", 1, S(I64(2, {2, 2})), V(D(-3, -9, 4, 2)), I64(1, {2}),
              "{\"dim\":[-1]}", D(-3, 4), 0);
    kc_expect("aten.sum.dim_IntList", 1, S(BOOL(2, {2, 3})), V(D(1, 1, 0, 1, 1, 1)), I64(1, {2}),
              "{\"dim\":[1]}", D(2, 3), 0);
    kc_expect("aten.amax.default", 1, S(BOOL(2, {2, 2})), V(D(0, 0, 0, 1)), BOOL(1, {2}),
              "{\"dim\":1}", D(0, 1), 0);
    kc_expect("aten.mean.dim", 1, S(I64(1, {4})), V(D(1, 2, 3, 5)), F32(0, {0}),
              "{\"dtype\":\"torch.float32\"}", D(2.75), 0);
    /* bad attributes */
    kc_expect_err("aten.mean.dim", 1, x, NULL, F32(1, {2}), "{\"dim\":[2]}", "out of range");
    kc_expect_err("aten.sum.dim_IntList", 1, x, NULL, F32(1, {2}), "{\"dim\":[-3]}",
                  "out of range");
    kc_expect_err("aten.sum.dim_IntList", 1, x, NULL, F32(0, {0}), "{\"dim\":[1,-1]}",
                  "listed twice");
    kc_expect_err("aten.amax.default", 1, x, NULL, F32(1, {3}), "{\"dim\":[1]}", "output has 3");
    kc_expect_err("aten.mean.dim", 1, x, NULL, F32(1, {3}), "{\"dim\":\"x\"}", "not an int list");
    kc_expect_err("aten.amax.default", 1, S(F32(2, {0, 3})), NULL, F32(1, {3}), "{\"dim\":[1]}",
                  "output has 3");
}

/* argmax: the first maximum; NaN the maximum (torch) or skipped (skip_nan: -1 for a row of NaN
 * alone); -inf rows give 0; int inputs; no dim = the flattened input. */
static void test_argmax_hand(void **state)
{
    (void)state;
    const TuSpec *x = S(F32(2, {2, 4}));
    kc_expect("aten.argmax.default", 1, x, V(D(1, 3, 3, 2, -1, -2, -1, -3)), I64(1, {2}),
              "{\"dim\":-1}", D(1, 0), 0);
    kc_expect("aten.argmax.default", 1, x, V(D(1, 3, 3, 2, -1, -2, 7, -3)), I64(2, {1, 4}),
              "{\"dim\":0,\"keepdim\":true}", D(0, 0, 1, 0), 0);
    kc_expect("aten.argmax.default", 1, x, V(D(1, 3, 3, 2, -1, -2, 7, -3)), I64(0, {0}), NULL, D(6),
              0);
    kc_expect("aten.argmax.default", 1, x, V(D(1, 3, 3, 2, -1, -2, 7, -3)), I64(2, {1, 1}),
              "{\"dim\":null,\"keepdim\":true}", D(6), 0);
    const double *nan = D(1, NAN, 3, NAN, NAN, NAN, NAN, NAN);
    kc_expect("aten.argmax.default", 1, x, V(nan), I64(1, {2}), "{\"dim\":1}", D(1, 0), 0);
    kc_expect("aten.argmax.default", 1, x, V(nan), I64(1, {2}), "{\"dim\":1,\"skip_nan\":true}",
              D(2, -1), 0);
    kc_expect("aten.argmax.default", 1, x,
              V(D(-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, 2, NAN, 2)), I64(1, {2}),
              "{\"dim\":1,\"skip_nan\":true}", D(0, 1), 0);
    kc_expect("aten.argmax.default", 1, S(I64(1, {4})), V(D(-3, 9, 4, 9)), I64(0, {0}),
              "{\"dim\":0}", D(1), 0);
    kc_expect_err("aten.argmax.default", 1, x, NULL, I64(1, {2}), "{\"dim\":2}", "out of range");
    kc_expect_err("aten.argmax.default", 1, x, NULL, I64(1, {3}), "{\"dim\":1}", "output has 3");
}

/* Reductions over random [2,3,4,5] data against a straightforward 4-deep loop. */
static void test_reduce_random(void **state)
{
    (void)state;
    static const struct {
        const char *dims;
        int mask; /* bit d set: dim d reduced */
    } cases[] = {{"[1,3]", 10}, {"[-1,0]", 9}, {"[2]", 4}, {"[-4,-3,-2,-1]", 15}, {"[0]", 1}};
    static const char *ops[] = {"aten.mean.dim", "aten.sum.dim_IntList", "aten.amax.default"};
    TuSpec xs = F32(4, {2, 3, 4, 5});
    HTensor x, r;
    rnd(&x, xs, 5, -3, 3);
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        for (int keep = 0; keep < 2; keep++) {
            TuSpec ys = F32(0, {0});
            int64_t ost[4], on = 1;
            for (int dd = 3; dd >= 0; dd--) {
                bool red = cases[ci].mask >> dd & 1;
                ost[dd] = red ? 0 : on;
                on *= red ? 1 : xs.shape[dd];
            }
            for (int dd = 0; dd < 4; dd++)
                if (!(cases[ci].mask >> dd & 1) || keep)
                    ys.shape[ys.rank++] = (cases[ci].mask >> dd & 1) ? 1 : xs.shape[dd];
            for (int k = 0; k < 3; k++) {
                double want[120], cnt[120];
                for (int i = 0; i < 120; i++) {
                    want[i] = k == 2 ? -INFINITY : 0;
                    cnt[i] = 0;
                }
                for (int a = 0; a < 2; a++)
                    for (int b = 0; b < 3; b++)
                        for (int c = 0; c < 4; c++)
                            for (int e = 0; e < 5; e++) {
                                double v = fv(&x, ((a * 3 + b) * 4 + c) * 5 + e);
                                int64_t o = a * ost[0] + b * ost[1] + c * ost[2] + e * ost[3];
                                want[o] = k == 2 ? fmax(want[o], v) : want[o] + v;
                                cnt[o] += 1;
                            }
                if (k == 0)
                    for (int i = 0; i < on; i++)
                        want[i] /= cnt[i];
                char attrs[96];
                snprintf(attrs, sizeof attrs, "{\"dim\":%s,\"keepdim\":%s}", cases[ci].dims,
                         keep ? "true" : "false");
                DiagList d = {0};
                assert_int_equal(kc_run_node(ops[k], 1, &xs, NULL, ys, attrs, &x, &r, &d), ST_OK);
                assert_int_equal(r.numel, on);
                kc_check(&r, want, 1e-6, attrs);
                htensor_free(&r);
            }
        }
    }
    htensor_free(&x);
}

/* Softmax of a random tensor along `dim` (normalised), computed independently. */
static void softmax_ref(const HTensor *x, int dim, bool logsm, double *out)
{
    int64_t st = 1;
    for (int i = dim + 1; i < x->rank; i++)
        st *= x->shape[i];
    int64_t len = x->shape[dim];
    for (int64_t i = 0; i < x->numel; i++) {
        int64_t j0 = i - (i / st % len) * st; /* first element of i's row */
        double s = 0;
        for (int64_t j = 0; j < len; j++)
            s += exp((double)fv(x, j0 + j * st));
        out[i] = logsm ? fv(x, i) - log(s) : exp((double)fv(x, i)) / s;
    }
}

static void test_softmax(void **state)
{
    (void)state;
    const TuSpec *x3 = S(F32(1, {3}));
    TuSpec y3 = F32(1, {3});
    kc_expect("aten.softmax.int", 1, x3, V(D(1, 2, 3)), y3, "{\"dim\":0}",
              D(0.09003057317038046, 0.24472847105479764, 0.6652409557748219), 1e-7);
    kc_expect("aten._softmax.default", 1, x3, V(D(1001, 1002, 1003)), y3,
              "{\"dim\":-1,\"half_to_float\":false}",
              D(0.09003057317038046, 0.24472847105479764, 0.6652409557748219), 1e-7);
    kc_expect("aten.log_softmax.int", 1, x3, V(D(1, 2, 3)), y3, NULL,
              D(-2.4076059644443806, -1.4076059644443806, -0.4076059644443806), 1e-7);
    /* an all -inf row is NaN in PyTorch; a partly masked row gives exact zeros */
    const TuSpec *m = S(F32(2, {2, 3}));
    const double *mv = D(-INFINITY, -INFINITY, -INFINITY, -INFINITY, 0, 0);
    kc_expect("aten.softmax.int", 1, m, V(mv), F32(2, {2, 3}), "{\"dim\":-1}",
              D(NAN, NAN, NAN, 0, 0.5, 0.5), 0);
    kc_expect("aten.log_softmax.int", 1, m, V(mv), F32(2, {2, 3}), "{\"dim\":1}",
              D(NAN, NAN, NAN, -INFINITY, -M_LN2, -M_LN2), 1e-7);
    kc_expect("aten.softmax.int", 1, m, V(D(1, NAN, 2, 0, 1, 2)), F32(2, {2, 3}), "{\"dim\":-1}",
              D(NAN, NAN, NAN, 0.09003057317038046, 0.24472847105479764, 0.6652409557748219), 1e-7);
    /* a rank-0 tensor is one row of one element */
    kc_expect("aten.softmax.int", 1, S(F32(0, {0})), V(D(-3)), F32(0, {0}), "{\"dim\":0}", D(1), 0);
    kc_expect("aten.log_softmax.int", 1, S(F32(0, {0})), V(D(-3)), F32(0, {0}), "{\"dim\":-1}",
              D(0), 0);
    kc_expect_err("aten.softmax.int", 1, m, NULL, F32(2, {2, 3}), "{\"dim\":2}", "out of range");
    kc_expect_err("aten.softmax.int", 1, m, NULL, F32(2, {2, 3}), "{\"dim\":-3}", "out of range");
    /* the fixture's attention softmax, then every dim of a rank-3 tensor */
    static const struct {
        TuSpec s;
        int dim, ndim;
        const char *aten;
    } cases[] = {
        {{"float32", 4, {1, 4, 8, 64}}, 3, -1, "aten.softmax.int"},
        {{"float32", 3, {3, 4, 5}}, 0, 0, "aten.softmax.int"},
        {{"float32", 3, {3, 4, 5}}, 1, -2, "aten._softmax.default"},
        {{"float32", 3, {3, 4, 5}}, 2, 2, "aten.softmax.int"},
        {{"float32", 3, {3, 4, 5}}, 0, -3, "aten.log_softmax.int"},
        {{"float32", 3, {3, 4, 5}}, 1, 1, "aten._log_softmax.default"},
        {{"float32", 3, {3, 4, 5}}, 2, -1, "aten.log_softmax.int"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        HTensor x, r;
        rnd(&x, cases[i].s, 30 + i, -6, 6);
        double *want = malloc(sizeof(double) * (size_t)x.numel);
        softmax_ref(&x, cases[i].dim, strstr(cases[i].aten, "log") != NULL, want);
        char attrs[96];
        snprintf(attrs, sizeof attrs, "{\"dim\":%d,\"dtype\":\"torch.float32\"}", cases[i].ndim);
        DiagList d = {0};
        assert_int_equal(
            kc_run_node(cases[i].aten, 1, &cases[i].s, NULL, cases[i].s, attrs, &x, &r, &d), ST_OK);
        kc_check(&r, want, 1e-6, cases[i].aten);
        htensor_free(&r);
        htensor_free(&x);
        free(want);
    }
}

static void test_layer_norm(void **state)
{
    (void)state;
    const TuSpec *s = S(F32(2, {2, 4}), F32(1, {4}), F32(1, {4}));
    TuSpec y = F32(2, {2, 4});
    const double *x = D(1, 2, 3, 4, -1, -1, 1, 1), *w = D(1, 2, 1, 2), *b = D(0, 0, 1, 1);
    double k = 1 / sqrt(1.25);
    kc_expect("aten.layer_norm.default", 1, s, V(x), y, "{\"normalized_shape\":[4],\"eps\":0}",
              D(-1.5 * k, -0.5 * k, 0.5 * k, 1.5 * k, -1, -1, 1, 1), 1e-7);
    kc_expect("aten.layer_norm.default", 3, s, V(x, w, b), y,
              "{\"normalized_shape\":[4],\"eps\":0}",
              D(-1.5 * k, -k, 1 + 0.5 * k, 1 + 3 * k, -1, -2, 2, 3), 1e-7);
    kc_expect("aten.layer_norm.default", 2, s, V(x, w), y, "{\"normalized_shape\":4,\"eps\":0}",
              D(-1.5 * k, -k, 0.5 * k, 3 * k, -1, -2, 1, 2), 1e-7);
    kc_expect("aten.layer_norm.default", 3, s, V(x, w, b), y, "{\"eps\":0}",
              D(-1.5 * k, -k, 1 + 0.5 * k, 1 + 3 * k, -1, -2, 2, 3), 1e-7);
    /* eps default 1e-5 on a constant row: (x - mean) = 0 exactly */
    kc_expect("aten.layer_norm.default", 1, s, V(D(3, 3, 3, 3, 0, 0, 0, 2)), y,
              "{\"normalized_shape\":[4]}",
              D(0, 0, 0, 0, -0.5 / sqrt(0.75 + 1e-5), -0.5 / sqrt(0.75 + 1e-5),
                -0.5 / sqrt(0.75 + 1e-5), 1.5 / sqrt(0.75 + 1e-5)),
              1e-7);
    kc_expect_err("aten.layer_norm.default", 1, s, NULL, y, "{\"normalized_shape\":[3]}",
                  "trailing");
    kc_expect_err("aten.layer_norm.default", 1, s, NULL, y, "{\"normalized_shape\":[2,2,4]}",
                  "trailing");
    kc_expect_err("aten.layer_norm.default", 2, S(F32(2, {2, 4}), F32(1, {3})), NULL, y,
                  "{\"normalized_shape\":[4]}", "weight/bias");
    kc_expect_err("aten.layer_norm.default", 1, s, NULL, y, NULL, "normalized_shape");
    /* random [2,3,8] over the last one and the last two dims */
    for (int nd = 1; nd <= 2; nd++) {
        TuSpec xs = F32(3, {2, 3, 8});
        TuSpec ws = nd == 1 ? F32(1, {8}) : F32(2, {3, 8});
        HTensor in[3], r;
        rnd(&in[0], xs, 40, -2, 5);
        rnd(&in[1], ws, 41, 0.5, 2);
        rnd(&in[2], ws, 42, -1, 1);
        int64_t N = nd == 1 ? 8 : 24;
        double want[48];
        for (int64_t row = 0; row < 48 / N; row++) {
            double m = 0, v = 0;
            for (int64_t j = 0; j < N; j++)
                m += fv(&in[0], row * N + j) / (double)N;
            for (int64_t j = 0; j < N; j++)
                v += pow(fv(&in[0], row * N + j) - m, 2) / (double)N;
            for (int64_t j = 0; j < N; j++)
                want[row * N + j] =
                    (fv(&in[0], row * N + j) - m) / sqrt(v + 1e-5) * fv(&in[1], j) + fv(&in[2], j);
        }
        const char *attrs = nd == 1 ? "{\"normalized_shape\":[8]}" : "{\"normalized_shape\":[3,8]}";
        DiagList d = {0};
        assert_int_equal(kc_run_node("aten.layer_norm.default", 3, (TuSpec[]){xs, ws, ws}, NULL, xs,
                                     attrs, in, &r, &d),
                         ST_OK);
        kc_check(&r, want, 1e-6, attrs);
        htensor_free(&r);
        for (int i = 0; i < 3; i++)
            htensor_free(&in[i]);
    }
}

static void test_batch_norm(void **state)
{
    (void)state;
    const TuSpec *s = S(F32(3, {1, 2, 2}), F32(1, {2}), F32(1, {2}), F32(1, {2}), F32(1, {2}));
    TuSpec y = F32(3, {1, 2, 2});
    const double *x = D(1, 3, 2, 6), *w = D(2, 1), *b = D(0.5, -1), *rm = D(1, 2), *rv = D(4, 16);
    kc_expect("aten.batch_norm.default", 5, s, V(x, w, b, rm, rv), y,
              "{\"training\":false,\"eps\":0}", D(0.5, 2.5, -1, 0), 0);
    kc_expect("aten.batch_norm.default", 3, S(F32(3, {1, 2, 2}), F32(1, {2}), F32(1, {2})),
              V(x, rm, rv), y, "{\"eps\":0}", D(0, 1, 0, 1), 0);
    kc_expect_err("aten.batch_norm.default", 5, s, NULL, y, "{\"training\":true}",
                  "training-mode batch_norm is not supported");
    kc_expect_err("aten.batch_norm.default", 4, s, NULL, y, NULL, "takes 5 inputs");
    kc_expect_err("aten.batch_norm.default", 5,
                  S(F32(3, {1, 2, 2}), F32(1, {3}), F32(1, {2}), F32(1, {2}), F32(1, {2})), NULL, y,
                  NULL, "channels");
    kc_expect_err("aten.batch_norm.default", 3, S(F32(1, {2}), F32(1, {2}), F32(1, {2})), NULL,
                  F32(1, {2}), NULL, "rank 1");
    /* the fixture's attributes, non-trivial running statistics; rank 4 and rank 2 */
    static const TuSpec xs[] = {{"float32", 4, {2, 3, 4, 5}}, {"float32", 2, {6, 3}}};
    for (int t = 0; t < 2; t++) {
        TuSpec c = F32(1, {3});
        HTensor in[5], r;
        rnd(&in[0], xs[t], 50, -3, 3);
        rnd(&in[1], c, 51, 0.5, 2);
        rnd(&in[2], c, 52, -1, 1);
        rnd(&in[3], c, 53, -1, 1);
        rnd(&in[4], c, 54, 0.2, 3);
        int64_t inner = t == 0 ? 20 : 1;
        double *want = malloc(sizeof(double) * (size_t)in[0].numel);
        for (int64_t i = 0; i < in[0].numel; i++) {
            int64_t ch = i / inner % 3;
            want[i] =
                (fv(&in[0], i) - fv(&in[3], ch)) / sqrt(fv(&in[4], ch) + 1e-5) * fv(&in[1], ch) +
                fv(&in[2], ch);
        }
        DiagList d = {0};
        const char *attrs =
            "{\"training\":false,\"momentum\":0.1,\"eps\":1e-05,\"cudnn_enabled\":false}";
        assert_int_equal(kc_run_node("aten.batch_norm.default", 5, (TuSpec[]){xs[t], c, c, c, c},
                                     NULL, xs[t], attrs, in, &r, &d),
                         ST_OK);
        kc_check(&r, want, 1e-6, "batch_norm");
        htensor_free(&r);
        for (int i = 0; i < 5; i++)
            htensor_free(&in[i]);
        free(want);
    }
}

static void test_cumsum(void **state)
{
    (void)state;
    const TuSpec *x = S(F32(2, {2, 3}));
    TuSpec y = F32(2, {2, 3});
    const double *xv = D(1, 2, 3, 4, 5, 6);
    kc_expect("aten.cumsum.default", 1, x, V(xv), y, "{\"dim\":1}", D(1, 3, 6, 4, 9, 15), 0);
    kc_expect("aten.cumsum.default", 1, x, V(xv), y, "{\"dim\":-1}", D(1, 3, 6, 4, 9, 15), 0);
    kc_expect("aten.cumsum.default", 1, x, V(xv), y, "{\"dim\":0}", D(1, 2, 3, 5, 7, 9), 0);
    kc_expect("aten.cumsum.default", 1, S(I64(2, {2, 3})), V(D(-1, 5, 7, 2, 2, -9)), I64(2, {2, 3}),
              "{\"dim\":1}", D(-1, 4, 11, 2, 4, -5), 0);
    kc_expect("aten.cumsum.default", 1, S(BOOL(1, {4})), V(D(1, 0, 1, 1)), I64(1, {4}),
              "{\"dim\":0}", D(1, 1, 2, 3), 0);
    kc_expect("aten.cumsum.default", 1, S(F32(0, {0})), V(D(2.5)), F32(0, {0}), "{\"dim\":0}",
              D(2.5), 0);
    kc_expect_err("aten.cumsum.default", 1, x, NULL, y, NULL, "no `dim`");
    kc_expect_err("aten.cumsum.default", 1, x, NULL, y, "{\"dim\":2}", "out of range");
    TuSpec rs = F32(3, {3, 4, 5});
    HTensor in, r;
    rnd(&in, rs, 60, -2, 2);
    double want[60];
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 5; c++) {
            double acc = 0;
            for (int b = 0; b < 4; b++) {
                acc += fv(&in, (a * 4 + b) * 5 + c);
                want[(a * 4 + b) * 5 + c] = acc;
            }
        }
    DiagList d = {0};
    assert_int_equal(
        kc_run_node("aten.cumsum.default", 1, &rs, NULL, rs, "{\"dim\":-2}", &in, &r, &d), ST_OK);
    kc_check(&r, want, 1e-6, "cumsum");
    htensor_free(&r);
    htensor_free(&in);
}

TU_MAIN(test_reduce_hand, test_argmax_hand, test_reduce_random, test_softmax, test_layer_norm,
        test_batch_norm, test_cumsum)
