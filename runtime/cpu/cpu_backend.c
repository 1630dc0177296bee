/* The CPU reference behind the backend interface: each plan kernel runs the IR nodes it was
 * made from (a fused kernel its member nodes, in order) on the reference kernels, with values
 * kept by graph tensor. It gives `profile` and `bisect` a device-free mode and keeps the
 * interface honest: anything the Vulkan backend is asked to do, this one does too, including the
 * deliberate fault of `--break` (corrupt kernels rewrite their tensor the same way). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/backend.h"
#include "runtime/cpu/cpu_ref.h"
#include "compiler/pass.h"
#include "compiler/lower/kernel_table.h"
#include "common/clock.h"

typedef struct CpuBackend {
    Backend base;
    const Graph *g;
    const Plan *p;
    HTensor *vals;         /* [g->ntensors] computed or set values (owned) */
    const HTensor **bound; /* [g->ntensors] weights (borrowed) */
    int *gt;               /* plan tensor -> graph tensor */
    double *kus;
    bool timed;
} CpuBackend;

static bool cb_supports(Backend *b, const Plan *p, const PlanKernel *k, const char **why)
{
    (void)b, (void)p, (void)k, (void)why;
    return true;
}

static Status cb_prepare(Backend *base, const Plan *p, const HTensor *const *vals, DiagList *d)
{
    CpuBackend *b = (CpuBackend *)base;
    const Graph *g = b->g;
    b->p = p;
    b->vals = calloc((size_t)g->ntensors + 1, sizeof *b->vals);
    b->bound = calloc((size_t)g->ntensors + 1, sizeof *b->bound);
    b->gt = malloc(sizeof(int) * ((size_t)p->ntensors + 1));
    b->kus = malloc(sizeof(double) * ((size_t)p->nkernels + 1));
    if (!b->vals || !b->bound || !b->gt || !b->kus) return ST_NOMEM;
    for (int t = 0; t < p->ntensors; t++) {
        b->gt[t] = graph_find_tensor(g, p->tensors[t].name);
        if (b->gt[t] < 0 && p->tensors[t].kind != PT_ACT && p->tensors[t].kind != PT_OUTPUT &&
            p->tensors[t].kind != PT_SCRATCH)
            return diag_error(d, p->source, NULL, p->tensors[t].name, "not in the graph");
        if (b->gt[t] >= 0 && vals && vals[t] && p->tensors[t].kind != PT_INPUT)
            b->bound[b->gt[t]] = vals[t];
    }
    return ST_OK;
}

/* Is t's value made on demand from its producer's inputs: the output of a node that runs no
 * kernel (a cat in place, a view of one) over the storage of a cat in place
 * (compiler/pass_cat.c), which no kernel writes whole here: its parts' kernels wrote them as
 * values of their own. */
static bool on_demand(const Graph *g, int t)
{
    const GTensor *x = &g->tensors[t];
    int base = x->alias_of >= 0 ? x->alias_of : t, bp = g->tensors[base].producer;
    int p = x->producer;
    return p >= 0 && g->nodes[p].nout == 1 && graph_kernel_node(g, p) < 0 && !g->nodes[p].dead &&
           bp >= 0 && graph_cat_in_place(g, bp);
}

/* Forgets the on-demand values made from t, which has just changed. */
static void forget_from(CpuBackend *b, int t)
{
    const GTensor *x = &b->g->tensors[t];
    for (int k = 0; k < x->nconsumers; k++) {
        const Node *n = &b->g->nodes[x->consumers[k]];
        if (n->nout != 1 || !on_demand(b->g, n->out[0])) continue;
        htensor_free(&b->vals[n->out[0]]);
        forget_from(b, n->out[0]);
    }
}

static Status run_node(CpuBackend *b, int node, DiagList *d);

/* The value of graph tensor gt; a view (an alias without a kernel) borrows its base's data
 * through *view, which the caller keeps only while the base lives. NULL when not computed (an
 * on-demand value whose inputs are not: d says why). */
static const HTensor *value(CpuBackend *b, int gt, HTensor *view, DiagList *d)
{
    if (b->vals[gt].data) return &b->vals[gt];
    if (b->bound[gt]) return b->bound[gt];
    if (on_demand(b->g, gt))
        return run_node(b, b->g->tensors[gt].producer, d) == ST_OK && b->vals[gt].data
                   ? &b->vals[gt]
                   : NULL;
    int base = b->g->tensors[gt].alias_of;
    const HTensor *bv = base >= 0 && base != gt ? value(b, base, view, d) : NULL;
    if (!bv) return NULL;
    const GTensor *x = &b->g->tensors[gt];
    HTensor whole = *bv;
    return htensor_view(view, &whole, x->rank, x->shape, x->view_off) ? view : NULL;
}

static Status cb_set_input(Backend *base, int t, const HTensor *v, DiagList *d)
{
    CpuBackend *b = (CpuBackend *)base;
    int gt = b->gt[t];
    if (gt < 0) return diag_error(d, b->p->source, NULL, b->p->tensors[t].name, "not in the graph");
    htensor_free(&b->vals[gt]);
    return htensor_convert_new(&b->vals[gt], v, v->dtype);
}

