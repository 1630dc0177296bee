/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * The tie-aware check of argmax outputs through the tools on Vulkan: y = argmax(x + x, -1) over
 * 4 rows of 1000, computed in bf16, where row 0 holds a near-tie (1 and 1 + 2^-10: one value in
 * bf16, two in fp32), so the device takes the first index and the fp32 reference the second.
 * - run --check (report_check with the binding model_cpu_reference fills): ok, the row counted
 *   as differing by index but not beyond tolerance; a wrong index written into the device's
 *   output, or a zero tolerance, is a MISMATCH;
 * - profile: the argmax kernel's row ok, with its rows after the verdict;
 * - bisect: the all-off run agrees with the reference (nothing to bisect, exit 0), where an exact
 *   comparison of the indices would call the fault "not in a fusion".
 * The near-tie really swaps: the test asserts the device's and the reference's indices differ
 * (the exact comparison all three tools made before would fail). Row 2 holds a gap bf16 does
 * resolve (1 and 1 + 2^-6), which the device must get right. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "app/commands.h"
#include "app/model.h"
#include "app/report.h"
#include "app/runner.h"
#include "runtime/safetensors.h"
#include "tests/testutil.h"

enum { ROWS = 4, LEN = 1000 };
#define TIE_A 100 /* row 0: 1.0 here ... */
#define TIE_B 700 /* ... 1.0 + 2^-10 here: the fp32 maximum */
#define GAP_A 200 /* row 2: 1.0 here, 1.0 + 2^-6 at GAP_B */
#define GAP_B 600

static char model_path[128], inputs_path[128];

static const char *model_json =
    "{\"model_name\":\"am_tie\",\"graph_inputs\":[{\"name\":\"x\",\"shape\":[4,1000],"
    "\"dtype\":\"float32\"}],\"graph_outputs\":[{\"name\":\"y\",\"shape\":[4],\"dtype\":\"int64\"}]"
    ","
    "\"weights\":[],\"weight_name_mapping\":{},\"nodes\":["
    "{\"name\":\"dbl\",\"op_type\":\"aten.add.Tensor\",\"inputs\":[{\"name\":\"x\",\"shape\":[4,"
    "1000]},"
    "{\"name\":\"x\",\"shape\":[4,1000]}],\"outputs\":[{\"name\":\"h\",\"shape\":[4,1000]}],"
    "\"attrs\":{}},"
    "{\"name\":\"am\",\"op_type\":\"aten.argmax.default\",\"inputs\":[{\"name\":\"h\",\"shape\":[4,"
    "1000]}],"
    "\"outputs\":[{\"name\":\"y\",\"shape\":[4],\"dtype\":\"int64\"}],\"attrs\":{\"dim\":-1,"
    "\"keepdim\":false}}]}";

/* The model and its inputs in a fresh directory: values in [-1, 0.9] (multiples of 1/1024), the
 * near-tie in row 0, a resolved gap in row 2, a clear maximum in rows 1 and 3. */
static int setup(void **state)
{
    if (tu_tmp_setup(state) != 0) return -1;
    snprintf(model_path, sizeof model_path, "%s", tu_tmp_path("model.json"));
    snprintf(inputs_path, sizeof inputs_path, "%s", tu_tmp_path("inputs.safetensors"));
    FILE *f = fopen(model_path, "w");
    if (!f) return -1;
    fputs(model_json, f);
    fclose(f);
    int64_t shape[2] = {ROWS, LEN};
    HTensor x;
    if (htensor_alloc(&x, DT_F32, 2, shape) != ST_OK) return -1;
    float *v = x.data;
    uint64_t s = 7;
    for (int i = 0; i < ROWS * LEN; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        v[i] = (float)((int)(s >> 33) % 1947 - 1024) / 1024.0f;
    }
    v[TIE_A] = 1.0f;
    v[TIE_B] = 1.0f + 1.0f / 1024;
    v[LEN + 321] = 1.5f;
    v[2 * LEN + GAP_A] = 1.0f;
    v[2 * LEN + GAP_B] = 1.0f + 1.0f / 64;
    v[3 * LEN + 5] = 1.5f;
    const char *names[] = {"x"};
    const HTensor *ts[] = {&x};
    DiagList d = {0};
    Status st = st_write(inputs_path, 1, names, ts, &d);
    diag_print(&d, stderr);
    diag_free(&d);
    htensor_free(&x);
    return st == ST_OK ? 0 : -1;
}

static void options(Options *o)
{
    opt_defaults(o);
    o->model = model_path;
    o->inputs = inputs_path;
    o->dtype = "bf16";
    o->iters = 1;
}

static const int64_t *idx(const HTensor *t)
{
    assert_int_equal(t->dtype, DT_I64);
    assert_int_equal(t->numel, ROWS);
    return t->data;
}

