#include "compiler/lower/lower.h"
#include "compiler/support.h"
#include "compiler/fusion.h"

#include "compiler/fusion.h"
#include "compiler/lower/kernels.h"
#include "compiler/schedule.h"
#include "compiler/shader_fp.h"
#include "compiler/tune_cache.h"

#include <stdlib.h>
#include <string.h>

/* Plan tensor id of graph tensor t (-1 for tensors living only inside a fused kernel). */
typedef struct Lowering {
    const Graph *g;
    Plan *p;
    int *pt; /* graph tensor -> plan tensor */
    const CompileOptions *o;
    int max_kernels; /* kernel_cap(g): the room of p->kernels */
    int only; /* lower only the kernels anchored at this node (plan_build_node); -1: every one */
} Lowering;

static int plan_tensor(Lowering *L, int t)
{
    return L->pt[t];
}

static Status add_kernel(Lowering *L, const Node *anchor, int node, int fusion, const int *ins,
                         int nin, int out, KernelTarget tgt, const char *shader, const int *prov,
                         int nprov)
{
    Plan *p = L->p;
    PlanKernel *k = &p->kernels[p->nkernels];
    memset(k, 0, sizeof *k);
    k->shader = arena_strdup(&p->arena, shader);
    k->target = tgt;
    k->op = anchor->op;
    k->node = node;
    k->fusion = fusion;
    k->nin = nin;
    k->nargs = nin + (out >= 0 ? 1 : 0);
    k->args = arena_alloc(&p->arena, sizeof(int) * (size_t)(k->nargs + 1));
    k->prov = arena_alloc(&p->arena, sizeof(char *) * (size_t)(nprov + 1));
    if (!k->args || !k->prov || !k->shader) return ST_NOMEM;
    for (int i = 0; i < nin; i++)
        k->args[i] = plan_tensor(L, ins[i]);
    if (out >= 0) k->args[nin] = plan_tensor(L, out);
    for (int i = 0; i < nprov; i++)
        k->prov[i] = arena_strdup(&p->arena, L->g->nodes[prov[i]].name);
    k->nprov = nprov;
    /* generic dispatch: one invocation per output element in groups of 256; shader families
     * with their own tiling refine this when the Vulkan backend lowers them */
    int64_t numel = 1;
    if (out >= 0) {
        const PlanTensor *o = &p->tensors[k->args[nin]];
        for (int i = 0; i < o->rank; i++)
            numel *= o->pshape[i];
    }
    int64_t groups = (numel + 255) / 256;
    k->groups[0] = (uint32_t)(groups > 65535 ? 65535 : groups);
    k->groups[1] = (uint32_t)(groups > 65535 ? (groups + 65534) / 65535 : 1);
    k->groups[2] = 1;
    p->nkernels++;
    return ST_OK;
}

/* Capacity of the plan's arrays: the graph's tensors and nodes, one scratch tensor and one
 * appended kernel per fusion instance (kc_scratch, kc_append), --break's corrupt kernels (one
 * per instance, fitting in the slots a fused group of two or more nodes frees). */
/* Room for every graph tensor plus one scratch tensor per node (a family with several
 * dispatches adds one: kc_scratch). */
static int tensor_cap(const Graph *g)
{
    return g->ntensors + g->nnodes + g->nfusions + 1;
}

/* A kernel per node or instance, a --break kernel per instance, and one appended kernel per
 * kernel (kc_append). */
static int kernel_cap(const Graph *g)
{
    int extra = 0; /* an NPU split has a kernel per chunk, a long cat one per group of inputs */
    for (int i = 0; i < g->nnodes; i++)
        if (g->nodes[i].op == OP_SPLIT && g->nodes[i].nout > 1)
            extra += g->nodes[i].nout - 1;
        else if (g->nodes[i].op == OP_CAT) /* a kernel per group of inputs */
            extra += (g->nodes[i].nin - 1) / NPU_CAT_GROUP;
    return 2 * (g->nnodes + g->nfusions) + extra + 2;
}

/* A CPU kernel runs its whole node: every output of a multi-output node (split) is bound, in
 * node order, after the inputs. */
