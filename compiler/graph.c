#include "compiler/graph.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

Graph *graph_new(const char *path)
{
    Graph *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    arena_init(&g->arena, 256 * 1024);
    g->path = arena_strdup(&g->arena, path ? path : "<memory>");
    strmap_init(&g->by_name);
    strmap_init(&g->node_by_name);
    if (!g->path) { /* every diagnostic names the file: no graph without it */
        graph_free(g);
        return NULL;
    }
    return g;
}

/* Frees the arrays g owns of those named by `bits` (GRAPH_SHARES_*), leaving them NULL. */
static void drop_arrays(Graph *g, unsigned bits)
{
    if (bits & GRAPH_SHARES_TENSORS) {
        if (!(g->shared & GRAPH_SHARES_TENSORS)) free(g->tensors);
        g->tensors = NULL;
    }
    if (bits & GRAPH_SHARES_NODES) {
        if (!(g->shared & GRAPH_SHARES_NODES)) free(g->nodes);
        g->nodes = NULL;
    }
    if (bits & GRAPH_SHARES_BY_NAME) {
        if (!(g->shared & GRAPH_SHARES_BY_NAME)) strmap_free(&g->by_name);
        strmap_init(&g->by_name);
    }
    if (bits & GRAPH_SHARES_NODE_BY_NAME) {
        if (!(g->shared & GRAPH_SHARES_NODE_BY_NAME)) strmap_free(&g->node_by_name);
        strmap_init(&g->node_by_name);
    }
    g->shared &= ~bits;
}

void graph_free(Graph *g)
{
    if (!g) return;
    drop_arrays(g, GRAPH_SHARES_TENSORS | GRAPH_SHARES_NODES | GRAPH_SHARES_BY_NAME |
                       GRAPH_SHARES_NODE_BY_NAME);
    free(g->inputs);
    free(g->outputs);
    free(g->weights);
    free(g->recipes);
    free(g->fusions);
    free(g->misses);
    arena_free(&g->arena);
    free(g);
}

static void *dup_array(const void *p, size_t n)
{
    void *c = malloc(n ? n : 1);
    if (c && n) memcpy(c, p, n);
    return c;
}

/* Makes those of the arrays named by `bits` (GRAPH_SHARES_*) that g shares with another graph
 * its own copies; false on allocation failure (g unchanged). */
static bool own_arrays(Graph *g, unsigned bits)
{
    bits &= g->shared;
    if (!bits) return true;
    GTensor *t = g->tensors;
    Node *n = g->nodes;
    StrMap bn = g->by_name, nn = g->node_by_name;
    bool ok = true;
    if (bits & GRAPH_SHARES_TENSORS)
        ok = (t = dup_array(g->tensors, sizeof *t * (size_t)g->cap_tensors)) != NULL;
    if (ok && (bits & GRAPH_SHARES_NODES))
        ok = (n = dup_array(g->nodes, sizeof *n * (size_t)g->cap_nodes)) != NULL;
    if (ok && (bits & GRAPH_SHARES_BY_NAME)) ok = strmap_copy(&bn, &g->by_name);
    if (ok && (bits & GRAPH_SHARES_NODE_BY_NAME)) ok = strmap_copy(&nn, &g->node_by_name);
    if (!ok) {
        if (t != g->tensors) free(t);
        if (n != g->nodes) free(n);
        if (bn.keys != g->by_name.keys) strmap_free(&bn);
        return false;
    }
    g->tensors = t;
    g->nodes = n;
    g->by_name = bn;
    g->node_by_name = nn;
    g->shared &= ~bits;
    return true;
}

static bool same_ints(const int *a, const int *b, int n)
{
    return n <= 0 || a == b || memcmp(a, b, sizeof(int) * (size_t)n) == 0;
}

/* Tensors equal but for where their consumer lists are stored. */
static bool same_tensor(const GTensor *a, const GTensor *b)
{
    if (a->nconsumers != b->nconsumers || !same_ints(a->consumers, b->consumers, a->nconsumers))
        return false;
    GTensor x = *a;
    x.consumers = b->consumers;
    return memcmp(&x, b, sizeof x) == 0;
}

/* Nodes equal but for where their operand lists are stored. */
static bool same_node(const Node *a, const Node *b)
{
    if (a->nin != b->nin || a->nout != b->nout || !same_ints(a->in, b->in, a->nin) ||
        !same_ints(a->out, b->out, a->nout))
        return false;
    Node x = *a;
    x.in = b->in;
    x.out = b->out;
    return memcmp(&x, b, sizeof x) == 0;
}

