/* Output comparison (runtime/compare.c): relative L2 and max_abs on ordinary values; references
 * holding infinities compared only for finiteness; a device infinity against a finite reference
 * counts as non-finite (a failure) unless the reference is a mask constant beyond bf16's range
 * (finfo(float32).min), which f16 and bf16 storage round to an infinity of the same sign.
 * argmax outputs (cmp_output with an ArgmaxSrc): an index whose reference input value is within
 * the tolerance of the row maximum passes (a near-tie swapped by rounding), one farther away, out
 * of the row, or against the NaN rules fails; the window follows the tolerance; the reduced dim
 * may be inner; without the input the indices are compared exactly; cmp_argmax_source finds the
 * node. (test_vk_argmax_check.c: the same through run --check, profile and bisect on Vulkan.) */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "compiler/ir_json.h"
#include "runtime/compare.h"
#include "tests/testutil.h"

static void pair(HTensor *a, HTensor *b, const float *x, const float *y, int n)
{
    int64_t shape[1] = {n};
    tu_alloc(a, "float32", 1, shape);
    tu_alloc(b, "float32", 1, shape);
    for (int i = 0; i < n; i++) {
        ((float *)a->data)[i] = x[i];
        ((float *)b->data)[i] = y[i];
    }
}

static void test_rel_l2(void **state)
{
    (void)state;
    HTensor g, w;
    pair(&g, &w, (const float[]){1, 2, 3.5f}, (const float[]){1, 2, 3}, 3);
    CmpStats s;
    assert_true(cmp_tensors(&g, &w, &s));
    assert_true(fabs(s.rel_l2 - 0.5 / sqrt(14.0)) < 1e-9 && fabs(s.max_abs - 0.5) < 1e-9);
    assert_int_equal(s.nonfinite, 0);
    htensor_free(&g);
    htensor_free(&w);
}

static void test_mask_constants(void **state)
{
    (void)state;
    const float big = -3.4028234663852886e38f; /* finfo(float32).min */
    HTensor g, w;
    CmpStats s;
    /* -inf where the reference has finfo.min, and -inf against -inf: agree */
    pair(&g, &w, (const float[]){-INFINITY, 0.5f, -INFINITY}, (const float[]){big, 0.5f, -INFINITY},
         3);
    assert_true(cmp_tensors(&g, &w, &s));
    assert_int_equal(s.nonfinite, 0);
    assert_true(s.rel_l2 == 0);
    htensor_free(&g);
    htensor_free(&w);
    /* the wrong sign, an ordinary large value, and NaN are failures */
    pair(&g, &w, (const float[]){INFINITY, -INFINITY, NAN}, (const float[]){big, -7e4f, 1}, 3);
    assert_true(cmp_tensors(&g, &w, &s));
    assert_int_equal(s.nonfinite, 3);
    htensor_free(&g);
    htensor_free(&w);
}

static const Tolerance TOL_BF16 = {3e-2, 0}, TOL_F32 = {1e-4, 0};

/* x [rows, len] (float32) from `v`, the reference indices `want` and the device's `got`. */
static void am_setup(HTensor *x, HTensor *got, HTensor *want, int rows, int len, const float *v,
                     const int64_t *g, const int64_t *w)
{
    int64_t xs[2] = {rows, len}, ys[1] = {rows};
    tu_alloc(x, "float32", 2, xs);
    tu_alloc(got, "int64", 1, ys);
    tu_alloc(want, "int64", 1, ys);
    for (int i = 0; i < rows * len; i++)
        ((float *)x->data)[i] = v[i];
    for (int r = 0; r < rows; r++) {
        ((int64_t *)got->data)[r] = g[r];
        ((int64_t *)want->data)[r] = w[r];
    }
}

static void am_free(HTensor *x, HTensor *got, HTensor *want)
{
    htensor_free(x);
    htensor_free(got);
    htensor_free(want);
}

/* Compares got with want over rows of x (dim 1); returns the verdict, *s the numbers. */
static bool am_cmp(const HTensor *x, const HTensor *got, const HTensor *want, bool skip,
                   const Tolerance *tol, CmpStats *s)
{
    ArgmaxSrc a = {.x = *x, .dim = 1, .skip_nan = skip};
    a.x.borrowed = true;
    assert_true(cmp_output(got, want, &a, tol, s));
    assert_true(s->argmax);
    return cmp_ok(s, tol);
}

