/* fold-constants (compiler/pass_constfold.c): values computed from weights and constants only
 * become weights computed once, at load, by fold recipes run on the CPU reference
 * (bind_apply_recipes). A Swin-like weight-only chain (a relative-position bias gathered from a
 * table, a shifted-window mask filled into zeros) feeding NPU work; a chain mixing input-dependent
 * and constant parts (only the constant part folds; a view of a weight stays); constant terms
 * added to a softmax's input around reshapes summed into one folded value (fold_terms.c); the
 * proof that a folded value is computed once per load and never per run; a bad constant subgraph
 * (an index out of range) refused at load naming the node. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "compiler/ir_json.h"
#include "compiler/pass.h"
#include "compiler/plan.h"
#include "runtime/backend.h"
#include "runtime/bind.h"
#include "runtime/cpu/cpu_ref.h"
#include "runtime/exec.h"
#include "tests/testutil.h"
#include "tests/vk_check.h"

#define TI(n, s) VC_TI(n, s)
#define T(n, s) VC_T(n, s)

/* bias = unsqueeze(permute(view(table[idx]))) + slice_fill(zeros, rows 2..3 = -3); y =
 * softmax(x + bias): everything but the last two nodes is weight-only (8 nodes, 7 after
 * canonicalize drops the contiguous). */
/* clang-format off */
static const char chain_json[] =
    "{\"model_name\":\"fold_chain\",\"graph_inputs\":[" T("x", "[1,2,4,4]") "],"
    "\"graph_outputs\":[" T("y", "[1,2,4,4]") "],"
    "\"weights\":[{\"name\":\"table\",\"shape\":[8,2]},"
    "{\"name\":\"idx\",\"shape\":[16],\"dtype\":\"int64\"}],"
    "\"weight_name_mapping\":{\"p_table\":\"table\",\"b_idx\":\"idx\"},\"nodes\":["
    VC_NODE("index", "aten.index.Tensor", T("p_table", "[8,2]") "," TI("b_idx", "[16]"), T("index", "[16,2]"), "")
    "," VC_NODE("view", "aten.view.default", T("index", "[16,2]"), T("view", "[4,4,2]"), "\"size\":[4,4,2]")
    "," VC_NODE("permute", "aten.permute.default", T("view", "[4,4,2]"), T("permute", "[2,4,4]"), "\"dims\":[2,0,1]")
    "," VC_NODE("contiguous", "aten.contiguous.default", T("permute", "[2,4,4]"), T("contiguous", "[2,4,4]"), "")
    "," VC_NODE("unsqueeze", "aten.unsqueeze.default", T("contiguous", "[2,4,4]"), T("unsqueeze", "[1,2,4,4]"), "\"dim\":0")
    "," VC_NODE("zeros", "aten.zeros.default", "", T("zeros", "[4,4]"), "\"size\":[4,4]")
    "," VC_NODE("fill", "npu.slice_fill", T("zeros", "[4,4]"), T("fill", "[4,4]"), "\"dim\":0,\"start\":2,\"end\":4,\"value\":-3.0")
    "," VC_NODE("bias", "aten.add.Tensor", T("unsqueeze", "[1,2,4,4]") "," T("fill", "[4,4]"), T("bias", "[1,2,4,4]"), "")
    "," VC_NODE("add", "aten.add.Tensor", T("x", "[1,2,4,4]") "," T("bias", "[1,2,4,4]"), T("add", "[1,2,4,4]"), "")
    "," VC_NODE("softmax", "aten.softmax.int", T("add", "[1,2,4,4]"), T("y", "[1,2,4,4]"), "\"dim\":-1") "]}";

/* c = s * 2 and e = exp(s) fold; linear(x, w), the transpose of w, the expand of c and
 * everything reading x stay: o = (linear(x, w) + expand(c)) * e + x @ t(w). */
