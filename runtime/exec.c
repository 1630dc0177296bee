#include "runtime/exec.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/cpu/cpu_ref.h"
#include "runtime/hostxf.h"
#include "common/clock.h"

Status exec_open(Exec *x, const Plan *p, const Graph *g, const Binding *b, Backend *be, DiagList *d)
{
    memset(x, 0, sizeof *x);
    x->p = p;
    x->g = g;
    x->be = be;
    x->vals = calloc((size_t)p->ntensors + 1, sizeof *x->vals);
    x->host = calloc((size_t)p->ntensors + 1, sizeof *x->host);
    x->gt = malloc(sizeof(int) * ((size_t)p->ntensors + 1));
    x->cpu_us = calloc((size_t)p->nkernels + 1, sizeof(double));
    x->xfer_us = calloc((size_t)plan_ntransfers(p) + 1, sizeof(double));
    x->node = malloc(sizeof(int) * ((size_t)p->nkernels + 1));
    if (!x->vals || !x->host || !x->gt || !x->cpu_us || !x->xfer_us || !x->node) return ST_NOMEM;
    for (int k = 0; k < p->nkernels; k++) {
        const PlanKernel *kn = &p->kernels[k];
        int n = kn->target == KT_CPU ? kn->node : -1;
        if (kn->target == KT_CPU && kn->nprov > 0 &&
            (n < 0 || n >= g->nnodes || strcmp(g->nodes[n].name, kn->prov[0]) != 0))
            n = graph_find_node(g, kn->prov[0]);
        if (kn->target == KT_CPU && (n < 0 || n >= g->nnodes))
            return diag_error(d, p->source, kn->nprov ? kn->prov[0] : NULL, NULL,
                              "CPU kernel %d: its node is not in the graph", k);
        x->node[k] = n;
    }
    for (int t = 0; t < p->ntensors; t++) {
        const PlanTensor *pt = &p->tensors[t];
        int id = graph_find_tensor(g, pt->name);
        x->gt[t] = id;
        if (id < 0) {
            if (pt->kind != PT_ACT && pt->kind != PT_OUTPUT && pt->kind != PT_SCRATCH)
                return diag_error(d, p->source, NULL, pt->name,
                                  "the plan names a tensor the graph lacks");
            continue;
        }
        if (pt->kind == PT_WEIGHT || pt->kind == PT_CONST || pt->kind == PT_INPUT) {
            if (id >= b->ntensors || !b->vals[id].data)
                return diag_error(d, p->source, NULL, pt->name, "no value is bound");
            x->vals[t] = &b->vals[id];
        }
    }
    return be->ops->prepare(be, p, x->vals, d);
}

/* The host value of t when a CPU kernel made it or its base, or when its base is a weight or
 * constant (bound on the host; the device holds only those an NPU kernel reads), else NULL. A
 * view borrows the base's data with its own shape through *view. */
static const HTensor *host_value(Exec *x, int t, HTensor *view)
{
    if (x->host[t].data) return &x->host[t];
    int b = plan_base(x->p, t);
    PlanTensorKind kind = x->p->tensors[b].kind;
    const HTensor *bv = x->host[b].data ? &x->host[b] : NULL;
    if (!bv && (kind == PT_WEIGHT || kind == PT_CONST) && x->vals[b] && x->vals[b]->data)
        bv = x->vals[b];
    if (!bv) return NULL;
    if (b == t) return bv;
    const PlanTensor *pt = &x->p->tensors[t];
    return htensor_view(view, bv, pt->rank, pt->shape, pt->view_off) ? view : NULL;
}

