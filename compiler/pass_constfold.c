/* fold-constants: nodes whose values depend on weights and constants only are computed once,
 * when the weights are bound, instead of on every run. Their results become weights (TK_WEIGHT)
 * that the kernels read like any other, uploaded once in the storage their readers need; a
 * `fold` recipe per such weight names the nodes that compute it, which binding runs on the CPU
 * reference (runtime/bind.c), and the nodes leave the graph.
 *
 * What folds (docs/compiler.md "Constant folding"): a live node all of whose inputs are weights,
 * constants or folded values (a source such as zeros or arange has none), except
 * - a node that writes a graph output (the output keeps its producer);
 * - a node with no data or randomness (an assertion, a dropout left in training mode, a batch
 *   norm in training mode);
 * - an expand: a broadcast read through strides costs nothing, materialising it does (the value
 *   it broadcasts folds and the expand reads it; a node reading the expand folds through it);
 * - a view (reshape, permute, slice, identity) of weights and constants that no folded node
 *   made: the NPU reads a weight through it as an alias or a strided read, and folding it would
 *   only copy the weight. A view of a folded value folds with it.
 * Graph inputs and model state (compiler/inplace.c makes state a graph input) are never
 * constant, so nothing reachable from them folds; nodes writing in place were made out of place
 * at import, and one writing into state reads a graph input. */
#include <stdlib.h>
#include "compiler/pass.h"

/* Is node n's value fixed by its inputs (no assertion, no randomness)? */
static bool deterministic(const Node *n)
{
    if (op_has(n->op, OPF_NOOP)) return false;
    if (n->op == OP_DROPOUT) return false; /* canonicalize removed the eval ones */
    if (n->op == OP_BATCH_NORM && attr_bool(n, "training", false)) return false;
    return true;
}

static bool is_view(OpId op)
{
    OpClass c = op_class(op);
    return c == OC_reshape || c == OC_identity || c == OC_permute || c == OC_slice;
}

/* Marks node i and every producer it needs (back to weights and constants) in need[]; stack has
 * room for every node (each is pushed once). */
static void mark_closure(const Graph *g, int i, bool *need, int *stack)
{
    int sp = 0;
    stack[sp++] = i;
    need[i] = true;
    while (sp > 0) {
        const Node *n = &g->nodes[stack[--sp]];
        for (int k = 0; k < n->nin; k++) {
            int p = g->tensors[n->in[k]].producer;
            if (p >= 0 && !need[p]) {
                need[p] = true;
                stack[sp++] = p;
            }
        }
    }
}

/* The fold recipe of tensor t: the nodes computing it, in graph order (need[] scratch, cleared
 * on return). */
static Status add_fold_recipe(Graph *g, int t, bool *need, int *stack)
{
    mark_closure(g, g->tensors[t].producer, need, stack);
    int nn = 0;
    for (int i = 0; i < g->nnodes; i++)
        nn += need[i];
    int *nodes = arena_alloc(&g->arena, sizeof(int) * (size_t)nn);
    Recipe *r = realloc(g->recipes, sizeof(Recipe) * (size_t)(g->nrecipes + 1));
    if (!nodes || !r) return ST_NOMEM;
    g->recipes = r;
    nn = 0;
    for (int i = 0; i < g->nnodes; i++)
        if (need[i]) {
            nodes[nn++] = i;
            need[i] = false;
        }
    Recipe *x = &g->recipes[g->nrecipes++];
    *x = (Recipe){.kind = RECIPE_FOLD, .out_w = t, .nodes = nodes, .nnodes = nn};
    x->out_b = x->conv_w = x->conv_b = x->gamma = x->beta = x->mean = x->var = -1;
    return ST_OK;
}

/* Tensor t (a folded node's output that something else reads) becomes a weight its recipe
 * computes at load. */
static Status make_weight(Graph *g, int t)
{
    int *w = realloc(g->weights, sizeof(int) * (size_t)(g->nweights + 1));
    if (!w) return ST_NOMEM;
    g->weights = w;
    g->weights[g->nweights++] = t;
    GTensor *x = &g->tensors[t];
    x->kind = TK_WEIGHT;
    x->weight_key = x->name;
    x->producer = -1;
    return ST_OK;
}

/* Is live node n's value fixed by constants: deterministic, every input constant (cst), no
 * output a graph output? */
static bool node_const(const Graph *g, const Node *n, const bool *cst)
{
    bool all = !n->dead && deterministic(n);
    for (int k = 0; k < n->nin && all; k++)
        all = cst[n->in[k]];
    for (int k = 0; k < n->nout && all; k++)
        all = !g->tensors[n->out[k]].is_output;
    return all;
}

