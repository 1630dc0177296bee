/* In-place ops of an imported graph. The IR writes `y = op_(x)`; torch also changed x, and
 * through x every tensor sharing its storage. The graph computes out of place, so a write that
 * a later node sees must become explicit or be refused, never dropped:
 *  - x produced by a computing node (or a graph input) and read again later: those later reads
 *    are redirected to y, which is what they see in torch;
 *  - x a weight or constant (a buffer: model state in torch, kept across calls): the same, and
 *    the buffer becomes model state unless every run overwrites it whole before reading it
 *    (copy_, zero_ or fill_ as its first use). State is a graph input whose first value is the
 *    weight's or constant's; the value it holds at the end of a run (the last write) becomes one
 *    more graph output, paired with it (Graph.state_in/state_out), which a caller carries into
 *    the next run's input (generate; the runtime carries it in place when the write is);
 *  - x a slice of a base, or a slice of such a slice (a box: Swin's shifted-window mask fills
 *    mask[h0:h1, w0:w1]), that is read later (or is model state), the op zero_/fill_ (its value
 *    a number or a 0-dim tensor): the node becomes npu.slice_fill of the base (the base with that
 *    region filled), and the later reads of the base read it;
 *  - any other write into a view that is read later or is model state, and a view made before
 *    a write and read after it: refused with the nodes named. */
#include <stdlib.h>
#include <string.h>
#include "compiler/inplace.h"
#include "compiler/shape/shape.h"

/* A node whose output shares its input 0's storage in torch. */
static bool is_view(const Graph *g, const Node *n)
{
    OpClass k = op_class(n->op);
    if (k == OC_reshape || k == OC_permute || k == OC_slice || k == OC_expand) return true;
    if (n->op == OP_IDENTITY) /* alias and detach share storage; clone and contiguous copy */
        return n->aten && (strstr(n->aten, "alias") || strstr(n->aten, "detach"));
    if (n->op == OP_TO_DTYPE) /* `to` returns self when nothing changes; _to_copy always copies */
        return n->aten && !strstr(n->aten, "_to_copy") && !attr_bool(n, "copy", false) &&
               n->nin >= 1 && n->nout >= 1 &&
               node_input(g, n, 0)->dtype == node_output(g, n, 0)->dtype;
    return false;
}

/* An in-place ATen op ("aten.add_.Tensor"), not a dunder (aten.__and__). */
static bool in_place(const Node *n)
{
    if (n->nin < 1 || n->nout < 1 || !n->aten || strncmp(n->aten, "aten.", 5) != 0) return false;
    const char *dot = strchr(n->aten + 5, '.');
    return dot && dot[-1] == '_' && strncmp(n->aten + 5, "__", 2) != 0;
}

/* Does in-place node n replace all of its input 0 without reading its values? */
static bool overwrites_whole(const Node *n)
{
    if (n->op == OP_COPY) return true;
    return n->op == OP_FILL_LIKE && (strstr(n->aten, "zero_.") || strstr(n->aten, "fill_."));
}

/* Is buffer t's value at the start of a run read? Not when its first use overwrites it whole. */
static bool start_value_read(const Graph *g, int t)
{
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = &g->nodes[i];
        int uses = 0;
        for (int k = 0; k < n->nin; k++)
            uses += n->in[k] == t;
        if (uses == 0) continue;
        return !(uses == 1 && n->in[0] == t && in_place(n) && overwrites_whole(n));
    }
    return true; /* a graph output read as it is */
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

/* The tensor owning t's storage: t, or the input at the end of its chain of views; *via (may
 * be NULL) receives the view node nearest that base, -1 when t is no view. */
static int storage_of(const Graph *g, int t, int *via)
{
    int v = -1;
    while (g->tensors[t].producer >= 0 && is_view(g, &g->nodes[g->tensors[t].producer])) {
        v = g->tensors[t].producer;
        t = g->nodes[v].in[0];
    }
    if (via) *via = v;
    return t;
}

/* The first node after k reading a view of x made before node k wrote x: it would miss the
 * write (views made after it read the write's result once reads of x are redirected). -1 when
 * none. */
static int stale_view_read(const Graph *g, int x, int k)
{
    for (int i = k + 1; i < g->nnodes; i++)
        for (int j = 0; j < g->nodes[i].nin; j++) {
            int t = g->nodes[i].in[j], via;
            if (t != x && storage_of(g, t, &via) == x && via < k) return i;
        }
    return -1;
}

/* The chain of slices from base to x (each a slice of the one before: the region they select
 * is a box of base), base first, in s[]; its length, 0 when some link is no slice. */
