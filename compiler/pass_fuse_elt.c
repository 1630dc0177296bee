/* fuse-elementwise: after the pattern fusions, the elementwise and view ops left on the NPU (and
 * the eval batch norms that did not fold into a conv: codegen_build.c) are grouped into maximal
 * trees, each one generated kernel (lower_gen.c, codegen.h). Walking the
 * graph backwards, an unfused node whose op a generated kernel can compute (codegen_build.c)
 * roots a group, which grows upwards: a producer joins when it can be a member too, its output
 * goes only to members (never a graph output), and the group keeps at most CG_MAX_BINDINGS
 * outside inputs. Every member precedes the root, and every outside input is ready before its
 * member, so the kernel can run at the root (its anchor). A group is kept when it saves at least
 * one dispatch (views that alias their input cost none) and touches the NPU. Nodes of pattern
 * instances, on or off, are never taken: switching a pattern instance off gives its nodes their
 * own kernels, which is what bisect compares. Ops without a hand-written kernel (where,
 * comparisons, sources) are taken from the CPU into a group and placed on the NPU; when their
 * instance is off they run as lone generated kernels. Instances get ids after the pattern
 * fusions' (F<n>, in graph order) and pattern name `elementwise`; --no-fuse switches them like
 * the others, and `--no-fuse fuse-elementwise` turns the whole pass off. */
#include <stdlib.h>
#include <string.h>

#include "compiler/codegen/codegen_build.h"
#include "common/cmp.h"
#include "compiler/fusion.h"
#include "compiler/pass.h"

#define GROUP_MAX 64

typedef struct Group {
    int anchor;
    int n;
    int *nodes; /* sorted, in the pass's scratch arena */
} Group;

/* A node the partition left on the CPU because no hand-written kernel runs it (an op without
 * one: full/zeros/ones/arange, logical ops; or attributes the hand-written one lacks: integer
 * comparisons): a generated kernel computes it (eligible() asks codegen), inside a group or
 * alone when the group is switched off (lower.c), so the group may take it onto the NPU.
 * --cpu-op keeps a node on the CPU. */
static bool adoptable(const Node *n, const CompileOptions *o)
{
    return n->place == PLACE_CPU && !compile_forced_cpu(o, n);
}

static bool eligible(const Graph *g, int i, const int *owner, const CompileOptions *o)
{
    const Node *n = &g->nodes[i];
    const char *why;
    return !n->dead && (n->place == PLACE_NPU || adoptable(n, o)) && n->fusion < 0 &&
           owner[i] < 0 && n->nout == 1 && cg_node_supported(g, n, &why);
}

/* Does the group touch the NPU already (a member placed there, or the root read there)? A
 * group of adopted nodes feeding only the CPU would add transfers, not remove dispatches. */
static bool touches_npu(const Graph *g, const int *m, int n)
{
    for (int i = 0; i < n; i++)
        if (g->nodes[m[i]].place == PLACE_NPU) return true;
    const GTensor *t = &g->tensors[g->nodes[m[0]].out[0]];
    for (int c = 0; c < t->nconsumers; c++)
        if (g->nodes[t->consumers[c]].place == PLACE_NPU) return true;
    return false;
}

static bool in_list(const int *v, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x) return true;
    return false;
}

/* Outside inputs of members[0..n) (tensors not produced by a member). */
static int outside_inputs(const Graph *g, const int *members, int n)
{
    int seen[CG_MAX_BINDINGS * 4], ns = 0;
    for (int i = 0; i < n; i++) {
        const Node *m = &g->nodes[members[i]];
        for (int k = 0; k < m->nin; k++) {
            int t = m->in[k], p = g->tensors[t].producer;
            if ((p >= 0 && in_list(members, n, p)) || in_list(seen, ns, t)) continue;
            if (ns == (int)(sizeof seen / sizeof seen[0])) return ns + 1;
            seen[ns++] = t;
        }
    }
    return ns;
}

/* May producer p join the group: its one output read by members only? */
static bool only_members_read(const Graph *g, int p, const int *members, int n)
{
    const GTensor *t = &g->tensors[g->nodes[p].out[0]];
    if (t->is_output || t->nconsumers == 0) return false;
    for (int c = 0; c < t->nconsumers; c++)
        if (!in_list(members, n, t->consumers[c])) return false;
    return true;
}

/* Dispatches a member would cost on its own: reshape-likes on the NPU become aliases, the rest a
 * kernel (a CPU node always runs). */
static int own_kernels(const Graph *g, int i)
{
    OpId op = g->nodes[i].op;
    if (g->nodes[i].place == PLACE_NPU && op_keeps_order(op)) return 0;
    return 1;
}