static const char mixed_json[] =
    "{\"model_name\":\"fold_mixed\",\"graph_inputs\":[" T("x", "[4,8]") "],"
    "\"graph_outputs\":[" T("o", "[4,8]") "],"
    "\"weights\":[{\"name\":\"s\",\"shape\":[8]},{\"name\":\"w\",\"shape\":[8,8]}],"
    "\"weight_name_mapping\":{\"p_s\":\"s\",\"p_w\":\"w\"},\"nodes\":["
    VC_NODE("c", "aten.mul.Tensor", T("p_s", "[8]"), T("c", "[8]"), "\"other\":2.0")
    "," VC_NODE("e", "aten.exp.default", T("p_s", "[8]"), T("e", "[8]"), "")
    "," VC_NODE("h", "aten.linear.default", T("x", "[4,8]") "," T("p_w", "[8,8]"), T("h", "[4,8]"), "")
    "," VC_NODE("cx", "aten.expand.default", T("c", "[8]"), T("cx", "[4,8]"), "\"size\":[4,8]")
    "," VC_NODE("a", "aten.add.Tensor", T("h", "[4,8]") "," T("cx", "[4,8]"), T("a", "[4,8]"), "")
    "," VC_NODE("m", "aten.mul.Tensor", T("a", "[4,8]") "," T("e", "[8]"), T("m", "[4,8]"), "")
    "," VC_NODE("wt", "aten.t.default", T("p_w", "[8,8]"), T("wt", "[8,8]"), "")
    "," VC_NODE("mm", "aten.mm.default", T("x", "[4,8]") "," T("wt", "[8,8]"), T("mm", "[4,8]"), "")
    "," VC_NODE("o", "aten.add.Tensor", T("m", "[4,8]") "," T("mm", "[4,8]"), T("o", "[4,8]"), "") "]}";

/* A constant index with 99 in it gathers from an 8-row table: refused when the weights are bound. */
static const char bad_json[] =
    "{\"model_name\":\"fold_bad\",\"graph_inputs\":[" T("x", "[3,2]") "],"
    "\"graph_outputs\":[" T("y", "[3,2]") "],"
    "\"weights\":[{\"name\":\"table\",\"shape\":[8,2]}],"
    "\"weight_name_mapping\":{\"p_table\":\"table\"},"
    "\"constants\":{\"cidx\":{\"data\":[0,1,99],\"dtype\":\"int64\"}},\"nodes\":["
    VC_NODE("gather_rows", "aten.index.Tensor", T("p_table", "[8,2]") "," TI("cidx", "[3]"), T("rows", "[3,2]"), "")
    "," VC_NODE("y", "aten.add.Tensor", T("x", "[3,2]") "," T("rows", "[3,2]"), T("y", "[3,2]"), "") "]}";
/* softmax(view(view(x + bias) + mask)): scores x [2, 2, 4, 4] (2 windows of 2 heads), the bias
 * [2, 4, 4] broadcast over the windows, the mask [1, 2, 1, 4, 4] added to x viewed as
 * [1, 2, 2, 4, 4] (fold_terms.c); MASK_IN makes the mask a graph input (not constant). */
#define TERMS_JSON(mask_in, mask_w, mask_map)                                                      \
    "{\"model_name\":\"fold_terms\",\"graph_inputs\":[" T("x", "[2,2,4,4]") mask_in "],"             \
    "\"graph_outputs\":[" T("y", "[2,2,4,4]") "],"                                                 \
    "\"weights\":[{\"name\":\"bias\",\"shape\":[2,4,4]}" mask_w "],"                              \
    "\"weight_name_mapping\":{\"p_bias\":\"bias\"" mask_map "},\"nodes\":["                         \
    VC_NODE("add1", "aten.add.Tensor", T("x", "[2,2,4,4]") "," T("p_bias", "[2,4,4]"), T("add1", "[2,2,4,4]"), "") \
    "," VC_NODE("view1", "aten.view.default", T("add1", "[2,2,4,4]"), T("view1", "[1,2,2,4,4]"), "\"size\":[1,2,2,4,4]") \
    "," VC_NODE("add2", "aten.add.Tensor", T("view1", "[1,2,2,4,4]") "," T("p_mask", "[1,2,1,4,4]"), T("add2", "[1,2,2,4,4]"), "") \
    "," VC_NODE("view2", "aten.view.default", T("add2", "[1,2,2,4,4]"), T("view2", "[2,2,4,4]"), "\"size\":[2,2,4,4]") \
    "," VC_NODE("softmax", "aten.softmax.int", T("view2", "[2,2,4,4]"), T("y", "[2,2,4,4]"), "\"dim\":-1") "]}"
