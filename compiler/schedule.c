#include "compiler/schedule.h"

#include <stdlib.h>
#include <string.h>
#include "compiler/pass.h"

static int base_of(const Graph *g, int t)
{
    return g->tensors[t].alias_of >= 0 ? g->tensors[t].alias_of : t;
}

typedef struct Unit {
    int node, level, key1, key2;
} Unit;

static int by_keys(const void *a, const void *b)
{
    const Unit *x = a, *y = b;
    if (x->key1 != y->key1) return x->key1 - y->key1;
    if (x->key2 != y->key2) return x->key2 - y->key2;
    return x->node - y->node;
}

Status graph_schedule(Graph *g)
{
    int *lvl = calloc((size_t)g->ntensors + 1, sizeof(int));  /* last writer's level */
    int *rlvl = calloc((size_t)g->ntensors + 1, sizeof(int)); /* last reader's level */
    Unit *u = malloc(sizeof(Unit) * ((size_t)g->nnodes + 1));
    if (!lvl || !rlvl || !u) {
        free(lvl);
        free(rlvl);
        free(u);
        return ST_NOMEM;
    }
    int nu = 0, run = 0;
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = &g->nodes[i];
        n->slot = -1;
        if (graph_kernel_node(g, i) != i) continue;
        const Fusion *f =
            n->fusion >= 0 && g->fusions[n->fusion].enabled ? &g->fusions[n->fusion] : NULL;
        /* an instance writes its output and its xout (a merge's caches, in place) */
        int buf[64], fout[1 + FUSE_MAX_XOUT], nin = n->nin, nout = f ? 1 + f->nxout : n->nout;
        const int *in = n->in, *out = f ? fout : n->out;
        if (f) {
            fout[0] = f->out;
            memcpy(fout + 1, f->xout, sizeof(int) * (size_t)f->nxout);
        }
        if (f || nin <= 64) { /* (a CPU cat of more inputs reads no folded output) */
            nin = graph_kernel_inputs(g, i, buf, 64);
            in = buf;
        }
        int level = 0;
        for (int a = 0; a < nin; a++) {
            int t = base_of(g, in[a]);
            if (lvl[t] > level) level = lvl[t];
        }
        for (int a = 0; a < nout; a++) {
            int t = base_of(g, out[a]);
            if (lvl[t] > level) level = lvl[t];
            if (rlvl[t] > level) level = rlvl[t];
        }
        level++;
        for (int a = 0; a < nin; a++) {
            int t = base_of(g, in[a]);
            if (rlvl[t] < level) rlvl[t] = level;
        }
        for (int a = 0; a < nout; a++)
            lvl[base_of(g, out[a])] = level;
        bool npu = n->place == PLACE_NPU;
        if (nu > 0 && (g->nodes[u[nu - 1].node].place == PLACE_NPU) != npu) run++;
        /* NPU runs are ordered by level, CPU runs keep the graph order */
        u[nu] = (Unit){i, level, run, npu ? level : nu}; /* nu: this unit's index */
        nu++;
    }
    qsort(u, (size_t)nu, sizeof *u, by_keys);
    for (int k = 0, slot = -1; k < nu; k++) {
        if (k == 0 || u[k].key1 != u[k - 1].key1 || u[k].key2 != u[k - 1].key2) slot++;
        g->nodes[u[k].node].slot = slot;
    }
    for (int i = 0; i < g->nnodes; i++) {
        int kn = graph_kernel_node(g, i);
        if (kn >= 0) g->nodes[i].slot = g->nodes[kn].slot;
    }
    /* the members of a folded instance run in its readers' kernels: the last one's slot (what
     * they read lives until then) */
    for (int f = 0; f < g->nfusions; f++) {
        const Fusion *fu = &g->fusions[f];
        if (!fu->folded) continue;
        const GTensor *y = &g->tensors[fu->out];
        int last = -1;
        for (int c = 0; c < y->nconsumers; c++)
            if (g->nodes[y->consumers[c]].slot > last) last = g->nodes[y->consumers[c]].slot;
        for (int k = 0; k < fu->nnodes; k++)
            g->nodes[fu->nodes[k]].slot = last;
    }
    free(lvl);
    free(rlvl);
    free(u);
    return ST_OK;
}

HzSpan plan_span(const Plan *p, int t)
{
    int b = plan_base(p, t);
    const PlanTensor *x = &p->tensors[t], *bx = &p->tensors[b];
    HzSpan s = {0, 0, 0, 0};
    s.buf = bx->offset >= 0 ? 0 : (uintptr_t)b + 1;
    s.lo = (uint64_t)(bx->offset >= 0 ? bx->offset : 0) + plan_view_bytes(x);
    s.hi = s.lo + plan_device_bytes(x);
    return s;
}

