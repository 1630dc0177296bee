#include "tests/graph_eq.h"

#include <stdio.h>
#include <string.h>

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same_mem(const void *a, const void *b, size_t n)
{
    return n == 0 || a == b || (a && b && memcmp(a, b, n) == 0);
}

static bool same_attr(const Attr *a, const Attr *b)
{
    if (!same_str(a->key, b->key) || a->kind != b->kind || a->i != b->i ||
        !same_mem(&a->f, &b->f, sizeof a->f) || !same_str(a->s, b->s) || a->n != b->n)
        return false;
    bool list = a->kind == ATTR_INTS || a->kind == ATTR_FLOATS;
    return !list || (same_mem(a->ints, b->ints, sizeof(int64_t) * (size_t)a->n) &&
                     same_mem(a->floats, b->floats, sizeof(double) * (size_t)a->n));
}

static const char *tensor_diff(const GTensor *a, const GTensor *b)
{
    if (!same_str(a->name, b->name)) return "name";
    if (a->dtype != b->dtype || a->rank != b->rank || a->kind != b->kind) return "dtype/rank/kind";
    if (!same_mem(a->shape, b->shape, sizeof(int64_t) * (size_t)a->rank) ||
        !same_mem(a->pshape, b->pshape, sizeof(int64_t) * (size_t)a->rank))
        return "shape";
    if (!same_str(a->weight_key, b->weight_key)) return "weight_key";
    if (a->producer != b->producer || a->producer_out != b->producer_out) return "producer";
    if (a->nconsumers != b->nconsumers ||
        !same_mem(a->consumers, b->consumers, sizeof(int) * (size_t)a->nconsumers))
        return "consumers";
    if (a->is_output != b->is_output || a->state != b->state || a->host_form != b->host_form)
        return "flags";
    if ((a->const_data == NULL) != (b->const_data == NULL) ||
        (a->const_data &&
         !same_mem(a->const_data, b->const_data, sizeof(double) * (size_t)tensor_numel(a))))
        return "const_data";
    if (a->alias_of != b->alias_of || a->view_off != b->view_off || a->padded != b->padded ||
        a->offset != b->offset || a->bytes != b->bytes)
        return "pass fields";
    return NULL;
}

static const char *node_diff(const Node *a, const Node *b)
{
    if (!same_str(a->name, b->name) || !same_str(a->aten, b->aten) || a->op != b->op)
        return "name/op";
    if (a->nin != b->nin || a->nout != b->nout ||
        !same_mem(a->in, b->in, sizeof(int) * (size_t)a->nin) ||
        !same_mem(a->out, b->out, sizeof(int) * (size_t)a->nout))
        return "operands";
    if (a->nattrs != b->nattrs) return "attribute count";
    for (int i = 0; i < a->nattrs; i++)
        if (!same_attr(&a->attrs[i], &b->attrs[i])) return "attribute";
    if (a->dead != b->dead || a->place != b->place || a->part != b->part ||
        a->fusion != b->fusion || a->slot != b->slot || a->adopted != b->adopted ||
        !same_str(a->why_cpu, b->why_cpu))
        return "pass fields";
    return NULL;
}

static bool same_ids(const int *a, int na, const int *b, int nb)
{
    return na == nb && same_mem(a, b, sizeof(int) * (size_t)(na > 0 ? na : 0));
}

bool geq_same(const Graph *a, const Graph *b, char *why, size_t n)
{
    const char *w = NULL;
    int at = -1;
    if (!same_str(a->model_name, b->model_name) || !same_str(a->path, b->path))
        w = "model name or path";
    else if (a->ntensors != b->ntensors || a->nnodes != b->nnodes)
        w = "tensor or node count";
    else if (!same_ids(a->inputs, a->ninputs, b->inputs, b->ninputs) ||
             !same_ids(a->outputs, a->noutputs, b->outputs, b->noutputs) ||
             !same_ids(a->weights, a->nweights, b->weights, b->nweights))
        w = "inputs, outputs or weights";
    else if (!same_ids(a->state_in, a->nstates, b->state_in, b->nstates) ||
             !same_ids(a->state_out, a->nstates, b->state_out, b->nstates))
        w = "state";
    else if (a->nrecipes != b->nrecipes || a->nfusions != b->nfusions || a->nparts != b->nparts)
        w = "recipes, fusions or parts";
    for (int t = 0; !w && t < a->ntensors; t++)
        if ((w = tensor_diff(&a->tensors[t], &b->tensors[t]))) at = t;
    for (int i = 0; !w && i < a->nnodes; i++)
        if ((w = node_diff(&a->nodes[i], &b->nodes[i]))) at = i;
    for (int t = 0; !w && t < a->ntensors; t++)
        if (graph_find_tensor(a, a->tensors[t].name) != graph_find_tensor(b, b->tensors[t].name))
            w = "tensor name map", at = t;
    for (int i = 0; !w && i < a->nnodes; i++)
        if (graph_find_node(a, a->nodes[i].name) != graph_find_node(b, b->nodes[i].name))
            w = "node name map", at = i;
    if (w) snprintf(why, n, "%s (index %d)", w, at);
    return !w;
}
