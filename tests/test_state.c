/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * Model state (compiler/inplace.c, exec_carry_state) on tests/models/inplace/state.json: acc is
 * a constant that add_ updates in place (acc += x), last a constant copy_ overwrites whole before
 * any read (last = x), the output 2 * acc + last. Import makes acc model state (a graph input
 * paired with the output add_) and leaves last a constant. Every run starts from acc's first
 * value, keep_inputs or not, until exec_carry_state carries the last run's value: then run k
 * gives 2 * (acc0 + k * x) + x, on the CPU reference backend and on Vulkan (where this add is
 * not in place: the carry goes through the host). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "app/model.h"
#include "app/runner.h"
#include "tests/testutil.h"

#define STATE_IR "tests/models/inplace/state.json"

static void load(Options *o, Model *m, const char *backend, const char *dtype)
{
    opt_defaults(o);
    o->model = STATE_IR;
    o->backend = backend;
    o->dtype = dtype;
    tu_load_model(m, STATE_IR, o);
}

static void test_import_makes_state(void **state)
{
    (void)state;
    Options o;
    Model m;
    load(&o, &m, "cpu", "fp32");
    const Graph *g = m.g;
    assert_int_equal(g->nstates, 1);
    const GTensor *acc = &g->tensors[g->state_in[0]];
    assert_string_equal(acc->name, "c_acc");
    assert_int_equal(acc->kind, TK_INPUT);
    assert_true(acc->state);
    assert_string_equal(g->tensors[g->outputs[g->state_out[0]]].name, "add_");
    /* overwritten whole by copy_ before any read: nothing to carry */
    int last = graph_find_tensor(g, "c_last");
    assert_true(last >= 0);
    assert_int_equal(g->tensors[last].kind, TK_CONST);
    assert_false(g->tensors[last].state);
    /* acc's first value is the constant's */
    const HTensor *v = &m.b.vals[g->state_in[0]];
    assert_int_equal(v->numel, 4);
    assert_true(((const float *)v->data)[3] == 4.0f);
    model_free(&m);
}

/* The output of one run, checked against 2 * (acc0 + k * x) + x within tol. */
static void run_expect(Runner *r, const Model *m, int k, float tol)
{
    DiagList d = {0};
    assert_int_equal(exec_run(&r->x, false, &d), ST_OK);
    HTensor y = {0};
    const Plan *p = r->pipe.plan;
    assert_int_equal(exec_read(&r->x, plan_find_tensor(p, "add"), &y, &d), ST_OK);
    const float *x = m->b.vals[graph_find_tensor(m->g, "x")].data;
    const float *acc0 = m->b.vals[m->g->state_in[0]].data;
    for (int i = 0; i < 4; i++) {
        float want = 2 * (acc0[i] + (float)k * x[i]) + x[i];
        if (!(y.data && ((float *)y.data)[i] > want - tol && ((float *)y.data)[i] < want + tol))
            fail_msg("run %d, element %d: %g, expected %g", k, i, ((float *)y.data)[i], want);
    }
    htensor_free(&y);
    diag_free(&d);
}

static void carry(Runner *r)
{
    DiagList d = {0};
    assert_int_equal(exec_carry_state(&r->x, &d), ST_OK);
    diag_free(&d);
}

static void check_carry(const char *backend, const char *dtype, float tol)
{
    Options o;
    Model m;
    load(&o, &m, backend, dtype);
    Runner r;
    DiagList d = {0};
    Status st = runner_open(&r, &o, &m, false, &d);
    if (st != ST_OK) diag_print(&d, stderr);
    assert_int_equal(st, ST_OK);
    assert_int_equal(r.pipe.plan->nstates, 1);
    run_expect(&r, &m, 1, tol);
    run_expect(&r, &m, 1, tol); /* not carried: from the first value again */
    carry(&r);
    run_expect(&r, &m, 2, tol);
    carry(&r);
    run_expect(&r, &m, 3, tol);
    runner_close(&r);
    /* the profiler's back-to-back runs (keep_inputs) start from the first value too */
    st = runner_open(&r, &o, &m, false, &d);
    assert_int_equal(st, ST_OK);
    run_expect(&r, &m, 1, tol);
    r.x.keep_inputs = true;
    run_expect(&r, &m, 1, tol);
    run_expect(&r, &m, 1, tol);
    runner_close(&r);
    model_free(&m);
    diag_free(&d);
}

static void test_carry_cpu_backend(void **state)
{
    (void)state;
    check_carry("cpu", "fp32", 1e-5f);
}

static void test_carry_vulkan(void **state)
{
    (void)state;
    check_carry("vulkan", "fp32", 1e-5f);
    check_carry("vulkan", "fp16", 2e-2f); /* the state uploaded as the host holds it, packed */
}

TU_MAIN(test_import_makes_state, test_carry_cpu_backend, test_carry_vulkan)
