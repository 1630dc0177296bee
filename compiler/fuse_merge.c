/* Merges: one kernel that runs the work of several instances (Fusion.merges). A merge is an
 * instance of its own, recorded by the fuse pass after the pattern walk and the prologue folds
 * (so the ids of the instances it merges never move), over the members of those instances and
 * the plain nodes it takes. The instances stay as they are: switching the merge off, or any
 * instance it merges (an extension that falls back counts as off), gives back exactly their
 * kernels. While it applies they are `merged` and their nodes name the merge as their instance.
 *
 * decode_attention_cache. A decode step (one query row) updates each layer's K and V caches at
 * the step's position and then attends over them:
 *   q = rope(q_proj) | q_proj            k = rope(k_proj) | k_proj        v = v_proj
 *   K = index_copy(K_cache, 2, [pos], k) V = index_copy(V_cache, 2, [pos], v)
 *   out = softmax(q K^T * scale + mask) V
 * which runs as rope (q), rope_cache (k into K), index_copy (v into V) and decode_attention: four
 * kernels, two barrier levels. The merge is one kernel, one level: the attention applies the rope
 * to q as it loads it, makes the new K and V rows itself and writes them into the caches, and
 * where it would read the cache row at pos it uses the rows it made (lower_attention.c,
 * shaders/decode_attention.glsl ATTN_CACHE say how that stays free of races).
 *
 * What the match takes: the decode_attention's K and V come (through its repeat_kv views) from
 * two index_copy nodes on the NPU along dim 2 (the positions) of 4-d caches of at least two
 * positions, at one index tensor of one element, both writable in place
 * (graph_index_copy_in_place), their outputs read only by the attention (and graph outputs); V's
 * index_copy in no instance; K's either the anchor of a rope_cache instance, or plain with a
 * source that a rope instance makes or not; q a rope instance's output read only by the
 * attention, or not. Ropes on both sides read the same cos and sin, which broadcast over the
 * heads and the query row. Anything else is a near miss naming what differs; an attention over
 * caches that are plain inputs is no candidate. */
#include <stdlib.h>
#include <string.h>
#include "common/cmp.h"
#include "compiler/fusion.h"
#include "compiler/pass.h"

static bool member(const Fusion *f, int node)
{
    for (int i = 0; i < f->nnodes; i++)
        if (f->nodes[i] == node) return true;
    return false;
}

/* The tensor from outside d that attention operand t comes from through d's member views (the
 * repeat_kv unsqueeze, expand and view), or -1 through any other member (a transpose). */
static int outside_source(const Graph *g, const Fusion *d, int t)
{
    for (;;) {
        int p = g->tensors[t].producer;
        if (p < 0 || !member(d, p)) return t;
        OpId op = g->nodes[p].op;
        if (op != OP_VIEW && op != OP_EXPAND && op != OP_UNSQUEEZE) return -1;
        t = g->nodes[p].in[0];
    }
}

/* The rope instance (pattern family rope or rope_cache, switched on or not) whose chain makes
 * tensor t, or -1. */
static int rope_making(const Graph *g, int t)
{
    int p = g->tensors[t].producer;
    if (p < 0 || g->nodes[p].fusion < 0) return -1;
    int f = g->nodes[p].fusion;
    const Fusion *fu = &g->fusions[f];
    if (!fu->family || (strcmp(fu->family, "rope") != 0 && strcmp(fu->family, "rope_cache") != 0))
        return -1;
    int x, cos, sin, tp;
    /* the chain's add makes t (a rope_cache's anchor is its index_copy) */
    return g->nodes[p].op == OP_ADD && fuse_rope_operands(g, fu, &x, &cos, &sin, &tp) ? f : -1;
}

/* Is every reader of t a member of d (t may be a graph output too)? */
static bool read_by(const Graph *g, int t, const Fusion *d)
{
    const GTensor *x = &g->tensors[t];
    for (int c = 0; c < x->nconsumers; c++)
        if (!member(d, x->consumers[c])) return false;
    return true;
}