static const char terms_json[] =
    TERMS_JSON("", ",{\"name\":\"mask\",\"shape\":[1,2,1,4,4]}", ",\"p_mask\":\"mask\"");
static const char terms_in_json[] = TERMS_JSON("," T("p_mask", "[1,2,1,4,4]"), "", "");
/* clang-format on */

/* json compiled with the tests' default options. */
static Pipeline compiled(const char *json)
{
    CompileOptions o;
    vc_options(&o);
    return tu_compile_json(json, &o);
}

static int fold_recipes(const Plan *p)
{
    int n = 0;
    for (int i = 0; i < p->nrecipes; i++)
        n += p->recipes[i].kind == RECIPE_FOLD;
    return n;
}

static int cpu_kernels(const Plan *p)
{
    int n = 0;
    for (int k = 0; k < p->nkernels; k++)
        n += p->kernels[k].target == KT_CPU;
    return n;
}

/* Does any kernel of p compute IR node `name`? */
static bool computed(const Plan *p, const char *name)
{
    for (int k = 0; k < p->nkernels; k++)
        for (int j = 0; j < p->kernels[k].nprov; j++)
            if (strcmp(p->kernels[k].prov[j], name) == 0) return true;
    return false;
}

static const PlanRecipe *fold_of(const Plan *p, const char *tensor)
{
    for (int i = 0; i < p->nrecipes; i++)
        if (p->recipes[i].kind == RECIPE_FOLD &&
            strcmp(p->tensors[p->recipes[i].out_w].name, tensor) == 0)
            return &p->recipes[i];
    return NULL;
}

/* The chain: one fold (bias) of its 7 weight-only nodes, no CPU kernel, the kernels reading it
 * as a weight; the pass's snapshot lists the 7 removals; switched off, the CPU prologue is back. */
static void test_chain_folds(void **state)
{
    (void)state;
    Pipeline pipe = compiled(chain_json);
    const Plan *p = pipe.plan;
    assert_int_equal(fold_recipes(p), 1);
    const PlanRecipe *r = fold_of(p, "bias");
    assert_non_null(r);
    static const char *const nodes[] = {"index", "view", "permute", "unsqueeze",
                                        "zeros", "fill", "bias"};
    /* contiguous is an identity canonicalize removed */
    assert_int_equal(r->nnodes, 7);
    for (int k = 0; k < 7; k++)
        assert_string_equal(r->nodes[k], nodes[k]);
    assert_int_equal(p->tensors[r->out_w].kind, PT_WEIGHT);
    assert_int_equal(cpu_kernels(p), 0);
    for (int k = 0; k < 7; k++)
        assert_false(computed(p, nodes[k]));
    assert_true(computed(p, "add") && computed(p, "softmax"));
    int fc = pass_find("fold-constants");
    assert_true(fc > 0 && fc < pipe.nsnaps);
    assert_int_equal(pipe.snaps[fc].removed, 7);
    pipeline_free(&pipe);
    CompileOptions o;
    vc_options(&o);
    o.disable[o.n_disable++] = "fold-constants";
    pipe = tu_compile_json(chain_json, &o);
    assert_int_equal(fold_recipes(pipe.plan), 0);
    assert_true(cpu_kernels(pipe.plan) > 0);
    assert_true(computed(pipe.plan, "index") && computed(pipe.plan, "fill"));
    pipeline_free(&pipe);
}

