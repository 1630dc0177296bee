/* Models end to end on the CPU reference against the PyTorch references: the imported graph and
 * the fully compiled graph (canonicalized, BN folded, fused, padded with depad conversions)
 * with every fusion on, all off, and each one off in turn: passes preserve meaning. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "app/model.h"
#include "compiler/pass.h"
#include "runtime/compare.h"
#include "runtime/cpu/cpu_ref.h"
#include "tests/testutil.h"

static const char *models[] = {
    "tests/models/mlp/model.json",         "tests/models/convnet/model.json",
    "tests/models/resnet18/model.json",    "tests/models/qwen2_tiny/prefill.json",
    "tests/models/qwen2_tiny/decode.json",
};

/* Runs graph g on the CPU reference with m's bindings and checks every output. */
static void check_graph(const char *what, const Graph *g, Model *m)
{
    DiagList d = {0};
    assert_int_equal(bind_apply_recipes(g, &m->b, &d), ST_OK);
    RefRun r;
    RefOptions ro = {.keep_all = false};
    Status st = ref_run(g, m->b.vals, &ro, &r, &d);
    if (st != ST_OK) diag_print(&d, stderr);
    assert_int_equal(st, ST_OK);
    assert_true(m->b.nref == g->noutputs);
    for (int i = 0; i < g->noutputs; i++) {
        CmpStats s;
        assert_true(cmp_tensors(&r.vals[g->outputs[i]], &m->b.ref[i], &s));
        if (!(s.rel_l2 < 1e-4) || s.nonfinite)
            fail_msg("%s: output %s rel_l2 %g", what, g->tensors[g->outputs[i]].name, s.rel_l2);
        if (s.has_topk && s.top1_agree != s.rows) fail_msg("%s: top-1 differs", what);
    }
    ref_free(&r);
    diag_free(&d);
}

static void load(Model *m, const char *path)
{
    Options o;
    opt_defaults(&o);
    tu_load_model(m, path, &o);
}

static void test_imported_graphs_match_pytorch(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        Model m;
        load(&m, models[i]);
        check_graph(models[i], m.g, &m);
        model_free(&m);
    }
}

static void compile_and_check(Model *m, const char *path, const char *off)
{
    CompileOptions o;
    compile_defaults(&o);
    if (off) o.no_fuse[o.n_no_fuse++] = off;
    Pipeline p;
    DiagList d = {0};
    Status st = pipeline_run(path, &o, &p, &d);
    if (st != ST_OK) diag_print(&d, stderr);
    assert_int_equal(st, ST_OK);
    char what[256];
    snprintf(what, sizeof what, "%s --no-fuse %s", path, off ? off : "(none)");
    check_graph(what, p.g, m);
    pipeline_free(&p);
    diag_free(&d);
}

static void test_compiled_graphs_preserve_meaning(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        Model m;
        load(&m, models[i]);
        compile_and_check(&m, models[i], NULL);
        compile_and_check(&m, models[i], "all");
        /* each fusion instance off in turn */
        Pipeline p;
        DiagList d = {0};
        assert_int_equal(pipeline_run(models[i], NULL, &p, &d), ST_OK);
        int nf = p.g->nfusions;
        for (int f = 0; f < nf; f++)
            compile_and_check(&m, models[i], p.g->fusions[f].id);
        pipeline_free(&p);
        diag_free(&d);
        model_free(&m);
    }
}

TU_MAIN(test_imported_graphs_match_pytorch, test_compiled_graphs_preserve_meaning)
