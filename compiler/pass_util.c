#include "compiler/pass.h"
#include "compiler/fusion.h"
#include "common/cmp.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void graph_replace_uses(Graph *g, int from, int to)
{
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = &g->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->nin; k++)
            if (n->in[k] == from) n->in[k] = to;
    }
    for (int i = 0; i < g->noutputs; i++)
        if (g->outputs[i] == from) g->outputs[i] = to;
}

void graph_kill(Graph *g, int node)
{
    g->nodes[node].dead = true;
}

int graph_add_derived_weight(Graph *g, const char *name, const GTensor *like, int rank,
                             const int64_t *shape)
{
    int t = graph_add_tensor(g, name, like->dtype, rank, shape, TK_WEIGHT);
    if (t < 0) return -1;
    g->tensors[t].weight_key = g->tensors[t].name;
    int *w = realloc(g->weights, sizeof(int) * (size_t)(g->nweights + 1));
    if (!w) return -1;
    g->weights = w;
    g->weights[g->nweights++] = t;
    return t;
}

int fusion_inputs(const Graph *g, const Fusion *f, int *ins, int max)
{
    if (f->nkin > 0) {
        for (int i = 0; i < f->nkin && i < max; i++)
            ins[i] = f->kin[i];
        return f->nkin < max ? f->nkin : max;
    }
    int n = 0;
    for (int i = 0; i < f->nnodes; i++) {
        const Node *nd = &g->nodes[f->nodes[i]];
        for (int k = 0; k < nd->nin; k++) {
            int t = nd->in[k];
            bool inside = false, dup = false;
            int pr = g->tensors[t].producer;
            for (int j = 0; j < f->nnodes && pr >= 0; j++)
                inside |= f->nodes[j] == pr;
            for (int j = 0; j < n; j++)
                dup |= ins[j] == t;
            if (!inside && !dup && n < max) ins[n++] = t;
        }
    }
    return n;
}

void graph_number_parts(Graph *g)
{
    int part = -1;
    Placement prev = PLACE_CPU;
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = &g->nodes[i];
        if (n->dead) continue;
        if (part < 0 || n->place != prev) part++;
        prev = n->place;
        n->part = part;
    }
    g->nparts = part + 1;
}

int graph_kernel_node(const Graph *g, int i)
{
    const Node *n = &g->nodes[i];
    if (n->dead) return -1;
    if (n->place == PLACE_CPU) return i;
    if (n->fusion >= 0 && g->fusions[n->fusion].enabled)
        return g->fusions[n->fusion].folded ? -1 : g->fusions[n->fusion].anchor;
    /* a cat runs none when its inputs are in its storage already (a cat writing a view inside
     * another's storage runs) */
    if (n->op == OP_CAT) return graph_cat_in_place(g, i) ? -1 : i;
    /* a view: no kernel (an in-place writer such as index_copy aliases too, and runs) */
    if (n->nout == 1 && g->tensors[n->out[0]].alias_of >= 0 && (op_info[n->op].flags & OPF_VIEW))
        return -1;
    if (op_info[n->op].kernel != KK_NONE && !n->adopted) return i;
    /* a member of a switched-off generated group that no hand-written kernel runs (a node the
     * group took from the CPU) runs as its own generated kernel */
    return n->fusion >= 0 && strcmp(g->fusions[n->fusion].pattern, FUSE_ELEMENTWISE) == 0 ? i : -1;
}

bool graph_cat_offsets(const Graph *g, const Node *n, int64_t *off)
{
    if (n->op != OP_CAT || n->nout != 1 || n->nin < 1) return false;
    const GTensor *o = node_output(g, n, 0);
    int d = norm_dim(attr_int(n, "dim", 0), o->rank);
    if (d < 0) return false;
    int64_t inner = 1, at = 0;
    for (int k = 0; k < o->rank; k++) {
        if (k < d && o->shape[k] != 1) return false;
        if (k > d) inner *= o->shape[k];
    }
    for (int k = 0; k < n->nin; k++) {
        const GTensor *x = node_input(g, n, k);
        if (x->rank != o->rank) return false;
        off[k] = at;
        at += x->shape[d] * inner;
    }
    return true;
}

bool graph_cat_in_place(const Graph *g, int i)
{
    const Node *n = &g->nodes[i];
    int64_t off[64];
    if (n->nin > 64 || !graph_cat_offsets(g, n, off)) return false;
    const GTensor *o = node_output(g, n, 0);
    int base = o->alias_of >= 0 ? o->alias_of : n->out[0];
    for (int k = 0; k < n->nin; k++) {
        const GTensor *x = node_input(g, n, k);
        if (x->alias_of != base || x->view_off != o->view_off + off[k] || x->padded) return false;
    }
    return !o->padded;
}

static int storage_base(const Graph *g, int t)
{
    return g->tensors[t].alias_of >= 0 ? g->tensors[t].alias_of : t;
}

/* Where node i runs in kernel order: a fused member runs at its instance's anchor. */
static int run_pos(const Graph *g, int i)
{
    const Node *n = &g->nodes[i];
    return n->fusion >= 0 && g->fusions[n->fusion].enabled ? g->fusions[n->fusion].anchor : i;
}