static int slice_chain(const Graph *g, int x, int base, const Node **s)
{
    int n = 0;
    for (int t = x; t != base; t = g->nodes[g->tensors[t].producer].in[0]) {
        const Node *v = &g->nodes[g->tensors[t].producer];
        if (v->op != OP_SLICE || n == NPU_MAX_RANK) return 0;
        s[n++] = v;
    }
    for (int i = 0; i < n / 2; i++) {
        const Node *tmp = s[i];
        s[i] = s[n - 1 - i];
        s[n - 1 - i] = tmp;
    }
    return n;
}

/* Sets n's slice_fill attributes from the chain s[0..ns): dim, start, end (and step, when some
 * step is not 1) as ints for one slice, lists for several, then the fill value `value`. */
static bool set_region(Graph *g, int k, const Node *const *s, int ns, const Attr *value)
{
    static const char *const keys[] = {"dim", "start", "end", "step"};
    static const int64_t dflt[] = {0, 0, INT64_MAX, 1};
    int64_t v[4][NPU_MAX_RANK];
    bool stepped = false;
    for (int i = 0; i < ns; i++) {
        for (int a = 0; a < 4; a++)
            v[a][i] = attr_int(s[i], keys[a], dflt[a]);
        stepped |= v[3][i] != 1;
    }
    g->nodes[k].nattrs = 0;
    for (int a = 0; a < (stepped ? 4 : 3); a++) {
        Attr at = ns == 1
                      ? (Attr){.key = keys[a], .kind = ATTR_INT, .i = v[a][0], .f = (double)v[a][0]}
                      : (Attr){.key = keys[a], .kind = ATTR_INTS, .ints = v[a], .n = ns};
        if (!graph_add_attr_v(g, k, &at)) return false;
    }
    return !value || graph_add_attr_v(g, k, value);
}

/* zero_/fill_ of x = a chain of slices of base at node k: node k becomes slice_fill(base[,
 * value tensor]) -> its output, shaped as base, and later reads of base read it. False when the
 * pattern does not fit. */
static bool to_slice_fill(Graph *g, int k, int base)
{
    Node *n = &g->nodes[k];
    bool zero = strstr(n->aten, "zero_") != NULL;
    if (!zero && !strstr(n->aten, "fill_.Scalar") && !strstr(n->aten, "fill_.Tensor")) return false;
    const Node *s[NPU_MAX_RANK];
    int ns = slice_chain(g, n->in[0], base, s);
    if (ns == 0) return false;
    if (read_after(g, n->out[0], k) >= 0) return false; /* y itself read: keep it simple */
    if (stale_view_read(g, base, k) >= 0) return false; /* a view (x, a link) read afterwards */
    const Attr *v = node_attr(n, "value");
    Attr value = zero ? (Attr){.key = "value", .kind = ATTR_INT, .i = 0, .f = 0}
                 : v  ? *v
                      : (Attr){.key = NULL};
    if (!set_region(g, k, s, ns, value.key ? &value : NULL)) return false;
    n->op = OP_SLICE_FILL;
    n->aten = "npu.slice_fill";
    n->in[0] = base;
    GTensor *o = &g->tensors[n->out[0]];
    const GTensor *b = &g->tensors[base];
    o->rank = b->rank;
    memcpy(o->shape, b->shape, sizeof(int64_t) * (size_t)b->rank);
    memcpy(o->pshape, b->shape, sizeof(int64_t) * (size_t)b->rank);
    o->dtype = b->dtype;
    redirect_after(g, base, n->out[0], k);
    return true;
}

static bool is_buffer(const GTensor *t)
{
    return t->kind == TK_WEIGHT || t->kind == TK_CONST;
}

/* The model state found: buffer state[i] holds last[i] at the end of a run; of[t] is the
 * state whose current value tensor t is (-1: none). */
typedef struct States {
    int *of, *buf, *last, n;
} States;

/* Tensor y (written by node k) is now the value of the state whose value x was, if any; a
 * buffer x whose start value a run reads becomes state. */
static void track(const Graph *g, States *s, int x, int y)
{
    int i = s->of[x];
    if (i < 0 && is_buffer(&g->tensors[x]) && start_value_read(g, x)) {
        i = s->n++;
        s->buf[i] = x;
        s->of[x] = i;
    }
    if (i < 0) return;
    s->last[i] = y;
    s->of[y] = i;
}

/* Buffers holding state become graph inputs, their values at the end of a run graph outputs;
 * a last value of another shape or dtype (an in-place view op such as unsqueeze_) could not be
 * carried into the next run: refused. */