static bool same_map(const StrMap *a, const StrMap *b)
{
    return a->cap == b->cap && a->count == b->count &&
           (a->cap == 0 || (memcmp(a->keys, b->keys, sizeof *a->keys * a->cap) == 0 &&
                            memcmp(a->vals, b->vals, sizeof *a->vals * a->cap) == 0));
}

void graph_share(Graph *g, const Graph *prev)
{
    bool same = g->ntensors == prev->ntensors;
    for (int t = 0; same && t < g->ntensors; t++)
        same = same_tensor(&g->tensors[t], &prev->tensors[t]);
    if (same && g->tensors != prev->tensors) {
        drop_arrays(g, GRAPH_SHARES_TENSORS);
        g->tensors = prev->tensors;
        g->cap_tensors = prev->ntensors;
        g->shared |= GRAPH_SHARES_TENSORS;
    }
    same = g->nnodes == prev->nnodes;
    for (int i = 0; same && i < g->nnodes; i++)
        same = same_node(&g->nodes[i], &prev->nodes[i]);
    if (same && g->nodes != prev->nodes) {
        drop_arrays(g, GRAPH_SHARES_NODES);
        g->nodes = prev->nodes;
        g->cap_nodes = prev->nnodes;
        g->shared |= GRAPH_SHARES_NODES;
    }
    if (g->by_name.keys != prev->by_name.keys && same_map(&g->by_name, &prev->by_name)) {
        drop_arrays(g, GRAPH_SHARES_BY_NAME);
        g->by_name = prev->by_name;
        g->shared |= GRAPH_SHARES_BY_NAME;
    }
    if (g->node_by_name.keys != prev->node_by_name.keys &&
        same_map(&g->node_by_name, &prev->node_by_name)) {
        drop_arrays(g, GRAPH_SHARES_NODE_BY_NAME);
        g->node_by_name = prev->node_by_name;
        g->shared |= GRAPH_SHARES_NODE_BY_NAME;
    }
}

int graph_add_tensor(Graph *g, const char *name, DType dt, int rank, const int64_t *shape,
                     TensorKind kind)
{
    if (rank < 0 || rank > NPU_MAX_RANK ||
        !own_arrays(g, GRAPH_SHARES_TENSORS | GRAPH_SHARES_BY_NAME))
        return -1;
    int64_t sh[NPU_MAX_RANK]; /* `shape` may point into g->tensors, which may move below */
    for (int i = 0; i < rank; i++)
        sh[i] = shape[i];
    shape = sh;
    GTensor *p = grow_array(g->tensors, g->ntensors, &g->cap_tensors, sizeof *p, 256);
    if (!p) return -1;
    g->tensors = p;
    GTensor *t = &g->tensors[g->ntensors];
    memset(t, 0, sizeof *t);
    t->name = arena_strdup(&g->arena, name);
    if (!t->name) return -1;
    t->dtype = dt;
    t->rank = rank;
    for (int i = 0; i < rank; i++)
        t->shape[i] = shape[i];
    t->kind = kind;
    t->producer = -1;
    t->alias_of = -1;
    t->offset = -1;
    for (int i = 0; i < rank; i++)
        t->pshape[i] = shape[i];
    if (!strmap_put(&g->by_name, t->name, (void *)(intptr_t)(g->ntensors + 1))) return -1;
    return g->ntensors++;
}

int graph_add_node(Graph *g, const char *name, OpId op, const char *aten, const int *in, int nin,
                   const int *out, int nout)
{
    if (!own_arrays(g, GRAPH_SHARES_NODES | GRAPH_SHARES_NODE_BY_NAME)) return -1;
    Node *p = grow_array(g->nodes, g->nnodes, &g->cap_nodes, sizeof *p, 256);
    if (!p) return -1;
    g->nodes = p;
    Node *n = &g->nodes[g->nnodes];
    memset(n, 0, sizeof *n);
    n->name = arena_strdup(&g->arena, name);
    n->aten = arena_strdup(&g->arena, aten);
    n->op = op;
    n->fusion = -1;
    n->slot = -1;
    n->nin = nin;
    n->nout = nout;
    n->in = arena_dup(&g->arena, in, sizeof(int) * (size_t)(nin ? nin : 1));
    n->out = arena_dup(&g->arena, out, sizeof(int) * (size_t)(nout ? nout : 1));
    if (!n->name || !n->aten || !n->in || !n->out) return -1;
    if (!strmap_put(&g->node_by_name, n->name, (void *)(intptr_t)(g->nnodes + 1))) return -1;
    return g->nnodes++;
}

