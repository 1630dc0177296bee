/* CPU reference, elementwise family: hand-computed ATen semantics, broadcasting against an
 * independent index computation, integer/bool dtypes, bad attributes reported by node name. */
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

static const double XS[8] = {-4, -1.5, -0.5, 0, 0.5, 1, 2, 7};

static void test_unary_hand(void **state)
{
    (void)state;
    const TuSpec *x = S(F32(1, {8}));
    TuSpec y = F32(1, {8});
    kc_expect("aten.relu.default", 1, x, V(XS), y, NULL, D(0, 0, 0, 0, 0.5, 1, 2, 7), 0);
    kc_expect("aten.relu_.default", 1, x, V(XS), y, NULL, D(0, 0, 0, 0, 0.5, 1, 2, 7), 0);
    kc_expect("aten.relu6.default", 1, x, V(XS), y, NULL, D(0, 0, 0, 0, 0.5, 1, 2, 6), 0);
    kc_expect("aten.hardtanh.default", 1, x, V(XS), y, NULL, D(-1, -1, -0.5, 0, 0.5, 1, 1, 1), 0);
    kc_expect("aten.hardtanh_.default", 1, x, V(XS), y, "{\"min_val\":-2,\"max_val\":0.5}",
              D(-2, -1.5, -0.5, 0, 0.5, 0.5, 0.5, 0.5), 0);
    kc_expect("aten.hardswish.default", 1, x, V(XS), y, NULL,
              D(0, -1.5 * 1.5 / 6, -0.5 * 2.5 / 6, 0, 0.5 * 3.5 / 6, 4.0 / 6, 2 * 5.0 / 6, 7),
              1e-7);
    kc_expect("aten.hardsigmoid.default", 1, x, V(XS), y, NULL,
              D(0, 1.5 / 6, 2.5 / 6, 0.5, 3.5 / 6, 4.0 / 6, 5.0 / 6, 1), 1e-7);
    kc_expect("aten.neg.default", 1, x, V(XS), y, NULL, D(4, 1.5, 0.5, 0, -0.5, -1, -2, -7), 0);
    kc_expect("aten.abs.default", 1, x, V(XS), y, NULL, D(4, 1.5, 0.5, 0, 0.5, 1, 2, 7), 0);
    const TuSpec *p = S(F32(1, {4}));
    TuSpec q = F32(1, {4});
    kc_expect("aten.sqrt.default", 1, p, V(D(0, 0.25, 4, 9)), q, NULL, D(0, 0.5, 2, 3), 0);
    kc_expect("aten.rsqrt.default", 1, p, V(D(0, 0.25, 4, -1)), q, NULL, D(INFINITY, 2, 0.5, NAN),
              0);
    kc_expect("aten.log.default", 1, p, V(D(0, 1, M_E, -1)), q, NULL, D(-INFINITY, 0, 1, NAN),
              1e-7);
    kc_expect("aten.exp.default", 1, p, V(D(0, 1, -INFINITY, 2)), q, NULL,
              D(1, M_E, 0, 7.38905609893065), 1e-7);
    kc_expect("aten.sigmoid.default", 1, p, V(D(0, 100, -100, 1)), q, NULL,
              D(0.5, 1, 3.720075976020836e-44, 0.7310585786300049), 1e-7);
    kc_expect("aten.silu.default", 1, p, V(D(0, 1, -1, 20)), q, NULL,
              D(0, 0.7310585786300049, -0.2689414213699951, 19.999999958776925), 1e-7);
    kc_expect("aten.tanh.default", 1, p, V(D(0, 1, -1, 30)), q, NULL,
              D(0, 0.7615941559557649, -0.7615941559557649, 1), 1e-7);
    kc_expect("aten.gelu.default", 1, p, V(D(0, 1, -1, 3)), q, NULL,
              D(0, 0.8413447460685429, -0.15865525393145707, 2.9959502039260507), 1e-7);
    kc_expect("aten.gelu.default", 1, p, V(D(0, 1, -1, 3)), q, "{\"approximate\":\"tanh\"}",
              D(0, 0.8411919906082768, -0.15880800939172324, 2.996362607918227), 1e-7);
    kc_expect("aten.cos.default", 1, p, V(D(0, M_PI, M_PI / 2, 1)), q, NULL,
              D(1, -1, 0, 0.5403023058681398), 1e-7);
    kc_expect("aten.sin.default", 1, p, V(D(0, M_PI, M_PI / 2, 1)), q, NULL,
              D(0, 0, 1, 0.8414709848078965), 1e-7);
    /* NaN propagates through relu and clamp, as in torch. */
    kc_expect("aten.relu.default", 1, p, V(D(NAN, -1, 1, 0)), q, NULL, D(NAN, 0, 1, 0), 0);
    kc_expect("aten.clamp.default", 1, p, V(D(NAN, -1, 1, 0)), q, "{\"min\":0}", D(NAN, 0, 1, 0),
              0);
    kc_expect_err("aten.gelu.default", 1, p, NULL, q, "{\"approximate\":\"fast\"}", "approximate");
}

