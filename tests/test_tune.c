/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * The tuner (app/tune.h) and its cache (compiler/tune_cache.h): the cache file written and read
 * back, bad files and lines ignored with a warning naming them, bench-only knobs refused
 * everywhere (never searched, never cached, never applied from a cache); a plan compiled with a
 * cache entry gives that kernel the entry's knobs (its grid changes, the plan records them, the
 * .npubin keeps the record); a kernel timed alone refuses knobs that change its results; the
 * search on lavapipe (times are never asserted: lavapipe shares its cores). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/fileio.h"
#include "compiler/ir_json.h"
#include "compiler/lower/lower.h"
#include "compiler/npubin.h"
#include "compiler/tune_cache.h"
#include "app/model.h"
#include "app/report.h"
#include "app/runner.h"
#include "app/tune.h"
#include "app/tune_bench.h"
#include "tests/testutil.h"

#define MLP "tests/models/mlp/model.json"            /* three gemv kernels */
#define DECODE "tests/models/qwen2_tiny/decode.json" /* gemv and attention_cache */

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static Tuning knobs(const char *list)
{
    Tuning t = {0};
    DiagList d = {0};
    assert_int_equal(tuning_parse_list(&t, list, &d), ST_OK);
    diag_free(&d);
    return t;
}

/* Does some diagnostic of d contain s? */
static bool said(const DiagList *d, const char *s)
{
    for (int i = 0; i < d->count; i++)
        if (strstr(d->items[i].msg, s)) return true;
    return false;
}

/* Entries put, written, read back equal; replaced in place; dropped; a bench-only knob refused. */
static void test_cache_round_trip(void **state)
{
    (void)state;
    TuneCache c = {0};
    DiagList d = {0};
    Tuning a = knobs("gemv.wg=64 gemv.r=2"), b = knobs("conv.target=64");
    assert_int_equal(tune_cache_put(&c, "dev A [1:2] drv", "matmul:linear k1", &a, 10.5, 7.25, &d),
                     ST_OK);
    assert_int_equal(tune_cache_put(&c, "dev B [3:4] drv", "conv2d:conv k2", &b, -1, -1, &d),
                     ST_OK);
    assert_int_equal(tune_cache_put(&c, "dev A [1:2] drv", "conv2d:conv k2", &b, 3, 2, &d), ST_OK);
    Tuning a2 = knobs("gemv.wg=128");
    assert_int_equal(tune_cache_put(&c, "dev A [1:2] drv", "matmul:linear k1", &a2, 9, 8, &d),
                     ST_OK); /* replaced, not added */
    assert_int_equal(c.n, 3);
    Tuning bad = knobs("attn.ablate=2");
    assert_int_equal(tune_cache_put(&c, "dev A", "k", &bad, 1, 1, &d), ST_BAD_INPUT);
    assert_true(said(&d, "bench-only"));
    assert_int_equal(tune_cache_put(&c, "dev\tA", "k", &a, 1, 1, &d), ST_BAD_INPUT);
    assert_int_equal(c.n, 3);
    diag_clear(&d);
    assert_int_equal(tune_cache_write(&c, tu_tmp_path("c.tsv"), &d), ST_OK);

    TuneCache r = {0};
    bool foreign = true;
    assert_int_equal(tune_cache_read(&r, tu_tmp_path("c.tsv"), &foreign, &d), ST_OK);
    assert_false(foreign);
    assert_int_equal(d.count, 0);
    assert_int_equal(r.n, 3);
    const TuneEntry *e = tune_cache_find(&r, "dev A [1:2] drv", "matmul:linear k1");
    assert_non_null(e);
    assert_int_equal(tuning_get(&e->knobs, TUNE_GEMV_WG), 128);
    assert_false(e->knobs.set >> TUNE_GEMV_R & 1u);
    assert_true(e->default_us == 9 && e->tuned_us == 8);
    e = tune_cache_find(&r, "dev B [3:4] drv", "conv2d:conv k2");
    assert_non_null(e);
    assert_true(e->default_us < 0 && e->tuned_us < 0); /* "-": not measured */
    assert_null(tune_cache_find(&r, "dev B [3:4] drv", "matmul:linear k1"));
    const char *dev[4];
    assert_int_equal(tune_cache_devices(&r, dev, 4), 2);
    assert_string_equal(dev[0], "dev A [1:2] drv");
    assert_int_equal(tune_cache_count(&r, "dev A [1:2] drv"), 2);
    tune_cache_drop(&r, "dev A [1:2] drv", "matmul:linear k1");
    assert_int_equal(tune_cache_count(&r, "dev A [1:2] drv"), 1);
    /* a missing file is an empty cache */
    TuneCache m = {0};
    assert_int_equal(tune_cache_read(&m, tu_tmp_path("missing.tsv"), &foreign, &d), ST_OK);
    assert_int_equal(m.n, 0);
    assert_false(foreign);
    tune_cache_free(&m);
    tune_cache_free(&r);
    tune_cache_free(&c);
    diag_free(&d);
}