bool graph_add_attr(Graph *g, int node, const char *key, AttrKind kind, int64_t v)
{
    Node *n = &g->nodes[node];
    Attr *a = arena_alloc(&g->arena, sizeof(Attr) * (size_t)(n->nattrs + 1));
    const char *k = arena_strdup(&g->arena, key);
    if (!a || !k) return false;
    if (n->nattrs) memcpy(a, n->attrs, sizeof(Attr) * (size_t)n->nattrs);
    a[n->nattrs] = (Attr){.key = k, .kind = kind, .i = v, .f = (double)v};
    n->attrs = a;
    n->nattrs++;
    return true;
}

bool graph_add_attr_v(Graph *g, int node, const Attr *at)
{
    Node *n = &g->nodes[node];
    Attr *a = arena_alloc(&g->arena, sizeof(Attr) * (size_t)(n->nattrs + 1));
    Attr c = *at;
    c.key = arena_strdup(&g->arena, at->key);
    if (!a || !c.key) return false;
    if (at->kind == ATTR_INTS || at->kind == ATTR_FLOATS) {
        size_t k = (size_t)(at->n ? at->n : 1);
        c.ints = arena_alloc(&g->arena, sizeof(int64_t) * k);
        c.floats = arena_alloc(&g->arena, sizeof(double) * k);
        if (!c.ints || !c.floats) return false;
        for (int i = 0; i < at->n; i++) {
            c.ints[i] = at->ints ? at->ints[i] : (int64_t)at->floats[i];
            c.floats[i] = at->floats ? at->floats[i] : (double)at->ints[i];
        }
    }
    if (at->kind == ATTR_STR && at->s && !(c.s = arena_strdup(&g->arena, at->s))) return false;
    if (n->nattrs) memcpy(a, n->attrs, sizeof(Attr) * (size_t)n->nattrs);
    a[n->nattrs++] = c;
    n->attrs = a;
    return true;
}

bool graph_add_output(Graph *g, int t)
{
    if (!own_arrays(g, GRAPH_SHARES_TENSORS)) return false;
    int *o = realloc(g->outputs, sizeof(int) * (size_t)(g->noutputs + 1));
    if (!o) return false;
    g->outputs = o;
    g->outputs[g->noutputs++] = t;
    g->tensors[t].is_output = true;
    return true;
}

int graph_find_tensor(const Graph *g, const char *name)
{
    return (int)(intptr_t)strmap_get(&g->by_name, name) - 1;
}

int graph_only_consumer(const Graph *g, int t)
{
    const GTensor *x = &g->tensors[t];
    return x->nconsumers == 1 && !x->is_output ? x->consumers[0] : -1;
}

int graph_find_node(const Graph *g, const char *name)
{
    return (int)(intptr_t)strmap_get(&g->node_by_name, name) - 1;
}

bool graph_index_nodes(Graph *g, int from)
{
    if (!own_arrays(g, GRAPH_SHARES_NODE_BY_NAME)) return false;
    for (int i = from < 0 ? 0 : from; i < g->nnodes; i++)
        if (!strmap_put(&g->node_by_name, g->nodes[i].name, (void *)(intptr_t)(i + 1)))
            return false;
    return true;
}

bool graph_name_tensor(Graph *g, int t, const char *name)
{
    if (!name || !own_arrays(g, GRAPH_SHARES_TENSORS | GRAPH_SHARES_BY_NAME)) return false;
    g->tensors[t].name = name;
    return strmap_put(&g->by_name, name, (void *)(intptr_t)(t + 1));
}

Status graph_link(Graph *g)
{
    if (!own_arrays(g, GRAPH_SHARES_TENSORS)) return ST_NOMEM;
    for (int t = 0; t < g->ntensors; t++) {
        g->tensors[t].nconsumers = 0;
        g->tensors[t].is_output = false;
        if (g->tensors[t].kind == TK_ACT) g->tensors[t].producer = -1;
    }
    for (int i = 0; i < g->noutputs; i++)
        g->tensors[g->outputs[i]].is_output = true;
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = &g->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->nout; k++) {
            g->tensors[n->out[k]].producer = i;
            g->tensors[n->out[k]].producer_out = k;
        }
        for (int k = 0; k < n->nin; k++)
            g->tensors[n->in[k]].nconsumers++;
    }
    for (int t = 0; t < g->ntensors; t++) {
        GTensor *x = &g->tensors[t];
        x->consumers =
            x->nconsumers ? arena_alloc(&g->arena, sizeof(int) * (size_t)x->nconsumers) : NULL;
        if (x->nconsumers && !x->consumers) return ST_NOMEM;
        x->nconsumers = 0;
    }
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = &g->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->nin; k++) {
            GTensor *x = &g->tensors[n->in[k]];
            /* a node listing the same tensor twice (cat(x, x)) is one consumer */
            if (x->nconsumers && x->consumers[x->nconsumers - 1] == i) continue;
            x->consumers[x->nconsumers++] = i;
        }
    }
    return ST_OK;
}