static void test_argmax_near_tie(void **state)
{
    (void)state;
    const float e = 1.0f / 1024; /* below bf16's resolution at 1 (1/128), far above fp32's */
    const float v[] = {0.1f, 1.0f, -0.5f, 1.0f + e, 0.3f, -1.0f, /* row 0: 3, or 1 near-tied */
                       2.0f, 0.5f, 0.25f, -2.0f,    0.0f, 1.0f}; /* row 1: 0 alone */
    HTensor x, got, want;
    CmpStats s;
    /* the near-tie swapped: passes, counted as differing by index */
    am_setup(&x, &got, &want, 2, 6, v, (const int64_t[]){1, 0}, (const int64_t[]){3, 0});
    assert_true(am_cmp(&x, &got, &want, false, &TOL_BF16, &s));
    assert_int_equal(s.am_rows, 2);
    assert_int_equal(s.am_differ, 1);
    assert_int_equal(s.am_beyond, 0);
    assert_true(fabs(s.am_gap - e) < 1e-9);
    /* the same swap is beyond fp32's tolerance (1e-4 of the row's rms, 0.7): a mismatch there,
     * unless --tol-abs admits it */
    assert_false(am_cmp(&x, &got, &want, false, &TOL_F32, &s));
    assert_int_equal(s.am_beyond, 1);
    assert_true(am_cmp(&x, &got, &want, false, &(Tolerance){1e-4, 2e-3}, &s));
    am_free(&x, &got, &want);
    /* a wrong index (0.3 against 1.0: farther than 3% of the rms) fails, whatever the float
     * error of the indices looks like */
    am_setup(&x, &got, &want, 2, 6, v, (const int64_t[]){4, 0}, (const int64_t[]){3, 0});
    assert_false(am_cmp(&x, &got, &want, false, &TOL_BF16, &s));
    assert_int_equal(s.am_differ, 1);
    assert_int_equal(s.am_beyond, 1);
    am_free(&x, &got, &want);
    /* row 1's clear maximum taken elsewhere (1.0 against 2.0) fails; indices outside the row too */
    am_setup(&x, &got, &want, 2, 6, v, (const int64_t[]){3, 5}, (const int64_t[]){3, 0});
    assert_false(am_cmp(&x, &got, &want, false, &TOL_BF16, &s));
    assert_int_equal(s.am_beyond, 1);
    am_free(&x, &got, &want);
    am_setup(&x, &got, &want, 2, 6, v, (const int64_t[]){6, -1}, (const int64_t[]){3, 0});
    assert_false(am_cmp(&x, &got, &want, false, &TOL_BF16, &s));
    assert_int_equal(s.am_beyond, 2);
    am_free(&x, &got, &want);
}

static void test_argmax_nan_inf(void **state)
{
    (void)state;
    const float v[] = {1.0f,      NAN,       3.0f,      NAN, /* row 0: NaN is the maximum (1) */
                       NAN,       NAN,       NAN,       NAN, /* row 1: NaN alone */
                       -INFINITY, -INFINITY, -INFINITY, -INFINITY}; /* row 2: -inf alone */
    HTensor x, got, want;
    CmpStats s;
    /* without skip_nan: any NaN's index (3 for 1) passes, the finite maximum does not */
    am_setup(&x, &got, &want, 3, 4, v, (const int64_t[]){3, 2, 3}, (const int64_t[]){1, 0, 0});
    assert_true(am_cmp(&x, &got, &want, false, &TOL_BF16, &s));
    assert_int_equal(s.am_differ, 3);
    am_free(&x, &got, &want);
    am_setup(&x, &got, &want, 3, 4, v, (const int64_t[]){2, 0, 0}, (const int64_t[]){1, 0, 0});
    assert_false(am_cmp(&x, &got, &want, false, &TOL_BF16, &s));
    assert_int_equal(s.am_beyond, 1);
    am_free(&x, &got, &want);
    /* skip_nan: NaN is never the pick, a row of NaN alone gives -1 only */
    am_setup(&x, &got, &want, 3, 4, v, (const int64_t[]){2, -1, 1}, (const int64_t[]){2, -1, 0});
    assert_true(am_cmp(&x, &got, &want, true, &TOL_BF16, &s));
    am_free(&x, &got, &want);
    am_setup(&x, &got, &want, 3, 4, v, (const int64_t[]){1, 0, 0}, (const int64_t[]){2, -1, 0});
    assert_false(am_cmp(&x, &got, &want, true, &TOL_BF16, &s));
    assert_int_equal(s.am_beyond, 2);
    am_free(&x, &got, &want);
    /* an infinite maximum accepts only itself */
    const float w[] = {INFINITY, 3e38f, 0.0f, 1.0f};
    am_setup(&x, &got, &want, 1, 4, w, (const int64_t[]){1}, (const int64_t[]){0});
    assert_false(am_cmp(&x, &got, &want, false, &(Tolerance){1e9, 0}, &s));
    am_free(&x, &got, &want);
}

/* The reduced dim inside the shape (rows are columns here), integer inputs (exact ties only),
 * and no input value (the indices exactly). */