/* Bad files and lines: a warning naming the file and line, the rest kept, never an error. */
static void test_cache_bad(void **state)
{
    (void)state;
    DiagList d = {0};
    TuneCache c = {0};
    bool foreign = false;
    write_file(tu_tmp_path("foreign.tsv"), "just some text\nwith lines\n");
    assert_int_equal(tune_cache_read(&c, tu_tmp_path("foreign.tsv"), &foreign, &d), ST_OK);
    assert_true(foreign);
    assert_int_equal(c.n, 0);
    assert_true(said(&d, "not an npu-explore tuning cache"));
    diag_clear(&d);
    FILE *f = fopen(tu_tmp_path("nul.tsv"), "wb"); /* binary: a NUL inside */
    fwrite(TUNE_CACHE_HEADER "\n\0\1\2", 1, sizeof TUNE_CACHE_HEADER + 3, f);
    fclose(f);
    assert_int_equal(tune_cache_read(&c, tu_tmp_path("nul.tsv"), &foreign, &d), ST_OK);
    assert_true(foreign);
    assert_int_equal(c.n, 0);
    diag_clear(&d);
    write_file(tu_tmp_path("lines.tsv"), TUNE_CACHE_HEADER "\n"
                                                           "# a comment\n"
                                                           "\n"
                                                           "dev\tkey1\tgemv.wg=64\t1.5\t1.0\n"
                                                           "dev\tkey2\tgemv.wg=64\n"
                                                           "dev\tkey3\tnope.knob=1\t1\t1\n"
                                                           "dev\tkey4\tattn.ablate=2\t1\t1\n"
                                                           "dev\tkey5\tgemv.wg=48\t1\t1\n"
                                                           "dev\tkey6\tgemv.wg=64\tfast\t1\n"
                                                           "\tkey7\tgemv.wg=64\t1\t1\n"
                                                           "dev\tkey8\tgemv.r=2\t-\t-\r\n"
                                                           "dev\tkey9\tgemv.r=2\t1\t1\textra\n");
    assert_int_equal(tune_cache_read(&c, tu_tmp_path("lines.tsv"), &foreign, &d), ST_OK);
    assert_false(foreign);
    assert_int_equal(c.n, 2); /* key1 and key8 */
    assert_non_null(tune_cache_find(&c, "dev", "key1"));
    assert_non_null(tune_cache_find(&c, "dev", "key8"));
    assert_int_equal(d.count, 7);
    assert_int_equal(d.errors, 0);
    static const char *want[] = {"line 5: 3 tab-separated fields",
                                 "line 6: ",
                                 "nope.knob",
                                 "line 7: attn.ablate is bench only",
                                 "line 8: ",
                                 "line 9: ",
                                 "line 10: an empty device",
                                 "line 12: 6 tab-separated"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!said(&d, want[i])) fail_msg("no warning with '%s'", want[i]);
    assert_non_null(strstr(d.items[0].file, "lines.tsv"));
    tune_cache_free(&c);
    diag_free(&d);
}