static Status make_state(Graph *g, const States *s, DiagList *d)
{
    for (int i = 0; i < s->n; i++) {
        const GTensor *b = &g->tensors[s->buf[i]], *l = &g->tensors[s->last[i]];
        if (b->dtype != l->dtype || !shape_equal(b->rank, b->shape, l->rank, l->shape))
            return diag_error(d, g->path, l->producer >= 0 ? g->nodes[l->producer].name : NULL,
                              b->name,
                              "model state '%s' ends the run as '%s' of another shape "
                              "or dtype: it cannot be carried into the next run",
                              b->name, l->name);
    }
    if (s->n == 0) return ST_OK;
    int *in = realloc(g->inputs, sizeof(int) * (size_t)(g->ninputs + s->n));
    g->state_in = arena_alloc(&g->arena, sizeof(int) * (size_t)s->n);
    g->state_out = arena_alloc(&g->arena, sizeof(int) * (size_t)s->n);
    if (in) g->inputs = in;
    if (!in || !g->state_in || !g->state_out) return ST_NOMEM;
    for (int i = 0; i < s->n; i++) {
        GTensor *b = &g->tensors[s->buf[i]];
        b->kind = TK_INPUT;
        b->state = true;
        g->inputs[g->ninputs++] = s->buf[i];
        int o = 0;
        while (o < g->noutputs && g->outputs[o] != s->last[i])
            o++;
        if (o == g->noutputs && !graph_add_output(g, s->last[i])) return ST_NOMEM;
        g->state_in[i] = s->buf[i];
        g->state_out[i] = o;
    }
    g->nstates = s->n;
    return ST_OK;
}

static Status resolve(Graph *g, States *s, DiagList *d)
{
    for (int k = 0; k < g->nnodes; k++) {
        Node *n = &g->nodes[k];
        if (!in_place(n)) continue;
        int x = n->in[0], y = n->out[0], via;
        const GTensor *xt = &g->tensors[x];
        int base = storage_of(g, x, &via);
        if (via < 0) { /* x owns its storage: later reads of x see y */
            int r = stale_view_read(g, x, k);
            if (r >= 0)
                return diag_error(d, g->path, n->name, xt->name,
                                  "%s writes in place into '%s', and '%s' reads it afterwards "
                                  "through a view made before the write: the graph computes out "
                                  "of place and would miss the write (export without in-place "
                                  "ops, or make the view after the write)",
                                  n->aten, xt->name, reader(g, r));
            redirect_after(g, x, y, k);
            track(g, s, x, y);
            continue;
        }
        const GTensor *bt = &g->tensors[base];
        if (is_buffer(bt) || s->of[base] >= 0) { /* the write reaches model state */
            if (to_slice_fill(g, k, base)) {
                track(g, s, base, y);
                continue;
            }
            return diag_error(d, g->path, n->name, bt->name,
                              "%s writes in place into a view of '%s' (made by '%s'), model "
                              "state that persists across runs: only writes into the whole "
                              "buffer and zero_/fill_ of a slice of it are carried from one run "
                              "to the next (export the update as one whole-buffer op, such as "
                              "index_copy_)",
                              n->aten, bt->name, g->nodes[via].name);
        }
        int r = read_after(g, base, k), sv = stale_view_read(g, base, k);
        if (r < 0 && sv < 0) continue; /* nobody sees the write through the base */
        if (to_slice_fill(g, k, base)) continue;
        r = r < 0 || (sv >= 0 && sv < r) ? sv : r;
        return diag_error(d, g->path, n->name, xt->name,
                          "%s writes in place into a view of '%s' (made by '%s') that '%s' "
                          "reads afterwards: the graph computes out of place and would miss "
                          "the write; only zero_/fill_ of slices are rewritten, and only while no "
                          "view made before them is read afterwards (export without in-place ops "
                          "on views)",
                          n->aten, bt->name, g->nodes[via].name, reader(g, r));
    }
    return make_state(g, s, d);
}

Status inplace_resolve(Graph *g, DiagList *d)
{
    size_t n = (size_t)g->ntensors + 1;
    States s = {.of = malloc(sizeof(int) * n),
                .buf = malloc(sizeof(int) * n),
                .last = malloc(sizeof(int) * n)};
    Status st = s.of && s.buf && s.last ? ST_OK : ST_NOMEM;
    for (int t = 0; st == ST_OK && t < g->ntensors; t++)
        s.of[t] = -1;
    if (st == ST_OK) st = resolve(g, &s, d);
    free(s.of);
    free(s.buf);
    free(s.last);
    return st;
}