/* May member x take the producer p of its input k? Not the cat that makes a batch norm's input
 * (a pre-activation block's concatenated features, DenseNet's): a generated kernel loads every
 * part of a cat for each element (k loads for k parts, DenseNet's up to 8 within the binding
 * limit), where the cat's own kernels copy each element once; whether to copy at all is the
 * concatenation's business (lower_cat.c, memory planning). */
static bool takes_producer(const Graph *g, const Node *x, int k, int p)
{
    return !(x->op == OP_BATCH_NORM && k == 0 && g->nodes[p].op == OP_CAT);
}

/* Grows the group rooted at `root`; returns its size (members in m). */
static int grow(const Graph *g, int root, const int *owner, const CompileOptions *o, int *m)
{
    int n = 0;
    m[n++] = root;
    for (int at = 0; at < n; at++) {
        const Node *x = &g->nodes[m[at]];
        for (int k = 0; k < x->nin && n < GROUP_MAX; k++) {
            int p = g->tensors[x->in[k]].producer;
            if (p < 0 || in_list(m, n, p) || !eligible(g, p, owner, o) ||
                !takes_producer(g, x, k, p))
                continue;
            m[n] = p;
            if (!only_members_read(g, p, m, n + 1) || outside_inputs(g, m, n + 1) > CG_MAX_BINDINGS)
                continue;
            n++;
        }
    }
    return n;
}

static bool pass_off(const CompileOptions *o)
{
    for (int i = 0; i < o->n_no_fuse; i++)
        if (strcmp(o->no_fuse[i], "fuse-elementwise") == 0) return true;
    return false;
}

Status pass_fuse_elementwise(Graph *g, PassCtx *c)
{
    if (pass_off(c->opt)) return ST_OK;
    int *owner = arena_alloc(c->scratch, sizeof(int) * ((size_t)g->nnodes + 1));
    Group *groups = arena_alloc(c->scratch, sizeof(Group) * ((size_t)g->nnodes + 1));
    if (!owner || !groups) return ST_NOMEM;
    for (int i = 0; i < g->nnodes; i++)
        owner[i] = -1;
    int ngroups = 0, m[GROUP_MAX];
    for (int root = g->nnodes - 1; root >= 0; root--) {
        if (!eligible(g, root, owner, c->opt)) continue;
        int n = grow(g, root, owner, c->opt, m);
        int kernels = 0;
        for (int i = 0; i < n; i++)
            kernels += own_kernels(g, m[i]);
        if (kernels < 2 || !touches_npu(g, m, n)) continue;
        qsort(m, (size_t)n, sizeof(int), cmp_int);
        Group *gr = &groups[ngroups];
        gr->anchor = root;
        gr->n = n;
        gr->nodes = arena_dup(c->scratch, m, sizeof(int) * (size_t)n);
        if (!gr->nodes) return ST_NOMEM;
        for (int i = 0; i < n; i++)
            owner[m[i]] = ngroups;
        ngroups++;
    }
    /* instances in graph order of their anchors (found last to first) */
    for (int k = ngroups - 1; k >= 0; k--) {
        const Group *gr = &groups[k];
        Fusion *fs = realloc(g->fusions, sizeof(Fusion) * (size_t)(g->nfusions + 1));
        if (!fs) return ST_NOMEM;
        g->fusions = fs;
        Fusion *f = &g->fusions[g->nfusions];
        *f = (Fusion){0}; /* fields other passes add (family, kin) start empty */
        f->id = arena_printf(&g->arena, "F%d", g->nfusions + 1);
        f->pattern = FUSE_ELEMENTWISE;
        f->kernel = KK_elementwise;
        f->nnodes = gr->n;
        f->nodes = arena_dup(&g->arena, gr->nodes, sizeof(int) * (size_t)gr->n);
        f->anchor = gr->anchor;
        f->out = g->nodes[gr->anchor].out[0];
        f->enabled = true;
        if (!f->id || !f->nodes) return ST_NOMEM;
        for (int i = 0; i < c->opt->n_no_fuse; i++)
            if (fuse_selected(c->opt->no_fuse[i], f)) f->enabled = false;
        for (int i = 0; i < gr->n; i++) {
            Node *nd = &g->nodes[gr->nodes[i]];
            nd->fusion = g->nfusions;
            if (nd->place == PLACE_CPU) nd->adopted = true;
            nd->place = PLACE_NPU; /* adopted from the CPU, if it was there */
            nd->why_cpu = NULL;
        }
        g->nfusions++;
    }
    /* a group that took host-only views from the CPU runs at its root, which may sit among the
     * hoisted host-only nodes: hoist them again ahead of it */
    return ngroups ? graph_hoist_host(g, c->scratch) : ST_OK;
}