/* A cache entry never sets a bench-only knob, nor a knob of another kind, nor one the compile
 * sets itself (--tune wins); the search never changes a bench-only knob. */
static void test_apply_and_search_knobs(void **state)
{
    (void)state;
    TuneEntry e = {.knobs = knobs("gemv.wg=64 conv.target=8")};
    e.knobs.v[TUNE_ATTN_ABLATE] = 3; /* as a damaged cache would hold it */
    e.knobs.set |= TUNE_BIT(TUNE_ATTN_ABLATE);
    Tuning global = knobs("gemv.r=2"), out;
    char rec[128];
    tune_apply(&global, &e, KK_matmul, &out, rec, sizeof rec);
    assert_string_equal(rec, "gemv.wg=64");
    assert_int_equal(tuning_get(&out, TUNE_GEMV_WG), 64);
    assert_int_equal(tuning_get(&out, TUNE_GEMV_R), 2);
    assert_false(out.set >> TUNE_CONV_TARGET & 1u);
    tune_apply(&global, &e, KK_decode_attention, &out, rec, sizeof rec);
    assert_string_equal(rec, "");
    assert_false(out.set >> TUNE_ATTN_ABLATE & 1u);
    Tuning wg = knobs("gemv.wg=256");
    tune_apply(&wg, &e, KK_matmul, &out, rec, sizeof rec); /* the compile's own value wins */
    assert_string_equal(rec, "");
    assert_int_equal(tuning_get(&out, TUNE_GEMV_WG), 256);

    Tuning none = {0};
    for (int k = 0; k < KK_COUNT; k++) {
        TuneMask m = tune_search_knobs((KernelKind)k, &none);
        for (int i = 0; i < TUNE_COUNT; i++)
            if (m >> i & 1u) {
                assert_int_equal(tune_info[i].use, TU_SEARCH);
                assert_true(tuning_knob_shapes((TuneId)i, (KernelKind)k));
            }
    }
    assert_true(tune_search_knobs(KK_matmul, &none) >> TUNE_GEMV_R & 1u);
    assert_false(tune_search_knobs(KK_matmul, &global) >> TUNE_GEMV_R & 1u);
    assert_int_equal(tune_search_knobs(KK_binary, &none), 0);
    assert_false(tune_search_knobs(KK_decode_attention, &none) >> TUNE_ATTN_ABLATE & 1u);
    /* attention_cache is decode_attention's kernel with the cache update: its knobs */
    assert_int_equal(tune_search_knobs(KK_attention_cache, &none),
                     tune_search_knobs(KK_decode_attention, &none));
    assert_true(tune_search_knobs(KK_attention_cache, &none) >> TUNE_ATTN_SPLITS & 1u);
    /* candidates: ascending, every one a legal value */
    for (int i = 0; i < TUNE_COUNT; i++) {
        int64_t v[40];
        int n = tuning_candidates((TuneId)i, v, 40);
        assert_true(n >= 2);
        for (int j = 0; j < n; j++) {
            char a[64];
            snprintf(a, sizeof a, "%s=%lld", tune_info[i].name, (long long)v[j]);
            Tuning t = knobs(a);
            assert_int_equal(tuning_get(&t, (TuneId)i), v[j]);
            if (j) assert_true(v[j] > v[j - 1]);
        }
    }
}

static Plan *compile(const char *path, const TuneCache *c, const Tuning *global)
{
    CompileOptions o;
    compile_defaults(&o);
    o.kernel_cache = "none";
    if (global) o.tuning = *global;
    o.tuned = c;
    o.tuned_device = "dev";
    Pipeline pipe = tu_compile_graph(tu_read_ir(path), &o); /* the plan outlives it */
    Plan *p = pipe.plan;
    pipe.plan = NULL;
    pipeline_free(&pipe);
    return p;
}

