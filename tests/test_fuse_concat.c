/* linear_concat and linear_glu on hand-made graphs: what fuses (linears on one input, weights
 * of one K and dtype, all with a bias or none, the same activation or none; silu(gate) * up of
 * more than 4 rows), what does not and why (the near misses), the graph it leaves (a combined
 * output, the parts as views at their columns, concatenation recipes; interleaved ones), the
 * plan (one matmul over the recipe's weight; switched off: the linears as they were, and
 * linear_glu's silu_mul) and the CPU backend running it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/ir_json.h"
#include "compiler/pass.h"
#include "compiler/plan.h"
#include "tests/concat_graph.h"
#include "runtime/backend.h"
#include "runtime/bind.h"
#include "runtime/compare.h"
#include "runtime/cpu/cpu_ref.h"
#include "runtime/exec.h"
#include "tests/testutil.h"

static Pipeline compile_spec(const ConcatSpec *s, const char *no_fuse);

/* The parts are views from the fuse pass on: switching the views pass off keeps them. */
static void test_parts_without_views_pass(void **state)
{
    (void)state;
    ConcatSpec s = {.rows = 1, .k = 64, .n = 2, .cols = {64, 32}};
    char *json = concat_graph_json(&s);
    CompileOptions o;
    compile_defaults(&o);
    o.disable[o.n_disable++] = "views";
    Pipeline p = tu_compile_json(json, &o);
    const GTensor *y1 = &p.g->tensors[graph_find_tensor(p.g, "y1")];
    assert_int_equal(y1->alias_of, p.g->fusions[0].out);
    assert_int_equal(y1->view_off, 64);
    assert_int_equal(p.plan->nkernels, 3);
    pipeline_free(&p);
    free(json);
}

/* Compiles json (freed) with up to two --no-fuse rules (NULL: none). */
static Pipeline compile_text(char *json, const char *no_fuse, const char *no_fuse2)
{
    assert_non_null(json);
    CompileOptions o;
    compile_defaults(&o);
    if (no_fuse) o.no_fuse[o.n_no_fuse++] = no_fuse;
    if (no_fuse2) o.no_fuse[o.n_no_fuse++] = no_fuse2;
    Pipeline p = tu_compile_json(json, &o);
    free(json);
    return p;
}

static Pipeline compile_spec(const ConcatSpec *s, const char *no_fuse)
{
    return compile_text(concat_graph_json(s), no_fuse, NULL);
}

static int count(const Graph *g, const char *pattern)
{
    int n = 0;
    for (int i = 0; i < g->nfusions; i++)
        n += strcmp(g->fusions[i].pattern, pattern) == 0;
    return n;
}

/* The reason of the first near miss of `pattern`, or NULL. */
static const char *miss_of(const Graph *g, const char *pattern)
{
    for (int i = 0; i < g->nmisses; i++)
        if (strcmp(g->misses[i].pattern, pattern) == 0) return g->misses[i].reason;
    return NULL;
}

static const char *miss(const Graph *g)
{
    return miss_of(g, "linear_concat");
}

static ConcatSpec qkv(void)
{
    return (ConcatSpec){
        .rows = 1, .k = 64, .n = 3, .cols = {64, 32, 32}, .bias = {true, true, true}};
}