bool graph_index_copy_in_place(const Graph *g, int i)
{
    const Node *n = &g->nodes[i];
    if (n->nin != 3 || n->nout != 1) return false;
    int base = storage_base(g, n->in[0]);
    const GTensor *b = &g->tensors[base], *self = node_input(g, n, 0), *o = node_output(g, n, 0);
    if (b->kind == TK_WEIGHT || b->kind == TK_CONST) return false;
    if (b->padded || o->padded || self->dtype != o->dtype || self->view_off) return false;
    if (storage_base(g, n->in[1]) == base || storage_base(g, n->in[2]) == base) return false;
    if (b->producer >= 0 && g->nodes[b->producer].place != PLACE_NPU) return false;
    for (int t = 0; t < g->ntensors; t++)
        if (storage_base(g, t) == base && g->tensors[t].is_output) return false;
    /* the write happens where its kernel runs (a merge's: its anchor) */
    int at = run_pos(g, i);
    for (int j = 0; j < g->nnodes; j++) {
        const Node *m = &g->nodes[j];
        if (j == i || m->dead) continue;
        bool late = run_pos(g, j) > at || m->place != PLACE_NPU;
        for (int k = 0; k < m->nin && late; k++)
            if (storage_base(g, m->in[k]) == base) return false;
    }
    return true;
}

DType compile_storage(const CompileOptions *o, DType dt)
{
    if (dtype_is_float(dt) || dt == DT_BOOL) return o->compute;
    return DT_I32;
}

DType compile_tensor_storage(const CompileOptions *o, const GTensor *t)
{
    return t->host_form ? DT_F32 : compile_storage(o, t->dtype);
}

bool compile_forced_cpu(const CompileOptions *o, const Node *n)
{
    for (int i = 0; i < o->n_cpu_ops; i++)
        if (strcmp(o->cpu_ops[i], n->aten) == 0 || strcmp(o->cpu_ops[i], op_short_name(n->op)) == 0)
            return true;
    return false;
}

/* The fold recipes' node lists after nodes moved: old index i is now where[i] (where NULL:
 * those from `from` on moved one up). Each list is copied first: an earlier snapshot shares it. */
static bool remap_folds(Graph *g, const int *where, int from)
{
    for (int i = 0; i < g->nrecipes; i++) {
        Recipe *r = &g->recipes[i];
        if (r->kind != RECIPE_FOLD) continue;
        int *nodes = arena_alloc(&g->arena, sizeof(int) * ((size_t)r->nnodes + 1));
        if (!nodes) return false;
        for (int j = 0; j < r->nnodes; j++)
            nodes[j] = where ? where[r->nodes[j]] : r->nodes[j] + (r->nodes[j] >= from);
        r->nodes = nodes;
    }
    return true;
}

Status graph_move_first(Graph *g, const bool *first)
{
    int *order = malloc(sizeof(int) * (size_t)(g->nnodes + 1)); /* new position -> old */
    int *where = malloc(sizeof(int) * (size_t)(g->nnodes + 1)); /* old position -> new */
    Node *moved = malloc(sizeof(Node) * (size_t)(g->nnodes + 1));
    if (!order || !where || !moved) {
        free(order);
        free(where);
        free(moved);
        return ST_NOMEM;
    }
    int k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < g->nnodes; i++)
            if (first[i] == (pass == 0)) order[k++] = i;
    for (int i = 0; i < g->nnodes; i++) {
        moved[i] = g->nodes[order[i]];
        where[order[i]] = i;
    }
    memcpy(g->nodes, moved, sizeof(Node) * (size_t)g->nnodes);
    free(moved);
    for (int i = 0; i < g->nfusions; i++) {
        Fusion *f = &g->fusions[i];
        for (int j = 0; j < f->nnodes; j++)
            f->nodes[j] = where[f->nodes[j]];
        qsort(f->nodes, (size_t)f->nnodes, sizeof(int), cmp_int); /* members in graph order */
        if (f->anchor >= 0) f->anchor = where[f->anchor];
    }
    for (int i = 0; i < g->nmisses; i++)
        g->misses[i].node = where[g->misses[i].node];
    bool ok = remap_folds(g, where, 0); /* nodes moved within a fold keep their order */
    free(order);
    free(where);
    if (!ok || !graph_index_nodes(g, 0))
        return ST_NOMEM; /* the name map may be shared: it copies */
    return graph_link(g);
}

int graph_insert_node(Graph *g, int pos, const char *name, OpId op, const int *in, int nin,
                      const int *out, int nout)
{
    int k = graph_add_node(g, name, op, op_canonical_name(op), in, nin, out, nout);
    if (k < 0) return -1;
    Node moved = g->nodes[k];
    memmove(&g->nodes[pos + 1], &g->nodes[pos], sizeof(Node) * (size_t)(k - pos));
    g->nodes[pos] = moved;
    for (int i = 0; i < g->nfusions; i++) {
        Fusion *f = &g->fusions[i];
        for (int j = 0; j < f->nnodes; j++)
            if (f->nodes[j] >= pos) f->nodes[j]++;
        if (f->anchor >= pos) f->anchor++;
    }
    for (int i = 0; i < g->nmisses; i++)
        if (g->misses[i].node >= pos) g->misses[i].node++;
    if (!remap_folds(g, NULL, pos) || !graph_index_nodes(g, pos) || graph_link(g) != ST_OK)
        return -1;
    return pos;
}
