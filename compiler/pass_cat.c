/* cat-in-place: a concatenation whose inputs can be written where the cat would copy them runs no
 * kernel. Each such input (a "part") becomes a view of the concatenation's storage at its offset
 * (GTensor.alias_of, view_off), so the kernel that produces it writes it there; its other readers
 * read it there too. The storage is the output of the biggest cat of a family of cats sharing
 * parts: DenseNet's layer k reads cat(f_0 .. f_k-1), a prefix of the block's final cat, so the
 * final cat's output holds every f_i, each smaller cat is a view of a prefix of it, and no
 * feature map is copied (graph_cat_in_place says which cats run no kernel).
 *
 * Cats are taken biggest first. A cat's frame is where its output lives: inside the storage it
 * was placed in as a part of an earlier (bigger) cat, else its own storage. If every input already
 * lies in one storage at the offsets this cat gives them, the output becomes a view there (the
 * prefix case). Otherwise each input is placed in the frame when it may be (part_ok: an NPU
 * kernel's own dense output, not a graph output, not already placed, its start a multiple of
 * CONCAT_ALIGN elements); each run of consecutive inputs that may not (a graph input, a weight, a
 * view, a tensor placed elsewhere, a CPU result) is copied by a new cat node of its own into a
 * view of its region, which the original cat then reads in place: a cat costs only the inputs
 * that could not be written in place. A run whose region does not start aligned makes the whole
 * cat keep its copy, as before.
 *
 * Only concatenations whose slices are contiguous runs take part: every dim before the cat dim
 * of size 1 (NCHW at batch 1 along the channels). The parts are then dense tensors to every
 * kernel (the layout pass leaves them unpadded: compiler/pass_layout.c); a batch of several images
 * keeps its copies. Runs before `layout`, on the fused graph: a cat inside a fused kernel is left
 * alone. `--disable cat-in-place` gives the plan of before. */
#include <stdlib.h>
#include <string.h>

#include "compiler/fusion.h"
#include "compiler/pass.h"

/* A cat this pass may take: on the NPU, not inside a fused kernel, its slices contiguous runs of
 * an unpadded activation (graph_cat_offsets), at most 64 inputs. off: each input's offset. */
static bool is_candidate(const Graph *g, int i, int64_t *off)
{
    const Node *n = &g->nodes[i];
    if (n->dead || n->op != OP_CAT || n->place != PLACE_NPU || n->nout != 1 || n->nin < 1)
        return false;
    if (n->fusion >= 0 && g->fusions[n->fusion].enabled) return false;
    const GTensor *o = node_output(g, n, 0);
    if (o->kind != TK_ACT || o->padded || o->state || n->nin > 64) return false;
    for (int k = 0; k < n->nin; k++)
        if (node_input(g, n, k)->dtype != o->dtype) return false;
    return graph_cat_offsets(g, n, off);
}

/* Does some tensor alias t (t holds others' storage)? */
static bool holds_views(const Graph *g, int t)
{
    for (int u = 0; u < g->ntensors; u++)
        if (g->tensors[u].alias_of == t) return true;
    return false;
}

/* May tensor t be written in place inside another tensor's storage? It must be an activation
 * with storage of its own that nothing else lives in, not a graph output, made by an NPU kernel
 * that writes it whole (a node's own kernel, or an enabled instance whose output it is; not a
 * view, which the views pass may make an alias, nor a split), and not the self of an index_copy
 * (which writes into its storage). */
static bool part_ok(const Graph *g, int t)
{
    const GTensor *x = &g->tensors[t];
    if (x->kind != TK_ACT || x->alias_of >= 0 || x->is_output || x->state || x->padded ||
        x->producer < 0)
        return false;
    int p = x->producer;
    const Node *pn = &g->nodes[p];
    if (pn->dead || pn->place != PLACE_NPU) return false;
    if (pn->fusion >= 0 && g->fusions[pn->fusion].enabled) {
        const Fusion *f = &g->fusions[pn->fusion];
        if (f->out != t || f->folded || f->nxout > 0) return false;
    } else {
        if (graph_kernel_node(g, p) != p || pn->nout != 1 || pn->adopted) return false;
        if ((op_info[pn->op].flags & OPF_VIEW) && pn->op != OP_CAT) return false;
        if (pn->op == OP_INDEX_COPY) return false;
    }
    for (int k = 0; k < x->nconsumers; k++) {
        const Node *c = &g->nodes[x->consumers[k]];
        if (c->op == OP_INDEX_COPY && c->nin > 0 && c->in[0] == t) return false;
    }
    return !holds_views(g, t);
}

/* Is input k of cat n where the cat would write it (`at`, an element of the output's storage)? */
static bool placed_at(const Graph *g, const Node *n, int k, int64_t at)
{
    const GTensor *x = node_input(g, n, k), *o = node_output(g, n, 0);
    int base = o->alias_of >= 0 ? o->alias_of : n->out[0];
    return x->alias_of == base && x->view_off == at;
}

/* The prefix case: every input lies in one storage, consecutively; the output becomes a view
 * there. */
static bool view_of_inputs(Graph *g, const Node *n, const int64_t *off)
{
    const GTensor *o = node_output(g, n, 0);
    const GTensor *x0 = node_input(g, n, 0);
    if (o->is_output || x0->alias_of < 0 || holds_views(g, n->out[0])) return false;
    int base = x0->alias_of;
    int64_t start = x0->view_off - off[0];
    if (start < 0) return false;
    for (int k = 0; k < n->nin; k++) {
        const GTensor *x = node_input(g, n, k);
        if (x->alias_of != base || x->view_off != start + off[k]) return false;
    }
    GTensor *w = &g->tensors[n->out[0]];
    w->alias_of = base;
    w->view_off = start;
    return true;
}

