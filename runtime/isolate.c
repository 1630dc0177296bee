/* Kernels of a plan run alone; see isolate.h. */
#include "runtime/isolate.h"

#include <stdlib.h>
#include <string.h>

#include "common/clock.h"

enum { ISO_ALIGN = 256 }; /* the source plans' arena alignment (CompileOptions.arena_align) */

/* A private scratch: the backend's own buffer (a K split's partials, a kernel's tickets). */
static bool private_scratch(const PlanTensor *t)
{
    return t->kind == PT_SCRATCH || (t->kind == PT_ACT && t->offset < 0 && t->alias_of < 0);
}

/* Adds source tensor t (and the bases it views) to q once; its q id. */
static int take(Isolated *iso, const Plan *p, int *map, int t)
{
    if (map[t] >= 0) return map[t];
    int base = p->tensors[t].alias_of >= 0 ? take(iso, p, map, p->tensors[t].alias_of) : -1;
    Plan *q = iso->q;
    int i = q->ntensors++;
    q->tensors[i] = p->tensors[t];
    q->tensors[i].alias_of = base;
    q->tensors[i].weight_key = NULL;
    iso->from[i] = t;
    map[t] = i;
    return i;
}

static int base_of(const Plan *q, int t)
{
    return plan_base(q, t);
}

/* Builds iso->q from kernels[0..n) of p. */
static Status build(Isolated *iso, const Plan *p, const int *kernels, int n)
{
    Plan *q = iso->q;
    int *map = malloc(sizeof(int) * ((size_t)p->ntensors + 1));
    int cap = p->ntensors; /* a subset of p's */
    q->tensors = arena_alloc(&q->arena, sizeof(PlanTensor) * (size_t)(cap + 1));
    q->kernels = arena_alloc(&q->arena, sizeof(PlanKernel) * (size_t)n);
    q->parts = arena_alloc(&q->arena, sizeof(PlanPart));
    iso->from = calloc((size_t)cap + 1, sizeof(int));
    iso->in = calloc((size_t)cap + 1, sizeof(bool));
    iso->out = calloc((size_t)cap + 1, sizeof(bool));
    bool *written = calloc((size_t)cap + 1, sizeof(bool)); /* by a kernel so far, by base */
    Status st =
        map && q->tensors && q->kernels && q->parts && iso->from && iso->in && iso->out && written
            ? ST_OK
            : ST_NOMEM;
    for (int t = 0; st == ST_OK && t < p->ntensors; t++)
        map[t] = -1;
    for (int i = 0; st == ST_OK && i < n; i++) {
        const PlanKernel *src = &p->kernels[kernels[i]];
        PlanKernel *k = &q->kernels[q->nkernels++];
        *k = *src;
        k->args = arena_alloc(&q->arena, sizeof(int) * ((size_t)src->nargs + 1));
        if (!k->args) {
            st = ST_NOMEM;
            break;
        }
        k->part = 0;
        k->level = i;
        for (int a = 0; a < src->nargs; a++)
            k->args[a] = src->args[a] >= 0 ? take(iso, p, map, src->args[a]) : -1;
        /* inputs: read before an earlier kernel of the instance wrote their storage */
        for (int a = 0; a < k->nin; a++)
            if (k->args[a] >= 0 && !written[base_of(q, k->args[a])]) iso->in[k->args[a]] = true;
        for (int a = k->nin; a < k->nargs; a++)
            if (k->args[a] >= 0) written[base_of(q, k->args[a])] = iso->out[k->args[a]] = true;
        const PlanModule *m = plan_find_module(p, src->shader);
        if (m && plan_add_module(q, m->name, m->source, m->spirv, m->nwords) != ST_OK)
            st = ST_NOMEM;
    }
    /* storage: an arena range per base (inputs uploaded before each run, outputs read back),
     * private scratch as the backend's own buffers */
    int64_t at = 0;
    for (int t = 0; st == ST_OK && t < q->ntensors; t++) {
        PlanTensor *x = &q->tensors[t];
        bool priv = private_scratch(&p->tensors[iso->from[t]]);
        iso->in[t] = iso->in[t] && !priv;
        iso->out[t] = iso->out[t] && !priv;
        iso->nin += iso->in[t];
        iso->nout += iso->out[t];
        if (priv) continue;
        x->kind = iso->in[t] ? PT_INPUT : iso->out[t] ? PT_OUTPUT : PT_ACT;
        if (x->alias_of >= 0) continue;
        int64_t bytes = (int64_t)plan_device_bytes(x);
        if (x->bytes > bytes) bytes = x->bytes;
        x->offset = at;
        at += (bytes + ISO_ALIGN - 1) / ISO_ALIGN * ISO_ALIGN;
    }
    q->arena_bytes = q->naive_bytes = at;
    q->nlevels = n;
    q->nparts = 1;
    q->parts[0] = (PlanPart){.target = KT_NPU, .first_kernel = 0, .nkernels = n};
    free(written);
    free(map);
    return st;
}