static Status bind_all_outputs(Lowering *L, PlanKernel *k, const Node *n)
{
    if (n->nout <= 1) return ST_OK;
    int *a = arena_alloc(&L->p->arena, sizeof(int) * (size_t)(k->nin + n->nout + 1));
    if (!a) return ST_NOMEM;
    memcpy(a, k->args, sizeof(int) * (size_t)k->nin);
    for (int i = 0; i < n->nout; i++)
        a[k->nin + i] = plan_tensor(L, n->out[i]);
    k->args = a;
    k->nargs = k->nin + n->nout;
    return ST_OK;
}

static Status build_tensors(Lowering *L, const CompileOptions *o)
{
    const Graph *g = L->g;
    Plan *p = L->p;
    /* room for one scratch tensor per fusion instance (kc_scratch) */
    p->tensors = arena_alloc(&p->arena, sizeof(PlanTensor) * (size_t)tensor_cap(g));
    p->inputs = arena_alloc(&p->arena, sizeof(int) * (size_t)(g->ninputs + 1));
    p->outputs = arena_alloc(&p->arena, sizeof(int) * (size_t)(g->noutputs + 1));
    p->weights = arena_alloc(&p->arena, sizeof(int) * (size_t)(g->nweights + 1));
    if (!p->tensors || !p->inputs || !p->outputs || !p->weights) return ST_NOMEM;
    /* a recipe's sources and outputs stay (a concatenated weight has no reader in the graph:
     * only the fused kernel reads it) */
    char *recipe_in = calloc((size_t)g->ntensors + 1, 1);
    if (!recipe_in) return ST_NOMEM;
    for (int i = 0; i < g->nrecipes; i++) {
        const Recipe *r = &g->recipes[i];
        int ids[] = {r->conv_w, r->conv_b, r->gamma, r->beta, r->mean, r->var, r->out_w, r->out_b};
        for (int k = 0; k < 8; k++)
            if (ids[k] >= 0) recipe_in[ids[k]] = 1;
        for (int k = 0; k < r->nsrc; k++)
            recipe_in[r->src[k]] = 1;
    }
    for (int t = 0; t < g->ntensors; t++) {
        const GTensor *x = &g->tensors[t];
        L->pt[t] = -1;
        bool keep = x->kind != TK_ACT || x->offset >= 0 || x->alias_of >= 0 ||
                    (x->producer >= 0 && g->nodes[x->producer].place == PLACE_CPU);
        if (x->kind == TK_ACT && x->producer >= 0 && g->nodes[x->producer].dead) keep = false;
        if (x->kind == TK_ACT && x->producer < 0 && x->offset < 0) keep = false;
        if (x->kind != TK_ACT && x->nconsumers == 0 && !x->is_output && !recipe_in[t]) keep = false;
        if (!keep) continue;
        PlanTensor *q = &p->tensors[p->ntensors];
        q->name = arena_strdup(&p->arena, x->name);
        q->kind = x->kind == TK_INPUT    ? PT_INPUT
                  : x->kind == TK_WEIGHT ? PT_WEIGHT
                  : x->kind == TK_CONST  ? PT_CONST
                  : x->is_output         ? PT_OUTPUT
                                         : PT_ACT;
        q->dtype = x->dtype;
        q->storage = compile_tensor_storage(o, x);
        q->rank = x->rank;
        memcpy(q->shape, x->shape, sizeof q->shape);
        memcpy(q->pshape, x->pshape, sizeof q->pshape);
        q->padded = x->padded;
        q->alias_of = -1;
        q->view_off = x->view_off;
        q->offset = x->offset;
        q->bytes = x->bytes;
        q->weight_key = arena_strdup(&p->arena, x->weight_key);
        L->pt[t] = p->ntensors++;
    }
    free(recipe_in);
    for (int t = 0; t < g->ntensors; t++)
        if (L->pt[t] >= 0 && g->tensors[t].alias_of >= 0)
            p->tensors[L->pt[t]].alias_of = L->pt[g->tensors[t].alias_of];
    for (int i = 0; i < g->ninputs; i++)
        p->inputs[p->ninputs++] = L->pt[g->inputs[i]];
    for (int i = 0; i < g->noutputs; i++)
        p->outputs[p->noutputs++] = L->pt[g->outputs[i]];
    for (int i = 0; i < g->nweights; i++) /* a state input made from a weight is an input */
        if (L->pt[g->weights[i]] >= 0 && g->tensors[g->weights[i]].kind == TK_WEIGHT)
            p->weights[p->nweights++] = L->pt[g->weights[i]];
    p->state_in = arena_alloc(&p->arena, sizeof(int) * (size_t)(g->nstates + 1));
    p->state_out = arena_alloc(&p->arena, sizeof(int) * (size_t)(g->nstates + 1));
    if (!p->state_in || !p->state_out) return ST_NOMEM;
    for (int i = 0; i < g->nstates; i++) {
        p->state_in[i] = L->pt[g->state_in[i]];
        p->state_out[i] = L->pt[g->outputs[g->state_out[i]]];
        if (p->state_in[i] < 0 || p->state_out[i] < 0) return ST_INTERNAL;
    }
    p->nstates = g->nstates;
    return ST_OK;
}