/* A plan compiled with an entry for its first kernel's key: that kernel lowers with the entry's
 * knobs (its grid halves with gemv.r=2) and records them; the others do not; the .npubin keeps
 * the record, and a plan without one writes no "tuned" key. */
static void test_plan_uses_entry(void **state)
{
    (void)state;
    Plan *p0 = compile(MLP, NULL, NULL);
    assert_non_null(p0->kernels[0].tune_key);
    assert_null(p0->kernels[0].tuned);
    TuneCache c = {0};
    DiagList d = {0};
    Tuning r2 = knobs("gemv.r=2");
    assert_int_equal(tune_cache_put(&c, "dev", p0->kernels[0].tune_key, &r2, 2, 1, &d), ST_OK);
    assert_int_equal(tune_cache_put(&c, "other dev", p0->kernels[1].tune_key, &r2, 2, 1, &d),
                     ST_OK); /* another device's: not used */
    Plan *p = compile(MLP, &c, NULL);
    assert_string_equal(p->kernels[0].tuned, "gemv.r=2");
    assert_string_equal(p->kernels[0].tune_key, p0->kernels[0].tune_key);
    assert_int_equal(p->kernels[0].groups[0] * 2, p0->kernels[0].groups[0]);
    for (int k = 1; k < p->nkernels; k++) {
        assert_null(p->kernels[k].tuned);
        assert_memory_equal(p->kernels[k].groups, p0->kernels[k].groups,
                            sizeof p->kernels[k].groups);
    }
    assert_null(p->tuning); /* the plan-wide record: --tune knobs only */
    assert_int_equal(plan_equal(p0, p), 0);
    /* --tune of the same knob wins over the entry */
    Tuning g = knobs("gemv.r=1");
    Plan *pg = compile(MLP, &c, &g);
    assert_null(pg->kernels[0].tuned);
    assert_int_equal(pg->kernels[0].groups[0], p0->kernels[0].groups[0]);

    unsigned char *buf = NULL;
    size_t len = 0;
    assert_int_equal(npubin_encode(p, &buf, &len, &d), ST_OK);
    Plan *q = NULL;
    assert_int_equal(npubin_decode("t.npubin", buf, len, &q, &d), ST_OK);
    assert_int_equal(plan_equal(p, q), 1);
    assert_string_equal(q->kernels[0].tuned, "gemv.r=2");
    assert_null(q->kernels[0].tune_key); /* in memory only */
    assert_null(q->kernels[1].tuned);
    plan_free(q);
    free(buf);
    assert_int_equal(npubin_encode(p0, &buf, &len, &d), ST_OK);
    for (size_t i = 0; i + 7 <= len; i++)
        assert_false(memcmp(buf + i, "\xa5tuned", 6) == 0); /* msgpack "tuned" */
    free(buf);
    assert_int_equal(d.count, 0);
    tune_cache_free(&c);
    plan_free(pg);
    plan_free(p);
    plan_free(p0);
    diag_free(&d);
}

/* What tune_measure sets up, for a bench of one instance: the no-reuse compile with the defaults
 * and its run. */
typedef struct Base {
    Options o;
    Model m;
    RunTarget t;
    Pipeline pipe;
    CompileOptions co;
    Runner r;
} Base;

