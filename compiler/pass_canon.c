/* canonicalize: drop metadata assertions, make in-place ops out-of-place, turn eval dropout,
 * alias/detach/clone/contiguous, getitem, same-dtype `to`, a copy whose src already has
 * self's shape and dtype, a pad by zero and a roll by whole turns into identities and remove them,
 * write scaled_dot_product_attention out as the attention chain (canon_sdpa.c), then remove
 * dead nodes. */
#include <string.h>
#include "compiler/pass.h"

/* A pad by zero on every side, or a roll whose every shift is a whole turn (Swin-T at 224 pads by
 * 0): the input unchanged. */
static bool window_unchanged(const Graph *g, const Node *n)
{
    const GTensor *x = node_input(g, n, 0);
    int64_t v[2 * NPU_MAX_RANK], d[NPU_MAX_RANK];
    int nv = attr_ints(n, n->op == OP_PAD ? "pad" : "shifts", v, 2 * NPU_MAX_RANK);
    int nd = n->op == OP_ROLL ? attr_ints(n, "dims", d, NPU_MAX_RANK) : 0;
    if (nv < 0 || (n->op == OP_ROLL && nd > 0 && nd != nv)) return false;
    int64_t sum[NPU_MAX_RANK] = {0}; /* a roll's shift per dim (dims may repeat) */
    for (int i = 0; i < nv; i++) {
        if (n->op == OP_PAD || nd <= 0) {
            int64_t size = n->op == OP_PAD ? 0 : tensor_numel(x);
            if (size ? v[i] % size : v[i]) return false;
            continue;
        }
        int a = norm_dim(d[i], x->rank);
        if (a < 0) return false;
        sum[a] += v[i];
    }
    for (int a = 0; a < x->rank && nd > 0; a++)
        if (x->shape[a] ? sum[a] % x->shape[a] : sum[a]) return false;
    return true;
}

static bool is_identity(const Graph *g, const Node *n)
{
    switch (n->op) {
    case OP_IDENTITY:
        return true;
    case OP_DROPOUT:
        return !attr_bool(n, "train", false) && !attr_bool(n, "training", false);
    case OP_TO_DTYPE:
        return n->nin >= 1 && node_input(g, n, 0)->dtype == node_output(g, n, 0)->dtype;
    case OP_GETITEM:
        return true;
    case OP_COPY: { /* src already of self's shape and dtype */
        const GTensor *x = node_input(g, n, 0), *src = node_input(g, n, 1);
        return x->dtype == src->dtype && shape_equal(x->rank, x->shape, src->rank, src->shape);
    }
    case OP_PAD:
    case OP_ROLL:
        return n->nin == 1 && window_unchanged(g, n);
    default:
        return false;
    }
}

Status pass_canonicalize(Graph *g, PassCtx *c)
{
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = &g->nodes[i];
        if (n->dead) continue;
        if (n->op == OP_ASSERT_META) {
            graph_kill(g, i);
            continue;
        }
        /* aten.relu_.default -> aten.relu.default: the op id already is out-of-place */
        const char *canon = op_canonical_name(n->op);
        if (strstr(n->aten, "_.") && strcmp(n->aten, canon) != 0 &&
            strncmp(n->aten, "aten.__", 7) != 0) { /* a & b (__and__) is not in place */
            char buf[128];
            snprintf(buf, sizeof buf, "%s", n->aten);
            char *us = strstr(buf, "_.");
            memmove(us, us + 1, strlen(us + 1) + 1);
            n->aten = arena_strdup(&g->arena, buf);
        }
        if (!is_identity(g, n) || n->nout != 1) continue;
        int src = n->in[0];
        if (n->op == OP_COPY) src = n->in[1];
        if (n->op == OP_GETITEM) {
            int64_t idx = attr_int(n, "index", 0);
            if (idx < 0 || idx >= n->nin) continue;
            src = n->in[idx];
        }
        int out = n->out[0];
        /* a graph output keeps its name: leave the copy in place */
        if (g->tensors[out].is_output) continue;
        graph_replace_uses(g, out, src);
        graph_kill(g, i);
    }
    /* sdpa as the chain the attention patterns fuse */
    Status st = canon_sdpa(g, c ? c->opt : NULL);
    if (st != ST_OK) return st;
    /* dead code: nodes whose outputs nobody uses */
    st = graph_link(g);
    for (bool changed = true; changed && st == ST_OK;) {
        changed = false;
        for (int i = g->nnodes - 1; i >= 0; i--) {
            Node *n = &g->nodes[i];
            if (n->dead) continue;
            bool used = false;
            for (int k = 0; k < n->nout; k++) {
                const GTensor *t = &g->tensors[n->out[k]];
                used |= t->nconsumers > 0 || t->is_output;
            }
            if (!used) {
                graph_kill(g, i);
                changed = true;
            }
        }
        st = graph_link(g);
    }
    return st;
}