/* Runs CPU kernel k: its node's inputs from the host or the backend. */
static Status run_cpu_kernel(Exec *x, int k, DiagList *d)
{
    const Plan *p = x->p;
    const PlanKernel *kn = &p->kernels[k];
    const Node *n = &x->g->nodes[x->node[k]];
    const HTensor *in[64];
    HTensor tmp[64], views[64];
    memset(tmp, 0, sizeof tmp);
    Status st = ST_OK;
    if (n->nin > 64) return diag_error(d, p->source, n->name, NULL, "too many inputs");
    for (int i = 0; i < n->nin && st == ST_OK; i++) {
        int t = -1;
        for (int a = 0; a < kn->nin; a++)
            if (kn->args[a] >= 0 && x->gt[kn->args[a]] == n->in[i]) t = kn->args[a];
        /* a tensor the compiled graph renamed (a .npubin's kernel on the IR it carries): the
         * kernel binds the node's inputs in order */
        if (t < 0 && kn->nin == n->nin) t = kn->args[i];
        if (t < 0) {
            st = diag_error(d, p->source, n->name, x->g->tensors[n->in[i]].name,
                            "input missing from the plan");
        } else if (x->vals[t] && p->tensors[t].kind != PT_INPUT) {
            in[i] = x->vals[t];
        } else if (host_value(x, t, &views[i])) {
            in[i] = host_value(x, t, &views[i]);
        } else if (p->tensors[t].kind == PT_INPUT && x->vals[t]) {
            in[i] = x->vals[t];
        } else { /* on the backend: computed there, or an input set there (carried state) */
            st = x->be->ops->read(x->be, t, &tmp[i], d);
            in[i] = &tmp[i];
        }
        /* the reference kernel trusts the node's shapes: a plan whose tensor disagrees with
         * the graph (a .npubin with another model's IR) stops here */
        const GTensor *gi = &x->g->tensors[n->in[i]];
        if (st == ST_OK && (!in[i] || in[i]->numel != tensor_numel(gi)))
            st = diag_error(d, p->source, n->name, gi->name,
                            "the plan's value has %lld elements, the graph's tensor %lld",
                            in[i] ? (long long)in[i]->numel : -1LL, (long long)tensor_numel(gi));
    }
    HTensor res[64];
    memset(res, 0, sizeof res);
    if (n->nout > 64) return diag_error(d, p->source, n->name, NULL, "too many outputs");
    double t0 = clock_us();
    if (st == ST_OK) st = ref_run_node(x->g, x->node[k], in, res, d);
    x->cpu_us[k] = clock_us() - t0;
    for (int i = 0; i < n->nin; i++)
        htensor_free(&tmp[i]);
    if (st != ST_OK) return st;
    /* the kernel binds the node's outputs in order (a split binds every chunk) */
    for (int i = 0; i < n->nout; i++) {
        int a = kn->nin + i, out = a < kn->nargs ? kn->args[a] : -1;
        if (out < 0) {
            htensor_free(&res[i]);
            continue;
        }
        htensor_free(&x->host[out]);
        x->host[out] = res[i];
    }
    return ST_OK;
}

/* Transfer j of partition pi: a CPU partition reads an NPU tensor into the host (kept for the
 * rest of the run), an NPU partition gets a CPU-made tensor uploaded. An entry that has nothing
 * to move (a plan from an older build listed same-target tensors too) costs nothing. */
static Status run_transfer(Exec *x, int pi, int j, DiagList *d)
{
    const PlanPart *pp = &x->p->parts[pi];
    int t = pp->in[j];
    if (t < 0 || t >= x->p->ntensors || (x->vals[t] && x->p->tensors[t].kind != PT_INPUT))
        return ST_OK;
    HTensor view;
    const HTensor *h = host_value(x, t, &view);
    if (pp->target == KT_CPU) return h ? ST_OK : x->be->ops->read(x->be, t, &x->host[t], d);
    return h ? x->be->ops->set_input(x->be, t, h, d) : ST_OK;
}

/* The bound graph inputs to the backend (x->upload_us its time). */
static Status upload_inputs(Exec *x, DiagList *d)
{
    const Plan *p = x->p;
    double t0 = clock_us();
    Status st = ST_OK;
    for (int i = 0; i < p->ninputs && st == ST_OK; i++) {
        int t = p->inputs[i];
        /* model state starts every run from its first value unless exec_carry_state carried
         * the last run's (and cleared vals[t]), keep_inputs or not */
        bool upload = !x->keep_inputs || plan_state_of(p, t) >= 0;
        if (t >= 0 && x->vals[t] && upload) st = x->be->ops->set_input(x->be, t, x->vals[t], d);
    }
    x->upload_us = clock_us() - t0;
    return st;
}

