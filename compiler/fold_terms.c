/* fold-constants, part: the constant additive terms on a softmax's input summed into one term,
 * so fold-constants computes their sum once at load and the attention patterns (fuse_attention.c)
 * see scores + one mask. The chain
 *   x -> add(c1) -> reshape -> add(c2) -> reshape -> softmax
 * (any order of adds of constants and reshapes, each node read only by the next, the chain's
 * result of x's shape) becomes
 *   x -> add(M) -> softmax,  M = reshape(reshape(expand(c1, x's shape)) + c2)
 * written with the chain's own shapes: a term added after a reshape is added to the sum expanded
 * to the shape it has there (Swin's shifted windows: the relative-position bias [1, H, N, N] on
 * the scores [B, H, N, N], then the shift mask [1, nW, 1, N, N] on the scores viewed as
 * [B/nW, nW, H, N, N], and back: M is [B, H, N, N], the sum over every window of the batch).
 * A constant depends on no graph input (fold_const_tensors); a chain with one add and no reshape
 * is already that form. M's nodes are named after the chain's last node, so a .npubin's loader
 * rewriting its IR the same way (app/runner.c) finds the nodes its fold recipe names. */
#include <stdio.h>
#include <string.h>
#include "compiler/pass.h"

#define TERMS_MAX 16 /* chain nodes at most */

/* Is node p a link of a chain reaching tensor t: a plain two-operand add of t's shape with one
 * constant operand (*term), or a reshape; its other operand (the chain's value) into *from. */
static bool chain_link(const Graph *g, const bool *cst, int p, int *from, int *term)
{
    const Node *n = &g->nodes[p];
    const GTensor *y = &g->tensors[n->out[0]];
    *term = -1;
    if (op_class(n->op) == OC_reshape && n->nin == 1 && n->nout == 1) {
        *from = n->in[0];
        return !cst[*from];
    }
    if (n->op != OP_ADD || n->nin != 2 || n->nout != 1 || attr_float(n, "alpha", 1.0) != 1.0)
        return false;
    int k = cst[n->in[0]] ? 0 : 1;
    *term = n->in[k];
    *from = n->in[1 - k];
    const GTensor *x = &g->tensors[*from], *c = &g->tensors[*term];
    return cst[*term] && !cst[*from] && x->dtype == y->dtype && c->dtype == y->dtype &&
           shape_equal(x->rank, x->shape, y->rank, y->shape);
}

/* A tensor named "<base>.<what><i>" of dtype dt. */
static int new_tensor(Graph *g, const char *base, DType dt, const char *what, int i, int rank,
                      const int64_t *shape)
{
    char name[256];
    snprintf(name, sizeof name, "%s.%s%d", base, what, i);
    return graph_add_tensor(g, name, dt, rank, shape, TK_ACT);
}

/* Inserts node `op` (named like its output) at *pos, reading in[0..nin), writing out, with an
 * ints attribute `size` when size is not NULL; *pos moves past it. False on allocation
 * failure. */
static bool insert(Graph *g, int *pos, OpId op, const int *in, int nin, int out,
                   const int64_t *size, int rank)
{
    const char *name = g->tensors[out].name;
    int k = graph_insert_node(g, *pos, name, op, in, nin, &out, 1);
    Attr a = {.key = "size", .kind = ATTR_INTS, .ints = (int64_t *)size, .n = rank};
    if (k < 0 || (size && !graph_add_attr_v(g, k, &a))) return false;
    (*pos)++;
    return true;
}