/* On Vulkan, the folded plan matches the CPU reference of the graph as imported (which computes
 * the chain itself), in each storage dtype, over two runs on different inputs. */
static void test_chain_matches_reference(void **state)
{
    (void)state;
    vc_set_runs(2);
    vc_check_json(chain_json, "fp16", VC_TOL_F16, NULL);
    vc_check_json(chain_json, "fp32", VC_TOL_F32, NULL);
    vc_check_json(mixed_json, "fp16", VC_TOL_F16, NULL);
    vc_check_json(mixed_json, "bf16", VC_TOL_BF16, NULL);
    vc_set_runs(1);
}

/* Only the constant part folds: s * 2 and exp(s), each its own one-node fold; the linear, the
 * transpose of w (a view of a weight), the expand of s * 2 and every node reading x stay in the
 * graph. */
static void test_mixed_folds_constant_part(void **state)
{
    (void)state;
    Pipeline pipe = compiled(mixed_json);
    const Plan *p = pipe.plan;
    assert_int_equal(fold_recipes(p), 2);
    const PlanRecipe *c = fold_of(p, "c"), *e = fold_of(p, "e");
    assert_true(c && e && c->nnodes == 1 && e->nnodes == 1);
    assert_string_equal(c->nodes[0], "c");
    assert_string_equal(e->nodes[0], "e");
    assert_false(computed(p, "c") || computed(p, "e"));
    assert_true(computed(p, "h") && computed(p, "mm") && computed(p, "o"));
    const Graph *g = pipe.g;
    int wt = graph_find_node(g, "wt"), cx = graph_find_node(g, "cx");
    assert_true(wt >= 0 && !g->nodes[wt].dead);
    assert_true(cx >= 0 && !g->nodes[cx].dead); /* the broadcast is read, not materialised */
    assert_int_equal(g->tensors[g->nodes[cx].in[0]].kind, TK_WEIGHT);
    assert_null(fold_of(p, "cx"));
    assert_int_equal(g->tensors[graph_find_tensor(g, "p_w")].kind, TK_WEIGHT);
    assert_null(fold_of(p, "wt"));
    pipeline_free(&pipe);
}

static void ref_output(const Graph *g0, const Binding *b, HTensor *out)
{
    RefRun r;
    DiagList d = {0};
    assert_int_equal(ref_run(g0, b->vals, NULL, &r, &d), ST_OK);
    assert_int_equal(htensor_convert_new(out, &r.vals[g0->outputs[0]], DT_F32), ST_OK);
    ref_free(&r);
    diag_free(&d);
}

/* Computed once per load, never per run: binding runs the 7 nodes once; then the table the
 * fold read is overwritten with NaN, and two runs on different inputs still give the reference
 * outputs (computed before, from the real table) with no node run again. */
