#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tests/kernel_check.h"

void kc_set_v(HTensor *t, int64_t i, double v)
{
    htensor_convert((char *)t->data + (size_t)i * dtype_size(t->dtype), t->dtype, &v, DT_F64, 1);
}

/* Runs `aten` on inputs built from value lists (vals NULL: random inputs already in `ins`). */
Status kc_run_node(const char *aten, int nin, const TuSpec *in, const double *const *vals,
                   TuSpec out, const char *attrs, HTensor *ins, HTensor *res, DiagList *d)
{
    Graph *g = tu_node_graph(aten, nin, in, 1, &out, attrs);
    assert_non_null(g);
    HTensor local[5];
    if (vals) {
        ins = local;
        for (int k = 0; k < nin; k++) {
            tu_alloc(&ins[k], in[k].dtype, in[k].rank, in[k].shape);
            for (int64_t i = 0; i < ins[k].numel; i++)
                kc_set_v(&ins[k], i, vals[k][i]);
        }
    }
    Status st = tu_run(g, ins, res, d);
    if (vals)
        for (int k = 0; k < nin; k++)
            htensor_free(&ins[k]);
    graph_free(g);
    return st;
}

bool kc_close_to(double got, double want, double tol)
{
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    return fabs(got - want) <= tol * (1 + fabs(want));
}

void kc_check(const HTensor *r, const double *want, double tol, const char *what)
{
    for (int64_t i = 0; i < r->numel; i++)
        if (!kc_close_to(htensor_get_f(r, i), want[i], tol))
            fail_msg("%s: [%lld] got %.9g, want %.9g", what, (long long)i, htensor_get_f(r, i),
                     want[i]);
}

/* One hand-computed case; tol 0 means exact. The output dtype is checked too. */
void kc_expect(const char *aten, int nin, const TuSpec *in, const double *const *vals, TuSpec out,
               const char *attrs, const double *want, double tol)
{
    HTensor r;
    DiagList d = {0};
    assert_int_equal(kc_run_node(aten, nin, in, vals, out, attrs, NULL, &r, &d), ST_OK);
    assert_int_equal(r.dtype, htensor_ref_dtype(dtype_parse(out.dtype)));
    char what[256];
    snprintf(what, sizeof what, "%s %s", aten, attrs ? attrs : "");
    kc_check(&r, want, tol, what);
    htensor_free(&r);
    diag_free(&d);
}

/* A case that must fail with ST_BAD_INPUT and a message naming node n0 (random inputs when
 * vals is NULL). */
void kc_expect_err(const char *aten, int nin, const TuSpec *in, const double *const *vals,
                   TuSpec out, const char *attrs, const char *msg)
{
    HTensor ins[5], r;
    DiagList d = {0};
    for (int k = 0; k < nin; k++) {
        tu_alloc(&ins[k], in[k].dtype, in[k].rank, in[k].shape);
        tu_rand(&ins[k], 7 + (uint64_t)k, 1, 3);
        for (int64_t i = 0; vals && i < ins[k].numel; i++)
            kc_set_v(&ins[k], i, vals[k][i]);
    }
    Status st = kc_run_node(aten, nin, in, NULL, out, attrs, ins, &r, &d);
    assert_int_equal(st, ST_BAD_INPUT);
    char buf[512];
    diag_format(&d.items[0], buf, sizeof buf);
    if (!strstr(buf, "'n0'") || !strstr(buf, msg)) fail_msg("got '%s', want '%s'", buf, msg);
    for (int k = 0; k < nin; k++)
        htensor_free(&ins[k]);
    htensor_free(&r);
    diag_free(&d);
}