static void test_clamp_cast_not(void **state)
{
    (void)state;
    const TuSpec *x = S(F32(1, {8}));
    TuSpec y = F32(1, {8});
    kc_expect("aten.clamp.default", 1, x, V(XS), y, "{\"min\":-1,\"max\":1.5}",
              D(-1, -1, -0.5, 0, 0.5, 1, 1.5, 1.5), 0);
    kc_expect("aten.clamp.default", 1, x, V(XS), y, "{\"min\":null,\"max\":1}",
              D(-4, -1.5, -0.5, 0, 0.5, 1, 1, 1), 0);
    kc_expect("aten.clamp.default", 1, x, V(XS), y, "{\"min\":0.5}",
              D(0.5, 0.5, 0.5, 0.5, 0.5, 1, 2, 7), 0);
    kc_expect("aten.clamp_min.default", 1, x, V(XS), y, "{\"min\":-1}",
              D(-1, -1, -0.5, 0, 0.5, 1, 2, 7), 0);
    kc_expect("aten.clamp_max.default", 1, x, V(XS), y, "{\"max\":0}",
              D(-4, -1.5, -0.5, 0, 0, 0, 0, 0), 0);
    /* min > max: every element becomes max, as torch.clamp does */
    kc_expect("aten.clamp_.default", 1, x, V(XS), y, "{\"min\":3,\"max\":2}",
              D(2, 2, 2, 2, 2, 2, 2, 2), 0);
    const TuSpec *xi = S(I64(1, {5}));
    TuSpec yi = I64(1, {5});
    const double *iv = D(-7, -1, 0, 3, 9);
    kc_expect("aten.neg.default", 1, xi, V(iv), yi, NULL, D(7, 1, 0, -3, -9), 0);
    kc_expect("aten.abs.default", 1, xi, V(iv), yi, NULL, D(7, 1, 0, 3, 9), 0);
    kc_expect("aten.clamp.default", 1, xi, V(iv), yi, "{\"min\":-2,\"max\":4}", D(-2, -1, 0, 3, 4),
              0);
    kc_expect("aten.bitwise_not.default", 1, xi, V(iv), yi, NULL, D(6, 0, -1, -4, -10), 0);
    kc_expect("aten.logical_not.default", 1, xi, V(iv), BOOL(1, {5}), NULL, D(0, 0, 1, 0, 0), 0);
    kc_expect("aten.logical_not.default", 1, S(BOOL(1, {3})), V(D(1, 0, 1)), BOOL(1, {3}), NULL,
              D(0, 1, 0), 0);
    kc_expect("aten.bitwise_not.default", 1, S(BOOL(1, {3})), V(D(1, 0, 1)), BOOL(1, {3}), NULL,
              D(0, 1, 0), 0);
    kc_expect("aten.logical_not.default", 1, S(F32(1, {3})), V(D(0.5, 0, -2)), BOOL(1, {3}), NULL,
              D(0, 1, 0), 0);
    /* casts: float -> int truncates toward zero, -> bool is x != 0 */
    const TuSpec *c = S(F32(1, {6}));
    const double *cv = D(-2.7, -0.5, 0, 0.9, 2.5, 1e3);
    kc_expect("aten.to.dtype", 1, c, V(cv), I64(1, {6}), "{\"dtype\":\"torch.int64\"}",
              D(-2, 0, 0, 0, 2, 1000), 0);
    kc_expect("aten._to_copy.default", 1, c, V(cv), BOOL(1, {6}), "{\"dtype\":\"torch.bool\"}",
              D(1, 1, 0, 1, 1, 1), 0);
    kc_expect("aten.to.dtype", 1, xi, V(iv), F32(1, {5}), "{\"dtype\":\"torch.float32\"}", iv, 0);
    kc_expect("aten.type_as.default", 2, S(I64(1, {5}), F32(1, {2})), V(iv, D(0, 0)), F32(1, {5}),
              NULL, iv, 0);
    kc_expect("aten.to.dtype", 1, S(BOOL(1, {2})), V(D(1, 0)), F32(1, {2}), NULL, D(1, 0), 0);
    kc_expect_err("aten.neg.default", 1, S(F32(1, {4})), NULL, F32(1, {3}), NULL, "elements");
}