void fold_const_tensors(const Graph *g, bool *cst)
{
    for (int t = 0; t < g->ntensors; t++) {
        const GTensor *x = &g->tensors[t];
        cst[t] = (x->kind == TK_WEIGHT || x->kind == TK_CONST) && !x->state;
    }
    /* graph order is topological: a node's inputs are decided before it */
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = &g->nodes[i];
        if (n->dead) continue;
        bool all = node_const(g, n, cst);
        for (int k = 0; k < n->nout; k++)
            cst[n->out[k]] = all;
    }
}

Status pass_fold_constants(Graph *g, PassCtx *c)
{
    /* the constant terms on a softmax's input summed first (fold_terms.c), then folded */
    bool *cst = arena_alloc(c->scratch, (size_t)g->ntensors + 1);
    int nterms;
    if (!cst) return ST_NOMEM;
    fold_const_tensors(g, cst);
    Status st = fold_score_terms(g, cst, &nterms);
    if (st != ST_OK) return st;
    int nn = g->nnodes, nt = g->ntensors;
    bool *fold = arena_alloc(c->scratch, (size_t)nn + 1);
    bool *need = arena_alloc(c->scratch, (size_t)nn + 1);
    int *stack = arena_alloc(c->scratch, sizeof(int) * ((size_t)nn + 1));
    cst = nterms ? arena_alloc(c->scratch, (size_t)nt + 1) : cst;
    if (!fold || !need || !cst || !stack) return ST_NOMEM;
    if (nterms) fold_const_tensors(g, cst);
    int nfold = 0;
    for (int i = 0; i < nn; i++) {
        const Node *n = &g->nodes[i];
        fold[i] = false;
        need[i] = false;
        bool all = node_const(g, n, cst), from_fold = false;
        for (int k = 0; k < n->nin && all; k++) {
            const GTensor *x = &g->tensors[n->in[k]];
            from_fold |= x->producer >= 0 && fold[x->producer];
        }
        /* constant, but left to the kernels: an expand, a view of weights (their readers may
         * fold through them) */
        if (!all || op_class(n->op) == OC_expand || (is_view(n->op) && !from_fold)) continue;
        fold[i] = true;
        nfold++;
    }
    /* an expand or view left to the kernels that only folded nodes read folds with them: it runs
     * at load, and the folded value it reads is no weight of its own (fold_terms.c's expanded
     * terms) */
    for (int i = nn - 1; i >= 0 && nfold; i--) {
        const Node *n = &g->nodes[i];
        if (fold[i] || !node_const(g, n, cst)) continue;
        bool only = n->nout > 0;
        for (int k = 0; k < n->nout && only; k++) {
            const GTensor *x = &g->tensors[n->out[k]];
            only = x->nconsumers > 0;
            for (int j = 0; j < x->nconsumers && only; j++)
                only = fold[x->consumers[j]];
        }
        if (only) fold[i] = true, nfold++;
    }
    if (nfold == 0) return ST_OK;
    /* the folded values something unfolded reads become weights, each with its recipe */
    for (int i = 0; i < nn; i++) {
        if (!fold[i]) continue;
        const Node *n = &g->nodes[i];
        for (int k = 0; k < n->nout; k++) {
            const GTensor *x = &g->tensors[n->out[k]];
            bool outside = false;
            for (int j = 0; j < x->nconsumers && !outside; j++)
                outside = !fold[x->consumers[j]];
            if (!outside) continue;
            st = add_fold_recipe(g, n->out[k], need, stack);
            if (st != ST_OK) return st;
        }
    }
    for (int r = 0; r < g->nrecipes; r++) {
        if (g->recipes[r].kind != RECIPE_FOLD) continue;
        st = make_weight(g, g->recipes[r].out_w);
        if (st != ST_OK) return st;
        /* every node a recipe runs leaves the graph unless an unfolded node still reads it
         * (a view of weights that other readers share) */
        for (int j = 0; j < g->recipes[r].nnodes; j++)
            need[g->recipes[r].nodes[j]] = true;
    }
    for (int i = 0; i < nn; i++)
        if (fold[i]) graph_kill(g, i);
    st = graph_link(g);
    for (bool changed = true; changed && st == ST_OK;) {
        changed = false;
        for (int i = nn - 1; i >= 0; i--) {
            const Node *n = &g->nodes[i];
            if (n->dead || !need[i]) continue;
            bool used = false;
            for (int k = 0; k < n->nout; k++)
                used |= g->tensors[n->out[k]].nconsumers > 0 || g->tensors[n->out[k]].is_output;
            if (!used) {
                graph_kill(g, i);
                changed = true;
            }
        }
        if (changed) st = graph_link(g);
    }
    return st;
}