/* Parameters of the kernel just added, of kind `kind` (kernels.h). */
static Status lower_last(Lowering *L, const Node *anchor, const Fusion *fu, KernelKind kind,
                         DiagList *d)
{
    KernelCtx c = {.g = L->g,
                   .p = L->p,
                   .anchor = anchor,
                   .fusion = fu,
                   .d = d,
                   .grow = L->p,
                   .max_tensors = tensor_cap(L->g),
                   .max_kernels = L->max_kernels,
                   .opt = L->o,
                   .kind = kind,
                   .tier = L->o->cm_emulate ? TIER_NV_COOPMAT : L->o->tier,
                   .cm_emulate = L->o->cm_emulate,
                   .cm_force = L->o->cm_force,
                   .cpu_device = L->o->cpu_device};
    Plan *p = L->p;
    int first = p->nkernels - 1;
    PlanKernel *k = &p->kernels[first];
    /* a kind `tune` searches has a key, and the tuning cache's entry for it (tune_cache.h) */
    char key[1024], rec[512] = "";
    Tuning tuned;
    const char *tkey = NULL;
    if (tuning_kind_searchable(kind) && kc_tune_key(&c, k, key, sizeof key)) {
        tkey = arena_strdup(&p->arena, key);
        if (!tkey) return ST_NOMEM;
        const TuneEntry *e = tune_cache_find(L->o->tuned, L->o->tuned_device, key);
        tune_apply(&L->o->tuning, e, kind, &tuned, rec, sizeof rec);
        c.tuning = &tuned;
    }
    Status st = kernel_lower(&c, k);
    const char *trec = rec[0] ? arena_strdup(&p->arena, rec) : NULL;
    for (int i = first; st == ST_OK && i < p->nkernels; i++) { /* with those kc_append added */
        p->kernels[i].tune_key = tkey;
        p->kernels[i].tuned = trec;
    }
    return st;
}

/* Adds an NPU kernel of kind `kind` (named by the kind until its family picks a row) and lowers
 * it. */
static Status add_npu_kernel(Lowering *L, const Node *anchor, int node, int fusion, const int *ins,
                             int nin, int out, KernelKind kind, const int *prov, int nprov,
                             DiagList *d)
{
    Status st = add_kernel(L, anchor, node, fusion, ins, nin, out, KT_NPU, kernel_kind_name(kind),
                           prov, nprov);
    return st == ST_OK ? lower_last(L, anchor, fusion >= 0 ? &L->g->fusions[fusion] : NULL, kind, d)
                       : st;
}

/* Is id one of the comma-separated ids in list? */
static bool in_list(const char *list, const char *id)
{
    size_t n = strlen(id);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, id, n) == 0) return true;
        p = e ? e + 1 : NULL;
    }
    return false;
}

/* --break ID[,ID...]: a visible extra kernel right after the instance's fused kernel that corrupts
 * its output in place, so bisect can be demonstrated and tested on a known culprit. */
static Status add_corrupt(Lowering *L, const Node *n, int node, int fusion, const Fusion *fu,
                          DiagList *d)
{
    return add_npu_kernel(L, n, node, fusion, NULL, 0, fu->out, KK_corrupt, fu->nodes, fu->nnodes,
                          d);
}

/* Does --break name instance fu, or an instance a merge fu runs (fuse_merge.c: its kernel is the
 * one computing them)? */
static bool broken_here(const Lowering *L, const Fusion *fu)
{
    bool any = in_list(L->o->break_id, fu->id);
    for (int k = 0; k < fu->nmerges && !any; k++)
        any = in_list(L->o->break_id, L->g->fusions[fu->merges[k]].id);
    return any;
}

