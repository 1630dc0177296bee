/* Helpers for per-op CPU kernel tests: build a one-node graph, feed hand-written values, compare
 * with hand-computed results or expect a named error. Shared by the kernel test files. */
#ifndef NPU_KERNEL_CHECK_H
#define NPU_KERNEL_CHECK_H

#include <stdbool.h>
#include "tests/testutil.h"

#define S(...) ((const TuSpec[]){__VA_ARGS__})
#define V(...) ((const double *const[]){__VA_ARGS__})
#define D(...) ((const double[]){__VA_ARGS__})
#define F32(...) ((TuSpec){"float32", __VA_ARGS__})
#define I64(...) ((TuSpec){"int64", __VA_ARGS__})
#define BOOL(...) ((TuSpec){"bool", __VA_ARGS__})

/* Element i of t set to v, converted to t's dtype as htensor_convert does. */
void kc_set_v(HTensor *t, int64_t i, double v);
Status kc_run_node(const char *aten, int nin, const TuSpec *in, const double *const *vals,
                   TuSpec out, const char *attrs, HTensor *ins, HTensor *res, DiagList *d);
bool kc_close_to(double got, double want, double tol);
void kc_check(const HTensor *r, const double *want, double tol, const char *what);
/* One hand-computed case; tol 0 means exact. The output dtype is checked too. */
void kc_expect(const char *aten, int nin, const TuSpec *in, const double *const *vals, TuSpec out,
               const char *attrs, const double *want, double tol);
/* A case that must fail with ST_BAD_INPUT and a message naming node n0. */
void kc_expect_err(const char *aten, int nin, const TuSpec *in, const double *const *vals,
                   TuSpec out, const char *attrs, const char *msg);

#endif