static void base_open(Base *b, const char *path)
{
    memset(b, 0, sizeof *b);
    opt_defaults(&b->o);
    b->o.model = path;
    b->o.random_weights = true;
    b->o.weights_seed = 1;
    b->o.tuned = "none";
    b->o.kernel_cache = "none";
    DiagList d = {0};
    Status st = model_load_graph(&b->m, path, &d);
    if (st == ST_OK) st = model_bind(&b->m, &b->o, &d);
    if (st == ST_OK) st = runner_target(&b->o, &b->m.b, &b->t, &d);
    if (st == ST_OK) st = runner_compile(&b->o, &b->m, &b->t, true, &b->pipe, &d);
    if (st == ST_OK) st = runner_options(&b->o, &b->t, true, &b->co, &d);
    if (st == ST_OK) st = runner_open_plan(&b->r, &b->o, &b->m, &b->pipe, &d);
    if (st == ST_OK) st = exec_run(&b->r.x, false, &d);
    if (st != ST_OK) diag_print(&d, stderr);
    assert_int_equal(st, ST_OK);
    diag_free(&d);
}

static void base_close(Base *b)
{
    runner_close(&b->r);
    pipeline_free(&b->pipe);
    model_free(&b->m);
}

/* One configuration of the bench: lowered, run; *ok its verdict against the defaults. */
static void bench_one(TuneBench *tb, const Tuning *cfg, bool *ok, char *why)
{
    DiagList d = {0};
    BenchPlan bp;
    double us = -1;
    Status st = bench_lower(tb, cfg, &bp, &d);
    if (st == ST_OK) st = bench_run(tb, &bp, &us, ok, why, 200, &d);
    if (st != ST_OK) diag_print(&d, stderr);
    assert_int_equal(st, ST_OK);
    assert_true(us >= 0);
    bench_plan_free(&bp);
    diag_free(&d);
}

/* attention_cache (the decode step's decode_attention with its ropes and cache updates) alone:
 * the defaults are the reference; a knob that only reshapes the kernel
 * matches them, a bench-only ablation (no trips over the cache) is refused with the error. */
static void test_bench_refuses_changed_results(void **state)
{
    (void)state;
    Base b;
    base_open(&b, DECODE);
    const Plan *p = b.pipe.plan;
    int k = 0;
    while (k < p->nkernels && !(p->kernels[k].tune_key &&
                                strncmp(p->kernels[k].tune_key, "attention_cache:", 16) == 0))
        k++;
    assert_true(k < p->nkernels);
    TuneBench tb;
    bench_init(&tb, b.pipe.g, &b.co, &b.r.x, b.r.be, p->kernels[k].node, p->kernels[k].tune_key, 1,
               report_tolerance(&b.o, b.r.dtype));
    bool ok = false;
    char why[200];
    bench_one(&tb, NULL, &ok, why); /* the defaults */
    assert_true(ok);
    assert_true(tb.ref.n >= 1);
    Tuning same = knobs("attn.splits=1");
    bench_one(&tb, &same, &ok, why);
    assert_true(ok);
    Tuning wrong = knobs("attn.ablate=2");
    bench_one(&tb, &wrong, &ok, why);
    assert_false(ok);
    assert_non_null(strstr(why, "differs from the defaults'"));
    bench_free(&tb);
    base_close(&b);
}

/* The search of one kernel on lavapipe: a row for it, the defaults timed, nothing but its
 * kind's TU_SEARCH knobs searched. With a bench-only knob forced into the search (as a test
 * only can) the configurations that change results are refused, never the winner. */