static void test_folded_once_per_load(void **state)
{
    (void)state;
    CompileOptions o;
    vc_options(&o);
    o.compute = DT_F32;
    Graph *g0 = tu_read_json(chain_json);
    Pipeline pipe = tu_compile_json(chain_json, &o);
    DiagList d = {0};
    Binding b;
    assert_int_equal(bind_init(g0, &b), ST_OK);
    assert_int_equal(bind_weights_random(g0, 11, &b), ST_OK);
    assert_int_equal(bind_constants(g0, &b), ST_OK);
    HTensor want[2] = {{0}};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(bind_inputs_random(g0, 7 + (uint64_t)i, &b), ST_OK);
        ref_output(g0, &b, &want[i]);
    }
    assert_int_equal(bind_apply_recipes(pipe.g, &b, &d), ST_OK);
    assert_int_equal(b.fold_evals, 7);
    Backend *be = NULL;
    assert_int_equal(cpu_backend_create(pipe.g, &be), ST_OK);
    Exec x;
    assert_int_equal(exec_open(&x, pipe.plan, pipe.g, &b, be, &d), ST_OK);
    HTensor *table = &b.vals[graph_find_tensor(g0, "p_table")];
    for (int64_t k = 0; k < table->numel; k++)
        ((float *)table->data)[k] = NAN;
    for (int i = 0; i < 2; i++) {
        assert_int_equal(bind_inputs_random(g0, 7 + (uint64_t)i, &b), ST_OK);
        assert_int_equal(exec_run(&x, false, &d), ST_OK);
        HTensor got = {0};
        assert_int_equal(exec_read(&x, pipe.plan->outputs[0], &got, &d), ST_OK);
        assert_true(tu_close(&got, want[i].data, want[i].numel, "folded chain output"));
        htensor_free(&got);
        htensor_free(&want[i]);
    }
    assert_int_equal(b.fold_evals, 7);
    exec_close(&x);
    be->ops->destroy(be);
    bind_free(&b);
    diag_free(&d);
    pipeline_free(&pipe);
    graph_free(g0);
}

/* A bad constant subgraph: the index out of range fails when the weights are bound, naming the
 * node and the value it folds. */
static void test_bad_fold_names_node(void **state)
{
    (void)state;
    Graph *g0 = tu_read_json(bad_json);
    Pipeline pipe = compiled(bad_json);
    assert_int_equal(fold_recipes(pipe.plan), 1);
    DiagList d = {0};
    Binding b;
    assert_int_equal(bind_init(g0, &b), ST_OK);
    assert_int_equal(bind_weights_random(g0, 11, &b), ST_OK);
    assert_int_equal(bind_constants(g0, &b), ST_OK);
    assert_int_equal(bind_apply_recipes(pipe.g, &b, &d), ST_BAD_INPUT);
    char text[4096] = "";
    for (int i = 0; i < d.count; i++) {
        char line[1024];
        diag_format(&d.items[i], line, sizeof line);
        tu_cat(text, sizeof text, "%s\n", line);
    }
    assert_non_null(strstr(text, "node 'gather_rows'"));
    assert_non_null(strstr(text, "folding constant 'rows' at load"));
    bind_free(&b);
    diag_free(&d);
    pipeline_free(&pipe);
    graph_free(g0);
}

/* The constant terms on the scores: bias and mask summed into one folded value over the scores'
 * shape (the bias expanded to [2, 2, 4, 4], viewed as [1, 2, 2, 4, 4], + the mask, viewed back),
 * x + it the one add left; with the mask a graph input nothing is summed or folded; both match
 * the reference of the graph as imported. */
static void test_terms_summed(void **state)
{
    (void)state;
    Pipeline pipe = compiled(terms_json);
    const Plan *p = pipe.plan;
    assert_int_equal(fold_recipes(p), 1);
    const PlanRecipe *r = fold_of(p, "view2.terms_view3");
    assert_non_null(r);
    const PlanTensor *m = &p->tensors[r->out_w];
    assert_int_equal(m->rank, 4);
    assert_int_equal(m->shape[0], 2);
    assert_int_equal(m->shape[1], 2);
    assert_true(computed(p, "view2.terms") && computed(p, "softmax"));
    assert_false(computed(p, "add1") || computed(p, "add2") || computed(p, "view2.terms_add2"));
    pipeline_free(&pipe);
    pipe = compiled(terms_in_json);
    assert_int_equal(fold_recipes(pipe.plan), 0);
    assert_true(computed(pipe.plan, "add1") && computed(pipe.plan, "add2"));
    pipeline_free(&pipe);
    vc_check_json(terms_json, "fp32", VC_TOL_F32, NULL);
    vc_check_json(terms_in_json, "fp32", VC_TOL_F32, NULL);
}

TU_MAIN(test_chain_folds, test_chain_matches_reference, test_mixed_folds_constant_part,
        test_terms_summed, test_folded_once_per_load, test_bad_fold_names_node)
