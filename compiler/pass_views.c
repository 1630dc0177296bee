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
 * no copy; a select of such a run likewise (ViT's q, k, v when the attention is not fused: the
 * fused one reads them through the selects, fuse_attention.c select_sources). */
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

/* The dim a split or select of node n cuts, when every dim before it has size 1 (a part is then
 * a contiguous run of the input's memory) and the input may be viewed (not padded, an
 * activation or graph input); -1 otherwise. *inner: the elements of one index along it. */
static int run_dim(const Graph *g, const Node *n, int64_t *inner)
{
    const GTensor *in = node_input(g, n, 0), *b = &g->tensors[base_of(g, n->in[0])];
    if (in->padded || b->padded || (b->kind != TK_ACT && b->kind != TK_INPUT)) return -1;
    int d = norm_dim(attr_int(n, "dim", 0), in->rank);
    if (d < 0) return -1;
    *inner = 1;
    for (int i = 0; i < in->rank; i++) {
        if (i < d && in->shape[i] != 1) return -1;
        if (i > d) *inner *= in->shape[i];
    }
    return d;
}

/* Output t of node n (reading a run of its input's memory from element `elem` of the storage)
 * becomes a view starting there, when that start keeps the arena's alignment (device binding
 * offsets must); else it stays a slice kernel. */
static void view_at(Graph *g, const Node *n, int t, int64_t elem, const PassCtx *c)
{
    GTensor *o = &g->tensors[t];
    int64_t align = c->opt->arena_align > 0 ? c->opt->arena_align : 256;
    if (o->padded || (elem * (int64_t)dtype_size(compile_tensor_storage(c->opt, o))) % align != 0)
        return;
    o->alias_of = base_of(g, n->in[0]);
    o->view_off = elem;
}

/* split: each chunk a run of the input (GPT-2's q/k/v split at one token). */
static void split_views(Graph *g, const Node *n, const PassCtx *c)
{
    const GTensor *in = node_input(g, n, 0);
    int64_t inner, sizes[64], start = 0;
    int d = run_dim(g, n, &inner);
    if (d < 0) return;
    const char *why = NULL;
    int cnt = shape_split_sizes(n, in->shape[d], sizes, 64, &why);
    if (cnt != n->nout) return;
    for (int k = 0; k < cnt; k++) {
        view_at(g, n, n->out[k], in->view_off + start * inner, c);
        start += sizes[k];
    }
}

/* select: one index a run of the input (nn.MultiheadAttention's q, k, v of the packed
 * projection once it is contiguous [3, L, N, E], where no fused attention took the selects). */
static void select_view(Graph *g, const Node *n, const PassCtx *c)
{
    const GTensor *in = node_input(g, n, 0);
    int64_t inner;
    int d = run_dim(g, n, &inner);
    if (d < 0) return;
    int64_t idx = attr_int(n, "index", 0);
    if (idx < 0) idx += in->shape[d];
    if (idx < 0 || idx >= in->shape[d]) return;
    view_at(g, n, n->out[0], in->view_off + idx * inner, c);
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
        if (n->op == OP_SELECT) {
            select_view(g, n, c);
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
