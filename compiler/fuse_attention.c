/* The attention patterns' match functions (the registry: fuse_patterns.c): softmax(Q K^T *
 * scale + mask) V in one kernel, q, K and V read through the permutes, reshapes and selects that
 * make them, a grouped-query repeat never materialised. */
#include "compiler/fusion.h"
#include "compiler/fuse_match.h"
#include "compiler/strided.h"

#include <string.h>

/* The permutes and reshapes making operand t (q, K or V over several rows) that move data, each
 * read only by the next (ln_in_chain's walk): they join the instance, farthest first, and the
 * kernel reads t through them (lower_attention.c) where the composite has strides over their
 * source with the head dim contiguous: the whole chain, else from its farthest permute, else none
 * (t's copy stays). nn.MultiheadAttention's view -> transpose(0, 1) -> view of the packed
 * projection for q, K and V, BERT's and transformers' view -> transpose(1, 2). */
static void operand_chain(const Graph *g, int t, const bool *taken, FuseMatch *m)
{
    int chain[FUSE_PERMUTE_CHAIN], move;
    const char *why = NULL;
    int n = fuse_in_chain(g, t, taken, chain, &move, &why);
    if (!move || g->tensors[t].rank != 4) return;
    int cuts[2] = {n, move};
    for (int c = 0; c < 2; c++) {
        int order[FUSE_PERMUTE_CHAIN], k = 0;
        for (int i = cuts[c] - 1; i >= 0; i--)
            order[k++] = chain[i];
        int64_t st[NPU_MAX_RANK], off;
        if (sv_chain_strides(g, order, k, st, &off) &&
            (st[3] == 1 || g->tensors[t].shape[3] == 1)) {
            for (int i = 0; i < k; i++)
                fuse_add(m, order[i]);
            return;
        }
    }
}

/* A [B, T, H, D] -> [B, H, T, D] transpose making t, read only by its consumer: it joins the
 * instance and the kernel reads its source through swapped strides (a repeated cache read in
 * place: the repeat's nodes follow it). */
static void kv_transpose(const Graph *g, int t, const bool *taken, FuseMatch *m)
{
    int tp = g->tensors[t].producer;
    if (tp < 0 || g->nodes[tp].op != OP_TRANSPOSE || graph_only_consumer(g, t) < 0 ||
        !fuse_usable(g, tp, taken) || g->tensors[t].rank != 4)
        return;
    int d0 = norm_dim(attr_int(&g->nodes[tp], "dim0", 0), 4);
    int d1 = norm_dim(attr_int(&g->nodes[tp], "dim1", 1), 4);
    if ((d0 == 1 && d1 == 2) || (d0 == 2 && d1 == 1)) fuse_add(m, tp);
}

/* K or V for attention: the cache itself, or reshape(expand(unsqueeze(cache))) (grouped-query
 * repeat) whose nodes join the instance so the repeat is never materialised. Over several rows
 * (`rows`) the cache is read through the permutes and reshapes making it (operand_chain), a
 * repeated V (`v`) through a member transpose of dims 1 and 2 (kv_transpose: transformers' V,
 * which has no rope to take the transpose as K's has). */
static void kv_source(const Graph *g, int t, const bool *taken, FuseMatch *m, bool rows, bool v)
{
    int r = g->tensors[t].producer;
    int e = r >= 0 && g->nodes[r].op == OP_VIEW ? g->tensors[g->nodes[r].in[0]].producer : -1;
    int u = e >= 0 && g->nodes[e].op == OP_EXPAND ? g->tensors[g->nodes[e].in[0]].producer : -1;
    if (u < 0 || g->nodes[u].op != OP_UNSQUEEZE || graph_only_consumer(g, t) < 0 ||
        !fuse_usable(g, r, taken) || !fuse_usable(g, e, taken) || !fuse_usable(g, u, taken) ||
        graph_only_consumer(g, g->nodes[e].in[0]) < 0 ||
        graph_only_consumer(g, g->nodes[r].in[0]) < 0 ||
        node_input(g, &g->nodes[u], 0)->rank != 4 || attr_int(&g->nodes[u], "dim", 0) != 2) {
        if (rows) operand_chain(g, t, taken, m);
        return;
    }
    if (rows && v) kv_transpose(g, g->nodes[u].in[0], taken, m);
    fuse_add(m, u);
    fuse_add(m, e);
    fuse_add(m, r);
}

static bool in_match(const FuseMatch *m, int node)
{
    for (int i = 0; i < m->n; i++)
        if (m->nodes[i] == node) return true;
    return false;
}