/* The provenance of the NPU kernel anchored at node i: the members of every folded instance
 * whose output it reads (fuse_fold.c: the CPU backend runs them first), then its own nodes.
 * (A fold and its base name no kernel of their own: PlanFusion.kernel stays -1.) */
static int kernel_prov(Lowering *L, int i, const int *own, int nown, int *prov, int max)
{
    const Graph *g = L->g;
    const Node *n = &g->nodes[i];
    int np = 0, raw[64], nraw = 0;
    if (n->fusion >= 0 && g->fusions[n->fusion].enabled)
        nraw = fusion_inputs(g, &g->fusions[n->fusion], raw, 64);
    else
        for (int k = 0; k < n->nin && k < 64; k++)
            raw[nraw++] = n->in[k];
    for (int k = 0; k < nraw; k++) {
        int b = fuse_folded_at(g, raw[k]);
        if (b < 0) continue;
        const Fusion *base = &g->fusions[b];
        for (int j = 0; j < base->nnodes && np < max; j++)
            prov[np++] = base->nodes[j];
    }
    for (int j = 0; j < nown && np < max; j++)
        prov[np++] = own[j];
    return np;
}

/* --break of a fold or of the instance it folds: the first kernel computing it (the NPU kernel
 * anchored at node i, fusion kf, output out) is corrupted after it. broken[] marks the bases
 * done. */
static Status add_fold_breaks(Lowering *L, const Node *n, int i, int kf, int out, bool *broken,
                              DiagList *d)
{
    const Graph *g = L->g;
    if (!L->o->break_id) return ST_OK;
    int raw[64], nraw = 0;
    if (kf >= 0)
        nraw = fusion_inputs(g, &g->fusions[kf], raw, 64);
    else
        for (int k = 0; k < n->nin && k < 64; k++)
            raw[nraw++] = n->in[k];
    for (int k = 0; k < nraw; k++) {
        int b = fuse_folded_at(g, raw[k]), f = b >= 0 ? fuse_fold_of(g, b) : -1;
        if (b < 0 || broken[b] ||
            !(in_list(L->o->break_id, g->fusions[b].id) ||
              (f >= 0 && in_list(L->o->break_id, g->fusions[f].id))))
            continue;
        broken[b] = true;
        const int *prov = kf >= 0 ? g->fusions[kf].nodes : &i;
        int nprov = kf >= 0 ? g->fusions[kf].nnodes : 1;
        Status st = add_npu_kernel(L, n, i, kf, NULL, 0, out, KK_corrupt, prov, nprov, d);
        if (st != ST_OK) return st;
    }
    return ST_OK;
}

