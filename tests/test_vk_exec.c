/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * The executor on Vulkan: profiling never changes results (the timed recording, with a barrier
 * and a timestamp after every kernel, gives bit-identical outputs to the untimed one), repeated
 * runs are deterministic, every NPU kernel gets a GPU time in the timed run, and the recorder
 * puts exactly the barriers the compiler predicts: one between consecutive levels; a graph input
 * packed on the device is uploaded by the dense path and packed as the host would have. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "app/model.h"
#include "app/runner.h"
#include "common/half.h"
#include "compiler/schedule.h"
#include "runtime/hostxf.h"
#include "tests/testutil.h"

static void outputs(Runner *r, bool timed, HTensor *out)
{
    DiagList d = {0};
    assert_int_equal(exec_run(&r->x, timed, &d), ST_OK);
    for (int i = 0; i < r->pipe.plan->noutputs; i++)
        assert_int_equal(exec_read(&r->x, r->pipe.plan->outputs[i], &out[i], &d), ST_OK);
    diag_free(&d);
}

/* Loads and binds the model at path (random weights when asked: the architecture is what
 * counts), into *o and *m. */
static void load(const char *path, bool random, Options *o, Model *m)
{
    opt_defaults(o);
    o->model = path;
    o->random_weights = random;
    o->weights_seed = 1;
    tu_load_model(m, path, o);
}