static void test_argmax_layouts(void **state)
{
    (void)state;
    int64_t xs[2] = {3, 2}, ys[1] = {2};
    HTensor x, got, want;
    tu_alloc(&x, "float32", 2, xs);
    tu_alloc(&got, "int64", 1, ys);
    tu_alloc(&want, "int64", 1, ys);
    const float v[] = {1.0f,  5.0f, 1.001f,
                       -5.0f, 0.0f, 4.0f}; /* columns {1, 1.001, 0}, {5, -5, 4} */
    for (int i = 0; i < 6; i++)
        ((float *)x.data)[i] = v[i];
    int64_t *g = got.data, *w = want.data;
    ArgmaxSrc a = {.x = x, .dim = 0};
    a.x.borrowed = true;
    CmpStats s;
    g[0] = 0, g[1] = 0, w[0] = 1, w[1] = 0; /* column 0's near-tie swapped */
    assert_true(cmp_output(&got, &want, &a, &TOL_BF16, &s) && cmp_ok(&s, &TOL_BF16));
    assert_int_equal(s.am_differ, 1);
    g[1] = 2; /* 4 against 5 */
    assert_true(cmp_output(&got, &want, &a, &TOL_BF16, &s) && !cmp_ok(&s, &TOL_BF16));
    /* a source whose rows do not fit the indices (dim 1: 3 rows for 2 indices): exact */
    a.dim = 1;
    assert_true(cmp_output(&got, &want, &a, &TOL_BF16, &s) && !cmp_ok(&s, &TOL_BF16));
    /* no input value: exact */
    a = (ArgmaxSrc){.dim = 0};
    g[1] = 0;
    assert_true(cmp_output(&got, &want, &a, &TOL_BF16, &s) && !cmp_ok(&s, &TOL_BF16));
    assert_int_equal(s.am_beyond, 1);
    htensor_free(&x);
    /* integers: {100, 99} is no tie even where 3% of the rms would be 3 */
    int64_t is[2] = {1, 2}, os[1] = {1};
    tu_alloc(&x, "int64", 2, is);
    htensor_free(&got);
    htensor_free(&want);
    tu_alloc(&got, "int64", 1, os);
    tu_alloc(&want, "int64", 1, os);
    ((int64_t *)x.data)[0] = 100, ((int64_t *)x.data)[1] = 99;
    ((int64_t *)got.data)[0] = 1, ((int64_t *)want.data)[0] = 0;
    a = (ArgmaxSrc){.x = x, .dim = 1};
    a.x.borrowed = true;
    assert_true(cmp_output(&got, &want, &a, &TOL_BF16, &s) && !cmp_ok(&s, &TOL_BF16));
    ((int64_t *)x.data)[1] = 100; /* an exact tie */
    assert_true(cmp_output(&got, &want, &a, &TOL_BF16, &s) && cmp_ok(&s, &TOL_BF16));
    am_free(&x, &got, &want);
}

/* cmp_argmax_source: the producing node's dim and skip_nan, its input's value from vals. */
static void test_argmax_source(void **state)
{
    (void)state;
    TuSpec in = {NULL, 3, {2, 5, 7}}, out = {"int64", 2, {2, 7}};
    Graph *g =
        tu_node_graph("aten.argmax.default", 1, &in, 1, &out, "{\"dim\":-2,\"skip_nan\":true}");
    assert_non_null(g);
    HTensor vals[8] = {0};
    int xi = g->inputs[0], yi = g->outputs[0];
    assert_true(xi < 8 && yi < 8);
    tu_alloc(&vals[xi], "float32", 3, in.shape);
    ArgmaxSrc a;
    assert_true(cmp_argmax_source(g, yi, vals, 8, &a));
    assert_int_equal(a.dim, 1);
    assert_true(a.skip_nan && a.x.data == vals[xi].data && a.x.borrowed);
    assert_true(cmp_argmax_source(g, yi, NULL, 0, &a) && !a.x.data);
    assert_false(cmp_argmax_source(g, xi, vals, 8, &a)); /* an input, no argmax's output */
    htensor_free(&vals[xi]);
    graph_free(g);
    g = tu_node_graph("aten.argmax.default", 1, &in, 1, &(TuSpec){"int64", 0, {0}}, NULL);
    assert_non_null(g);
    assert_true(cmp_argmax_source(g, g->outputs[0], NULL, 0, &a));
    assert_int_equal(a.dim, -1); /* no dim: the flattened input */
    assert_false(a.skip_nan);
    graph_free(g);
}

TU_MAIN(test_rel_l2, test_mask_constants, test_argmax_near_tie, test_argmax_nan_inf,
        test_argmax_layouts, test_argmax_source)