/* Every float unary op on random data against its double-precision definition. */
static void test_unary_random(void **state)
{
    (void)state;
    static const char *ops[] = {"relu", "relu6", "hardtanh", "hardswish", "hardsigmoid", "sigmoid",
                                "tanh", "gelu",  "silu",     "neg",       "exp",         "log",
                                "abs",  "sqrt",  "rsqrt",    "cos",       "sin"};
    TuSpec s = F32(3, {2, 5, 7});
    HTensor x, r;
    tu_alloc(&x, "float32", s.rank, s.shape);
    tu_rand(&x, 11, -5, 5);
    double *want = malloc(sizeof(double) * (size_t)x.numel);
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        for (int64_t i = 0; i < x.numel; i++) {
            double v = ((float *)x.data)[i], a = fabs(v), w = 0;
            switch (k) {
            case 0:
                w = v < 0 ? 0 : v;
                break;
            case 1:
                w = v < 0 ? 0 : v > 6 ? 6 : v;
                break;
            case 2:
                w = v < -1 ? -1 : v > 1 ? 1 : v;
                break;
            case 3:
                w = v <= -3 ? 0 : v >= 3 ? v : v * (v + 3) / 6;
                break;
            case 4:
                w = v <= -3 ? 0 : v >= 3 ? 1 : (v + 3) / 6;
                break;
            case 5:
                w = 1 / (1 + exp(-v));
                break;
            case 6:
                w = (exp(2 * v) - 1) / (exp(2 * v) + 1);
                break;
            case 7:
                w = v * 0.5 * erfc(-v / M_SQRT2);
                break;
            case 8:
                w = v * (1 / (1 + exp(-v)));
                break;
            case 9:
                w = -v;
                break;
            case 10:
                w = exp(v);
                break;
            case 11:
                w = v > 0 ? log(v) : v == 0 ? -INFINITY : NAN;
                break;
            case 12:
                w = a;
                break;
            case 13:
                w = v >= 0 ? sqrt(v) : NAN;
                break;
            case 14:
                w = v >= 0 ? pow(v, -0.5) : NAN;
                break;
            case 15:
                w = cos(v);
                break;
            case 16:
                w = sin(v);
                break;
            }
            want[i] = w;
        }
        char aten[64];
        snprintf(aten, sizeof aten, "aten.%s.default", ops[k]);
        DiagList d = {0};
        assert_int_equal(kc_run_node(aten, 1, &s, NULL, s, NULL, &x, &r, &d), ST_OK);
        kc_check(&r, want, 2e-6, aten);
        htensor_free(&r);
    }
    free(want);
    htensor_free(&x);
}

