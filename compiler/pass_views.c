/* views: on the NPU, reshape-like ops (view, reshape, flatten, unsqueeze, squeeze, identities)
 * and transposes/permutes that only move size-1 dims keep the memory order, so their output
 * becomes an alias of their input: no kernel, no memory. Everything else that moves data
 * (a real transpose, slice, expand, cat) stays a kernel (materialised). Padded inputs are never
 * aliased: their memory order differs from the logical one. */
#include "pass.h"

static bool order_preserving_permute(const Graph *g, const Node *n)
{
    const GTensor *in = node_input(g, n, 0);
    int perm[NPU_MAX_RANK];
    int r = in->rank;
    for (int i = 0; i < r; i++) perm[i] = i;
    if (n->op == OP_TRANSPOSE) {
        int a = norm_dim(attr_int(n, "dim0", 0), r), b = norm_dim(attr_int(n, "dim1", 1), r);
        if (a < 0 || b < 0) return false;
        perm[a] = b;
        perm[b] = a;
    } else if (n->op == OP_PERMUTE) {
        int64_t dims[NPU_MAX_RANK];
        if (attr_ints(n, "dims", dims, NPU_MAX_RANK) != r) return false;
        for (int i = 0; i < r; i++) {
            int d = norm_dim(dims[i], r);
            if (d < 0) return false;
            perm[i] = d;
        }
    } else if (n->op == OP_T) {
        if (r == 2) {
            perm[0] = 1;
            perm[1] = 0;
        }
    }
    /* the non-size-1 dims must keep their relative order */
    int last = -1;
    for (int i = 0; i < r; i++) {
        if (in->shape[perm[i]] == 1) continue;
        if (perm[i] < last) return false;
        last = perm[i];
    }
    return true;
}

Status pass_views(Graph *g, PassCtx *c)
{
    (void)c;
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = &g->nodes[i];
        if (n->dead || n->place != PLACE_NPU || n->nout != 1 || n->nin < 1) continue;
        if (n->fusion >= 0 && g->fusions[n->fusion].enabled) continue; /* inside a fused kernel */
        bool alias = false;
        switch (n->op) {
        case OP_VIEW:
        case OP_FLATTEN:
        case OP_UNSQUEEZE:
        case OP_SQUEEZE:
        case OP_IDENTITY:
        case OP_DROPOUT: alias = true; break;
        case OP_TRANSPOSE:
        case OP_PERMUTE:
        case OP_T: alias = order_preserving_permute(g, n); break;
        default: break;
        }
        const GTensor *in = node_input(g, n, 0);
        if (!alias || in->padded) continue;
        GTensor *o = &g->tensors[n->out[0]];
        o->alias_of = in->alias_of >= 0 ? in->alias_of : n->in[0];
    }
    return ST_OK;
}
