#include "app/runner.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/model_src.h"
#include "compiler/npubin.h"
#include "app/compile.h"
#include "app/tuned.h"

const char *runner_dtype(const Options *o, const Binding *b)
{
    if (strcmp(o->dtype, "auto") != 0) return o->dtype;
    return b->stored_bf16 ? "bf16" : "fp16";
}

Status runner_open(Runner *r, const Options *o, Model *m, bool no_reuse, DiagList *d)
{
    return runner_open_with(r, o, m, no_reuse, NULL, d);
}

/* Options that decide how a model compiles mean nothing to a compiled .npubin: an error
 * naming the option, not a silent run of something else. */
static Status npubin_options(const Options *o, const Plan *p, DiagList *d)
{
    const char *opt = o->n_no_fuse                 ? "--no-fuse"
                      : o->n_cpu_ops               ? "--cpu-op"
                      : o->break_id                ? "--break"
                      : o->n_disable               ? "--disable"
                      : o->dump_after              ? "--dump-after"
                      : o->tune.set & ~o->tune.env ? "--tune"
                      : o->tuned && strcmp(o->tuned, "auto") != 0 && strcmp(o->tuned, "none") != 0
                          ? "--tuned"
                          : NULL;
    const char *dt = dtype_compute_name(p->compute);
    if (!dt) dt = "?";
    if (!opt && strcmp(o->dtype, "auto") != 0 && strcmp(o->dtype, dt) != 0) opt = "--dtype";
    if (!opt && strcmp(o->tier, "auto") != 0 && plan_tier_parse(o->tier) != p->tier) opt = "--tier";
    if (!opt) return ST_OK;
    return diag_error(d, o->model, NULL, NULL,
                      "%s applies when compiling, and the .npubin is compiled (%s, tier %s): "
                      "drop it, or compile the IR again with it",
                      opt, dt, plan_tier_name(p->tier));
}

/* A fold recipe's nodes in the IR g of a .npubin: every node its output t needs, back to weights
 * and constants, in graph order (the IR's own nodes: those the plan names and the identities
 * canonicalize removed). A graph input on the way is an error: the plan does not fit its IR. */
static Status fold_nodes(Graph *g, const Plan *p, int t, Recipe *r, DiagList *d)
{
    int first = g->tensors[t].producer;
    if (first < 0)
        return diag_error(d, p->source, NULL, g->tensors[t].name,
                          "the .npubin folds '%s' at load, but in its IR no node makes it",
                          g->tensors[t].name);
    bool *need = calloc((size_t)g->nnodes + 1, 1);
    int *stack = malloc(sizeof(int) * ((size_t)g->nnodes + 1)); /* each node pushed once */
    Status st = need && stack ? ST_OK : ST_NOMEM;
    int sp = 0, nn = 0;
    if (st == ST_OK) {
        stack[sp++] = first;
        need[first] = true;
    }
    while (st == ST_OK && sp > 0) {
        const Node *n = &g->nodes[stack[--sp]];
        nn++;
        for (int k = 0; k < n->nin && st == ST_OK; k++) {
            const GTensor *x = &g->tensors[n->in[k]];
            if (x->kind == TK_INPUT)
                st = diag_error(d, p->source, n->name, g->tensors[t].name,
                                "the .npubin folds '%s' at load, but in its IR it depends on "
                                "graph input '%s'",
                                g->tensors[t].name, x->name);
            else if (x->producer >= 0 && !need[x->producer]) {
                need[x->producer] = true;
                stack[sp++] = x->producer;
            }
        }
    }
    r->nodes = st == ST_OK ? arena_alloc(&g->arena, sizeof(int) * ((size_t)nn + 1)) : NULL;
    if (st == ST_OK && !r->nodes) st = ST_NOMEM;
    for (int i = 0; st == ST_OK && i < g->nnodes; i++)
        if (need[i]) r->nodes[r->nnodes++] = i;
    free(need);
    free(stack);
    return st;
}

/* The rewrites the passes before fold-constants's folding made to the IR, made again on the
 * .npubin's copy g, so the nodes its fold recipes name exist: canonicalize (scaled_dot_product_
 * attention written out as its chain, as the compile did: an sdpa the plan runs as a CPU kernel
 * was kept whole by --cpu-op, and stays whole here) and the constant terms on softmax inputs
 * summed into new nodes (fold_terms.c). */