static void test_binary_hand(void **state)
{
    (void)state;
    const TuSpec *two = S(F32(1, {4}), F32(1, {4}));
    TuSpec y = F32(1, {4});
    const double *a = D(1, -2, 3.5, 8), *b = D(2, 4, -0.5, 3);
    kc_expect("aten.add.Tensor", 2, two, V(a, b), y, NULL, D(3, 2, 3, 11), 0);
    kc_expect("aten.add_.Tensor", 2, two, V(a, b), y, NULL, D(3, 2, 3, 11), 0);
    kc_expect("aten.add.Tensor", 2, two, V(a, b), y, "{\"alpha\":2}", D(5, 6, 2.5, 14), 0);
    kc_expect("aten.sub.Tensor", 2, two, V(a, b), y, "{\"alpha\":0.5}", D(0, -4, 3.75, 6.5), 0);
    kc_expect("aten.rsub.Tensor", 2, two, V(a, b), y, NULL, D(1, 6, -4, -5), 0);
    kc_expect("aten.rsub.Scalar", 1, two, V(a), y, "{\"other\":1,\"alpha\":2}", D(-1, 5, -6, -15),
              0);
    kc_expect("aten.mul.Tensor", 2, two, V(a, b), y, NULL, D(2, -8, -1.75, 24), 0);
    kc_expect("aten.div.Tensor", 2, two, V(a, b), y, NULL, D(0.5, -0.5, -7, 8.0 / 3), 1e-7);
    kc_expect("aten.div.Tensor_mode", 2, two, V(a, b), y, "{\"rounding_mode\":\"trunc\"}",
              D(0, 0, -7, 2), 0);
    kc_expect("aten.div.Tensor_mode", 2, two, V(D(-7, 7, -7.5, 1), D(2, -2, 2, 0)), y,
              "{\"rounding_mode\":\"floor\"}", D(-4, -4, -4, INFINITY), 0);
    kc_expect("aten.div.Tensor", 2, two, V(a, b), y, "{\"rounding_mode\":null}",
              D(0.5, -0.5, -7, 8.0 / 3), 1e-7);
    /* fixture patterns: 1-input scalar forms */
    float eps_sum = (float)3.5 + (float)1e-06;
    kc_expect(
        "aten.add.Tensor", 1, two, V(a), y, "{\"other\":1e-06}",
        D((float)1 + (float)1e-06, (float)-2 + (float)1e-06, eps_sum, (float)8 + (float)1e-06), 0);
    kc_expect("aten.mul.Tensor", 1, two, V(a), y, "{\"other\":0.25}", D(0.25, -0.5, 0.875, 2), 0);
    /* the scalar is rounded to float32 before the multiply, as torch does: x * 0.1f */
    kc_expect("aten.mul.Tensor", 1, two, V(D(2.59, 4.07, 5.18, 8.14)), y, "{\"other\":0.1}",
              D(2.59f * 0.1f, 4.07f * 0.1f, 5.18f * 0.1f, 8.14f * 0.1f), 0);
    kc_expect("aten.div.Scalar", 1, two, V(a), y, "{\"other\":4}", D(0.25, -0.5, 0.875, 2), 0);
    kc_expect("aten.sub.Tensor", 1, two, V(a), y, "{\"other\":1}", D(0, -3, 2.5, 7), 0);
    kc_expect("aten.pow.Tensor_Scalar", 1, two, V(a), y, "{\"exponent\":2}", D(1, 4, 12.25, 64), 0);
    kc_expect("aten.pow.Tensor_Scalar", 1, two, V(D(-2, 2, -3, 4)), y, "{\"exponent\":3}",
              D(-8, 8, -27, 64), 0);
    kc_expect("aten.pow.Tensor_Scalar", 1, two, V(D(4, 9, 0, 2)), y, "{\"exponent\":0.5}",
              D(2, 3, 0, M_SQRT2), 1e-7);
    kc_expect("aten.pow.Tensor_Tensor", 2, two, V(D(-2, 2, -3, 4), D(3, -1, 2, 0.5)), y, NULL,
              D(-8, 0.5, 9, 2), 0);
    kc_expect("aten.pow_.Scalar", 1, two, V(D(-2, 2, -3, 4)), y, "{\"exponent\":-2}",
              D(0.25, 0.25, 1.0 / 9, 0.0625), 1e-7);
    /* pow 2 is x*x rounded once to float32, bit for bit */
    const double *odd = D(1.1, -3.3000002, 12345.678, 1e-20);
    double sq[4];
    for (int i = 0; i < 4; i++)
        sq[i] = (float)((float)odd[i] * (float)odd[i]);
    kc_expect("aten.pow.Tensor_Scalar", 1, two, V(odd), y, "{\"exponent\":2}", sq, 0);
    /* torch's float32 special cases: x*x*x and 1/sqrtf(x) round twice */
    const float *fx = (const float[]){0.1211f, 0.1557f, 0.0519f, 0.1038f};
    const double *fxd = D(0.1211f, 0.1557f, 0.0519f, 0.1038f);
    double cube[4], rs[4];
    for (int i = 0; i < 4; i++) {
        cube[i] = fx[i] * fx[i] * fx[i];
        rs[i] = 1.0f / sqrtf(fx[i]);
    }
    kc_expect("aten.pow.Tensor_Scalar", 1, two, V(fxd), y, "{\"exponent\":3}", cube, 0);
    kc_expect("aten.pow.Tensor_Scalar", 1, two, V(fxd), y, "{\"exponent\":-0.5}", rs, 0);
    kc_expect("aten.rsqrt.default", 1, two, V(fxd), y, NULL, rs, 0);
    /* integers stay integers */
    const TuSpec *ii = S(I64(1, {4}), I64(1, {4}));
    TuSpec yi = I64(1, {4});
    const double *ia = D(-7, 7, 9, -8), *ib = D(2, -2, 3, -3);
    kc_expect("aten.add.Tensor", 2, ii, V(ia, ib), yi, "{\"alpha\":3}", D(-1, 1, 18, -17), 0);
    kc_expect("aten.sub.Tensor", 2, ii, V(ia, ib), yi, NULL, D(-9, 9, 6, -5), 0);
    kc_expect("aten.mul.Tensor", 2, ii, V(ia, ib), yi, NULL, D(-14, -14, 27, 24), 0);
    kc_expect("aten.div.Tensor_mode", 2, ii, V(ia, ib), yi, "{\"rounding_mode\":\"floor\"}",
              D(-4, -4, 3, 2), 0);
    kc_expect("aten.div.Tensor_mode", 2, ii, V(ia, ib), yi, "{\"rounding_mode\":\"trunc\"}",
              D(-3, -3, 3, 2), 0);
    kc_expect("aten.div.Tensor", 2, ii, V(ia, ib), F32(1, {4}), NULL, D(-3.5, -3.5, 3, 8.0 / 3),
              1e-7);
    kc_expect("aten.add.Tensor", 1, ii, V(ia), yi, "{\"other\":5}", D(-2, 12, 14, -3), 0);
    kc_expect("aten.mul.Tensor", 1, ii, V(ia), F32(1, {4}), "{\"other\":0.5}",
              D(-3.5, 3.5, 4.5, -4), 0);
    kc_expect("aten.pow.Tensor_Scalar", 1, ii, V(ia), yi, "{\"exponent\":3}",
              D(-343, 343, 729, -512), 0);
    kc_expect("aten.add.Tensor", 2, S(I64(1, {4}), F32(1, {4})), V(ia, b), y, NULL,
              D(-5, 11, 8.5, -5), 0);
    kc_expect_err("aten.div.Tensor_mode", 2, ii, V(ia, D(1, 0, 1, 1)), yi,
                  "{\"rounding_mode\":\"floor\"}", "division by zero");
    kc_expect_err("aten.div.Tensor_mode", 2, two, NULL, y, "{\"rounding_mode\":\"round\"}",
                  "rounding_mode");
    kc_expect_err("aten.add.Tensor", 1, two, NULL, y, NULL, "`other`");
    kc_expect_err("aten.pow.Tensor_Scalar", 1, two, NULL, y, "{\"other\":2}", "`exponent`");
    kc_expect_err("aten.add.Tensor", 2, S(F32(1, {3}), F32(1, {4})), NULL, y, NULL,
                  "does not broadcast");
    kc_expect_err("aten.mul.Tensor", 2, S(F32(2, {2, 4}), F32(1, {4})), NULL, y, NULL,
                  "does not broadcast");
}