/* Is every reader of tensor t a member of m (and t no graph output)? */
static bool read_in(const Graph *g, const FuseMatch *m, int t)
{
    const GTensor *x = &g->tensors[t];
    for (int k = 0; k < x->nconsumers && !x->is_output; k++)
        if (!in_match(m, x->consumers[k])) return false;
    return !x->is_output && x->nconsumers > 0;
}

static bool is_member(const void *m, int node)
{
    return in_match(m, node);
}

/* The members of m making tensor t through walk links (sv_link_op), in order (source first):
 * into chain[], their count (0: t is not made by one). */
static int member_walk(const Graph *g, const FuseMatch *m, int t, int *chain)
{
    int src;
    return sv_member_walk(g, t, is_member, m, chain, FUSE_MAX_NODES, &src);
}

/* q, K and V selected from one tensor (nn.MultiheadAttention's packed projection [L, N, 3E]:
 * view -> unsqueeze -> transpose(0, -2) -> squeeze -> select(0, i); Swin's qkv [B, N, 3C]:
 * reshape [B, N, 3, H, D] -> permute(2, 0, 3, 1, 4) -> select(0, i)): where an operand's walk
 * (ops: q, K and V as the products read them, q before its scale) reaches a select read only by the
 * instance, the select joins, then every permute or reshape before the selects that only members
 * read: the kernel reads q, K and V in place in the projection through the composite's strides and
 * offset, and the permute's copy is never made. All of it joins or none: every operand's composite
 * must have strides with its head dim contiguous. */
static void select_sources(const Graph *g, const int ops[3], const bool *taken, FuseMatch *m)
{
    FuseMatch t = *m;
    int chain[FUSE_MAX_NODES];
    for (int i = 0; i < 3; i++) {
        int n = member_walk(g, &t, ops[i], chain);
        int src = n ? g->nodes[chain[0]].in[0] : ops[i], p = g->tensors[src].producer;
        if (p >= 0 && g->nodes[p].op == OP_SELECT && fuse_usable(g, p, taken) && !in_match(&t, p) &&
            sv_link_op(g, &g->nodes[p]) && read_in(g, &t, src))
            fuse_add(&t, p);
    }
    if (t.n == m->n) return;
    for (int i = m->n; i < t.n; i++) { /* grows while permutes and reshapes join */
        int x = g->nodes[t.nodes[i]].in[0], p = g->tensors[x].producer;
        if (p >= 0 && !in_match(&t, p) && fuse_usable(g, p, taken) &&
            sv_chain_op(g, &g->nodes[p]) && read_in(g, &t, x) && !fuse_add(&t, p))
            return;
    }
    for (int i = 0; i < 3; i++) {
        int n = member_walk(g, &t, ops[i], chain);
        int64_t st[NPU_MAX_RANK], off;
        if (n > FUSE_ATTN_CHAIN) return;
        if (n && !(sv_chain_strides(g, chain, n, st, &off) &&
                   (st[3] == 1 || g->tensors[ops[i]].shape[3] == 1)))
            return;
    }
    *m = t;
}

/* The multiply of a tensor by a scalar making t, read only by t's consumer and free to join,
 * or -1. */
static int scalar_mul_of(const Graph *g, int t, const bool *taken)
{
    int p = g->tensors[t].producer;
    if (p < 0 || g->nodes[p].op != OP_MUL || g->nodes[p].nin != 1 || !fuse_usable(g, p, taken) ||
        graph_only_consumer(g, t) < 0 || !attr_present(&g->nodes[p], "other"))
        return -1;
    return p;
}

/* softmax(Q K^T * scale + mask) V: transpose(K) -> matmul(q, .) -> mul(scale) -> add(mask) ->
 * softmax -> matmul(., V), the scale a multiply of the scores by a scalar, of q (q * scale ->
 * matmul), both (their product) or neither, K and V through the grouped-query repeat or not.
 * `one_row` selects the query rows the calling pattern takes (one: decode_attention, several:
 * attention); the other count is no near miss, so every near miss is reported once, by the pattern
 * of its row count. */