/* Inserts before cat node `cat` a cat of its inputs [first, first + cnt) writing a new view of
 * storage `base` at element `at`, and makes the cat read that view instead. */
static Status copy_run(Graph *g, int cat, int dim, int first, int cnt, int base, int64_t at)
{
    const Node *n = &g->nodes[cat];
    const GTensor *o = node_output(g, n, 0);
    int64_t shape[NPU_MAX_RANK];
    memcpy(shape, o->shape, sizeof shape);
    shape[dim] = 0;
    int in[64];
    for (int k = 0; k < cnt; k++) {
        in[k] = n->in[first + k];
        shape[dim] += g->tensors[in[k]].shape[dim];
    }
    const char *name = arena_printf(&g->arena, "%s@in%d", n->name, first);
    if (!name) return ST_NOMEM;
    int t = graph_add_tensor(g, name, o->dtype, o->rank, shape, TK_ACT);
    if (t < 0) return ST_NOMEM;
    g->tensors[t].alias_of = base;
    g->tensors[t].view_off = at;
    n = &g->nodes[cat];
    int part = n->part, out[1] = {t};
    int pos = graph_insert_node(g, cat, name, OP_CAT, in, cnt, out, 1);
    if (pos < 0 || !graph_add_attr(g, pos, "dim", ATTR_INT, dim)) return ST_NOMEM;
    Node *cn = &g->nodes[pos];
    cn->place = PLACE_NPU;
    cn->part = part;
    cn->fusion = -1;
    cn->own = true;
    Node *orig = &g->nodes[pos + 1];
    orig->in[first] = t;
    for (int k = 1; k < cnt; k++) /* the run's other inputs are gone from the cat */
        orig->in[first + k] = -1;
    int w = 0;
    for (int k = 0; k < orig->nin; k++)
        if (orig->in[k] >= 0) orig->in[w++] = orig->in[k];
    orig->nin = w;
    return graph_link(g);
}

/* Cat `name`: places what it can in its frame; see the file comment. */
static Status place_cat(Graph *g, const char *name)
{
    int i = graph_find_node(g, name);
    int64_t off[64];
    if (i < 0 || !is_candidate(g, i, off)) return ST_OK;
    const Node *n = &g->nodes[i];
    const GTensor *o = node_output(g, n, 0);
    if (o->alias_of < 0 && view_of_inputs(g, n, off)) return ST_OK;
    int base = o->alias_of >= 0 ? o->alias_of : n->out[0];
    int64_t start = o->view_off;
    /* each input: in place already, placeable, or copied (runs of those must start aligned) */
    bool put[64], copy[64], any = false;
    for (int k = 0; k < n->nin; k++) {
        int64_t at = start + off[k];
        bool dup = false;
        for (int j = 0; j < k; j++)
            dup |= n->in[j] == n->in[k];
        put[k] = !dup && !placed_at(g, n, k, at) && at % CONCAT_ALIGN == 0 && part_ok(g, n->in[k]);
        copy[k] = !put[k] && (dup || !placed_at(g, n, k, at));
        if (copy[k] && (k == 0 || !copy[k - 1]) && at % CONCAT_ALIGN != 0) return ST_OK;
        any |= !copy[k];
    }
    if (!any) return ST_OK; /* nothing in place: the cat's own kernel copies it all */
    for (int k = 0; k < n->nin; k++) {
        if (!put[k]) continue;
        GTensor *x = &g->tensors[n->in[k]];
        x->alias_of = base;
        x->view_off = start + off[k];
    }
    /* the runs to copy, last first (each insertion shifts the cat and renumbers its inputs) */
    for (int k = n->nin - 1; k >= 0;) {
        if (!copy[k]) {
            k--;
            continue;
        }
        int last = k;
        while (k > 0 && copy[k - 1])
            k--;
        int dim = norm_dim(attr_int(&g->nodes[i], "dim", 0), o->rank);
        Status st = copy_run(g, i, dim, k, last - k + 1, base, start + off[k]);
        if (st != ST_OK) return st;
        i = graph_find_node(g, name);
        k--;
    }
    return ST_OK;
}

typedef struct Cand {
    const char *name;
    int64_t numel;
    int node;
} Cand;

static int biggest_first(const void *a, const void *b)
{
    const Cand *x = a, *y = b;
    if (x->numel != y->numel) return x->numel < y->numel ? 1 : -1;
    return y->node - x->node;
}

Status pass_cat_in_place(Graph *g, PassCtx *c)
{
    Cand *cand = arena_alloc(c->scratch, sizeof(Cand) * (size_t)(g->nnodes + 1));
    if (!cand) return ST_NOMEM;
    int nc = 0;
    for (int i = 0; i < g->nnodes; i++) {
        int64_t off[64];
        if (!is_candidate(g, i, off)) continue;
        cand[nc++] = (Cand){g->nodes[i].name, tensor_numel(node_output(g, &g->nodes[i], 0)), i};
    }
    qsort(cand, (size_t)nc, sizeof *cand, biggest_first);
    for (int k = 0; k < nc; k++) {
        Status st = place_cat(g, cand[k].name);
        if (st != ST_OK) return st;
    }
    return ST_OK;
}
