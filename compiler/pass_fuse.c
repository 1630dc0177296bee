/* fuse: walk the NPU nodes in graph order and try the patterns triggered by each node's op in
 * registry (priority) order; the first match becomes an instance F<n>. Every instance is checked
 * generically (members live, on the NPU, no intermediate escaping the group) so a pattern's
 * match function cannot produce an unsound group. --no-fuse switches instances off; a switched-
 * off instance stays listed, and lowering treats its nodes as unfused. A no_fuse entry "+SEL"
 * switches back on what earlier entries switched off (the session's `fusion on`). An instance of
 * a pattern with a fallback (rope_cache, attention) switched off while the fallback stays
 * selected keeps its id as an instance of the fallback's form among its members (rope without
 * the index_copy; masked_softmax, the other members left to fuse-elementwise), so the plan is
 * the one the registry without the extension gives. Prologue folds (fuse_fold.c) follow the
 * walk: instances over the members of another instance; merges (fuse_merge.c) follow them:
 * instances over the members of several. */
#include <stdlib.h>
#include <string.h>
#include "compiler/fusion.h"
#include "common/cmp.h"
#include "compiler/pass.h"

static bool in_group(const FuseMatch *m, int node)
{
    for (int i = 0; i < m->n; i++)
        if (m->nodes[i] == node) return true;
    return false;
}

/* Generic soundness: only the anchor's output leaves the group (parallel members: only the
 * outputs of member chains, each chain's inner tensors staying inside). */
static const char *check_group(const Graph *g, FuseMatch *m, const bool *taken)
{
    qsort(m->nodes, (size_t)m->n, sizeof(int), cmp_int);
    for (int i = 1; i < m->n; i++)
        if (m->nodes[i] == m->nodes[i - 1]) return "a node matched twice";
    int anchor = m->nodes[m->n - 1];
    for (int i = 0; i < m->n; i++) {
        const Node *n = &g->nodes[m->nodes[i]];
        if (n->dead || taken[m->nodes[i]] || n->place != PLACE_NPU)
            return "a member is already fused or runs on the CPU";
        if (m->nodes[i] == anchor) continue;
        if (m->parts) {
            /* a part's output leaves the group; a tensor read inside it stays inside */
            bool inner = false;
            const GTensor *t = &g->tensors[n->out[0]];
            for (int c = 0; c < t->nconsumers; c++)
                inner |= in_group(m, t->consumers[c]);
            if (!inner) continue;
        }
        for (int k = 0; k < n->nout; k++) {
            const GTensor *t = &g->tensors[n->out[k]];
            if (t->is_output) return "an intermediate is a graph output";
            for (int c = 0; c < t->nconsumers; c++)
                if (!in_group(m, t->consumers[c])) return "an intermediate has other consumers";
        }
    }
    return NULL;
}

static Status add_miss(Graph *g, const char *pattern, int node, const char *why)
{
    NearMiss *p = realloc(g->misses, sizeof(NearMiss) * (size_t)(g->nmisses + 1));
    if (!p) return ST_NOMEM;
    g->misses = p;
    g->misses[g->nmisses++] = (NearMiss){pattern, node, why};
    return ST_OK;
}

/* The user's rules in order, the last that selects the instance decides ("+ID" turns on). */
static bool switched_on(const CompileOptions *o, const Fusion *f)
{
    bool on = true;
    for (int k = 0; k < o->n_no_fuse; k++) {
        const char *r = o->no_fuse[k];
        bool plus = r[0] == '+';
        if (fuse_selected(plus ? r + 1 : r, f)) on = plus;
    }
    return on;
}

/* The fallback form of match m: pattern `fallback` matched at the first member its trigger
 * starts, every node of it a member (rope at rope_cache's add: every member but the index_copy;
 * masked_softmax at attention's mask add: the add and the softmax). False when there is none. */