Status iso_open(Isolated *iso, const Plan *p, const int *kernels, int n, Backend *with, DiagList *d)
{
    memset(iso, 0, sizeof *iso);
    iso->q = plan_new();
    if (!iso->q) return ST_NOMEM;
    Plan *q = iso->q;
    q->model_name = p->model_name;
    q->source = p->source;
    q->compute = p->compute;
    q->tier = p->tier;
    q->channel_tile = p->channel_tile;
    Status st = build(iso, p, kernels, n);
    for (int i = 0; st == ST_OK && i < n; i++)
        if (p->kernels[kernels[i]].target != KT_NPU)
            st = diag_error(d, p->source, NULL, NULL, "kernel %d runs on the CPU: not timed alone",
                            kernels[i]);
    if (st == ST_OK) st = vk_backend_create_shared(with, &iso->be, d);
    if (st == ST_OK) st = iso->be->ops->prepare(iso->be, q, NULL, d);
    return st;
}

Status iso_set_inputs(Isolated *iso, IsoValueFn value, void *ctx, DiagList *d)
{
    Status st = ST_OK;
    for (int t = 0; st == ST_OK && t < iso->q->ntensors; t++) {
        if (!iso->in[t]) continue;
        const HTensor *v = NULL;
        st = value(ctx, iso->q->tensors[t].name, &v, d);
        if (st == ST_OK) st = iso->be->ops->set_input(iso->be, t, v, d);
    }
    return st;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

Status iso_time(Isolated *iso, int iters, double *us, DiagList *d)
{
    Backend *be = iso->be;
    int n = iso->q->nkernels;
    double *v = malloc(sizeof(double) * ((size_t)iters + 1));
    if (!v) return ST_NOMEM;
    Status st = be->ops->run(be, 0, n, false, d); /* warm-up: recorded, caches filled */
    for (int i = 0; st == ST_OK && i < iters; i++) {
        double t0 = clock_us();
        st = be->ops->run(be, 0, n, false, d);
        double gpu = be->ops->run_gpu_us(be);
        v[i] = gpu >= 0 ? gpu : clock_us() - t0;
    }
    if (st == ST_OK) {
        qsort(v, (size_t)iters, sizeof *v, cmp_double);
        *us = iters % 2 ? v[iters / 2] : 0.5 * (v[iters / 2 - 1] + v[iters / 2]);
    }
    free(v);
    return st;
}

Status iso_read(Isolated *iso, int t, HTensor *out, DiagList *d)
{
    return iso->be->ops->read(iso->be, t, out, d);
}

void iso_close(Isolated *iso)
{
    if (iso->be) iso->be->ops->destroy(iso->be);
    plan_free(iso->q);
    free(iso->from);
    free(iso->in);
    free(iso->out);
    memset(iso, 0, sizeof *iso);
}