static Status build_kernels(Lowering *L, DiagList *d)
{
    const Graph *g = L->g;
    Plan *p = L->p;
    L->max_kernels = kernel_cap(g);
    p->kernels = arena_alloc(&p->arena, sizeof(PlanKernel) * (size_t)L->max_kernels);
    p->fusions = arena_alloc(&p->arena, sizeof(PlanFusion) * (size_t)(g->nfusions + 1));
    bool *broken = arena_alloc(&p->arena, (size_t)g->nfusions + 1); /* add_fold_breaks */
    if (!p->kernels || !p->fusions || !broken) return ST_NOMEM;
    memset(broken, 0, (size_t)g->nfusions + 1);
    for (int f = 0; f < g->nfusions; f++) {
        const Fusion *fu = &g->fusions[f];
        PlanFusion *pf = &p->fusions[p->nfusions++];
        pf->id = arena_strdup(&p->arena, fu->id);
        pf->pattern = arena_strdup(&p->arena, fu->pattern);
        pf->enabled = fu->enabled;
        pf->kernel = -1;
        pf->nnodes = fu->nnodes;
        pf->nodes = arena_alloc(&p->arena, sizeof(char *) * (size_t)(fu->nnodes + 1));
        if (!pf->nodes) return ST_NOMEM;
        for (int k = 0; k < fu->nnodes; k++)
            pf->nodes[k] = arena_strdup(&p->arena, g->nodes[fu->nodes[k]].name);
    }
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = &g->nodes[i];
        if (graph_kernel_node(g, i) != i || (L->only >= 0 && i != L->only)) continue;
        Status st = ST_OK;
        if (n->place == PLACE_CPU) {
            int out = n->nout ? n->out[0] : -1;
            st = add_kernel(L, n, i, -1, n->in, n->nin, out, KT_CPU, op_short_name(n->op), &i, 1);
            if (st == ST_OK) st = bind_all_outputs(L, &p->kernels[p->nkernels - 1], n);
        } else if (n->op == OP_SPLIT) {
            /* one slice-like kernel per chunk that is read and not a view (pass_views.c) */
            for (int o = 0; o < n->nout && st == ST_OK; o++) {
                const GTensor *t = &g->tensors[n->out[o]];
                if ((t->nconsumers == 0 && !t->is_output) || t->alias_of >= 0) continue;
                st = add_npu_kernel(L, n, i, -1, n->in, n->nin, n->out[o], op_info[n->op].kernel,
                                    &i, 1, d);
            }
        } else if (n->fusion >= 0 && g->fusions[n->fusion].enabled) {
            const Fusion *fu = &g->fusions[n->fusion];
            int ins[64], prov[FUSE_MAX_NODES * 4];
            int nin = graph_kernel_inputs(g, i, ins, 64);
            int nprov = kernel_prov(L, i, fu->nodes, fu->nnodes, prov, FUSE_MAX_NODES * 4);
            p->fusions[n->fusion].kernel = p->nkernels;
            st = add_npu_kernel(L, n, i, n->fusion, ins, nin, fu->out, fu->kernel, prov, nprov, d);
            if (st == ST_OK && broken_here(L, fu)) st = add_corrupt(L, n, i, n->fusion, fu, d);
            if (st == ST_OK) st = add_fold_breaks(L, n, i, n->fusion, fu->out, broken, d);
        } else {
            /* no hand-written kernel: a member of a switched-off generated group (where, a
             * comparison, a source the group took from the CPU) runs as its own generated one
             * (graph_kernel_node lets only those through) */
            KernelKind kind = op_info[n->op].kernel != KK_NONE && !n->adopted
                                  ? op_info[n->op].kernel
                                  : KK_elementwise;
            int out = n->nout ? n->out[0] : -1, ins[64], prov[FUSE_MAX_NODES * 4];
            int nin = n->nin, nprov = kernel_prov(L, i, &i, 1, prov, FUSE_MAX_NODES * 4);
            const int *in = n->in;
            if (nprov > 1) { /* it reads a folded output (nodes reading one have few inputs) */
                nin = graph_kernel_inputs(g, i, ins, 64);
                in = ins;
            }
            st = add_npu_kernel(L, n, i, -1, in, nin, out, kind, prov, nprov, d);
            if (st == ST_OK && nprov > 1) st = add_fold_breaks(L, n, i, -1, out, broken, d);
        }
        if (st != ST_OK) return st;
    }
    return ST_OK;
}

/* Partitions (runs of kernels on one target) with their transfers. */
static Status build_parts(Lowering *L)
{
    Plan *p = L->p;
    int *part_of = malloc(sizeof(int) * ((size_t)p->ntensors + 1));
    p->parts = arena_alloc(&p->arena, sizeof(PlanPart) * (size_t)(p->nkernels + 1));
    if (!part_of || !p->parts) {
        free(part_of);
        return ST_NOMEM;
    }
    for (int t = 0; t < p->ntensors; t++)
        part_of[t] = -1;
    for (int k = 0; k < p->nkernels; k++) {
        PlanKernel *kn = &p->kernels[k];
        if (p->nparts == 0 || p->parts[p->nparts - 1].target != kn->target) {
            PlanPart *pp = &p->parts[p->nparts++];
            memset(pp, 0, sizeof *pp);
            pp->target = kn->target;
            pp->first_kernel = k;
        }
        kn->part = p->nparts - 1;
        p->parts[kn->part].nkernels++;
        for (int a = kn->nin; a < kn->nargs; a++) {
            int t = kn->args[a];
            if (t < 0) continue;
            part_of[t] = kn->part;
            if (p->tensors[t].alias_of >= 0) part_of[plan_base(p, t)] = kn->part;
        }
    }
    /* transfers: what a kernel reads whose storage a partition of the other target wrote
     * (graph inputs and weights are bound on both sides), once per direction: a CPU partition
     * reads the NPU tensor from the device, an NPU partition gets the CPU tensor's storage (the
     * base a view aliases) uploaded; later partitions of the same target reuse the copy */
    char *moved = calloc((size_t)p->ntensors + 1, 1);
    if (!moved) {
        free(part_of);
        return ST_NOMEM;
    }
    for (int pi = 0; pi < p->nparts; pi++) {
        PlanPart *pp = &p->parts[pi];
        pp->in = arena_alloc(&p->arena, sizeof(int) * (size_t)(p->ntensors + 1));
        if (!pp->in) break;
        char bit = pp->target == KT_CPU ? 1 : 2;
        for (int k = pp->first_kernel; k < pp->first_kernel + pp->nkernels; k++) {
            const PlanKernel *kn = &p->kernels[k];
            for (int a = 0; a < kn->nin; a++) {
                int t = kn->args[a];
                if (t < 0) continue;
                int b = plan_base(p, t), src = part_of[b];
                if (src < 0 || p->parts[src].target == pp->target) continue;
                int x = pp->target == KT_CPU ? t : b;
                if (moved[x] & bit) continue;
                moved[x] |= bit;
                pp->in[pp->nin++] = x;
            }
        }
    }
    free(moved);
    free(part_of);
    return ST_OK;
}