/* cos or sin of the ropes: [.., 1, 1, D] right-aligned to the rope output [B, H, 1, D], the
 * batch dim 1 or B (the kernel reads one row per batch, the same for every head). */
static bool rope_table_ok(const GTensor *c, const GTensor *ref)
{
    if (c->rank < 1 || c->rank > 4 || c->shape[c->rank - 1] != ref->shape[3]) return false;
    for (int i = 1; i < c->rank; i++) {
        int d = 4 - c->rank + i - 1; /* c's dim i - 1 in [B, H, 1, D] */
        int64_t s = c->shape[i - 1];
        if (d >= 1 && s != 1) return false;
        if (d == 0 && s != 1 && s != ref->shape[0]) return false;
    }
    return true;
}

/* The index_copy updating a cache at the step's position: checks common to K's and V's. */
static const char *cache_update_why(const Graph *g, const Node *ic, const Fusion *d)
{
    const GTensor *self = node_input(g, ic, 0), *src = node_input(g, ic, 2);
    if (ic->place != PLACE_NPU) return "a cache update runs on the CPU";
    if (self->rank != 4 || norm_dim(attr_int(ic, "dim", 0), 4) != 2)
        return "a cache update is not along dim 2 (the positions) of a 4-d cache";
    if (self->shape[2] < 2) return "a cache of one position (its row would be the only one)";
    if (src->rank != 4 || src->shape[2] != 1 || tensor_numel(node_input(g, ic, 1)) != 1)
        return "a cache update writes more than one position";
    if (!read_by(g, ic->out[0], d)) return "an updated cache has readers besides the attention";
    return NULL;
}