static void test_search(void **state)
{
    (void)state;
    Options o;
    Model m = {0};
    opt_defaults(&o);
    o.model = DECODE;
    o.random_weights = true;
    o.weights_seed = 1;
    o.tuned = tu_tmp_path("search.tsv");
    o.kernel_cache = "none";
    DiagList d = {0};
    tu_load_model(&m, DECODE, &o);
    /* the kernel: attention_cache in the plan the device runs */
    RunTarget t;
    Pipeline shown;
    assert_int_equal(runner_target(&o, &m.b, &t, &d), ST_OK);
    assert_int_equal(runner_compile(&o, &m, &t, false, &shown, &d), ST_OK);
    int k = 0;
    while (k < shown.plan->nkernels &&
           !(shown.plan->kernels[k].tune_key &&
             strncmp(shown.plan->kernels[k].tune_key, "attention_cache:", 16) == 0))
        k++;
    assert_true(k < shown.plan->nkernels);
    TuneSearch ts = {
        .kernel = k, .beam = 1, .budget_s = 60, .iters = 1, .knobs = TUNE_BIT(TUNE_ATTN_ABLATE)};
    TuneResult r = {0};
    Status st = tune_measure(&o, &m, &ts, NULL, &r, &d);
    if (st != ST_OK) diag_print(&d, stderr);
    assert_int_equal(st, ST_OK);
    assert_int_equal(r.n, 1);
    const TuneRow *w = &r.rows[0];
    assert_int_equal(w->kernel, k);
    assert_false(w->skipped);
    assert_true(w->tried >= 1 && w->default_us >= 0);
    assert_true(w->rejected >= 1);
    assert_non_null(strstr(w->note, "attn.ablate="));
    /* the winner, if any, is a configuration that was timed: one that matched the defaults */
    if (w->improved) assert_true(w->tried >= 2);
    assert_int_equal(w->tried + w->rejected + w->same + w->failed, 5); /* 0, 1, 2, 4, 8 */
    tune_result_free(&r);

    /* the default search: the kind's knobs, none of them bench-only; the cache written */
    ts.knobs = 0;
    ts.budget_s = 2;
    assert_int_equal(tune_measure(&o, &m, &ts, NULL, &r, &d), ST_OK);
    assert_int_equal(r.rows[0].knobs, tune_search_knobs(KK_attention_cache, &o.tune));
    r.rows[0].improved = true; /* as if it had won: what the store writes */
    r.rows[0].best = knobs("attn.splits=1");
    assert_int_equal(tune_store(&o, &r, &d), ST_OK);
    assert_string_equal(r.cache, o.tuned);
    assert_int_equal(r.cached, 1);
    TuneCache c = {0};
    assert_int_equal(tune_cache_read(&c, o.tuned, NULL, &d), ST_OK);
    const TuneEntry *e = tune_cache_find(&c, r.device, r.rows[0].key);
    assert_non_null(e);
    assert_int_equal(tuning_get(&e->knobs, TUNE_ATTN_SPLITS), 1);
    /* the next compile for the device takes it */
    Pipeline again;
    assert_int_equal(runner_compile(&o, &m, &t, false, &again, &d), ST_OK);
    int tk = 0;
    while (tk < again.plan->nkernels && !(again.plan->kernels[tk].tune_key &&
                                          strcmp(again.plan->kernels[tk].tune_key, e->key) == 0))
        tk++;
    assert_true(tk < again.plan->nkernels);
    assert_string_equal(again.plan->kernels[tk].tuned, "attn.splits=1");
    pipeline_free(&again);
    tune_cache_free(&c);
    tune_result_free(&r);
    pipeline_free(&shown);
    model_free(&m);
    diag_free(&d);
}

/* The search order: the most GPU time first, ties (and no times at all) in kernel order. */
static void test_search_order(void **state)
{
    (void)state;
    static const double cost[] = {5, 40, 0, 40, 12, 0};
    static const int want[] = {1, 3, 4, 0, 2, 5};
    int *o = tune_order(cost, 6);
    assert_non_null(o);
    for (int i = 0; i < 6; i++)
        assert_int_equal(o[i], want[i]);
    free(o);
    static const double none[4] = {0};
    o = tune_order(none, 4);
    assert_non_null(o);
    for (int i = 0; i < 4; i++)
        assert_int_equal(o[i], i);
    free(o);
}

int main(void)
{
    return TU_GROUP(tu_tmp_setup, tu_tmp_teardown, test_cache_round_trip, test_cache_bad,
                    test_apply_and_search_knobs, test_plan_uses_entry,
                    test_bench_refuses_changed_results, test_search, test_search_order);
}