static void test_qkv_fuses(void **state)
{
    (void)state;
    ConcatSpec s = qkv();
    Pipeline p = compile_spec(&s, NULL);
    const Graph *g = p.g;
    assert_int_equal(count(g, "linear_concat"), 1);
    const Fusion *f = &g->fusions[0];
    assert_int_equal(f->nnodes, 3);
    assert_int_equal(f->anchor, f->nodes[0]); /* runs where the first linear was */
    const GTensor *y = &g->tensors[f->out];
    assert_string_equal(y->name, "y0|y1|y2");
    assert_int_equal(y->shape[2], 128);
    assert_true(y->offset >= 0);
    /* the parts view it at their first column */
    static const char *parts[] = {"y0", "y1", "y2"};
    static const int64_t at[] = {0, 64, 96};
    for (int i = 0; i < 3; i++) {
        const GTensor *t = &g->tensors[graph_find_tensor(g, parts[i])];
        assert_int_equal(t->alias_of, f->out);
        assert_int_equal(t->view_off, at[i]);
    }
    /* two recipes: weight [128, 64] and bias [128], parts in order */
    assert_int_equal(g->nrecipes, 2);
    for (int r = 0; r < 2; r++) {
        const Recipe *rc = &g->recipes[r];
        assert_int_equal(rc->kind, RECIPE_CONCAT);
        assert_int_equal(rc->nsrc, 3);
        assert_int_equal(g->tensors[rc->out_w].shape[0], 128);
        assert_int_equal(rc->src[1], graph_find_tensor(g, r ? "p_b1" : "p_w1"));
    }
    assert_int_equal(g->tensors[g->recipes[0].out_w].shape[1], 64);
    /* the plan: one matmul {x, weight, bias} -> combined, then the three negs */
    const Plan *pl = p.plan;
    assert_int_equal(pl->nkernels, 4);
    const PlanKernel *k = &pl->kernels[0];
    assert_string_equal(k->shader, "gemv"); /* K 64: the 16-byte-load GEMV */
    assert_int_equal(k->nin, 3);
    assert_string_equal(pl->tensors[k->args[0]].name, "x");
    assert_string_equal(pl->tensors[k->args[1]].name, g->tensors[g->recipes[0].out_w].name);
    assert_string_equal(pl->tensors[k->args[3]].name, "y0|y1|y2");
    assert_int_equal(k->push[1], 128); /* N */
    /* the separate weights stay on the host, the concatenated ones go to the device */
    int w1 = -1;
    for (int t = 0; t < pl->ntensors; t++)
        if (strcmp(pl->tensors[t].name, "p_w1") == 0) w1 = t;
    assert_true(w1 >= 0);
    assert_false(plan_on_device(pl, w1));
    assert_true(plan_on_device(pl, k->args[1]));
    pipeline_free(&p);

    /* switched off (by pattern or id): the linears run as they were, no recipe, no views */
    for (int v = 0; v < 2; v++) {
        p = compile_spec(&s, v ? "F1" : "linear_concat");
        assert_int_equal(count(p.g, "linear_concat"), 1);
        assert_false(p.g->fusions[0].enabled);
        assert_int_equal(p.g->nrecipes, 0);
        assert_int_equal(p.plan->nkernels, 6);
        assert_int_equal(p.g->tensors[graph_find_tensor(p.g, "y1")].alias_of, -1);
        pipeline_free(&p);
    }
}

/* gate|up: no bias (stem gemv_nb), an activation after each joins its part */
static void test_no_bias_and_activations(void **state)
{
    (void)state;
    ConcatSpec s = {.rows = 1,
                    .k = 48,
                    .n = 2,
                    .cols = {64, 40},
                    .act = {"aten.relu.default", "aten.relu.default"}};
    Pipeline p = compile_spec(&s, NULL);
    assert_int_equal(count(p.g, "linear_concat"), 1);
    assert_int_equal(p.g->fusions[0].nnodes, 4);
    assert_int_equal(p.g->nrecipes, 1);
    const GTensor *a1 = &p.g->tensors[graph_find_tensor(p.g, "a1")];
    assert_int_equal(a1->alias_of, p.g->fusions[0].out);
    assert_int_equal(a1->view_off, 64);
    assert_string_equal(p.plan->kernels[0].shader, "gemv_nb");
    assert_int_equal(p.plan->nkernels, 3);
    pipeline_free(&p);
}

/* Near misses: each says why, and nothing fuses. */
static void test_near_misses(void **state)
{
    (void)state;
    static const struct {
        const char *what, *why;
    } want[] = {
        {"one with a bias, one without", "bias"},
        {"different activations", "activations"},
        {"one row per token", "more than one row"},
        {"a part output is a graph output", "graph output"},
        {"unaligned first part", "multiple of 32"},
    };
    for (int c = 0; c < 5; c++) {
        ConcatSpec s = qkv();
        s.n = 2;
        if (c == 0) s.bias[1] = false;
        if (c == 1) s.act[0] = "aten.relu.default";
        if (c == 2) s.rows = 3;
        if (c == 3) s.part_is_output = true;
        if (c == 4) s.cols[0] = 40;
        Pipeline p = compile_spec(&s, NULL);
        assert_int_equal(count(p.g, "linear_concat"), 0);
        const char *why = miss(p.g);
        if (!why || !strstr(why, want[c].why))
            fail_msg("%s: near miss '%s', expected '%s'", want[c].what, why ? why : "(none)",
                     want[c].why);
        pipeline_free(&p);
    }
    /* different inputs (and a different K): not siblings at all, no near miss */
    ConcatSpec s = qkv();
    s.n = 2;
    s.input[1] = 1;
    s.k2 = 80;
    Pipeline p = compile_spec(&s, NULL);
    assert_int_equal(count(p.g, "linear_concat"), 0);
    assert_null(miss(p.g));
    pipeline_free(&p);
    /* an unaligned part fuses when it comes last */
    s = qkv();
    s.cols[2] = 33;
    p = compile_spec(&s, NULL);
    assert_int_equal(count(p.g, "linear_concat"), 1);
    assert_int_equal(p.g->tensors[p.g->fusions[0].out].shape[2], 129);
    pipeline_free(&p);
    /* the odd one out: q and v fuse, k (no bias) stays and says why */
    s = qkv();
    s.bias[1] = false;
    p = compile_spec(&s, NULL);
    assert_int_equal(count(p.g, "linear_concat"), 1);
    assert_int_equal(p.g->fusions[0].nnodes, 2);
    assert_non_null(miss(p.g));
    assert_non_null(strstr(miss(p.g), "bias"));
    pipeline_free(&p);
}