Graph *graph_clone(const Graph *g)
{
    Graph *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    arena_init(&c->arena, 64 * 1024);
    c->path = g->path;
    c->model_name = g->model_name;
    c->ntensors = c->cap_tensors = g->ntensors;
    c->nnodes = c->cap_nodes = g->nnodes;
    c->tensors = malloc(sizeof(GTensor) * (size_t)(g->ntensors + 1));
    c->nodes = malloc(sizeof(Node) * (size_t)(g->nnodes + 1));
    c->inputs = malloc(sizeof(int) * (size_t)(g->ninputs + 1));
    c->outputs = malloc(sizeof(int) * (size_t)(g->noutputs + 1));
    c->weights = malloc(sizeof(int) * (size_t)(g->nweights + 1));
    int nops = 0;
    for (int i = 0; i < g->nnodes; i++)
        nops += g->nodes[i].nin + g->nodes[i].nout + 2;
    int *ops = arena_alloc(&c->arena, sizeof(int) * (size_t)(nops + 1));
    if (!c->tensors || !c->nodes || !c->inputs || !c->outputs || !c->weights || !ops) goto fail;
    /* the name maps are g's until the copy changes them (graph_share's sharing) */
    c->by_name = g->by_name;
    c->node_by_name = g->node_by_name;
    c->shared = GRAPH_SHARES_BY_NAME | GRAPH_SHARES_NODE_BY_NAME;
    if (g->ntensors) memcpy(c->tensors, g->tensors, sizeof(GTensor) * (size_t)g->ntensors);
    if (g->nnodes) memcpy(c->nodes, g->nodes, sizeof(Node) * (size_t)g->nnodes);
    for (int i = 0; i < g->nnodes; i++) { /* operand lists are edited in place by passes */
        Node *n = &c->nodes[i];
        memcpy(ops, n->in, sizeof(int) * (size_t)n->nin);
        n->in = ops;
        ops += n->nin + 1;
        memcpy(ops, n->out, sizeof(int) * (size_t)n->nout);
        n->out = ops;
        ops += n->nout + 1;
    }
    c->ninputs = g->ninputs;
    c->noutputs = g->noutputs;
    c->nweights = g->nweights;
    c->state_in = g->state_in;
    c->state_out = g->state_out;
    c->nstates = g->nstates;
    if (g->ninputs) memcpy(c->inputs, g->inputs, sizeof(int) * (size_t)g->ninputs);
    if (g->noutputs) memcpy(c->outputs, g->outputs, sizeof(int) * (size_t)g->noutputs);
    if (g->nweights) memcpy(c->weights, g->weights, sizeof(int) * (size_t)g->nweights);
    c->nparts = g->nparts;
    c->arena_bytes = g->arena_bytes;
    c->naive_bytes = g->naive_bytes;
    if (g->nrecipes) {
        c->recipes = malloc(sizeof(Recipe) * (size_t)g->nrecipes);
        if (!c->recipes) goto fail;
        memcpy(c->recipes, g->recipes, sizeof(Recipe) * (size_t)g->nrecipes);
        c->nrecipes = g->nrecipes;
    }
    if (g->nfusions) {
        c->fusions = malloc(sizeof(Fusion) * (size_t)g->nfusions);
        if (!c->fusions) goto fail;
        for (int i = 0; i < g->nfusions; i++) {
            Fusion f = g->fusions[i];
            f.nodes = arena_dup(&c->arena, f.nodes, sizeof(int) * (size_t)f.nnodes);
            if (!f.nodes) goto fail;
            c->fusions[i] = f;
        }
        c->nfusions = g->nfusions;
    }
    if (g->nmisses) {
        c->misses = malloc(sizeof(NearMiss) * (size_t)g->nmisses);
        if (!c->misses) goto fail;
        memcpy(c->misses, g->misses, sizeof(NearMiss) * (size_t)g->nmisses);
        c->nmisses = g->nmisses;
    }
    if (graph_link(c) != ST_OK) goto fail;
    return c;
fail:
    graph_free(c);
    return NULL;
}