/* A --no-fuse rule that selects no instance of this model switches nothing: most likely a typo
 * or a pattern the model does not have, so say which patterns it has. */
static void warn_unused_switches(const Graph *g, const CompileOptions *o, DiagList *d)
{
    for (int k = 0; k < o->n_no_fuse; k++) {
        const char *sel = o->no_fuse[k][0] == '+' ? o->no_fuse[k] + 1 : o->no_fuse[k];
        bool any = strcmp(sel, "fuse-elementwise") == 0;
        for (int f = 0; f < g->nfusions && !any; f++)
            any = fuse_selected(sel, &g->fusions[f]);
        if (any) continue;
        char have[512] = "";
        size_t u = 0;
        for (int f = 0; f < g->nfusions && u + 2 < sizeof have; f++) {
            bool seen = false;
            for (int e = 0; e < f && !seen; e++)
                seen = strcmp(g->fusions[e].pattern, g->fusions[f].pattern) == 0;
            int w = seen ? 0
                         : snprintf(have + u, sizeof have - u, "%s%s", u ? ", " : "",
                                    g->fusions[f].pattern);
            if (w > 0) u += (size_t)w;
        }
        diag_add(d, DIAG_WARNING, ST_OK, g->path, NULL, NULL,
                 "--no-fuse %s selects no fusion instance of this model (names are exact: an "
                 "id, a pattern or variant, or all; this model's: %s)",
                 sel, g->nfusions ? have : "none");
    }
}