bool fuse_merge_parts(const Graph *g, int d, MergeParts *p, const char **why)
{
    *why = NULL;
    const Fusion *D = &g->fusions[d];
    if (!D->family || strcmp(D->family, "decode_attention") != 0 || D->fell_back_from) return false;
    const Node *mm[2] = {NULL, NULL}, *tr = NULL;
    for (int i = 0, n = 0; i < D->nnodes; i++)
        if (g->nodes[D->nodes[i]].op == OP_MATMUL && n < 2) mm[n++] = &g->nodes[D->nodes[i]];
    for (int i = 0; i < D->nnodes && mm[1]; i++)
        if (g->nodes[D->nodes[i]].op == OP_TRANSPOSE &&
            g->nodes[D->nodes[i]].out[0] == mm[0]->in[1])
            tr = &g->nodes[D->nodes[i]];
    if (!tr) return false;
    int kc = outside_source(g, D, tr->in[0]), vc = outside_source(g, D, mm[1]->in[1]);
    p->d = d;
    p->ick = kc >= 0 ? g->tensors[kc].producer : -1;
    p->icv = vc >= 0 ? g->tensors[vc].producer : -1;
    if (p->ick < 0 || p->icv < 0 || g->nodes[p->ick].op != OP_INDEX_COPY ||
        g->nodes[p->icv].op != OP_INDEX_COPY || g->nodes[p->ick].nin != 3 ||
        g->nodes[p->icv].nin != 3)
        return false; /* the caches are not updated here: nothing to merge */
    const Node *ick = &g->nodes[p->ick], *icv = &g->nodes[p->icv];
    if (p->ick == p->icv) return (*why = "K and V are one cache"), false;
    const char *w = cache_update_why(g, ick, D);
    if (!w) w = cache_update_why(g, icv, D);
    if (w) return (*why = w), false;
    if (ick->in[1] != icv->in[1]) return (*why = "K and V are updated at different indices"), false;
    if (icv->fusion >= 0) return (*why = "V's cache update is fused otherwise"), false;
    /* K's new row: a rope_cache ending in its update, a rope making its source, or neither */
    p->k = -1;
    if (ick->fusion >= 0) {
        const Fusion *kf = &g->fusions[ick->fusion];
        if (strcmp(kf->family, "rope_cache") != 0 || kf->anchor != p->ick)
            return (*why = "K's cache update is fused otherwise"), false;
        p->k = ick->fusion;
    } else {
        const GTensor *src = node_input(g, ick, 2);
        p->k = rope_making(g, ick->in[2]);
        if (p->k >= 0 && (src->nconsumers != 1 || src->is_output))
            return (*why = "the rope making K's new row has other readers"), false;
    }
    int q = mm[0]->in[0];
    p->q = rope_making(g, q);
    if (p->q >= 0 && (g->tensors[q].nconsumers != 1 || g->tensors[q].is_output))
        return (*why = "the rope making q has other readers"), false;
    /* the ropes' tables: one cos and one sin for both sides, broadcast over heads and the row */
    int tab[2][2], nt = 0, ropes[2] = {p->q, p->k};
    const GTensor *outs[2] = {&g->tensors[q], node_input(g, ick, 2)};
    for (int s = 0; s < 2; s++) {
        int x, tp;
        if (ropes[s] < 0) continue;
        if (!fuse_rope_operands(g, &g->fusions[ropes[s]], &x, &tab[nt][0], &tab[nt][1], &tp))
            return false;
        for (int j = 0; j < 2; j++)
            if (!rope_table_ok(&g->tensors[tab[nt][j]], outs[s]))
                return (*why = "a rope's cos or sin varies over heads or positions"), false;
        nt++;
    }
    if (nt == 2 && (tab[0][0] != tab[1][0] || tab[0][1] != tab[1][1]))
        return (*why = "q's and k's ropes read different cos or sin"), false;
    if (nt && !shape_equal(g->tensors[tab[0][0]].rank, g->tensors[tab[0][0]].shape,
                           g->tensors[tab[0][1]].rank, g->tensors[tab[0][1]].shape))
        return (*why = "the rope's cos and sin differ in shape"), false;
    if (!graph_index_copy_in_place(g, p->ick) || !graph_index_copy_in_place(g, p->icv))
        return (*why = "a cache cannot be updated in place (a weight, or read after the update)"),
               false;
    return true;
}

int fuse_merge_nodes(const Graph *g, const MergeParts *p, int *nodes, int max)
{
    int n = 0, parts[3] = {p->d, p->q, p->k}, plain[2] = {p->ick, p->icv};
    for (int s = 0; s < 3; s++) {
        if (parts[s] < 0) continue;
        const Fusion *f = &g->fusions[parts[s]];
        for (int i = 0; i < f->nnodes; i++) {
            if (n >= max) return -1;
            nodes[n++] = f->nodes[i];
        }
    }
    for (int s = 0; s < 2; s++) {
        bool dup = false;
        for (int i = 0; i < n; i++)
            dup |= nodes[i] == plain[s];
        if (dup) continue;
        if (n >= max) return -1;
        nodes[n++] = plain[s];
    }
    qsort(nodes, (size_t)n, sizeof(int), cmp_int);
    return n;
}

bool fuse_merge_of(const Graph *g, const Fusion *m, MergeParts *p)
{
    if (!m->pattern || strcmp(m->pattern, FUSE_MERGE_ATTN) != 0 || m->nmerges < 1 || m->nxout != 2)
        return false;
    p->d = m->merges[0];
    p->ick = g->tensors[m->xout[0]].producer;
    p->icv = g->tensors[m->xout[1]].producer;
    p->q = p->k = -1;
    if (p->ick < 0 || p->icv < 0) return false;
    const Node *ick = &g->nodes[p->ick];
    for (int i = 1; i < m->nmerges; i++) {
        const Fusion *f = &g->fusions[m->merges[i]];
        if (f->anchor == p->ick || f->out == ick->in[2])
            p->k = m->merges[i];
        else
            p->q = m->merges[i];
    }
    return true;
}
