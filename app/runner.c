#include "runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../compiler/model_src.h"
#include "../compiler/npubin.h"
#include "compile.h"

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
    const char *opt = o->n_no_fuse ? "--no-fuse" : o->n_cpu_ops ? "--cpu-op" : o->break_id ? "--break"
                      : o->n_disable ? "--disable" : o->dump_after ? "--dump-after" : NULL;
    static const char *names[] = {[DT_F16] = "fp16", [DT_BF16] = "bf16", [DT_F32] = "fp32"};
    const char *dt = p->compute == DT_F16 || p->compute == DT_BF16 || p->compute == DT_F32
                         ? names[p->compute] : "?";
    if (!opt && strcmp(o->dtype, "auto") != 0 && strcmp(o->dtype, dt) != 0) opt = "--dtype";
    if (!opt && strcmp(o->tier, "auto") != 0 && plan_tier_parse(o->tier) != p->tier) opt = "--tier";
    if (!opt) return ST_OK;
    return diag_error(d, o->model, NULL, NULL,
                      "%s applies when compiling, and the .npubin is compiled (%s, tier %s): "
                      "drop it, or compile the IR again with it",
                      opt, dt, plan_tier_name(p->tier));
}

/* The model's graph for a .npubin's own plan: a copy of the IR it carries with the plan's
 * load-time weights (batch-norm folds, concatenated weights) added as tensors and recipes, so
 * binding computes them as for a compiled IR. */
static Status npubin_graph(const Graph *src, const Plan *p, Graph **out, DiagList *d)
{
    Graph *g = graph_clone(src);
    if (!g) return ST_NOMEM;
    int *gid = malloc(sizeof(int) * ((size_t)p->ntensors + 1));
    Status st = gid ? ST_OK : ST_NOMEM;
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
        for (int k = 0; k < 8; k++) *ids[k] = pids[k] >= 0 ? gid[pids[k]] : -1;
        r->nsrc = pr->nsrc;
        r->block = pr->block;
        for (int k = 0; k < pr->nsrc; k++) r->src[k] = gid[pr->src[k]];
        bool missing = r->out_w < 0 || (pr->conv_w >= 0 && r->conv_w < 0);
        for (int k = 0; k < r->nsrc; k++) missing |= r->src[k] < 0;
        if (missing)
            st = diag_error(d, p->source, NULL, pr->out_w >= 0 ? p->tensors[pr->out_w].name : NULL,
                            "a weight recipe of the .npubin names a tensor its IR lacks");
    }
    free(gid);
    if (st != ST_OK) graph_free(g);
    else *out = g;
    return st;
}

/* The pipeline of a .npubin: its own plan (not recompiled) on npubin_graph, as one snapshot;
 * no_reuse_align > 0 spreads its arena (every output readable) at that alignment. */
static Status npubin_pipeline(const Options *o, const Model *m, int no_reuse_align, Pipeline *pp,
                              DiagList *d)
{
    Plan *p = NULL;
    Status st = npubin_read(o->model, &p, d);
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

Status runner_open_edit(Runner *r, const Options *o, Model *m, bool no_reuse, Backend *with,
                        Status (*edit)(Graph *g, void *ctx, DiagList *d), void *ctx, DiagList *d)
{
    memset(r, 0, sizeof *r);
    Options oo = *o;
    bool cpu = strcmp(o->backend, "cpu") == 0; /* the reference computes in float32 */
    snprintf(r->dtype, sizeof r->dtype, "%s", cpu ? "fp32" : runner_dtype(o, &m->b));
    oo.dtype = r->dtype;
    CompileOptions co;
    compile_options_from(&oo, &co);
    co.no_reuse = no_reuse;
    co.edit = edit;
    co.edit_ctx = ctx;
    VkBackendOptions vo = vk_backend_options_default();
    vo.device = o->device;
    Status st = ST_OK;
    /* the device comes first: --tier auto is its best tier, and a CPU device (lavapipe) gets
     * the direct conv */
    if (!cpu) {
        st = with ? vk_backend_create_shared(with, &r->be, d) : vk_backend_create(&vo, &r->be, d);
        if (st == ST_OK && strcmp(o->tier, "auto") == 0) co.tier = vk_backend_best_tier(r->be);
        if (st == ST_OK) co.cpu_device = vk_backend_cpu_device(r->be);
    }
    bool npubin = model_is_npubin(o->model) && !o->recompile;
    if (st == ST_OK && npubin && edit)
        st = diag_error(d, o->model, NULL, NULL, "a compiled .npubin cannot take a graph edit");
    if (st == ST_OK && npubin) st = npubin_pipeline(o, m, no_reuse ? co.arena_align : 0, &r->pipe, d);
    else if (st == ST_OK) st = pipeline_run(o->model, &co, &r->pipe, d);
    if (st == ST_OK && npubin)
        snprintf(r->dtype, sizeof r->dtype, "%s",
                 cpu ? "fp32" : r->pipe.plan->compute == DT_BF16 ? "bf16"
                              : r->pipe.plan->compute == DT_F32 ? "fp32" : "fp16");
    if (st == ST_OK) st = bind_apply_recipes(r->pipe.g, &m->b, d);
    if (st == ST_OK && cpu) st = cpu_backend_create(r->pipe.g, &r->be);
    if (st == ST_OK) st = exec_open(&r->x, r->pipe.plan, r->pipe.g, &m->b, r->be, d);
    return st;
}

Status runner_check_validation(Runner *r, DiagList *d)
{
    int n = r->be ? vk_backend_validation_errors(r->be) : 0;
    if (n == 0) return ST_OK;
    return diag_add(d, DIAG_ERROR, ST_INTERNAL, r->pipe.plan ? r->pipe.plan->source : NULL, NULL,
                    NULL, "%d Vulkan validation error%s; the first: %s", n, n == 1 ? "" : "s",
                    vk_backend_validation_message(r->be, 0));
}

void runner_close(Runner *r)
{
    exec_close(&r->x);
    if (r->be) r->be->ops->destroy(r->be);
    pipeline_free(&r->pipe);
    memset(r, 0, sizeof *r);
}