/* plan_build, or with only >= 0 plan_build_node. */
static Status build(const Graph *g, const CompileOptions *o, int only, Plan **out, DiagList *d)
{
    *out = NULL;
    Plan *p = plan_new();
    int *pt = calloc((size_t)g->ntensors + 1, sizeof(int));
    if (!p || !pt) {
        plan_free(p);
        free(pt);
        return ST_NOMEM;
    }
    Lowering L = {g, p, pt, o, 0, only};
    p->model_name = arena_strdup(&p->arena, g->model_name);
    p->source = arena_strdup(&p->arena, g->path);
    if (o->ir_text && o->ir_len && only < 0) {
        char *ir = o->ir_outlives ? NULL : arena_dup(&p->arena, o->ir_text, o->ir_len);
        if (!o->ir_outlives && !ir) {
            plan_free(p);
            free(pt);
            return ST_NOMEM;
        }
        p->ir_json = o->ir_outlives ? o->ir_text : ir;
        p->ir_json_len = o->ir_len;
    }
    p->compute = o->compute;
    p->tier = o->cm_emulate ? TIER_PORTABLE : o->tier;
    p->channel_tile = o->channel_tile;
    char tune[1024], tune_env[512];
    tuning_format(&o->tuning, tune, sizeof tune);
    tuning_format_env(&o->tuning, tune_env, sizeof tune_env);
    if (tune[0]) p->tuning = arena_strdup(&p->arena, tune);
    if (tune_env[0]) p->tuning_env = arena_strdup(&p->arena, tune_env);
    p->arena_bytes = g->arena_bytes;
    p->naive_bytes = g->naive_bytes;
    Status st = build_tensors(&L, o);
    if (st == ST_OK) st = build_kernels(&L, d);
    if (st == ST_OK) shader_fp_plan(p); /* the modules lowering shaped each kernel for */
    if (only >= 0) { /* the node's kernels in lowering order: no partitions, levels, recipes */
        free(pt);
        if (st == ST_OK && p->arena.failed) st = ST_NOMEM;
        if (st == ST_OK && p->nkernels == 0)
            st = diag_error(d, g->path, only < g->nnodes ? g->nodes[only].name : NULL, NULL,
                            "no NPU kernel is anchored at this node");
        if (st != ST_OK) {
            plan_free(p);
            return st;
        }
        *out = p;
        return ST_OK;
    }
    /* every --break id must name an instance; a switched-off one has no kernel to corrupt */
    int nbreak = 0, known = 0;
    for (const char *c = o->break_id; c && *c; c++)
        nbreak += *c == ',';
    for (int f = 0; o->break_id && f < g->nfusions; f++)
        known += in_list(o->break_id, g->fusions[f].id);
    if (st == ST_OK && o->break_id && known != nbreak + 1)
        st = diag_error(d, g->path, NULL, NULL, "--break %s: %s (see `fusion list`)", o->break_id,
                        nbreak ? "not every id names a fusion instance"
                               : "no fusion instance has that id");
    if (st == ST_OK) warn_unused_switches(g, o, d);
    if (st == ST_OK) st = build_parts(&L);
    /* the kernel order plan-memory counted lifetimes in (Node.slot), then levels by the bytes
     * kernels touch, each NPU partition ordered by level */
    int *slot = st == ST_OK ? malloc(sizeof(int) * ((size_t)p->nkernels + 1)) : NULL;
    if (st == ST_OK && !slot) st = ST_NOMEM;
    for (int k = 0; st == ST_OK && k < p->nkernels; k++)
        slot[k] = g->nodes[p->kernels[k].node].slot;
    if (st == ST_OK) st = plan_schedule(p, slot);
    free(slot);
    if (st == ST_OK) {
        p->recipes = arena_alloc(&p->arena, sizeof(PlanRecipe) * (size_t)(g->nrecipes + 1));
        if (!p->recipes) st = ST_NOMEM;
        for (int i = 0; st == ST_OK && i < g->nrecipes; i++) {
            const Recipe *r = &g->recipes[i];
#define PT(x) ((x) >= 0 ? pt[x] : -1)
            PlanRecipe *q = &p->recipes[p->nrecipes++];
            *q = (PlanRecipe){.kind = r->kind,
                              .out_w = PT(r->out_w),
                              .out_b = PT(r->out_b),
                              .conv_w = PT(r->conv_w),
                              .conv_b = PT(r->conv_b),
                              .gamma = PT(r->gamma),
                              .beta = PT(r->beta),
                              .mean = PT(r->mean),
                              .var = PT(r->var),
                              .eps = r->eps,
                              .nsrc = r->nsrc,
                              .block = r->block};
            for (int k = 0; k < r->nsrc; k++)
                q->src[k] = PT(r->src[k]);
#undef PT
            q->nodes =
                r->nnodes ? arena_alloc(&p->arena, sizeof(char *) * (size_t)r->nnodes) : NULL;
            if (r->nnodes && !q->nodes) st = ST_NOMEM;
            for (int k = 0; st == ST_OK && k < r->nnodes; k++)
                q->nodes[q->nnodes++] = arena_strdup(&p->arena, g->nodes[r->nodes[k]].name);
        }
    }
    free(pt);
    if (st == ST_OK && p->arena.failed)
        st = ST_NOMEM; /* a name or list the builders did not check */
    if (st != ST_OK) {
        plan_free(p);
        return st;
    }
    *out = p;
    return ST_OK;
}

Status plan_build(const Graph *g, const CompileOptions *o, Plan **out, DiagList *d)
{
    return build(g, o, -1, out, d);
}

Status plan_build_node(const Graph *g, const CompileOptions *o, int node, Plan **out, DiagList *d)
{
    return build(g, o, node < 0 ? g->nnodes : node, out, d);
}
