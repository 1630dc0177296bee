#define _POSIX_C_SOURCE 200809L
#include "runtime/cpu/cpu_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "runtime/cpu/cpu_kernels.h"
#include "common/clock.h"

Status ref_run_node(const Graph *g, int node, const HTensor *const *in, HTensor *out, DiagList *d)
{
    const Node *n = &g->nodes[node];
    HTensor *op[64];
    if (n->nout > 64 || n->nin > 64)
        return diag_error(d, g->path, n->name, NULL, "too many operands");
    for (int k = 0; k < n->nout; k++) {
        const GTensor *t = node_output(g, n, k);
        Status st = htensor_alloc(&out[k], htensor_ref_dtype(t->dtype), t->rank, t->shape);
        if (st != ST_OK) {
            for (int j = 0; j <= k; j++)
                htensor_free(&out[j]);
            return diag_add(d, DIAG_ERROR, ST_NOMEM, g->path, n->name, t->name,
                            "out of memory allocating %lld elements", (long long)tensor_numel(t));
        }
        op[k] = &out[k];
    }
    CpuCall c = {g, n, in, n->nin, op, n->nout, d, g->path};
    Status st = cpu_kernel_table[n->op](&c);
    if (st != ST_OK)
        for (int k = 0; k < n->nout; k++)
            htensor_free(&out[k]);
    return st;
}

void ref_free(RefRun *r)
{
    if (!r->vals) return;
    for (int i = 0; i < r->ntensors; i++)
        htensor_free(&r->vals[i]);
    free(r->vals);
    free(r->node_us);
    memset(r, 0, sizeof *r);
}

Status ref_run(const Graph *g, const HTensor *bound, const RefOptions *opt, RefRun *r, DiagList *d)
{
    memset(r, 0, sizeof *r);
    RefOptions o = opt ? *opt : (RefOptions){.keep_all = true};
    int last = o.last_node > 0 && o.last_node <= g->nnodes ? o.last_node : g->nnodes;
    r->ntensors = g->ntensors;
    r->vals = calloc((size_t)g->ntensors + 1, sizeof *r->vals);
    r->node_us = calloc((size_t)g->nnodes + 1, sizeof *r->node_us);
    int *remaining = calloc((size_t)g->ntensors + 1, sizeof *remaining);
    if (!r->vals || !r->node_us || !remaining) {
        free(remaining);
        ref_free(r);
        return ST_NOMEM;
    }
    for (int t = 0; t < g->ntensors; t++) {
        const GTensor *x = &g->tensors[t];
        remaining[t] = x->nconsumers;
        if (x->kind == TK_ACT) continue;
        if (!bound || !bound[t].data) {
            if (x->nconsumers == 0) continue;
            free(remaining);
            ref_free(r);
            return diag_error(d, g->path, NULL, x->name, "%s has no value bound",
                              x->kind == TK_INPUT    ? "graph input"
                              : x->kind == TK_WEIGHT ? "weight"
                                                     : "constant");
        }
        r->vals[t] = bound[t];
        r->vals[t].borrowed = true;
    }
    /* an argmax's input is kept by never running out of consumers */
    for (int i = 0; o.keep_argmax_inputs && i < g->nnodes; i++)
        if (!g->nodes[i].dead && g->nodes[i].op == OP_ARGMAX && g->nodes[i].nin > 0)
            remaining[g->nodes[i].in[0]] = INT32_MAX / 2;
    Status st = ST_OK;
    double t0 = clock_us();
    for (int i = o.first_node; i < last && st == ST_OK; i++) {
        const Node *n = &g->nodes[i];
        if (n->dead) continue;
        const HTensor *in[64];
        HTensor out[64];
        for (int k = 0; k < n->nin && k < 64; k++) {
            in[k] = &r->vals[n->in[k]];
            if (!in[k]->data) {
                st = diag_add(d, DIAG_ERROR, ST_INTERNAL, g->path, n->name,
                              g->tensors[n->in[k]].name, "input has no value");
                break;
            }
        }
        if (st != ST_OK) break;
        double a = clock_us();
        st = ref_run_node(g, i, in, out, d);
        r->node_us[i] = clock_us() - a;
        if (st != ST_OK) break;
        for (int k = 0; k < n->nout; k++) {
            htensor_free(&r->vals[n->out[k]]);
            r->vals[n->out[k]] = out[k];
        }
        if (!o.keep_all) {
            for (int k = 0; k < n->nin; k++) {
                int t = n->in[k], seen = 0;
                for (int j = 0; j < k; j++)
                    seen |= n->in[j] == t;
                if (seen) continue;
                if (--remaining[t] <= 0 && g->tensors[t].kind == TK_ACT && !g->tensors[t].is_output)
                    htensor_free(&r->vals[t]);
            }
        }
    }
    r->total_us = clock_us() - t0;
    free(remaining);
    if (st != ST_OK) ref_free(r);
    return st;
}

Status ref_assemble(const Graph *g, int t, const HTensor *vals, HTensor *out)
{
    const GTensor *y = &g->tensors[t];
    Status st = htensor_alloc(out, htensor_ref_dtype(y->dtype), y->rank, y->shape);
    if (st != ST_OK) return st;
    for (int64_t i = 0; i < out->numel && out->dtype == DT_F32; i++)
        ((float *)out->data)[i] = NAN;
    size_t es = dtype_size(out->dtype);
    for (int v = 0; v < g->ntensors; v++) {
        const HTensor *part = &vals[v];
        if (g->tensors[v].alias_of != t || !part->data || part->dtype != out->dtype ||
            g->tensors[v].view_off + part->numel > out->numel)
            continue;
        memcpy((char *)out->data + (size_t)g->tensors[v].view_off * es, part->data,
               (size_t)part->numel * es);
    }
    return ST_OK;
}