static void test_compare_logical(void **state)
{
    (void)state;
    const TuSpec *ff = S(F32(1, {5}), F32(1, {5}));
    TuSpec yb = BOOL(1, {5});
    const double *a = D(1, 2, NAN, -1, 0.1), *b = D(1, 3, NAN, -2, 0.1);
    kc_expect("aten.eq.Tensor", 2, ff, V(a, b), yb, NULL, D(1, 0, 0, 0, 1), 0);
    kc_expect("aten.ne.Tensor", 2, ff, V(a, b), yb, NULL, D(0, 1, 1, 1, 0), 0);
    kc_expect("aten.lt.Tensor", 2, ff, V(a, b), yb, NULL, D(0, 1, 0, 0, 0), 0);
    kc_expect("aten.le.Tensor", 2, ff, V(a, b), yb, NULL, D(1, 1, 0, 0, 1), 0);
    kc_expect("aten.gt.Tensor", 2, ff, V(a, b), yb, NULL, D(0, 0, 0, 1, 0), 0);
    kc_expect("aten.ge.Tensor", 2, ff, V(a, b), yb, NULL, D(1, 0, 0, 1, 1), 0);
    /* a float32 tensor against a double scalar compares in float32: 0.1f == 0.1 */
    kc_expect("aten.eq.Scalar", 1, ff, V(a), yb, "{\"other\":0.1}", D(0, 0, 0, 0, 1), 0);
    kc_expect("aten.gt.Scalar", 1, ff, V(a), yb, "{\"other\":1}", D(0, 1, 0, 0, 0), 0);
    const TuSpec *ii = S(I64(1, {5}), I64(1, {5}));
    const double *ia = D(5, 2, 3, -5, 0), *ib = D(4, 2, 4, -6, 0);
    kc_expect("aten.ne.Tensor", 2, ii, V(ia, ib), yb, NULL, D(1, 0, 1, 1, 0), 0);
    kc_expect("aten.lt.Scalar", 1, ii, V(D(1, 2, 3, -5, 0)), yb, "{\"other\":2.5}",
              D(1, 1, 0, 1, 1), 0);
    kc_expect("aten.eq.Tensor", 2, S(BOOL(1, {3}), BOOL(1, {3})), V(D(1, 0, 1), D(1, 1, 0)),
              BOOL(1, {3}), NULL, D(1, 0, 0), 0);
    const TuSpec *bb = S(BOOL(1, {4}), BOOL(1, {4}));
    const double *p = D(0, 0, 1, 1), *q = D(0, 1, 0, 1);
    kc_expect("aten.logical_and.default", 2, bb, V(p, q), BOOL(1, {4}), NULL, D(0, 0, 0, 1), 0);
    kc_expect("aten.logical_or.default", 2, bb, V(p, q), BOOL(1, {4}), NULL, D(0, 1, 1, 1), 0);
    kc_expect("aten.bitwise_and.Tensor", 2, bb, V(p, q), BOOL(1, {4}), NULL, D(0, 0, 0, 1), 0);
    kc_expect("aten.bitwise_or.Tensor", 2, bb, V(p, q), BOOL(1, {4}), NULL, D(0, 1, 1, 1), 0);
    const TuSpec *i4 = S(I64(1, {4}), I64(1, {4}));
    kc_expect("aten.bitwise_and.Tensor", 2, i4, V(D(12, 5, -1, 7), D(10, 3, 6, 0)), I64(1, {4}),
              NULL, D(8, 1, 6, 0), 0);
    kc_expect("aten.bitwise_or.Tensor", 2, i4, V(D(12, 5, -1, 7), D(10, 3, 6, 0)), I64(1, {4}),
              NULL, D(14, 7, -1, 7), 0);
    kc_expect("aten.logical_and.default", 2, S(F32(1, {4}), F32(1, {4})),
              V(D(0, 0.5, -2, 0), D(1, 0, 3, 0)), BOOL(1, {4}), NULL, D(0, 0, 1, 0), 0);
    kc_expect("aten.logical_or.default", 2, S(F32(1, {4}), I64(1, {4})),
              V(D(0, 0.5, -2, 0), D(1, 0, 3, 0)), BOOL(1, {4}), NULL, D(1, 1, 1, 0), 0);
}