static bool match_attention_rows(const Graph *g, int node, const bool *taken, FuseMatch *m,
                                 const char **why, bool one_row)
{
    const Node *tr = &g->nodes[node];
    const GTensor *kt = node_input(g, tr, 0);
    if (kt->rank != 4) return false;
    int d0 = norm_dim(attr_int(tr, "dim0", 0), 4), d1 = norm_dim(attr_int(tr, "dim1", 1), 4);
    if (!((d0 == 2 && d1 == 3) || (d0 == 3 && d1 == 2))) return false;
    int mm = fuse_next_op(g, tr->out[0], OP_MATMUL, taken);
    if (mm < 0 || g->nodes[mm].in[1] != tr->out[0]) return false;
    const GTensor *q = node_input(g, &g->nodes[mm], 0);
    if (q->rank != 4 || (q->shape[2] == 1) != one_row) return false;
    /* the scale: a multiply by a scalar of the scores, of q (Swin's q * scale), both or none */
    int sc = fuse_next_op(g, g->nodes[mm].out[0], OP_MUL, taken);
    if (sc >= 0 && g->nodes[sc].nin != 1) sc = -1;
    int qs = scalar_mul_of(g, g->nodes[mm].in[0], taken);
    int qop = qs >= 0 ? g->nodes[qs].in[0] : g->nodes[mm].in[0]; /* q as the kernel reads it */
    int ad = fuse_next_op(g, g->nodes[sc >= 0 ? sc : mm].out[0], OP_ADD, taken);
    if (ad < 0 || !fuse_plain_binary(&g->nodes[ad])) return (*why = "no mask add"), false;
    int sm = fuse_next_op(g, g->nodes[ad].out[0], OP_SOFTMAX, taken);
    if (sm < 0) return (*why = "no softmax after the mask"), false;
    int pv = fuse_next_op(g, g->nodes[sm].out[0], OP_MATMUL, taken);
    if (pv < 0 || g->nodes[pv].in[0] != g->nodes[sm].out[0])
        return (*why = "softmax does not feed P V"), false;
    /* what the kernel computes: one softmax per score row over the cache, the mask only
     * broadcast, q and the caches in the products' batch and head dims (no broadcast) */
    const GTensor *s = &g->tensors[g->nodes[mm].out[0]];
    if (norm_dim(attr_int(&g->nodes[sm], "dim", -1), 4) != 3)
        return (*why = "softmax is not over the cache positions (last dim)"), false;
    if (!fuse_same_shape(&g->tensors[g->nodes[ad].out[0]], s))
        return (*why = "the mask broadcasts the scores (only the mask may be broadcast)"), false;
    const GTensor *v = node_input(g, &g->nodes[pv], 1);
    if (q->shape[3] > ATTN_MAX_D)
        return (*why = "head dim above 256 (the attention kernel's limit)"), false;
    for (int i = 0; i < 2; i++)
        if (kt->shape[i] != q->shape[i] || v->rank != 4 || v->shape[i] != q->shape[i])
            return (*why = "q, K and V differ in batch or heads (a broadcast product)"), false;
    if (v->shape[3] != q->shape[3]) return (*why = "V's head dim is not q's"), false;
    if (!one_row) operand_chain(g, qop, taken, m);
    kv_source(g, tr->in[0], taken, m, !one_row, false);
    kv_source(g, g->nodes[pv].in[1], taken, m, !one_row, true);
    int seq[] = {qs, node, mm, sc, ad, sm, pv};
    for (int i = 0; i < 7; i++)
        if (seq[i] >= 0) fuse_add(m, seq[i]);
    int ops[3] = {qop, tr->in[0], g->nodes[pv].in[1]};
    if (!one_row) select_sources(g, ops, taken, m);
    /* several rows: the permute of the result that keeps the head dim last (transformers'
     * transpose to [B, Tq, Hq, D], nn.MultiheadAttention's permute to [Tq, B, Hq, D], both
     * before o_proj) joins, the kernel writes that layout and the copy is never made (one row:
     * that transpose is a view) */
    int ot = one_row ? -1 : graph_only_consumer(g, g->nodes[pv].out[0]), perm[4];
    if (ot >= 0 && op_class(g->nodes[ot].op) == OC_permute && fuse_usable(g, ot, taken) &&
        g->tensors[g->nodes[ot].out[0]].rank == 4 && node_perm(&g->nodes[ot], 4, perm) &&
        perm[3] == 3)
        fuse_add(m, ot);
    m->variant = one_row ? "decode_attention" : "attention";
    return true;
}

/* decode attention: one query row */
bool fuse_match_decode_attention(const Graph *g, int node, const bool *taken, FuseMatch *m,
                                 const char **why)
{
    return match_attention_rows(g, node, taken, m, why, true);
}

/* attention over several query rows (prefill): the same kernel, one workgroup per row */
bool fuse_match_attention(const Graph *g, int node, const bool *taken, FuseMatch *m,
                          const char **why)
{
    return match_attention_rows(g, node, taken, m, why, false);
}
