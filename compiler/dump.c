#include "compiler/dump.h"

#include <stdarg.h>
#include <string.h>

static size_t add(char *buf, size_t n, size_t k, const char *fmt, ...) NPU_PRINTF(4, 5);
static size_t add(char *buf, size_t n, size_t k, const char *fmt, ...)
{
    if (k >= n) return k;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + k, n - k, fmt, ap);
    va_end(ap);
    return w < 0 ? k : k + (size_t)w;
}

char *node_line(const Graph *g, int i, char *buf, size_t n)
{
    const Node *nd = &g->nodes[i];
    size_t k = 0;
    char sh[160];
    for (int o = 0; o < nd->nout; o++)
        k = add(buf, n, k, "%s%%%s", o ? ", " : "", g->tensors[nd->out[o]].name);
    k = add(buf, n, k, "%s%s(", nd->nout ? " = " : "", op_short_name(nd->op));
    for (int a = 0; a < nd->nin; a++) {
        const GTensor *t = &g->tensors[nd->in[a]];
        k = add(buf, n, k, "%s%s%s", a ? ", " : "",
                t->kind == TK_ACT || t->kind == TK_INPUT ? "%" : "$", t->name);
    }
    for (int a = 0; a < nd->nattrs; a++) {
        const Attr *at = &nd->attrs[a];
        if (strcmp(at->key, "_tensor_list_sizes") == 0) continue;
        k = add(buf, n, k, "%s%s=", (nd->nin || a) ? ", " : "", at->key);
        switch (at->kind) {
        case ATTR_NONE:
            k = add(buf, n, k, "None");
            break;
        case ATTR_INT:
            k = add(buf, n, k, "%lld", (long long)at->i);
            break;
        case ATTR_BOOL:
            k = add(buf, n, k, "%s", at->i ? "True" : "False");
            break;
        case ATTR_FLOAT:
            k = add(buf, n, k, "%.9g", at->f);
            break;
        case ATTR_STR:
            k = add(buf, n, k, "\"%s\"", at->s);
            break;
        case ATTR_INTS:
            k = add(buf, n, k, "[");
            for (int j = 0; j < at->n; j++)
                k = add(buf, n, k, j ? ",%lld" : "%lld", (long long)at->ints[j]);
            k = add(buf, n, k, "]");
            break;
        case ATTR_FLOATS:
            k = add(buf, n, k, "[");
            for (int j = 0; j < at->n; j++)
                k = add(buf, n, k, j ? ",%.9g" : "%.9g", at->floats[j]);
            k = add(buf, n, k, "]");
            break;
        case ATTR_OTHER:
            k = add(buf, n, k, "%s", at->s);
            break;
        }
    }
    k = add(buf, n, k, ")");
    if (nd->nout) {
        const GTensor *t = &g->tensors[nd->out[0]];
        k = add(buf, n, k, " -> %s", tensor_describe(t, sh, sizeof sh));
        if (t->padded) k = add(buf, n, k, " pad%s", shape_str(t->pshape, t->rank, sh, sizeof sh));
        if (t->alias_of >= 0) k = add(buf, n, k, " alias(%%%s)", g->tensors[t->alias_of].name);
        if (t->view_off) k = add(buf, n, k, "[+%lld]", (long long)t->view_off);
        if (t->offset >= 0)
            k = add(buf, n, k, " @%lld+%lld", (long long)t->offset, (long long)t->bytes);
    }
    if (g->nparts) k = add(buf, n, k, "  %s:p%d", nd->place == PLACE_NPU ? "npu" : "cpu", nd->part);
    if (nd->fusion >= 0 && nd->fusion < g->nfusions) {
        const Fusion *f = &g->fusions[nd->fusion];
        k = add(buf, n, k, "  %s:%s%s", f->id, f->pattern, f->enabled ? "" : "(off)");
    }
    return buf;
}

void graph_dump(FILE *f, const Graph *g)
{
    char buf[4096], sh[160];
    int live = 0;
    for (int i = 0; i < g->nnodes; i++)
        live += !g->nodes[i].dead;
    fprintf(f, "graph %s: %d nodes, %d inputs, %d outputs, %d weights\n", g->model_name, live,
            g->ninputs, g->noutputs, g->nweights);
    for (int i = 0; i < g->ninputs; i++) {
        const GTensor *t = &g->tensors[g->inputs[i]];
        fprintf(f, "  input  %%%s %s%s", t->name, tensor_describe(t, sh, sizeof sh),
                t->host_form ? " host-form" : "");
        for (int k = 0; k < g->nstates; k++) /* model state: the value a run leaves */
            if (g->state_in[k] == g->inputs[i])
                fprintf(f, " state -> %%%s", g->tensors[g->outputs[g->state_out[k]]].name);
        fprintf(f, "\n");
    }
    for (int i = 0; i < g->noutputs; i++) {
        const GTensor *t = &g->tensors[g->outputs[i]];
        fprintf(f, "  output %%%s %s\n", t->name, tensor_describe(t, sh, sizeof sh));
    }
    for (int i = 0; i < g->nrecipes; i++) {
        const Recipe *r = &g->recipes[i];
        if (r->kind == RECIPE_FOLD) {
            fprintf(f, "  recipe fold $%s <-", g->tensors[r->out_w].name);
            for (int k = 0; k < r->nnodes; k++)
                fprintf(f, " %s", g->nodes[r->nodes[k]].name);
            fprintf(f, "\n");
            continue;
        }
        if (r->kind == RECIPE_CONCAT) {
            fprintf(f, "  recipe concat $%s <-", g->tensors[r->out_w].name);
            if (r->block) fprintf(f, " runs of %d rows of", r->block);
            for (int k = 0; k < r->nsrc; k++)
                fprintf(f, " $%s", g->tensors[r->src[k]].name);
            fprintf(f, "\n");
            continue;
        }
        fprintf(f, "  recipe bn_fold $%s $%s <- $%s %s%s eps=%g\n", g->tensors[r->out_w].name,
                g->tensors[r->out_b].name, g->tensors[r->conv_w].name, r->conv_b >= 0 ? "$" : "",
                r->conv_b >= 0 ? g->tensors[r->conv_b].name : "(no bias)", r->eps);
    }
    for (int i = 0; i < g->nfusions; i++) {
        const Fusion *fu = &g->fusions[i];
        fprintf(f, "  fusion %s %s%s [", fu->id, fu->pattern, fu->enabled ? "" : " (off)");
        for (int j = 0; j < fu->nnodes; j++)
            fprintf(f, "%s%s", j ? ", " : "", g->nodes[fu->nodes[j]].name);
        fprintf(f, "]\n");
    }
    for (int i = 0; i < g->nmisses; i++)
        fprintf(f, "  not-fused %s at %s: %s\n", g->misses[i].pattern,
                g->nodes[g->misses[i].node].name, g->misses[i].reason);
    for (int i = 0; i < g->nnodes; i++) {
        if (g->nodes[i].dead) continue;
        fprintf(f, "  %s\n", node_line(g, i, buf, sizeof buf));
    }
}