/* Output index i of shape `out` mapped into a broadcast input, computed independently. */
static int64_t bidx(int64_t i, const int64_t *out, int rout, const int64_t *in, int rin)
{
    int64_t off = 0, mul = 1;
    for (int d = rout - 1; d >= 0; d--) {
        int64_t q = i % out[d];
        i /= out[d];
        int j = d - (rout - rin);
        if (j < 0) continue;
        if (in[j] != 1) off += q * mul;
        mul *= in[j];
    }
    return off;
}

static void test_binary_bcast_random(void **state)
{
    (void)state;
    const struct {
        TuSpec a, b, y;
    } shapes[] = {
        {F32(3, {2, 1, 3}), F32(2, {4, 1}), F32(3, {2, 4, 3})},
        {F32(2, {3, 1}), F32(2, {1, 4}), F32(2, {3, 4})},
        {F32(1, {1}), F32(2, {2, 3}), F32(2, {2, 3})},
        {F32(3, {2, 3, 4}), F32(1, {4}), F32(3, {2, 3, 4})},
        {F32(3, {2, 1, 4}), F32(3, {1, 3, 1}), F32(3, {2, 3, 4})},
        {F32(4, {1, 4, 8, 64}), F32(4, {1, 1, 8, 64}), F32(4, {1, 4, 8, 64})},
        {F32(0, {0}), F32(2, {2, 3}), F32(2, {2, 3})},
        {F32(2, {5, 6}), F32(2, {5, 6}), F32(2, {5, 6})},
    };
    static const char *ops[] = {"aten.add.Tensor", "aten.sub.Tensor",  "aten.mul.Tensor",
                                "aten.div.Tensor", "aten.rsub.Tensor", "aten.pow.Tensor_Tensor",
                                "aten.lt.Tensor",  "aten.eq.Tensor"};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        TuSpec in[2] = {shapes[s].a, shapes[s].b};
        HTensor x[2], r;
        for (int k = 0; k < 2; k++) {
            tu_alloc(&x[k], "float32", in[k].rank, in[k].shape);
            tu_rand(&x[k], 100 + s * 2 + (size_t)k, 0.25, 3);
        }
        /* a few equal pairs so eq sees true too */
        ((float *)x[1].data)[0] = ((float *)x[0].data)[0];
        int64_t n = shape_numel(shapes[s].y.shape, shapes[s].y.rank);
        double *want = malloc(sizeof(double) * (size_t)n);
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            bool cmp = k >= 6;
            TuSpec ys = shapes[s].y;
            if (cmp) ys.dtype = "bool";
            for (int64_t i = 0; i < n; i++) {
                double a =
                    ((float *)x[0].data)[bidx(i, ys.shape, ys.rank, in[0].shape, in[0].rank)];
                double b =
                    ((float *)x[1].data)[bidx(i, ys.shape, ys.rank, in[1].shape, in[1].rank)];
                double w[] = {a + 2 * b, a - 2 * b, a * b, a / b,
                              b - 2 * a, pow(a, b), a < b, a == b};
                want[i] = w[k];
            }
            const char *attrs = k == 0 || k == 1 || k == 4 ? "{\"alpha\":2}" : NULL;
            DiagList d = {0};
            assert_int_equal(kc_run_node(ops[k], 2, in, NULL, ys, attrs, x, &r, &d), ST_OK);
            kc_check(&r, want, cmp ? 0 : 1e-6, ops[k]);
            htensor_free(&r);
        }
        free(want);
        for (int k = 0; k < 2; k++)
            htensor_free(&x[k]);
    }
}