static Status npubin_prefold(Graph *g, const Plan *p, DiagList *d)
{
    CompileOptions o;
    compile_defaults(&o);
    for (int k = 0; k < p->nkernels && o.n_cpu_ops < COMPILE_MAX_LIST; k++) {
        const PlanKernel *kn = &p->kernels[k];
        int n = kn->target == KT_CPU && kn->nprov > 0 ? graph_find_node(g, kn->prov[0]) : -1;
        if (n >= 0 && g->nodes[n].op == OP_SDPA) o.cpu_ops[o.n_cpu_ops++] = g->nodes[n].aten;
    }
    PassCtx c = {.opt = &o, .d = d};
    Status st = pass_canonicalize(g, &c);
    bool *cst = st == ST_OK ? malloc((size_t)g->ntensors + 1) : NULL;
    int n;
    if (st == ST_OK && !cst) st = ST_NOMEM;
    if (st == ST_OK) fold_const_tensors(g, cst);
    if (st == ST_OK) st = fold_score_terms(g, cst, &n);
    free(cst);
    return st;
}

/* The model's graph for a .npubin's own plan: a copy of the IR it carries with the plan's
 * load-time weights (batch-norm folds, concatenated weights, folded constants) added as tensors
 * and recipes, so binding computes them as for a compiled IR. */
static Status npubin_graph(const Graph *src, const Plan *p, Graph **out, DiagList *d)
{
    Graph *g = graph_clone(src);
    if (!g) return ST_NOMEM;
    int *gid = malloc(sizeof(int) * ((size_t)p->ntensors + 1));
    Status st = gid ? ST_OK : ST_NOMEM;
    bool folds = false;
    for (int i = 0; i < p->nrecipes; i++)
        folds |= p->recipes[i].kind == RECIPE_FOLD;
    if (st == ST_OK && folds) st = npubin_prefold(g, p, d);
    for (int t = 0; st == ST_OK && t < p->ntensors; t++) {
        const PlanTensor *pt = &p->tensors[t];
        gid[t] = graph_find_tensor(g, pt->name);
        if (gid[t] < 0 && pt->kind == PT_WEIGHT) {
            gid[t] = graph_add_tensor(g, pt->name, pt->dtype, pt->rank, pt->shape, TK_WEIGHT);
            if (gid[t] < 0) st = ST_NOMEM;
        }
    }
    if (st == ST_OK && p->nrecipes) {
        g->recipes = calloc((size_t)p->nrecipes, sizeof(Recipe));
        if (!g->recipes) st = ST_NOMEM;
    }
    for (int i = 0; st == ST_OK && i < p->nrecipes; i++) {
        const PlanRecipe *pr = &p->recipes[i];
        Recipe *r = &g->recipes[g->nrecipes++];
        int *ids[] = {&r->out_w, &r->out_b, &r->conv_w, &r->conv_b,
                      &r->gamma, &r->beta,  &r->mean,   &r->var};
        const int pids[] = {pr->out_w, pr->out_b, pr->conv_w, pr->conv_b,
                            pr->gamma, pr->beta,  pr->mean,   pr->var};
        r->kind = pr->kind;
        r->eps = pr->eps;
        for (int k = 0; k < 8; k++)
            *ids[k] = pids[k] >= 0 ? gid[pids[k]] : -1;
        r->nsrc = pr->nsrc;
        r->block = pr->block;
        for (int k = 0; k < pr->nsrc; k++)
            r->src[k] = gid[pr->src[k]];
        bool missing = r->out_w < 0 || (pr->conv_w >= 0 && r->conv_w < 0);
        for (int k = 0; k < r->nsrc; k++)
            missing |= r->src[k] < 0;
        if (missing)
            st = diag_error(d, p->source, NULL, pr->out_w >= 0 ? p->tensors[pr->out_w].name : NULL,
                            "a weight recipe of the .npubin names a tensor its IR lacks");
        else if (r->kind == RECIPE_FOLD)
            st = fold_nodes(g, p, r->out_w, r, d);
    }
    free(gid);
    if (st != ST_OK)
        graph_free(g);
    else
        *out = g;
    return st;
}

/* The pipeline of a .npubin: its own plan (not recompiled) on npubin_graph, as one snapshot;
 * no_reuse_align > 0 spreads its arena (every output readable) at that alignment. */