/* A graph's CPU reference next to its fused plan run by the CPU backend: fixture_open imports
 * `json` (taking it) with random weights (seed 3) and inputs (seed 4) and runs the reference,
 * keeping every tensor; fused_open compiles it (with --break F1 when broken), applies the
 * recipes to the binding, runs the plan on the CPU backend; fused_err is output i's rel_l2. */
typedef struct CpuFixture {
    char *json;
    Graph *g0;
    Binding b;
    RefRun r;
    DiagList d;
    Pipeline pipe;
    Backend *be;
    Exec x;
} CpuFixture;

static void fixture_open(CpuFixture *f, char *json)
{
    memset(f, 0, sizeof *f);
    assert_non_null(json);
    f->json = json;
    assert_int_equal(ir_read_buffer("t.json", json, strlen(json), &f->g0, &f->d), ST_OK);
    assert_int_equal(bind_init(f->g0, &f->b), ST_OK);
    assert_int_equal(bind_weights_random(f->g0, 3, &f->b), ST_OK);
    assert_int_equal(bind_inputs_random(f->g0, 4, &f->b), ST_OK);
    RefOptions ro = {.keep_all = true};
    assert_int_equal(ref_run(f->g0, f->b.vals, &ro, &f->r, &f->d), ST_OK);
}

static void fused_open(CpuFixture *f, bool broken)
{
    Graph *g1 = NULL;
    assert_int_equal(ir_read_buffer("t.json", f->json, strlen(f->json), &g1, &f->d), ST_OK);
    CompileOptions o;
    compile_defaults(&o);
    if (broken) o.break_id = "F1";
    assert_int_equal(pipeline_run_graph(g1, &o, &f->pipe, &f->d), ST_OK);
    assert_int_equal(bind_apply_recipes(f->pipe.g, &f->b, &f->d), ST_OK);
    assert_int_equal(cpu_backend_create(f->pipe.g, &f->be), ST_OK);
    assert_int_equal(exec_open(&f->x, f->pipe.plan, f->pipe.g, &f->b, f->be, &f->d), ST_OK);
    assert_int_equal(exec_run(&f->x, false, &f->d), ST_OK);
}

static double fused_err(CpuFixture *f, int i)
{
    HTensor got = {0};
    assert_int_equal(exec_read(&f->x, f->pipe.plan->outputs[i], &got, &f->d), ST_OK);
    CmpStats st;
    assert_true(cmp_tensors(&got, &f->r.vals[f->g0->outputs[i]], &st));
    htensor_free(&got);
    return st.rel_l2;
}

static void fused_close(CpuFixture *f)
{
    exec_close(&f->x);
    f->be->ops->destroy(f->be);
    pipeline_free(&f->pipe);
}

static void fixture_close(CpuFixture *f)
{
    ref_free(&f->r);
    bind_free(&f->b);
    graph_free(f->g0);
    free(f->json);
    diag_free(&f->d);
}

/* The CPU backend runs the member linears and still reads the combined output (profile and
 * bisect compare it) and the parts through it, with --break corrupting what the parts' readers
 * see; the outputs match the CPU reference of the imported graph. */
static void test_cpu_backend(void **state)
{
    (void)state;
    ConcatSpec s = qkv();
    CpuFixture f;
    fixture_open(&f, concat_graph_json(&s));
    for (int broken = 0; broken < 2; broken++) {
        fused_open(&f, broken);
        const Plan *p = f.pipe.plan;
        for (int i = 0; i < p->noutputs; i++) {
            double e = fused_err(&f, i);
            if (broken)
                assert_true(e > 1e-2);
            else
                assert_true(e < 1e-6);
        }
        /* the combined output is the three parts side by side */
        HTensor y = {0};
        assert_int_equal(exec_read(&f.x, p->kernels[0].args[3], &y, &f.d), ST_OK);
        assert_int_equal(y.numel, 128);
        const HTensor *y2 = &f.r.vals[graph_find_tensor(f.g0, "y2")];
        if (!broken) assert_memory_equal((float *)y.data + 96, y2->data, 32 * sizeof(float));
        htensor_free(&y);
        fused_close(&f);
    }
    fixture_close(&f);
}