static void test_where_masked_fill(void **state)
{
    (void)state;
    /* cond [2,1], a [1,3], b [3] -> [2,3] */
    const TuSpec *w3 = S(BOOL(2, {2, 1}), F32(2, {1, 3}), F32(1, {3}));
    TuSpec y = F32(2, {2, 3});
    const double *cnd = D(1, 0), *a = D(1, 2, 3), *b = D(-1, -2, -3);
    kc_expect("aten.where.self", 3, w3, V(cnd, a, b), y, NULL, D(1, 2, 3, -1, -2, -3), 0);
    kc_expect("aten.where.ScalarOther", 2, w3, V(cnd, a), y, "{\"other\":0.5}",
              D(1, 2, 3, 0.5, 0.5, 0.5), 0);
    kc_expect("aten.where.ScalarSelf", 2, S(BOOL(2, {2, 1}), F32(1, {3})), V(cnd, b), y,
              "{\"self\":9}", D(9, 9, 9, -1, -2, -3), 0);
    kc_expect("aten.where.Scalar", 1, w3, V(cnd), y, "{\"self\":1,\"other\":-1}",
              D(1, 1, 1, -1, -1, -1), 0);
    kc_expect("aten.where.self", 3, S(BOOL(1, {3}), I64(1, {3}), I64(1, {1})),
              V(D(0, 1, 0), D(4, 5, 6), D(-9)), I64(1, {3}), NULL, D(-9, 5, -9), 0);
    kc_expect_err("aten.where.self", 2, w3, NULL, y, NULL, "`self`/`other`");
    kc_expect_err("aten.where.self", 3, S(BOOL(1, {2}), F32(1, {3}), F32(1, {3})), NULL,
                  F32(1, {3}), NULL, "does not broadcast");
    /* masked_fill: mask [1,3] broadcast over x [2,3]; -inf as a float or a string */
    const TuSpec *mf = S(F32(2, {2, 3}), BOOL(2, {1, 3}));
    const double *x = D(1, 2, 3, 4, 5, 6), *m = D(0, 1, 1);
    kc_expect("aten.masked_fill.Scalar", 2, mf, V(x, m), y, "{\"value\":-1e9}",
              D(1, -1e9, -1e9, 4, -1e9, -1e9), 0);
    kc_expect("aten.masked_fill.Scalar", 2, mf, V(x, m), y, "{\"value\":-Infinity}",
              D(1, -INFINITY, -INFINITY, 4, -INFINITY, -INFINITY), 0);
    kc_expect("aten.masked_fill_.Scalar", 2, mf, V(x, m), y, "{\"value\":\"-inf\"}",
              D(1, -INFINITY, -INFINITY, 4, -INFINITY, -INFINITY), 0);
    kc_expect("aten.masked_fill.Scalar", 2, S(I64(2, {2, 3}), BOOL(1, {1})), V(x, D(1)),
              I64(2, {2, 3}), "{\"value\":7}", D(7, 7, 7, 7, 7, 7), 0);
    kc_expect("aten.masked_fill.Scalar", 2, S(BOOL(1, {3}), BOOL(1, {3})),
              V(D(1, 0, 0), D(1, 1, 0)), BOOL(1, {3}), "{\"value\":true}", D(1, 1, 0), 0);
    kc_expect_err("aten.masked_fill.Scalar", 2, mf, NULL, y, NULL, "`value`");
}

TU_MAIN(test_unary_hand, test_clamp_cast_not, test_unary_random, test_binary_hand,
        test_compare_logical, test_binary_bcast_random, test_where_masked_fill)