Status graph_verify(const Graph *g, DiagList *d)
{
    Status st = ST_OK;
    char *ready = calloc((size_t)g->ntensors + 1, 1);
    if (!ready) return ST_NOMEM;
    for (int t = 0; t < g->ntensors; t++)
        if (g->tensors[t].kind != TK_ACT) ready[t] = 1;
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = &g->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->nin; k++) {
            int t = n->in[k];
            if (t < 0 || t >= g->ntensors) {
                st = diag_add(d, DIAG_ERROR, ST_INTERNAL, g->path, n->name, NULL,
                              "input %d has invalid tensor id %d", k, t);
                continue;
            }
            if (!ready[t])
                st = diag_add(d, DIAG_ERROR, ST_INTERNAL, g->path, n->name, g->tensors[t].name,
                              "consumed before it is produced");
        }
        for (int k = 0; k < n->nout; k++) {
            int t = n->out[k];
            if (t < 0 || t >= g->ntensors) {
                st = diag_add(d, DIAG_ERROR, ST_INTERNAL, g->path, n->name, NULL,
                              "output %d has invalid tensor id %d", k, t);
                continue;
            }
            if (ready[t])
                st = diag_add(d, DIAG_ERROR, ST_INTERNAL, g->path, n->name, g->tensors[t].name,
                              "tensor produced twice");
            ready[t] = 1;
        }
    }
    for (int i = 0; i < g->noutputs; i++)
        if (!ready[g->outputs[i]])
            st = diag_add(d, DIAG_ERROR, ST_INTERNAL, g->path, NULL, g->tensors[g->outputs[i]].name,
                          "graph output is never produced");
    free(ready);
#ifndef NDEBUG
    /* node names are unique and their map current: the pipeline's change list takes a node at
     * the same index under the same name for the same node (pipeline.c) */
    for (int i = 0; i < g->nnodes; i++)
        if (graph_find_node(g, g->nodes[i].name) != i)
            st = diag_add(d, DIAG_ERROR, ST_INTERNAL, g->path, g->nodes[i].name, NULL,
                          "node name taken twice or not indexed");
#endif
    return st;
}

int64_t tensor_numel(const GTensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= t->shape[i];
    return n;
}

char *shape_str(const int64_t *shape, int rank, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < rank && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? ",%lld" : "%lld", (long long)shape[i]);
    if (k < n) snprintf(buf + k, n - k, "]");
    return buf;
}

char *tensor_describe(const GTensor *t, char *buf, size_t n)
{
    char s[160];
    snprintf(buf, n, "%s%s", dtype_short(t->dtype), shape_str(t->shape, t->rank, s, sizeof s));
    return buf;
}

const Attr *node_attr(const Node *n, const char *key)
{
    for (int i = 0; i < n->nattrs; i++)
        if (strcmp(n->attrs[i].key, key) == 0) return &n->attrs[i];
    return NULL;
}

bool attr_present(const Node *n, const char *key)
{
    const Attr *a = node_attr(n, key);
    return a && a->kind != ATTR_NONE;
}

int64_t attr_int(const Node *n, const char *key, int64_t dflt)
{
    const Attr *a = node_attr(n, key);
    if (!a) return dflt;
    if (a->kind == ATTR_INT || a->kind == ATTR_BOOL) return a->i;
    if (a->kind == ATTR_FLOAT) return (int64_t)a->f;
    if ((a->kind == ATTR_INTS) && a->n == 1) return a->ints[0];
    return dflt;
}

double attr_float(const Node *n, const char *key, double dflt)
{
    const Attr *a = node_attr(n, key);
    if (!a) return dflt;
    if (a->kind == ATTR_FLOAT) return a->f;
    if (a->kind == ATTR_INT || a->kind == ATTR_BOOL) return (double)a->i;
    return dflt;
}

bool attr_number(const Node *n, const char *key, double *v)
{
    const Attr *a = node_attr(n, key);
    if (!a) return false;
    switch (a->kind) {
    case ATTR_INT:
    case ATTR_BOOL:
        *v = (double)a->i;
        return true;
    case ATTR_FLOAT:
        *v = a->f;
        return true;
    case ATTR_STR: {
        char *end;
        *v = strtod(a->s, &end);
        return end != a->s && *end == 0;
    }
    case ATTR_NONE:
    case ATTR_INTS:
    case ATTR_FLOATS:
    case ATTR_OTHER:
        break;
    }
    return false;
}

