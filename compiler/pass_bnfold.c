/* fold-batchnorm: conv2d followed by an eval batch_norm that is its only consumer becomes one
 * conv2d with derived weights W' = W * scale and bias b' = (b - mean) * scale + beta, where
 * scale = gamma / sqrt(var + eps). A conv without bias gets the shift as a new bias (the original
 * system lost it). Folding is a weight recipe applied at load time, recorded in the graph. */
#include <stdlib.h>
#include "compiler/pass.h"

Status pass_fold_batchnorm(Graph *g, PassCtx *c)
{
    (void)c;
    for (int i = 0; i < g->nnodes; i++) {
        Node *bn = &g->nodes[i];
        if (bn->dead || bn->op != OP_BATCH_NORM || attr_bool(bn, "training", false)) continue;
        if (bn->nin != 5 && bn->nin != 3) continue;
        const GTensor *x = node_input(g, bn, 0);
        if (x->producer < 0) continue;
        Node *conv = &g->nodes[x->producer];
        if (conv->dead || conv->op != OP_CONV2D || x->nconsumers != 1 || x->is_output) continue;
        const GTensor wl = *node_input(g, conv, 1), *w = &wl;
        if (w->kind != TK_WEIGHT || w->rank != 4) continue;
        int conv_b = conv->nin == 3 ? conv->in[2] : -1;
        if (conv_b >= 0 && g->tensors[conv_b].kind != TK_WEIGHT) continue;
        int gamma = -1, beta = -1, mean, var;
        if (bn->nin == 5) {
            gamma = bn->in[1];
            beta = bn->in[2];
            mean = bn->in[3];
            var = bn->in[4];
        } else {
            mean = bn->in[1];
            var = bn->in[2];
        }
        int64_t cout = w->shape[0];
        char *wn = arena_printf(&g->arena, "%s.weight@bnfold", conv->name);
        char *bname = arena_printf(&g->arena, "%s.bias@bnfold", conv->name);
        int64_t wshape[4] = {w->shape[0], w->shape[1], w->shape[2], w->shape[3]};
        int wid = graph_add_derived_weight(g, wn, w, 4, wshape);
        int bid = wid >= 0 ? graph_add_derived_weight(g, bname, w, 1, &cout) : -1;
        if (wid < 0 || bid < 0) return ST_NOMEM;
        Recipe *r = realloc(g->recipes, sizeof(Recipe) * (size_t)(g->nrecipes + 1));
        if (!r) return ST_NOMEM;
        g->recipes = r;
        /* conv/bn pointers may be stale after graph_add_tensor: re-fetch by index */
        conv = &g->nodes[g->tensors[bn->in[0]].producer];
        g->recipes[g->nrecipes++] = (Recipe){.kind = RECIPE_BN_FOLD,
                                             .out_w = wid,
                                             .out_b = bid,
                                             .conv_w = conv->in[1],
                                             .conv_b = conv_b,
                                             .gamma = gamma,
                                             .beta = beta,
                                             .mean = mean,
                                             .var = var,
                                             .eps = attr_float(bn, "eps", 1e-5)};
        int *in = arena_alloc(&g->arena, sizeof(int) * 3);
        if (!in) return ST_NOMEM;
        in[0] = conv->in[0];
        in[1] = wid;
        in[2] = bid;
        conv->in = in;
        conv->nin = 3;
        conv->out[0] = bn->out[0];
        graph_kill(g, i);
    }
    return graph_link(g);
}