static bool fallback_match(const Graph *g, const FuseMatch *m, const char *fallback,
                           const bool *taken, FuseMatch *out, KernelKind *kernel)
{
    for (int p = 0; p < fuse_pattern_count; p++) {
        const FusePattern *fp = &fuse_patterns[p];
        if (strcmp(fp->name, fallback) != 0) continue;
        for (int i = 0; i < m->n; i++) {
            if (g->nodes[m->nodes[i]].op != fp->trigger) continue;
            FuseMatch b;
            memset(&b, 0, sizeof b);
            const char *why = NULL;
            if (!fp->match(g, m->nodes[i], taken, &b, &why)) continue;
            bool inside = true;
            for (int k = 0; k < b.n && inside; k++)
                inside = in_group(m, b.nodes[k]);
            if (inside && !check_group(g, &b, taken)) {
                *out = b;
                *kernel = fp->kernel;
                return true;
            }
        }
    }
    return false;
}

/* Records instance F<n> of `pattern` (family `family`, running a kernel of kind `kernel`) over
 * the nodes of m, its anchor the last, and applies the user's switches. A pattern with a fallback
 * (rope_cache's rope, attention's masked_softmax) switched off while the fallback stays selected
 * becomes an instance of the fallback's form among its members (m shrinks to it: the other members
 * are left to later patterns and passes, as without the extension). Returns its index, or -1 when
 * out of memory. */
static int record(Graph *g, PassCtx *c, FuseMatch *m, const char *pattern, const char *family,
                  const char *fallback, KernelKind kernel, const bool *taken)
{
    Fusion *fs = realloc(g->fusions, sizeof(Fusion) * (size_t)(g->nfusions + 1));
    if (!fs) return -1;
    g->fusions = fs;
    Fusion *f = &g->fusions[g->nfusions];
    *f = (Fusion){0};
    f->id = arena_printf(&g->arena, "F%d", g->nfusions + 1);
    f->pattern = pattern;
    f->family = family;
    f->base = fallback;
    f->kernel = kernel;
    f->enabled = switched_on(c->opt, f);
    FuseMatch fm;
    KernelKind fk;
    if (!f->enabled && fallback && fallback_match(g, m, fallback, taken, &fm, &fk)) {
        /* switched off as the extension only: the fallback form */
        Fusion b = *f;
        b.pattern = fm.variant ? fm.variant : fallback;
        b.family = fallback;
        b.base = NULL;
        b.kernel = fk;
        if (switched_on(c->opt, &b)) {
            *f = b;
            f->fell_back_from = pattern;
            f->enabled = true;
            *m = fm;
        }
    }
    f->nnodes = m->n;
    f->nodes = arena_dup(&g->arena, m->nodes, sizeof(int) * (size_t)m->n);
    f->anchor = m->nodes[m->n - 1];
    f->out = g->nodes[f->anchor].out[0];
    f->nkin = 0;
    if (!f->id || !f->nodes) return -1;
    return g->nfusions++;
}

/* Prologue folds (fuse_fold.c), after the walk: one instance per rmsnorm / silu_mul instance
 * whose readers are all GEMV-shaped linears, over the same members; a near miss otherwise. A
 * fold applies only while its base is enabled too. */
static Status record_folds(Graph *g, PassCtx *c)
{
    int nbase = g->nfusions;
    for (int b = 0; b < nbase; b++) {
        const char *why = NULL, *name = fuse_fold_match(g, &g->fusions[b], &why);
        if (!name) continue;
        if (why) {
            if (add_miss(g, name, g->fusions[b].anchor, why) != ST_OK) return ST_NOMEM;
            continue;
        }
        FuseMatch m;
        memset(&m, 0, sizeof m);
        m.n = g->fusions[b].nnodes;
        memcpy(m.nodes, g->fusions[b].nodes, sizeof(int) * (size_t)m.n);
        int f = record(g, c, &m, name, name, NULL, KK_NONE, NULL);
        if (f < 0) return ST_NOMEM;
        Fusion *fo = &g->fusions[f], *base = &g->fusions[b];
        fo->anchor = base->anchor;
        fo->out = base->out;
        fo->folds = b + 1;
        if (!base->enabled) fo->enabled = false;
        base->folded = fo->enabled;
    }
    return ST_OK;
}

