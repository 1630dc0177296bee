/* Output comparison (runtime/compare.c): relative L2 and max_abs on ordinary values; references
 * holding infinities compared only for finiteness; a device infinity against a finite reference
 * counts as non-finite (a failure) unless the reference is a mask constant beyond bf16's range
 * (finfo(float32).min), which f16 and bf16 storage round to an infinity of the same sign. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runtime/compare.h"
#include "testutil.h"

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
    pair(&g, &w, (const float[]){-INFINITY, 0.5f, -INFINITY}, (const float[]){big, 0.5f, -INFINITY}, 3);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rel_l2),
        cmocka_unit_test(test_mask_constants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