/* The NPU kernels' stems of plan p, space-separated. */
static void stems(const Plan *p, char *buf, size_t n)
{
    buf[0] = 0;
    for (int k = 0; k < p->nkernels; k++)
        if (p->kernels[k].target == KT_NPU)
            snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", buf[0] ? " " : "",
                     p->kernels[k].shader);
}

/* linear_glu: silu(gate) * up of more than 4 rows as one matmul over the weights interleaved in
 * runs of 16 rows (recipes with block 16), whichever node and operand order, with biases or
 * none; the plan is that one kernel (no silu_mul, no second matmul), reading x and the recipe's
 * weight; the separate weights stay on the host. */
static void test_glu_fuses(void **state)
{
    (void)state;
    for (int v = 0; v < 4; v++) {
        GluSpec s = {.rows = 8,
                     .k = 64,
                     .f = 48,
                     .bias = v & 1,
                     .bias_up = v & 1,
                     .up_first = v & 2,
                     .up_node_first = v == 1 || v == 2};
        Pipeline p = compile_text(glu_graph_json(&s), NULL, NULL);
        const Graph *g = p.g;
        assert_int_equal(count(g, "linear_glu"), 1);
        const Fusion *f = &g->fusions[0];
        assert_int_equal(f->nnodes, 4);
        assert_string_equal(g->nodes[f->anchor].name, "mul");
        assert_int_equal(f->out, graph_find_tensor(g, "h"));
        assert_int_equal(f->nkin, s.bias ? 3 : 2);
        assert_int_equal(f->kin[0], graph_find_tensor(g, "x"));
        assert_int_equal(g->nrecipes, s.bias ? 2 : 1);
        for (int r = 0; r < g->nrecipes; r++) {
            const Recipe *rc = &g->recipes[r];
            assert_int_equal(rc->kind, RECIPE_CONCAT);
            assert_int_equal(rc->block, 16);
            assert_int_equal(rc->nsrc, 2);
            assert_int_equal(rc->src[0], graph_find_tensor(g, r ? "p_bg" : "p_wg"));
            assert_int_equal(rc->src[1], graph_find_tensor(g, r ? "p_bu" : "p_wu"));
            assert_int_equal(g->tensors[rc->out_w].shape[0], 96);
            assert_int_equal(rc->out_w, f->kin[1 + r]);
        }
        const Plan *pl = p.plan;
        char st[256];
        stems(pl, st, sizeof st);
        assert_string_equal(st, s.bias ? "matmul_glu" : "matmul_glu_nb");
        const PlanKernel *k = &pl->kernels[0];
        assert_string_equal(pl->tensors[k->args[0]].name, "x");
        assert_string_equal(pl->tensors[k->args[1]].name, g->tensors[f->kin[1]].name);
        assert_string_equal(pl->tensors[k->args[k->nargs - 1]].name, "h");
        assert_int_equal(k->push[0], 8);  /* M */
        assert_int_equal(k->push[1], 96); /* N: both weights */
        assert_int_equal(k->push[2], 64); /* K */
        for (int t = 0; t < pl->ntensors; t++) {
            const char *nm = pl->tensors[t].name;
            if (strcmp(nm, "p_wg") == 0 || strcmp(nm, "p_wu") == 0)
                assert_false(plan_on_device(pl, t));
        }
        assert_true(plan_on_device(pl, k->args[1]));
        pipeline_free(&p);
    }
}

/* Switched off by its name, linear_glu falls back to silu_mul (same id): the kernels of the
 * plan without it, two matmuls and silu_mul, no recipe; `+F1` switches it back on. Switched off
 * by id, or by its fallback's name (`--no-fuse silu_mul`), the whole instance is off (as
 * rope_cache's). */