static void check_model(const char *path)
{
    Options o;
    Model m;
    load(path, false, &o, &m);
    DiagList d = {0};
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
    Model m;
    load(path, true, &o, &m);
    DiagList d = {0};
    Runner r;
    Status st = runner_open(&r, &o, &m, false, &d);
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
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        check_barriers(models[i]);
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

/* The clock warm-up around prepare: off by default on a CPU device (lavapipe), and where asked
 * for it runs during the upload, is stopped by the end of prepare and changes nothing the plan
 * computes. */
static void test_warm_up_during_prepare(void **state)
{
    (void)state;
    Options o;
    Model m;
    load("tests/models/convnet/model.json", false, &o, &m);
    DiagList d = {0};
    Runner r;
    assert_int_equal(runner_open(&r, &o, &m, false, &d), ST_OK);
    /* off by default on a CPU device; a GPU's default (on where its memory is mapped) is the
     * device's, so only the forced warm-up below is checked there */
    if (vk_backend_cpu_device(r.be)) assert_int_equal(vk_backend_warm(r.be, NULL), 0);
    HTensor a = {0}, b = {0};
    outputs(&r, false, &a);
    VkBackendOptions vo = vk_backend_options_default();
    vo.warm = 1;
    vo.no_cache = true;
    Backend *be = NULL;
    Exec x = {0};
    Status st = vk_backend_create(&vo, &be, &d);
    if (st == ST_OK) st = exec_open(&x, r.pipe.plan, r.pipe.g, &m.b, be, &d);
    double us = -1;
    if (st == ST_OK) assert_true(vk_backend_warm(be, &us) >= 1 && us > 0);
    if (st == ST_OK) st = exec_run(&x, false, &d);
    if (st == ST_OK) st = exec_read(&x, r.pipe.plan->outputs[0], &b, &d);
    if (st != ST_OK) diag_print(&d, stderr);
    assert_int_equal(st, ST_OK);
    assert_int_equal(a.numel, b.numel);
    assert_memory_equal(a.data, b.data, (size_t)a.numel * 4);
    htensor_free(&a), htensor_free(&b);
    exec_close(&x);
    be->ops->destroy(be);
    runner_close(&r);
    model_free(&m);
    diag_free(&d);
}

/* A watched output (a decode step's logits) comes back through the recording's own copy: the
 * same bytes as a staged read of an unwatched twin, fresh after each run, an input change
 * included; watching after the first recording is refused. */
static void test_watched_output_reads_back(void **state)
{
    (void)state;
    Options o;
    Model m;
    load("tests/models/qwen2_tiny/decode.json", false, &o, &m);
    DiagList d = {0};
    Runner w, u;
    assert_int_equal(runner_open(&w, &o, &m, false, &d), ST_OK);
    assert_int_equal(runner_open(&u, &o, &m, false, &d), ST_OK);
    const Plan *p = w.pipe.plan;
    int logits = p->outputs[0];
    assert_non_null(w.be->ops->watch);
    assert_int_equal(w.be->ops->watch(w.be, logits, &d), ST_OK);
    int ids = plan_find_tensor(p, "input_ids");
    assert_true(ids >= 0);
    HTensor *tok = (HTensor *)w.x.vals[ids]; /* the bound value, changed between runs */
    assert_true(u.x.vals[plan_find_tensor(u.pipe.plan, "input_ids")] == tok);
    for (int run = 0; run < 2; run++) {
        ((int64_t *)tok->data)[0] = 17 + 40 * run;
        HTensor a = {0}, b = {0};
        assert_int_equal(exec_run(&w.x, false, &d), ST_OK);
        assert_int_equal(exec_run(&u.x, false, &d), ST_OK);
        assert_true(vk_backend_read_is_copied(w.be, logits)); /* the read below is the copy's */
        assert_false(vk_backend_read_is_copied(u.be, u.pipe.plan->outputs[0]));
        assert_int_equal(exec_read(&w.x, logits, &a, &d), ST_OK);
        assert_int_equal(exec_read(&u.x, u.pipe.plan->outputs[0], &b, &d), ST_OK);
        assert_int_equal(a.numel, b.numel);
        assert_memory_equal(a.data, b.data, (size_t)a.numel * 4);
        htensor_free(&a), htensor_free(&b);
    }
    DiagList late = {0};
    assert_int_not_equal(w.be->ops->watch(w.be, p->outputs[p->noutputs - 1], &late), ST_OK);
    diag_free(&late);
    runner_close(&w);
    runner_close(&u);
    model_free(&m);
    diag_free(&d);
}

/* pack-inputs: resnet18's input in bf16 is uploaded in its host form (the dense path:
 * hostxf_is_raw, one copy of the f32 bytes) and the pack kernel alone, run by itself, leaves the
 * input's bytes as the host gave them and its device form equal, bit for bit, to what the host's
 * packing gives (bf16, round to nearest even). In f16 the host converts as it uploads (no pack
 * kernel): the device's bytes are f32_to_f16 of each element. */
static void test_packed_input_upload(void **state)
{
    (void)state;
    Options o;
    Model m;
    load("tests/models/resnet18/model.json", true, &o, &m);
    o.dtype = "bf16";
    DiagList d = {0};
    Runner r;
    Status st = runner_open(&r, &o, &m, false, &d);
    if (st != ST_OK) diag_print(&d, stderr);
    assert_int_equal(st, ST_OK);
    const Plan *p = r.pipe.plan;
    int x = plan_find_tensor(p, "x"), xd = plan_find_tensor(p, "x@device");
    assert_true(x >= 0 && xd >= 0 && r.x.vals[x]);
    const HTensor *v = r.x.vals[x];
    int64_t nonzero = 0;
    for (int64_t i = 0; i < v->numel; i++)
        nonzero += ((const float *)v->data)[i] != 0;
    assert_true(nonzero > v->numel / 2); /* random, not zeros */
    assert_true(hostxf_is_raw(&p->tensors[x], v));
    assert_false(hostxf_is_raw(&p->tensors[xd], v));
    assert_string_equal(p->kernels[0].shader, "pack");
    assert_int_equal(r.be->ops->set_input(r.be, x, v, &d), ST_OK);
    assert_int_equal(r.be->ops->run(r.be, 0, 1, false, &d), ST_OK);
    HTensor hx = {0}, hd = {0};
    assert_int_equal(r.be->ops->read(r.be, x, &hx, &d), ST_OK);
    assert_int_equal(r.be->ops->read(r.be, xd, &hd, &d), ST_OK);
    assert_int_equal(hx.numel, v->numel);
    assert_memory_equal(hx.data, v->data, (size_t)v->numel * 4);
    const float *a = v->data, *b = hd.data;
    int64_t bad = 0;
    for (int64_t i = 0; i < v->numel; i++)
        bad += b[i] != bf16_to_f32(f32_to_bf16(a[i]));
    assert_int_equal(bad, 0);
    htensor_free(&hx);
    htensor_free(&hd);
    runner_close(&r);

    /* f16: no pack kernel; the first conv reads x, which holds the host's conversion */
    o.dtype = "fp16";
    st = runner_open(&r, &o, &m, false, &d);
    if (st != ST_OK) diag_print(&d, stderr);
    assert_int_equal(st, ST_OK);
    p = r.pipe.plan;
    x = plan_find_tensor(p, "x");
    assert_int_equal(plan_find_tensor(p, "x@device"), -1);
    assert_int_equal(p->tensors[x].storage, DT_F16);
    assert_int_not_equal(strcmp(p->kernels[0].shader, "pack"), 0);
    assert_int_equal(r.be->ops->set_input(r.be, x, v, &d), ST_OK);
    assert_int_equal(r.be->ops->read(r.be, x, &hd, &d), ST_OK);
    b = hd.data;
    bad = 0;
    for (int64_t i = 0; i < v->numel; i++)
        bad += b[i] != f16_to_f32(f32_to_f16(a[i]));
    assert_int_equal(bad, 0);
    htensor_free(&hd);
    runner_close(&r);
    model_free(&m);
    diag_free(&d);
}

TU_MAIN(test_timed_equals_untimed_qwen, test_timed_equals_untimed_convnet,
        test_warm_up_during_prepare, test_recorder_barriers_are_levels,
        test_watched_output_reads_back, test_packed_input_upload)