/* report_check into a string (freed by the caller); *rc its exit code. */
static char *check_text(const Model *m, const HTensor *vals, const Tolerance *tol, int json,
                        int *rc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    *rc = report_check(f, m->g, &m->b, vals, tol, "vulkan", json);
    fclose(f);
    fprintf(stderr, "%s", buf);
    return buf;
}

static void test_run_check(void **state)
{
    (void)state;
    Options o;
    options(&o);
    Model m;
    Runner r;
    DiagList d = {0};
    tu_load_model(&m, o.model, &o);
    assert_int_equal(runner_open(&r, &o, &m, false, &d), ST_OK);
    assert_string_equal(r.dtype, "bf16");
    assert_int_equal(exec_run(&r.x, false, &d), ST_OK);
    HTensor *vals = calloc((size_t)m.g->ntensors, sizeof *vals);
    assert_non_null(vals);
    int y = m.g->outputs[0];
    assert_int_equal(exec_read(&r.x, r.pipe.plan->outputs[0], &vals[y], &d), ST_OK);
    runner_close(&r);
    bool added = false;
    assert_int_equal(model_cpu_reference(&m, &added, &d), ST_OK);
    assert_true(added); /* no reference file: the CPU reference's indices */
    assert_non_null(m.b.argmax);
    assert_non_null(m.b.argmax[0].x.data); /* h, an intermediate, kept for the check */
    assert_int_equal(m.b.argmax[0].x.numel, ROWS * LEN);
    const int64_t *dev = idx(&vals[y]), *ref = idx(&m.b.ref[0]);
    /* the near-tie swapped: the bf16 device takes the first of two equal values */
    assert_int_equal(ref[0], TIE_B);
    assert_int_equal(dev[0], TIE_A);
    assert_int_equal(ref[1], 321);
    assert_int_equal(dev[2], GAP_B); /* a gap bf16 resolves is no tie */
    assert_int_equal(ref[2], GAP_B);
    assert_int_equal(dev[1], 321);
    assert_int_equal(dev[3], 5);
    Tolerance tol = report_tolerance(&o, "bf16");
    int rc;
    char *t = check_text(&m, vals, &tol, 0, &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(t, "argmax: 4 rows, 1 differ by index, 0 beyond tolerance"));
    assert_non_null(strstr(t, " 3/4 ")); /* top1: the rows whose index is the reference's */
    assert_null(strstr(t, "MISMATCH"));
    free(t);
    t = check_text(&m, vals, &tol, 1, &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(t, "\"argmax_rows\":4,\"argmax_differ\":1,\"argmax_beyond\":0"));
    assert_non_null(strstr(t, "\"verdict\":\"ok\""));
    free(t);
    /* a zero tolerance leaves no room for the swap */
    Tolerance zero = {0, 0};
    t = check_text(&m, vals, &zero, 0, &rc);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(t, "1 beyond tolerance"));
    free(t);
    /* a wrong index (row 1's maximum is 1.5, the value after it below 0.9) fails */
    ((int64_t *)vals[y].data)[1] = 322;
    t = check_text(&m, vals, &tol, 0, &rc);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(t, "MISMATCH"));
    assert_non_null(strstr(t, "argmax: 4 rows, 2 differ by index, 1 beyond tolerance"));
    free(t);
    htensor_free(&vals[y]);
    free(vals);
    model_free(&m);
    diag_print(&d, stderr);
    diag_free(&d);
}

/* Runs a tool into a string (freed by the caller). */
static char *tool_text(int which, int *rc)
{
    Options o;
    options(&o);
    DiagList d = {0};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    Status st = which == 0 ? app_profile(&o, f, &d) : app_bisect(&o, f, rc, &d);
    fclose(f);
    fprintf(stderr, "%s", buf);
    diag_print(&d, stderr);
    diag_free(&d);
    assert_int_equal(st, ST_OK);
    return buf;
}

static void test_profile(void **state)
{
    (void)state;
    int rc = 0;
    char *t = tool_text(0, &rc);
    const char *line = strstr(t, "argmax_bf16");
    assert_non_null(line);
    const char *end = strchr(line, '\n');
    assert_non_null(end);
    char row[512];
    snprintf(row, sizeof row, "%.*s", (int)(end - line), line);
    assert_non_null(strstr(row, " ok "));
    assert_non_null(strstr(row, "argmax: 4 rows, 1 differ by index, 0 beyond tolerance"));
    assert_null(strstr(t, "MISMATCH"));
    free(t);
}

static void test_bisect(void **state)
{
    (void)state;
    int rc = -1;
    char *t = tool_text(1, &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(t, "nothing to bisect"));
    assert_null(strstr(t, "not in a fusion"));
    free(t);
}

int main(void)
{
    return TU_GROUP(setup, tu_tmp_teardown, test_run_check, test_profile, test_bisect);
}
