/* views: on the NPU, reshape-like ops (view, reshape, flatten, unsqueeze, squeeze, identities)
 * and transposes/permutes that only move size-1 dims keep the memory order, so their output
 * becomes an alias of their input: no kernel, no memory. Everything else that moves data
 * (a real transpose, slice, expand, cat) stays a kernel (materialised). Padded inputs are never
 * aliased: their memory order differs from the logical one.
 * index_copy(self, index, source) is done in place where that is safe: its output becomes an
 * alias of self's storage and the kernel writes only the source rows (a KV cache update costs
 * the new row, not a copy of the cache; also when a fused kernel ends in the index_copy, as
 * rope_cache does, or writes its output besides its own, as decode_attention_cache writes the
 * caches: compiler/pass_util.c graph_index_copy_in_place says when). plan-memory then keeps self's
 * storage alive for the output's readers, and the backends order kernels by the bytes they touch. A
 * split chunk that is a contiguous, aligned run of its input becomes a view starting inside the
 * input's storage (view_off, as linear_concat's parts), so GPT-2's q/k/v split of one token costs
 * no copy. */
#include "compiler/pass.h"
#include "compiler/shape/shape.h"
#include "compiler/strided.h"

/* Does instance f's kernel write tensor t, the output of its member `node`: its anchor's, or one
 * of its xout? */
static bool fusion_writes(const Fusion *f, int node, int t)
{
    if (f->anchor == node) return true;
    for (int k = 0; k < f->nxout; k++)
        if (f->xout[k] == t) return true;
    return false;
}

static int base_of(const Graph *g, int t)
{
    return g->tensors[t].alias_of >= 0 ? g->tensors[t].alias_of : t;
}

/* split: a chunk is a contiguous run of its input's memory when every dim before the split dim
 * has size 1 (GPT-2's q/k/v split at one token); it then becomes a view starting inside the
 * input's storage, when that start keeps the arena's alignment (device binding offsets must).
 * Other chunks stay slice kernels. */
static void split_views(Graph *g, const Node *n, const PassCtx *c)
{
    const GTensor *in = node_input(g, n, 0);
    int base = base_of(g, n->in[0]);
    const GTensor *b = &g->tensors[base];
    if (in->padded || b->padded || (b->kind != TK_ACT && b->kind != TK_INPUT)) return;
    int d = norm_dim(attr_int(n, "dim", 0), in->rank);
    if (d < 0) return;
    int64_t outer = 1, inner = 1, sizes[64], start = 0;
    for (int i = 0; i < d; i++)
        outer *= in->shape[i];
    for (int i = d + 1; i < in->rank; i++)
        inner *= in->shape[i];
    const char *why = NULL;
    int cnt = shape_split_sizes(n, in->shape[d], sizes, 64, &why);
    if (outer != 1 || cnt != n->nout) return;
    int64_t align = c->opt->arena_align > 0 ? c->opt->arena_align : 256;
    for (int k = 0; k < cnt; k++) {
        int64_t elem = in->view_off + start * inner;
        start += sizes[k];
        GTensor *o = &g->tensors[n->out[k]];
        if (o->padded ||
            (elem * (int64_t)dtype_size(compile_tensor_storage(c->opt, o))) % align != 0)
            continue;
        o->alias_of = base;
        o->view_off = elem;
    }
}

Status pass_views(Graph *g, PassCtx *c)
{
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = &g->nodes[i];
        if (n->dead || n->place != PLACE_NPU || n->nin < 1) continue;
        /* inside a fused kernel, except an index_copy ending one (rope_cache): the kernel
         * writes the cache in place as the index_copy kernel would, and one whose output a
         * merge writes (Fusion.xout: decode_attention_cache's caches) */
        if (n->fusion >= 0 && g->fusions[n->fusion].enabled &&
            !(n->op == OP_INDEX_COPY && fusion_writes(&g->fusions[n->fusion], i, n->out[0])))
            continue;
        if (n->op == OP_SPLIT) {
            split_views(g, n, c);
            continue;
        }
        if (n->nout != 1) continue;
        bool alias = op_keeps_order(n->op) || sv_permute_keeps_order(g, n) ||
                     (n->op == OP_INDEX_COPY && graph_index_copy_in_place(g, i));
        const GTensor *in = node_input(g, n, 0);
        if (!alias || in->padded) continue;
        GTensor *o = &g->tensors[n->out[0]];
        o->alias_of = base_of(g, n->in[0]);
        o->view_off = in->view_off; /* a view of a part of a linear_concat output */
    }
    return ST_OK;
}