static Status run_node(CpuBackend *b, int node, DiagList *d)
{
    const Node *n = &b->g->nodes[node];
    const HTensor *in[64];
    HTensor views[64];
    if (n->nin > 64 || n->nout > 64)
        return diag_error(d, b->p->source, n->name, NULL, "too many operands");
    for (int i = 0; i < n->nin; i++) {
        in[i] = value(b, n->in[i], &views[i], d);
        if (!in[i])
            return diag_add(d, DIAG_ERROR, ST_INTERNAL, b->p->source, n->name,
                            b->g->tensors[n->in[i]].name, "input not computed");
    }
    HTensor out[64];
    memset(out, 0, sizeof out);
    Status st = ref_run_node(b->g, node, in, out, d);
    for (int i = 0; i < n->nout; i++) {
        int o = n->out[i], base = b->g->tensors[o].alias_of;
        if (st == ST_OK && base >= 0 && base != o && !on_demand(b->g, base) &&
            out[i].numel == b->vals[base].numel) {
            /* an in-place writer (index_copy into its self, compiler/pass_views.c): the result
             * is the base's storage now, which every view of the base borrows */
            const GTensor *bx = &b->g->tensors[base];
            htensor_free(&b->vals[base]);
            htensor_free(&b->vals[o]);
            b->vals[base] = out[i];
            b->vals[base].rank = bx->rank;
            memcpy(b->vals[base].shape, bx->shape, sizeof bx->shape);
        } else if (st == ST_OK) {
            htensor_free(&b->vals[o]);
            b->vals[o] = out[i];
        } else {
            htensor_free(&out[i]);
        }
        if (st == ST_OK) forget_from(b, o);
    }
    return st;
}

static Status cb_run(Backend *base, int first, int n, bool timed, DiagList *d)
{
    CpuBackend *b = (CpuBackend *)base;
    Status st = ST_OK;
    for (int k = first; k < first + n && st == ST_OK; k++) {
        const PlanKernel *kn = &b->p->kernels[k];
        double t0 = clock_us();
        if (kernel_kind_of(kn->shader) == KK_corrupt) {
            int gt = b->gt[kn->args[kn->nargs - 1]];
            HTensor *y = gt >= 0 ? &b->vals[gt] : NULL;
            if (y && y->data && y->dtype == DT_F32)
                for (int64_t i = 0; i < y->numel; i++)
                    ((float *)y->data)[i] = 0.75f * ((float *)y->data)[i] + 0.25f;
        } else {
            for (int i = 0; i < kn->nprov && st == ST_OK; i++) {
                int node = graph_find_node(b->g, kn->prov[i]);
                st = node < 0 ? diag_error(d, b->p->source, kn->prov[i], NULL, "not in the graph")
                              : run_node(b, node, d);
            }
            int out = kn->nargs > kn->nin ? b->gt[kn->args[kn->nargs - 1]] : -1;
            if (st == ST_OK && out >= 0 && b->g->tensors[out].producer < 0) {
                /* a linear_concat output: the parts become views of it again, as on the
                 * device (so --break's corruption of it reaches their readers) */
                htensor_free(&b->vals[out]);
                st = ref_assemble(b->g, out, b->vals, &b->vals[out]);
                for (int t = 0; st == ST_OK && t < b->g->ntensors; t++)
                    if (b->g->tensors[t].alias_of == out) htensor_free(&b->vals[t]);
            }
        }
        b->kus[k] = clock_us() - t0;
    }
    if (timed) b->timed = true;
    return st;
}

static Status cb_read(Backend *base, int t, HTensor *out, DiagList *d)
{
    CpuBackend *b = (CpuBackend *)base;
    int gt = b->gt[t];
    HTensor view;
    const HTensor *v = gt >= 0 ? value(b, gt, &view, d) : NULL;
    if (!v)
        return diag_add(d, DIAG_ERROR, ST_INTERNAL, b->p->source, NULL, b->p->tensors[t].name,
                        "has no value yet");
    return htensor_convert_new(out, v, v->dtype);
}

static bool cb_kernel_us(Backend *base, double *us, int n)
{
    CpuBackend *b = (CpuBackend *)base;
    if (!b->timed) return false;
    for (int k = 0; k < n && k < b->p->nkernels; k++)
        us[k] = b->kus[k];
    return true;
}

static const char *cb_device(Backend *b)
{
    (void)b;
    return "CPU reference (float32)";
}

static void cb_destroy(Backend *base)
{
    CpuBackend *b = (CpuBackend *)base;
    if (!b) return;
    if (b->vals)
        for (int t = 0; t < b->g->ntensors; t++)
            htensor_free(&b->vals[t]);
    free(b->vals);
    free(b->bound);
    free(b->gt);
    free(b->kus);
    free(b);
}

static const BackendOps cpu_ops = {
    .name = "cpu",
    .supports = cb_supports,
    .prepare = cb_prepare,
    .set_input = cb_set_input,
    .run = cb_run,
    .read = cb_read,
    .kernel_us = cb_kernel_us,
    .device = cb_device,
    .destroy = cb_destroy,
};

Status cpu_backend_create(const Graph *g, Backend **out)
{
    *out = NULL;
    CpuBackend *b = calloc(1, sizeof *b);
    if (!b) return ST_NOMEM;
    b->base.ops = &cpu_ops;
    b->g = g;
    *out = &b->base;
    return ST_OK;
}
