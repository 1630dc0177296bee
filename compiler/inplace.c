/* In-place ops of an imported graph. The IR writes `y = op_(x)`; torch also changed x, and
 * through x every tensor sharing its storage. The graph computes out of place, so a write that
 * a later node sees must become explicit or be refused, never dropped:
 *  - x produced by a computing node (or a graph input) and read again later: those later reads
 *    are redirected to y, which is what they see in torch;
 *  - x a slice of a base that is read later, the op zero_/fill_: the node becomes npu.slice_fill
 *    of the base (the base with that slice filled), and the later reads of the base read it;
 *  - any other write into a view that is read later, or into a weight or buffer (model state
 *    that would persist across runs): refused with the nodes named. */
#include <string.h>
#include "compiler/inplace.h"
#include "compiler/shape/shape.h"

/* A node whose output shares its input 0's storage in torch. */
static bool is_view(const Node *n)
{
    switch (n->op) {
    case OP_SLICE:
    case OP_SELECT:
    case OP_VIEW:
    case OP_FLATTEN:
    case OP_UNSQUEEZE:
    case OP_SQUEEZE:
    case OP_PERMUTE:
    case OP_TRANSPOSE:
    case OP_T:
    case OP_EXPAND:
    case OP_SPLIT:
        return true;
    case OP_IDENTITY: /* alias and detach share storage; clone and contiguous copy */
        return n->aten && (strstr(n->aten, "alias") || strstr(n->aten, "detach"));
    default:
        return false;
    }
}

/* Index of the first node after `after` that reads tensor t, or -1 (graph outputs: nnodes). */
static int read_after(const Graph *g, int t, int after)
{
    for (int i = after + 1; i < g->nnodes; i++)
        for (int k = 0; k < g->nodes[i].nin; k++)
            if (g->nodes[i].in[k] == t) return i;
    for (int k = 0; k < g->noutputs; k++)
        if (g->outputs[k] == t) return g->nnodes;
    return -1;
}

static void redirect_after(Graph *g, int from, int to, int after)
{
    for (int i = after + 1; i < g->nnodes; i++)
        for (int k = 0; k < g->nodes[i].nin; k++)
            if (g->nodes[i].in[k] == from) g->nodes[i].in[k] = to;
}

static const char *reader(const Graph *g, int i)
{
    return i < g->nnodes ? g->nodes[i].name : "(a graph output)";
}

/* zero_/fill_ of x = slice(base) at node k: node k becomes slice_fill(base) -> its output,
 * reshaped as base, and later reads of base read it. False when the pattern does not fit. */
static bool to_slice_fill(Graph *g, int k, const Node *s, int base)
{
    Node *n = &g->nodes[k];
    bool zero = strstr(n->aten, "zero_") != NULL;
    if (!zero && !strstr(n->aten, "fill_.Scalar")) return false;
    GTensor *o = &g->tensors[n->out[0]];
    if (read_after(g, n->out[0], k) >= 0) return false; /* y itself read: keep it simple */
    Attr *a = arena_alloc(&g->arena, sizeof(Attr) * (size_t)(s->nattrs + 1));
    if (!a) return false;
    memcpy(a, s->attrs, sizeof(Attr) * (size_t)s->nattrs);
    int na = s->nattrs;
    const Attr *v = node_attr(n, "value");
    if (zero)
        a[na++] = (Attr){.key = "value", .kind = ATTR_INT, .i = 0, .f = 0};
    else if (v)
        a[na++] = *v;
    n->attrs = a;
    n->nattrs = na;
    n->op = OP_SLICE_FILL;
    n->aten = "npu.slice_fill";
    n->in[0] = base;
    const GTensor *b = &g->tensors[base];
    o->rank = b->rank;
    memcpy(o->shape, b->shape, sizeof(int64_t) * (size_t)b->rank);
    memcpy(o->pshape, b->shape, sizeof(int64_t) * (size_t)b->rank);
    o->dtype = b->dtype;
    redirect_after(g, base, n->out[0], k);
    return true;
}

Status inplace_resolve(Graph *g, DiagList *d)
{
    for (int k = 0; k < g->nnodes; k++) {
        Node *n = &g->nodes[k];
        if (n->nin < 1 || n->nout < 1 || !n->aten || strncmp(n->aten, "aten.", 5) != 0) continue;
        const char *dot = strchr(n->aten + 5, '.');
        if (!dot || dot[-1] != '_' || !strncmp(n->aten + 5, "__", 2)) continue; /* not in place */
        int x = n->in[0];
        const GTensor *xt = &g->tensors[x];
        if (xt->kind == TK_WEIGHT || xt->kind == TK_CONST)
            return diag_error(d, g->path, n->name, xt->name,
                              "%s writes in place into '%s', a weight or buffer: model state "
                              "that would have to persist across runs, which is not supported "
                              "(export without in-place updates of buffers)",
                              n->aten, xt->name);
        /* the chain of views x is made by, down to the tensor that owns the storage */
        int base = x, via = -1;
        while (g->tensors[base].producer >= 0 && is_view(&g->nodes[g->tensors[base].producer])) {
            via = g->tensors[base].producer;
            base = g->nodes[via].in[0];
        }
        if (via < 0) { /* x owns its storage: later reads of x see y */
            redirect_after(g, x, n->out[0], k);
            continue;
        }
        int r = read_after(g, base, k);
        if (r < 0) continue; /* nobody sees the write through the base */
        const Node *s = &g->nodes[g->tensors[x].producer];
        if (s->op == OP_SLICE && s->in[0] == base && to_slice_fill(g, k, s, base)) continue;
        if (g->tensors[base].kind == TK_WEIGHT)
            return diag_error(d, g->path, n->name, g->tensors[base].name,
                              "%s writes in place into a view of '%s', a weight or buffer: model "
                              "state that would have to persist across runs, which is not "
                              "supported",
                              n->aten, g->tensors[base].name);
        return diag_error(d, g->path, n->name, xt->name,
                          "%s writes in place into a view of '%s' (made by '%s') that '%s' "
                          "reads afterwards: the graph computes out of place and would miss "
                          "the write; only zero_/fill_ of a slice are rewritten (export without "
                          "in-place ops on views)",
                          n->aten, g->tensors[base].name, g->nodes[via].name, reader(g, r));
    }
    return ST_OK;
}