/* The highest tag in s that kernel k conflicts with, -1 when none. */
static int conflict(const Plan *p, const PlanKernel *k, const HzSet *s)
{
    int worst = -1;
    for (int a = 0; a < k->nargs; a++) {
        if (k->args[a] < 0) continue;
        HzSpan x = plan_span(p, k->args[a]);
        int c = hz_conflict(s, &x, a >= k->nin);
        if (c > worst) worst = c;
    }
    return worst;
}

static Status record(const Plan *p, const PlanKernel *k, HzSet *s, int tag)
{
    for (int a = 0; a < k->nargs; a++) {
        if (k->args[a] < 0) continue;
        HzSpan x = plan_span(p, k->args[a]);
        x.tag = tag;
        if (hz_add(s, &x, a >= k->nin) != ST_OK) return ST_NOMEM;
    }
    return ST_OK;
}

typedef struct Key {
    int level, index;
} Key;

static int by_level(const void *a, const void *b)
{
    const Key *x = a, *y = b;
    if (x->level != y->level) return x->level - y->level;
    return x->index - y->index;
}

/* Stable sort of the kernels of partition pi by kv[kernel]. */
static Status order_part(Plan *p, int pi, const int *kv)
{
    const PlanPart *pp = &p->parts[pi];
    int n = pp->nkernels, f = pp->first_kernel;
    Key *key = malloc(sizeof *key * ((size_t)n + 1));
    PlanKernel *tmp = malloc(sizeof *tmp * ((size_t)n + 1));
    if (!key || !tmp) {
        free(key);
        free(tmp);
        return ST_NOMEM;
    }
    for (int i = 0; i < n; i++)
        key[i] = (Key){kv[f + i], i};
    qsort(key, (size_t)n, sizeof *key, by_level);
    memcpy(tmp, &p->kernels[f], sizeof *tmp * (size_t)n);
    for (int i = 0; i < n; i++)
        p->kernels[f + i] = tmp[key[i].index];
    free(key);
    free(tmp);
    return ST_OK;
}

/* Sorts the kernels of every partition (only the NPU ones when npu_only) by kv[kernel]. */
static Status order(Plan *p, const int *kv, bool npu_only)
{
    Status st = ST_OK;
    for (int pi = 0; pi < p->nparts && st == ST_OK; pi++)
        if (!npu_only || p->parts[pi].target == KT_NPU) st = order_part(p, pi, kv);
    return st;
}

static Status levels(Plan *p)
{
    HzSet seen = {0};
    Status st = ST_OK;
    p->nlevels = 0;
    for (int k = 0; k < p->nkernels && st == ST_OK; k++) {
        PlanKernel *kn = &p->kernels[k];
        int c = conflict(p, kn, &seen);
        kn->level = (c > 0 ? c : 0) + 1;
        if (kn->level > p->nlevels) p->nlevels = kn->level;
        st = record(p, kn, &seen, kn->level);
    }
    hz_free(&seen);
    return st;
}

Status plan_schedule(Plan *p, const int *slot)
{
    int n = p->nkernels;
    int *kv = malloc(sizeof(int) * ((size_t)n + 1));
    if (!kv) return ST_NOMEM;
    Status st = ST_OK;
    if (slot) {
        memcpy(kv, slot, sizeof(int) * (size_t)n);
        st = order(p, kv, false);
    }
    if (st == ST_OK) st = levels(p);
    if (st == ST_OK) {
        for (int k = 0; k < n; k++)
            kv[k] = p->kernels[k].level;
        st = order(p, kv, true);
    }
    free(kv);
    /* a fusion names its instance's first kernel in the new order */
    for (int f = 0; st == ST_OK && f < p->nfusions; f++) {
        if (p->fusions[f].kernel < 0) continue;
        for (int k = 0; k < n; k++)
            if (p->kernels[k].fusion == f) {
                p->fusions[f].kernel = k;
                break;
            }
    }
    return st;
}

int plan_barriers(const Plan *p, int first, int n)
{
    HzSet s = {0};
    int count = 0;
    for (int k = first; k < first + n && count >= 0; k++) {
        const PlanKernel *kn = &p->kernels[k];
        if (conflict(p, kn, &s) >= 0) {
            count++;
            hz_clear(&s);
        }
        if (record(p, kn, &s, 0) != ST_OK) count = -1;
    }
    hz_free(&s);
    return count;
}

int plan_barriers_total(const Plan *p)
{
    int total = 0;
    for (int i = 0; i < p->nparts && total >= 0; i++) {
        if (p->parts[i].target != KT_NPU) continue;
        int b = plan_barriers(p, p->parts[i].first_kernel, p->parts[i].nkernels);
        total = b < 0 ? -1 : total + b;
    }
    return total;
}
