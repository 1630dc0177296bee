/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * The executor on Vulkan: profiling never changes results (the timed recording, with a barrier
 * and a timestamp after every kernel, gives bit-identical outputs to the untimed one), repeated
 * runs are deterministic, every NPU kernel gets a GPU time in the timed run, and the recorder
 * puts exactly the barriers the compiler predicts: one between consecutive levels. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "app/model.h"
#include "app/runner.h"
#include "compiler/schedule.h"

static void outputs(Runner *r, bool timed, HTensor *out)
{
    DiagList d = {0};
    assert_int_equal(exec_run(&r->x, timed, &d), ST_OK);
    for (int i = 0; i < r->pipe.plan->noutputs; i++)
        assert_int_equal(exec_read(&r->x, r->pipe.plan->outputs[i], &out[i], &d), ST_OK);
    diag_free(&d);
}

static void check_model(const char *path)
{
    Options o;
    opt_defaults(&o);
    o.model = path;
    Model m = {0};
    DiagList d = {0};
    assert_int_equal(model_load_graph(&m, path, &d), ST_OK);
    assert_int_equal(model_bind(&m, &o, &d), ST_OK);
    Runner r;
    Status st = runner_open(&r, &o, &m, false, &d);
    if (st != ST_OK) diag_print(&d, stderr);
    assert_int_equal(st, ST_OK);
    int n = r.pipe.plan->noutputs;
    HTensor a[8], b[8], c[8];
    assert_true(n <= 8);
    memset(a, 0, sizeof a), memset(b, 0, sizeof b), memset(c, 0, sizeof c);
    outputs(&r, false, a);
    outputs(&r, true, b);
    outputs(&r, false, c);
    for (int i = 0; i < n; i++) {
        size_t bytes = (size_t)a[i].numel * (a[i].dtype == DT_I64 ? 8 : 4);
        assert_memory_equal(a[i].data, b[i].data, bytes); /* timed == untimed */
        assert_memory_equal(a[i].data, c[i].data, bytes); /* and runs repeat exactly */
        htensor_free(&a[i]), htensor_free(&b[i]), htensor_free(&c[i]);
    }
    double us[512];
    int nk = r.pipe.plan->nkernels;
    assert_true(nk <= 512);
    assert_true(r.be->ops->kernel_us(r.be, us, nk));
    for (int k = 0; k < nk; k++)
        if (r.pipe.plan->kernels[k].target == KT_NPU) assert_true(us[k] >= 0);
    runner_close(&r);
    model_free(&m);
    diag_free(&d);
}

/* One untimed run: the recorder's barriers are the plan's prediction, levels - 1 when the plan
 * is one NPU partition. */
static void check_barriers(const char *path)
{
    Options o;
    opt_defaults(&o);
    o.model = path;
    o.random_weights = true; /* the architecture is what counts */
    o.weights_seed = 1;
    Model m = {0};
    DiagList d = {0};
    assert_int_equal(model_load_graph(&m, path, &d), ST_OK);
    Status st = model_bind(&m, &o, &d);
    Runner r;
    if (st == ST_OK) st = runner_open(&r, &o, &m, false, &d);
    if (st == ST_OK) st = exec_run(&r.x, false, &d);
    if (st != ST_OK) diag_print(&d, stderr);
    assert_int_equal(st, ST_OK);
    const Plan *p = r.pipe.plan;
    int got = vk_backend_barriers(r.be);
    fprintf(stderr, "# %s: %d kernels, %d levels, %d barriers recorded\n", path, p->nkernels,
            p->nlevels, got);
    assert_int_equal(got, plan_barriers_total(p));
    if (p->nparts == 1) assert_int_equal(got, p->nlevels - 1);
    runner_close(&r);
    model_free(&m);
    diag_free(&d);
}

static void test_recorder_barriers_are_levels(void **state)
{
    (void)state;
    const char *models[] = {"tests/models/mlp/model.json",
                            "tests/models/convnet/model.json",
                            "tests/models/mobilenet_block/model.json",
                            "tests/models/gpt_block/model.json",
                            "tests/models/resnet18/model.json",
                            "tests/models/qwen2_tiny/prefill.json",
                            "tests/models/qwen2_tiny/decode.json"};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) check_barriers(models[i]);
}

static void test_timed_equals_untimed_qwen(void **state)
{
    (void)state;
    check_model("tests/models/qwen2_tiny/decode.json");
}

static void test_timed_equals_untimed_convnet(void **state)
{
    (void)state;
    check_model("tests/models/convnet/model.json");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timed_equals_untimed_qwen),
        cmocka_unit_test(test_timed_equals_untimed_convnet),
        cmocka_unit_test(test_recorder_barriers_are_levels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