/* The chain ending at softmax node sm's input, rewritten when it qualifies; *done counts it. */
static Status one_chain(Graph *g, const bool *cst, int sm, int *done)
{
    int chain[TERMS_MAX], terms[TERMS_MAX], n = 0, nadd = 0;
    int y = g->nodes[sm].in[0], t = y;
    for (int p = g->tensors[t].producer; p >= 0 && n < TERMS_MAX; p = g->tensors[t].producer) {
        int from, term;
        if (g->nodes[p].dead || graph_only_consumer(g, t) < 0 ||
            !chain_link(g, cst, p, &from, &term))
            break;
        memmove(chain + 1, chain, sizeof(int) * (size_t)n);
        memmove(terms + 1, terms, sizeof(int) * (size_t)n++);
        chain[0] = p;
        terms[0] = term;
        nadd += term >= 0;
        t = from;
    }
    while (n > 0 && terms[0] < 0) { /* reshapes before the first term stay as they are */
        memmove(chain, chain + 1, sizeof(int) * (size_t)--n);
        memmove(terms, terms + 1, sizeof(int) * (size_t)n);
    }
    if (n < 2 || nadd < 1) return ST_OK;
    int x = g->nodes[chain[0]].in[terms[0] == g->nodes[chain[0]].in[0] ? 1 : 0];
    const GTensor *xt = &g->tensors[x], *yt = &g->tensors[y];
    if (!shape_equal(xt->rank, xt->shape, yt->rank, yt->shape)) return ST_OK;
    /* the sum, node by node: acc broadcasts to the chain's value (shape cur) at each step */
    int last = chain[n - 1], pos = last, acc = -1, cr = xt->rank, ix = 0;
    int64_t cur[NPU_MAX_RANK];
    memcpy(cur, xt->shape, sizeof cur);
    for (int i = 0; i < n; i++)
        graph_kill(g, chain[i]);
    const char *base = g->nodes[last].name; /* the arena's: stays while nodes move */
    DType dt = yt->dtype;
    for (int i = 0; i < n; i++) {
        const GTensor *o = &g->tensors[g->nodes[chain[i]].out[0]];
        int orank = o->rank;
        int64_t oshape[NPU_MAX_RANK];
        memcpy(oshape, o->shape, sizeof oshape);
        if (terms[i] >= 0 && acc < 0) {
            acc = terms[i];
        } else if (terms[i] >= 0) { /* acc + term: the broadcast of both */
            const GTensor *a = &g->tensors[acc], *b = &g->tensors[terms[i]];
            int r = a->rank > b->rank ? a->rank : b->rank;
            int64_t s[NPU_MAX_RANK];
            for (int d = 0; d < r; d++) {
                int da = d - (r - a->rank), db = d - (r - b->rank);
                int64_t sa = da < 0 ? 1 : a->shape[da], sb = db < 0 ? 1 : b->shape[db];
                s[d] = sa > sb ? sa : sb;
            }
            int in[2] = {acc, terms[i]};
            acc = new_tensor(g, base, dt, "terms_add", ix++, r, s);
            if (acc < 0 || !insert(g, &pos, OP_ADD, in, 2, acc, NULL, 0)) return ST_NOMEM;
        } else if (acc >= 0) { /* a reshape: acc over the whole value, then reshaped */
            const GTensor *a = &g->tensors[acc];
            if (!shape_equal(a->rank, a->shape, cr, cur)) {
                int e = new_tensor(g, base, dt, "terms_expand", ix++, cr, cur);
                if (e < 0 || !insert(g, &pos, OP_EXPAND, &acc, 1, e, cur, cr)) return ST_NOMEM;
                acc = e;
            }
            int v = new_tensor(g, base, dt, "terms_view", ix++, orank, oshape);
            if (v < 0 || !insert(g, &pos, OP_VIEW, &acc, 1, v, oshape, orank)) return ST_NOMEM;
            acc = v;
        }
        cr = orank;
        memcpy(cur, oshape, sizeof cur);
    }
    /* x + M writes the chain's result: its readers keep reading it */
    char name[256];
    snprintf(name, sizeof name, "%s.terms", base);
    int in[2] = {x, acc};
    if (graph_insert_node(g, pos, name, OP_ADD, in, 2, &y, 1) < 0) return ST_NOMEM;
    (*done)++;
    return ST_OK;
}

Status fold_score_terms(Graph *g, const bool *cst, int *done)
{
    *done = 0;
    for (int i = 0; i < g->nnodes; i++) {
        if (g->nodes[i].dead || g->nodes[i].op != OP_SOFTMAX || g->nodes[i].nin != 1) continue;
        int before = g->nnodes;
        Status st = one_chain(g, cst, i, done);
        if (st != ST_OK) return st;
        i += g->nnodes - before; /* the softmax moved past the nodes inserted before it */
    }
    return ST_OK;
}