Status exec_run(Exec *x, bool timed, DiagList *d)
{
    const Plan *p = x->p;
    double t0 = clock_us();
    if (x->be->ops->pipe_slot) x->be->ops->pipe_slot(x->be, -1); /* run()'s own storage */
    Status st = upload_inputs(x, d);
    x->submit_us = 0;
    for (int t = 0; t < p->ntensors; t++)
        htensor_free(&x->host[t]);
    double gpu = 0;
    for (int pi = 0, xi = 0; pi < p->nparts && st == ST_OK; pi++) {
        const PlanPart *pp = &p->parts[pi];
        for (int j = 0; j < pp->nin && st == ST_OK; j++, xi++) {
            double t1 = clock_us();
            st = run_transfer(x, pi, j, d);
            x->xfer_us[xi] = clock_us() - t1;
        }
        if (st != ST_OK) break;
        if (pp->target == KT_NPU) {
            double s0 = clock_us();
            st = x->be->ops->run(x->be, pp->first_kernel, pp->nkernels, timed, d);
            x->submit_us += clock_us() - s0;
            double g = x->be->ops->run_gpu_us ? x->be->ops->run_gpu_us(x->be) : -1;
            gpu = g < 0 || gpu < 0 ? -1 : gpu + g;
        } else
            for (int k = pp->first_kernel; k < pp->first_kernel + pp->nkernels && st == ST_OK; k++)
                st = run_cpu_kernel(x, k, d);
    }
    x->wall_us = clock_us() - t0;
    x->gpu_us = gpu;
    return st;
}

bool exec_can_pipeline(const Exec *x)
{
    const Plan *p = x->p;
    const BackendOps *o = x->be->ops;
    return o->pipe_feed && o->pipe_slot && o->pipe_submit && o->pipe_wait && p->nparts == 1 &&
           p->parts[0].target == KT_NPU && p->parts[0].nin == 0;
}

static Status no_pipeline(const Exec *x, DiagList *d)
{
    return diag_add(d, DIAG_ERROR, ST_INTERNAL, x->p->source, NULL, NULL,
                    "a pipelined step needs one NPU partition and a backend that pipelines");
}

Status exec_pipe_feed(Exec *x, int dst, int src, DiagList *d)
{
    const Plan *p = x->p;
    if (!exec_can_pipeline(x)) return no_pipeline(x, d);
    return x->be->ops->pipe_feed(x->be, dst, src, p->parts[0].first_kernel, p->parts[0].nkernels,
                                 d);
}

Status exec_submit(Exec *x, int slot, DiagList *d)
{
    const Plan *p = x->p;
    if (!exec_can_pipeline(x)) return no_pipeline(x, d);
    double t0 = clock_us();
    x->be->ops->pipe_slot(x->be, slot);
    Status st = upload_inputs(x, d);
    if (st == ST_OK)
        st = x->be->ops->pipe_submit(x->be, p->parts[0].first_kernel, p->parts[0].nkernels, d);
    x->submit_us = clock_us() - t0 - x->upload_us;
    return st;
}

Status exec_wait(Exec *x, int slot, DiagList *d)
{
    double t0 = clock_us();
    for (int t = 0; t < x->p->ntensors; t++)
        htensor_free(&x->host[t]);
    Status st = x->be->ops->pipe_wait(x->be, slot, d);
    x->wall_us = clock_us() - t0;
    x->gpu_us = x->be->ops->run_gpu_us ? x->be->ops->run_gpu_us(x->be) : -1;
    return st;
}

Status exec_read(Exec *x, int t, HTensor *out, DiagList *d)
{
    HTensor view;
    const HTensor *h = host_value(x, t, &view);
    if (h) return htensor_convert_new(out, h, h->dtype);
    return x->be->ops->read(x->be, t, out, d);
}

Status exec_move(Exec *dst, int t, Exec *src, int src_t, DiagList *d)
{
    HTensor v = {0};
    Status st = exec_read(src, src_t, &v, d);
    if (st == ST_OK) st = dst->be->ops->set_input(dst->be, t, &v, d);
    htensor_free(&v);
    return st;
}

Status exec_carry_state(Exec *x, DiagList *d)
{
    const Plan *p = x->p;
    for (int i = 0; i < p->nstates; i++) {
        int in = p->state_in[i], out = p->state_out[i];
        Status st = plan_base(p, out) == in ? ST_OK : exec_move(x, in, x, out, d);
        if (st != ST_OK) return st;
        x->vals[in] = NULL;
    }
    return ST_OK;
}

bool exec_state_in_place(const Exec *x, int i)
{
    return plan_base(x->p, x->p->state_out[i]) == x->p->state_in[i];
}

void exec_close(Exec *x)
{
    if (x->host && x->p)
        for (int t = 0; t < x->p->ntensors; t++)
            htensor_free(&x->host[t]);
    free(x->vals);
    free(x->host);
    free(x->gt);
    free(x->node);
    free(x->cpu_us);
    free(x->xfer_us);
    memset(x, 0, sizeof *x);
}