/* Merges (fuse_merge.c), after the folds: one instance per decode_attention whose caches are
 * updated right before it, over the members of the instances it merges and its plain
 * index_copy nodes; a near miss otherwise. It applies only while every instance it merges is
 * enabled as matched (a rope_cache fallen back to rope counts as switched off); it then takes
 * their nodes (Node.fusion) and marks them merged. */
static Status record_merges(Graph *g, PassCtx *c)
{
    int nbase = g->nfusions;
    for (int d = 0; d < nbase; d++) {
        MergeParts mp;
        const char *why = NULL;
        if (!fuse_merge_parts(g, d, &mp, &why)) {
            if (why && add_miss(g, FUSE_MERGE_ATTN, g->fusions[d].anchor, why) != ST_OK)
                return ST_NOMEM;
            continue;
        }
        FuseMatch m;
        memset(&m, 0, sizeof m);
        m.n = fuse_merge_nodes(g, &mp, m.nodes, FUSE_MAX_NODES);
        if (m.n < 0) {
            if (add_miss(g, FUSE_MERGE_ATTN, g->fusions[d].anchor, "too many nodes") != ST_OK)
                return ST_NOMEM;
            continue;
        }
        int f = record(g, c, &m, FUSE_MERGE_ATTN, FUSE_MERGE_ATTN, NULL, KK_attention_cache, NULL);
        if (f < 0) return ST_NOMEM;
        Fusion *fo = &g->fusions[f];
        const Fusion *base = &g->fusions[mp.d];
        fo->anchor = base->anchor;
        fo->out = base->out;
        int parts[3] = {mp.d, mp.q, mp.k};
        for (int s = 0; s < 3; s++) {
            if (parts[s] < 0) continue;
            const Fusion *pf = &g->fusions[parts[s]];
            fo->merges[fo->nmerges++] = parts[s];
            if (!pf->enabled || pf->fell_back_from) fo->enabled = false;
        }
        fo->xout[fo->nxout++] = g->nodes[mp.ick].out[0];
        fo->xout[fo->nxout++] = g->nodes[mp.icv].out[0];
        if (!fo->enabled) continue;
        for (int s = 0; s < fo->nmerges; s++)
            g->fusions[fo->merges[s]].merged = f + 1;
        for (int k = 0; k < fo->nnodes; k++)
            g->nodes[fo->nodes[k]].fusion = f;
    }
    return ST_OK;
}

Status pass_fuse(Graph *g, PassCtx *c)
{
    bool *taken = arena_alloc(c->scratch, (size_t)g->nnodes + 1);
    if (!taken) return ST_NOMEM;
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = &g->nodes[i];
        if (n->dead || n->place != PLACE_NPU || taken[i]) continue;
        for (int p = 0; p < fuse_pattern_count; p++) {
            const FusePattern *fp = &fuse_patterns[p];
            if (fp->trigger != n->op) continue;
            FuseMatch m;
            memset(&m, 0, sizeof m);
            const char *why = NULL;
            if (!fp->match(g, i, taken, &m, &why)) {
                if (why && add_miss(g, fp->name, i, why) != ST_OK) return ST_NOMEM;
                continue;
            }
            const char *bad = check_group(g, &m, taken);
            if (bad) {
                if (add_miss(g, fp->name, i, bad) != ST_OK) return ST_NOMEM;
                continue;
            }
            int f = record(g, c, &m, m.variant ? m.variant : fp->name, fp->name, fp->fallback,
                           fp->kernel, taken);
            if (f < 0) return ST_NOMEM;
            for (int k = 0; k < m.n; k++) {
                taken[m.nodes[k]] = true;
                g->nodes[m.nodes[k]].fusion = f;
            }
            Status st = m.finish && !g->fusions[f].fell_back_from ? m.finish(g, f) : ST_OK;
            if (st != ST_OK) return st;
            break;
        }
    }
    Status st = record_folds(g, c);
    return st == ST_OK ? record_merges(g, c) : st;
}