static Status npubin_pipeline(const Options *o, const Model *m, int no_reuse_align, Pipeline *pp,
                              DiagList *d)
{
    Plan *p = NULL;
    Status st = npubin_read(o->model, &p, d);
    if (st == ST_OK) st = npubin_verify(p, o->model, true, d); /* lowered for these shaders? */
    if (st == ST_OK) st = npubin_options(o, p, d);
    Graph *g = NULL;
    if (st == ST_OK) st = npubin_graph(m->g, p, &g, d);
    if (st == ST_OK) {
        pp->snaps = calloc(1, sizeof *pp->snaps);
        if (!pp->snaps) st = ST_NOMEM;
    }
    if (st != ST_OK) {
        graph_free(g);
        plan_free(p);
        return st;
    }
    if (no_reuse_align > 0) plan_spread_arena(p, no_reuse_align);
    pp->snaps[0] = (Snapshot){.pass = "npubin", .g = g};
    pp->nsnaps = 1;
    pp->g = g;
    pp->plan = p;
    return ST_OK;
}

Status runner_open_with(Runner *r, const Options *o, Model *m, bool no_reuse, Backend *with,
                        DiagList *d)
{
    return runner_open_edit(r, o, m, no_reuse, with, NULL, NULL, d);
}

/* The target of o's backend `be` (NULL: the CPU reference, or no device asked yet). */
static void target_of(const Options *o, const Binding *b, Backend *be, RunTarget *t)
{
    bool cpu = strcmp(o->backend, "cpu") == 0; /* the reference computes in float32 */
    snprintf(t->dtype, sizeof t->dtype, "%s", cpu ? "fp32" : runner_dtype(o, b));
    int tier = plan_tier_parse(o->tier); /* -1: auto */
    t->tier = tier >= 0 ? tier : be && !cpu ? vk_backend_best_tier(be) : TIER_PORTABLE;
    t->cpu_device = be && !cpu && vk_backend_cpu_device(be);
    t->device[0] = '\0';
    if (be && !cpu) vk_backend_device_key(be, t->device, sizeof t->device);
}

/* One Vulkan device per process and device index, opened at the first runner that needs it and
 * kept to the process's end: every runner's backend shares it (vk_backend_create_shared), so a
 * profile's runs, a bisect's steps and a session's plan after each toggle neither create the
 * device again nor compile a pipeline that device already has (runtime/vulkan/vk_pipe.c pools
 * them). */
enum { MAX_DEVICES = 8 };
static struct {
    int device;
    Backend *be;
} devices[MAX_DEVICES];
static int ndevices;
static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;

static void close_devices(void)
{
    for (int i = 0; i < ndevices; i++)
        devices[i].be->ops->destroy(devices[i].be);
    ndevices = 0;
}

static Status device_of(const Options *o, Backend **out, DiagList *d)
{
    Status st = ST_OK;
    pthread_mutex_lock(&devices_lock);
    *out = NULL;
    for (int i = 0; i < ndevices && !*out; i++)
        if (devices[i].device == o->device) *out = devices[i].be;
    if (!*out) {
        VkBackendOptions vo = vk_backend_options_default();
        vo.device = o->device;
        if (ndevices == MAX_DEVICES)
            st = diag_error(d, NULL, NULL, NULL, "more than %d Vulkan devices in one process",
                            MAX_DEVICES);
        else
            st = vk_backend_create(&vo, out, d);
        if (st == ST_OK) {
            if (ndevices == 0) atexit(close_devices);
            devices[ndevices].device = o->device;
            devices[ndevices++].be = *out;
        }
    }
    pthread_mutex_unlock(&devices_lock);
    return st;
}

static Status vk_open(const Options *o, Backend *with, Backend **be, DiagList *d)
{
    Status st = with ? ST_OK : device_of(o, &with, d);
    if (st != ST_OK) return st;
    return vk_backend_create_shared(with, be, d);
}

Status runner_target(const Options *o, const Binding *b, RunTarget *t, DiagList *d)
{
    Backend *be = NULL;
    Status st = strcmp(o->backend, "cpu") == 0 ? ST_OK : vk_open(o, NULL, &be, d);
    if (st == ST_OK) target_of(o, b, be, t);
    if (be) be->ops->destroy(be);
    return st;
}

void runner_compile_options(const Options *o, const RunTarget *t, CompileOptions *co)
{
    Options oo = *o;
    oo.dtype = t->dtype;
    compile_options_from(&oo, co);
    co->tier = t->tier;
    co->cpu_device = t->cpu_device;
}

Status runner_options(const Options *o, const RunTarget *t, bool no_reuse, CompileOptions *co,
                      DiagList *d)
{
    runner_compile_options(o, t, co);
    co->no_reuse = no_reuse;
    return tuned_compile_options(o, t->device, co, d);
}