static void test_glu_off(void **state)
{
    (void)state;
    GluSpec s = {.rows = 8, .k = 64, .f = 48, .bias = true, .bias_up = true};
    char st[256];
    Pipeline p = compile_text(glu_graph_json(&s), "linear_glu", NULL);
    const Fusion *f = &p.g->fusions[0];
    assert_int_equal(p.g->nfusions, 1);
    assert_string_equal(f->id, "F1");
    assert_string_equal(f->pattern, "silu_mul");
    assert_string_equal(f->fell_back_from, "linear_glu");
    assert_true(f->enabled);
    assert_int_equal(f->nnodes, 2);
    assert_int_equal(p.g->nrecipes, 0);
    stems(p.plan, st, sizeof st);
    assert_string_equal(st, "matmul matmul silu_mul");
    pipeline_free(&p);
    p = compile_text(glu_graph_json(&s), "linear_glu", "+F1");
    assert_int_equal(count(p.g, "linear_glu"), 1);
    stems(p.plan, st, sizeof st);
    assert_string_equal(st, "matmul_glu");
    pipeline_free(&p);
    static const char *off[] = {"F1", "silu_mul"};
    for (int i = 0; i < 2; i++) {
        p = compile_text(glu_graph_json(&s), off[i], NULL);
        assert_string_equal(p.g->fusions[0].pattern, "linear_glu");
        assert_false(p.g->fusions[0].enabled);
        assert_int_equal(p.g->nrecipes, 0);
        stems(p.plan, st, sizeof st);
        assert_null(strstr(st, "glu"));
        assert_null(strstr(st, "silu_mul"));
        pipeline_free(&p);
    }
}

/* Near misses of linear_glu: each says why, and silu_mul fuses as before; decode-like one row
 * leaves gate|up to linear_concat. */
static void test_glu_near_misses(void **state)
{
    (void)state;
    static const struct {
        const char *what, *why;
    } want[] = {
        {"4 rows", "at most 4 rows"},
        {"F not a multiple of 16", "multiple of 16"},
        {"a bias on the gate only", "bias"},
        {"up reads another input", "different inputs"},
    };
    for (int c = 0; c < 4; c++) {
        GluSpec s = {.rows = c == 0 ? 4 : 9,
                     .k = 32,
                     .f = c == 1 ? 40 : 48,
                     .bias = c == 2,
                     .up_reads_x2 = c == 3,
                     .up_node_first = c == 3};
        Pipeline p = compile_text(glu_graph_json(&s), NULL, NULL);
        assert_int_equal(count(p.g, "linear_glu"), 0);
        assert_int_equal(count(p.g, "silu_mul"), 1);
        const char *why = miss_of(p.g, "linear_glu");
        if (!why || !strstr(why, want[c].why))
            fail_msg("%s: near miss '%s', expected '%s'", want[c].what, why ? why : "(none)",
                     want[c].why);
        pipeline_free(&p);
    }
    /* one row (decode): gate|up as linear_concat, the silu_mul instance as it was */
    GluSpec s = {.rows = 1, .k = 64, .f = 64};
    Pipeline p = compile_text(glu_graph_json(&s), NULL, NULL);
    assert_int_equal(count(p.g, "linear_glu"), 0);
    assert_int_equal(count(p.g, "linear_concat"), 1);
    pipeline_free(&p);
    /* the product read by another node: still fuses (its output leaves the instance) */
    s = (GluSpec){.rows = 8, .k = 64, .f = 48, .neg = true};
    p = compile_text(glu_graph_json(&s), NULL, NULL);
    assert_int_equal(count(p.g, "linear_glu"), 1);
    pipeline_free(&p);
}

/* The recipe interleaves runs of 16 rows (bind_apply_recipes), and the CPU backend running the
 * fused plan (its member nodes) agrees with the reference exactly; --break corrupts it. */
static void test_glu_recipe_and_cpu_backend(void **state)
{
    (void)state;
    GluSpec s = {.rows = 7, .k = 24, .f = 48, .bias = true, .bias_up = true, .neg = true};
    CpuFixture f;
    fixture_open(&f, glu_graph_json(&s));
    for (int broken = 0; broken < 2; broken++) {
        fused_open(&f, broken);
        for (int rc = 0; rc < 2 && !broken; rc++) {
            const Recipe *re = &f.pipe.g->recipes[rc];
            const float *w = f.b.vals[re->out_w].data, *wg = f.b.vals[re->src[0]].data,
                        *wu = f.b.vals[re->src[1]].data;
            int64_t inner = rc ? 1 : s.k;
            for (int64_t row = 0; row < 2 * s.f; row++) {
                int64_t j = row / 32, q = row % 32;
                const float *src =
                    q < 16 ? wg + (16 * j + q) * inner : wu + (16 * j + q - 16) * inner;
                assert_memory_equal(w + row * inner, src, sizeof(float) * (size_t)inner);
            }
        }
        double e = fused_err(&f, 0);
        if (broken)
            assert_true(e > 1e-2);
        else
            assert_true(e == 0.0);
        fused_close(&f);
    }
    fixture_close(&f);
}

TU_MAIN(test_qkv_fuses, test_no_bias_and_activations, test_near_misses, test_cpu_backend,
        test_parts_without_views_pass, test_glu_fuses, test_glu_off, test_glu_near_misses,
        test_glu_recipe_and_cpu_backend)