bool attr_bool(const Node *n, const char *key, bool dflt)
{
    const Attr *a = node_attr(n, key);
    if (!a) return dflt;
    if (a->kind == ATTR_BOOL || a->kind == ATTR_INT) return a->i != 0;
    return dflt;
}

const char *attr_str(const Node *n, const char *key, const char *dflt)
{
    const Attr *a = node_attr(n, key);
    if (!a || a->kind != ATTR_STR) return dflt;
    return a->s;
}

int attr_ints(const Node *n, const char *key, int64_t *out, int maxn)
{
    const Attr *a = node_attr(n, key);
    if (!a) return -1;
    if (a->kind == ATTR_INT) {
        if (maxn > 0) out[0] = a->i;
        return 1;
    }
    if (a->kind != ATTR_INTS) return -1;
    int k = a->n < maxn ? a->n : maxn;
    for (int i = 0; i < k; i++)
        out[i] = a->ints[i];
    return a->n;
}

bool attr_ints_n(const Node *n, const char *key, int64_t *out, int cnt, int64_t dflt)
{
    int64_t tmp[NPU_MAX_RANK];
    const Attr *a = node_attr(n, key);
    if (!a || a->kind == ATTR_NONE) {
        for (int i = 0; i < cnt; i++)
            out[i] = dflt;
        return true;
    }
    int k = attr_ints(n, key, tmp, NPU_MAX_RANK);
    if (k == 1) {
        for (int i = 0; i < cnt; i++)
            out[i] = tmp[0];
        return true;
    }
    if (k != cnt) return false;
    for (int i = 0; i < cnt; i++)
        out[i] = tmp[i];
    return true;
}

int norm_dim(int64_t dim, int rank)
{
    int r = rank > 0 ? rank : 1; /* a scalar accepts dim 0 / -1 */
    if (dim < -r || dim >= r) return -1;
    return (int)(dim < 0 ? dim + r : dim);
}

bool node_perm(const Node *n, int r, int *perm)
{
    for (int i = 0; i < r; i++)
        perm[i] = i;
    if (n->op == OP_TRANSPOSE && r > 0) {
        int a = norm_dim(attr_int(n, "dim0", 0), r), b = norm_dim(attr_int(n, "dim1", 1), r);
        if (a < 0 || b < 0) return false;
        perm[a] = b;
        perm[b] = a;
    } else if (n->op == OP_PERMUTE) {
        int64_t dims[NPU_MAX_RANK];
        bool seen[NPU_MAX_RANK] = {0};
        if (attr_ints(n, "dims", dims, NPU_MAX_RANK) != r) return false;
        for (int i = 0; i < r; i++) {
            int d = norm_dim(dims[i], r);
            if (d < 0 || seen[d]) return false;
            seen[d] = true;
            perm[i] = d;
        }
    } else if (n->op == OP_T && r == 2) {
        perm[0] = 1;
        perm[1] = 0;
    }
    return true;
}

bool strides_outer_m_inner(int r, const int64_t *shape, const int64_t *st, int dim, int64_t *so,
                           const char **why)
{
    int64_t acc = 1, next = -1; /* next: the stride the next outer dim (going out) must have */
    for (int d = r - 1; d > dim; d--) {
        if (shape[d] != 1 && st[d] != acc)
            return (*why = "the dims after the index_copy dim are not contiguous in the source"),
                   false;
        acc *= shape[d];
    }
    *so = 0;
    for (int d = dim - 1; d >= 0; d--) {
        if (shape[d] == 1) continue;
        if (next >= 0 && st[d] != next)
            return (*why = "the source's dims before the index_copy dim do not collapse"), false;
        if (next < 0) *so = st[d];
        next = st[d] * shape[d];
    }
    return true;
}

bool shape_equal(int ra, const int64_t *a, int rb, const int64_t *b)
{
    if (ra != rb) return false;
    for (int i = 0; i < ra; i++)
        if (a[i] != b[i]) return false;
    return true;
}

bool shape_bcasts_to(int ra, const int64_t *a, int rb, const int64_t *b)
{
    if (ra > rb) return false;
    for (int i = 0; i < ra; i++) {
        int64_t x = a[ra - 1 - i], y = b[rb - 1 - i];
        if (x != y && x != 1) return false;
    }
    return true;
}