/* The part of opening shared by a compiled and a borrowed pipeline: the dtype the plan computes
 * in, recipes, the CPU backend (over the compiled graph), the executor. */
static Status open_exec(Runner *r, const Options *o, Model *m, DiagList *d)
{
    bool cpu = strcmp(o->backend, "cpu") == 0;
    DType c = r->pipe.plan ? r->pipe.plan->compute : DT_F16;
    snprintf(r->dtype, sizeof r->dtype, "%s",
             cpu || c == DT_F32 ? "fp32"
             : c == DT_BF16     ? "bf16"
                                : "fp16");
    Status st = bind_apply_recipes(r->pipe.g, &m->b, d);
    if (st == ST_OK && cpu) st = cpu_backend_create(r->pipe.g, &r->be);
    if (st == ST_OK) st = exec_open(&r->x, r->pipe.plan, r->pipe.g, &m->b, r->be, d);
    return st;
}

Status runner_open_plan(Runner *r, const Options *o, Model *m, const Pipeline *pipe, DiagList *d)
{
    memset(r, 0, sizeof *r);
    r->pipe = *pipe;
    r->borrowed = true;
    Status st = strcmp(o->backend, "cpu") == 0 ? ST_OK : vk_open(o, NULL, &r->be, d);
    if (st == ST_OK && r->be) r->verr0 = vk_backend_validation_errors(r->be);
    if (st == ST_OK) st = open_exec(r, o, m, d);
    return st;
}

static Status compile_edit(const Options *o, Model *m, const RunTarget *t, bool no_reuse,
                           Status (*edit)(Graph *g, void *ctx, DiagList *d), void *ctx, Pipeline *p,
                           DiagList *d)
{
    memset(p, 0, sizeof *p);
    CompileOptions co;
    bool npubin = model_is_npubin(o->model) && !o->recompile;
    if (npubin && edit)
        return diag_error(d, o->model, NULL, NULL, "a compiled .npubin cannot take a graph edit");
    if (npubin) {
        runner_compile_options(o, t, &co);
        return npubin_pipeline(o, m, no_reuse ? co.arena_align : 0, p, d);
    }
    Status st = runner_options(o, t, no_reuse, &co, d);
    if (st != ST_OK) return st;
    co.edit = edit;
    co.edit_ctx = ctx;
    co.ir_text = m->ir_text; /* embedded in the plan, as a compile of the file would */
    co.ir_len = m->ir_len;
    Graph *g = graph_clone(m->g); /* the loaded model: the file is read once */
    return g ? pipeline_run_graph(g, &co, p, d) : ST_NOMEM;
}

Status runner_compile(const Options *o, Model *m, const RunTarget *t, bool no_reuse, Pipeline *p,
                      DiagList *d)
{
    return compile_edit(o, m, t, no_reuse, NULL, NULL, p, d);
}

Status runner_open_edit(Runner *r, const Options *o, Model *m, bool no_reuse, Backend *with,
                        Status (*edit)(Graph *g, void *ctx, DiagList *d), void *ctx, DiagList *d)
{
    memset(r, 0, sizeof *r);
    /* the device comes first: --tier auto is its best tier, and a CPU device (lavapipe) gets
     * the direct conv */
    Status st = strcmp(o->backend, "cpu") == 0 ? ST_OK : vk_open(o, with, &r->be, d);
    if (st == ST_OK && r->be) r->verr0 = vk_backend_validation_errors(r->be);
    RunTarget t;
    target_of(o, &m->b, r->be, &t);
    if (st == ST_OK) st = compile_edit(o, m, &t, no_reuse, edit, ctx, &r->pipe, d);
    if (st == ST_OK) st = open_exec(r, o, m, d);
    return st;
}

Status runner_check_validation(Runner *r, DiagList *d)
{
    /* the device is shared: only the errors since this runner opened are its own */
    int n = r->be ? vk_backend_validation_errors(r->be) - r->verr0 : 0;
    if (n == 0) return ST_OK;
    return diag_add(d, DIAG_ERROR, ST_INTERNAL, r->pipe.plan ? r->pipe.plan->source : NULL, NULL,
                    NULL, "%d Vulkan validation error%s; the first: %s", n, n == 1 ? "" : "s",
                    vk_backend_validation_message(r->be, 0));
}

void runner_close(Runner *r)
{
    exec_close(&r->x);
    if (r->be) r->be->ops->destroy(r->be);
    if (!r->borrowed) pipeline_free(&r->pipe);
    memset(r, 0, sizeof *r);
}
