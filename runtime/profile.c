#include "runtime/profile.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/hostxf.h"

enum { PROF_WARM_MAX = 200 };
#define PROF_WARM_US 500000.0

Status prof_init(Profile *pr, const Plan *p)
{
    memset(pr, 0, sizeof *pr);
    pr->nkernels = p->nkernels;
    pr->k = calloc((size_t)p->nkernels + 1, sizeof *pr->k);
    if (!pr->k) return ST_NOMEM;
    for (int i = 0; i < p->nkernels; i++) {
        pr->k[i].gpu_med = pr->k[i].gpu_min = pr->k[i].gpu_max = -1;
        pr->k[i].ok = true;
    }
    pr->worst_kernel = -1;
    pr->nxfers = plan_ntransfers(p);
    pr->x = calloc((size_t)pr->nxfers + 1, sizeof *pr->x);
    if (!pr->x) {
        free(pr->k);
        pr->k = NULL;
        return ST_NOMEM;
    }
    for (int pi = 0, i = 0; pi < p->nparts; pi++)
        for (int j = 0; j < p->parts[pi].nin; j++, i++)
            pr->x[i] = (ProfXfer){pi, j, -1, -1, -1};
    for (int t = 0; t < p->ntensors; t++) /* own buffers, as the backend makes */
        if (p->tensors[t].alias_of < 0 && p->tensors[t].offset < 0 && plan_on_device(p, t))
            pr->device_bytes += (int64_t)hostxf_device_bytes(&p->tensors[t]);
    pr->device_bytes += p->arena_bytes;
    return ST_OK;
}

void prof_free(Profile *pr)
{
    free(pr->k);
    free(pr->x);
    memset(pr, 0, sizeof *pr);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

Status prof_warm_up(Exec *x, DiagList *d)
{
    double warm = 0;
    Status st = ST_OK;
    for (int i = 0; st == ST_OK && i < PROF_WARM_MAX && (i < 3 || warm < PROF_WARM_US); i++) {
        x->keep_inputs = i > 0;
        st = exec_run(x, false, d);
        warm += x->wall_us;
    }
    x->keep_inputs = false;
    return st;
}

static void on_run(const Profile *pr, const char *stage, int k, int n)
{
    if (pr->on_run) pr->on_run(pr->on_run_ctx, stage, k, n);
}

/* min, median and max of s[0..n), sorted in place */
static void stats(double *s, int n, double *mn, double *med, double *mx)
{
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    *mn = s[0];
    *med = s[n / 2];
    *mx = s[n - 1];
}

/* After `runs` timed runs: each kernel's and transfer's times so far into pr (the rows a
 * watcher sees while the rest runs; the final ones replace them). tmp holds `runs` values. */
static void so_far(const Plan *p, Profile *pr, const double *samples, int iters, int runs,
                   double *tmp)
{
    for (int r = 0; r < p->nkernels + pr->nxfers; r++) {
        memcpy(tmp, &samples[(size_t)r * (size_t)iters], sizeof *tmp * (size_t)runs);
        if (r < p->nkernels)
            stats(tmp, runs, &pr->k[r].gpu_min, &pr->k[r].gpu_med, &pr->k[r].gpu_max);
        else
            stats(tmp, runs, &pr->x[r - p->nkernels].min, &pr->x[r - p->nkernels].med,
                  &pr->x[r - p->nkernels].max);
    }
}

Status prof_time(Exec *x, int iters, Profile *pr, DiagList *d)
{
    const Plan *p = x->p;
    if (iters < 1) iters = 1;
    pr->iters = iters;
    double *us = malloc(sizeof(double) * ((size_t)p->nkernels + 1));
    int nrows = p->nkernels + pr->nxfers; /* kernels, then transfers */
    double *samples = malloc(sizeof(double) * ((size_t)nrows * (size_t)iters + 1));
    double *wall = malloc(sizeof(double) * ((size_t)iters + 1));
    double *gpu = malloc(sizeof(double) * ((size_t)iters + 1));
    double *up = malloc(sizeof(double) * ((size_t)iters + 1));
    double *sub = malloc(sizeof(double) * ((size_t)iters + 1));
    double *tmp = malloc(sizeof(double) * ((size_t)iters + 1));
    Status st = us && samples && wall && gpu && up && sub && tmp ? ST_OK : ST_NOMEM;
    /* warm-up: at least 3 runs and at least PROF_WARM_US of them (at most PROF_WARM_MAX runs).
     * Only the first uploads the inputs; the timed runs that follow go back to back with the
     * inputs left in place, as a serving loop would: with 28 MB of KV-cache inputs packed before
     * every run, the H100 sat idle 2/3 of the time and ran every kernel 2-3x slower by its own
     * clock (bench/RESULTS.md runs 3 and 4), so its per-kernel times were not kernel rates */
    on_run(pr, "warm-up", 0, 0);
    if (st == ST_OK) st = prof_warm_up(x, d);
    x->keep_inputs = true;
    for (int it = 0; it < iters && st == ST_OK; it++) {
        on_run(pr, "timed runs", it + 1, iters);
        if (cancel_requested(pr->cancel)) {
            st = diag_add(d, DIAG_ERROR, ST_CANCELLED, NULL, NULL, NULL,
                          "profile cancelled after %d of %d runs", it, iters);
            break;
        }
        st = exec_run(x, true, d);
        if (st == ST_OK && !x->be->ops->kernel_us(x->be, us, p->nkernels))
            for (int k = 0; k < p->nkernels; k++)
                us[k] = -1;
        for (int k = 0; st == ST_OK && k < p->nkernels; k++)
            samples[(size_t)k * (size_t)iters + (size_t)it] =
                p->kernels[k].target == KT_CPU ? x->cpu_us[k] : us[k];
        for (int i = 0; st == ST_OK && i < pr->nxfers; i++)
            samples[(size_t)(p->nkernels + i) * (size_t)iters + (size_t)it] = x->xfer_us[i];
        if (st == ST_OK && pr->on_run) so_far(p, pr, samples, iters, it + 1, tmp);
    }
    /* the step by the device clock, back to back; then what a user waits for per run, each
     * uploading its inputs */
    for (int it = 0; it < iters && st == ST_OK; it++) {
        on_run(pr, "untimed runs", it + 1, 2 * iters);
        st = exec_run(x, false, d);
        gpu[it] = x->gpu_us;
    }
    x->keep_inputs = false;
    for (int it = 0; it < iters && st == ST_OK; it++) {
        on_run(pr, "untimed runs", iters + it + 1, 2 * iters);
        if (cancel_requested(pr->cancel)) {
            st = diag_add(d, DIAG_ERROR, ST_CANCELLED, NULL, NULL, NULL,
                          "profile cancelled during the untimed runs");
            break;
        }
        st = exec_run(x, false, d);
        wall[it] = x->wall_us;
        up[it] = x->upload_us;
        sub[it] = x->submit_us;
    }
    x->keep_inputs = false;
    if (st == ST_OK) {
        pr->gpu_sum_us = 0;
        pr->cpu_part_us = 0;
        pr->dispatches = 0;
        for (int k = 0; k < p->nkernels; k++) {
            ProfKernel *pk = &pr->k[k];
            stats(&samples[(size_t)k * (size_t)iters], iters, &pk->gpu_min, &pk->gpu_med,
                  &pk->gpu_max);
            if (p->kernels[k].target == KT_NPU) {
                pr->gpu_sum_us += pk->gpu_med > 0 ? pk->gpu_med : 0;
                pr->dispatches++;
            } else {
                pr->cpu_part_us += pk->gpu_med > 0 ? pk->gpu_med : 0;
            }
        }
        pr->xfer_sum_us = 0;
        for (int i = 0; i < pr->nxfers; i++) {
            stats(&samples[(size_t)(p->nkernels + i) * (size_t)iters], iters, &pr->x[i].min,
                  &pr->x[i].med, &pr->x[i].max);
            pr->xfer_sum_us += pr->x[i].med;
        }
        qsort(wall, (size_t)iters, sizeof *wall, cmp_double);
        pr->wall_med_us = wall[iters / 2];
        pr->wall_min_us = wall[0];
        qsort(gpu, (size_t)iters, sizeof *gpu, cmp_double);
        pr->gpu_step_us = gpu[0] < 0 ? -1 : gpu[iters / 2];
        qsort(up, (size_t)iters, sizeof *up, cmp_double);
        qsort(sub, (size_t)iters, sizeof *sub, cmp_double);
        pr->upload_us = up[iters / 2];
        pr->submit_us = sub[iters / 2];
    }
    free(us);
    free(samples);
    free(wall);
    free(gpu);
    free(up);
    free(sub);
    free(tmp);
    return st;
}

Status prof_errors(Exec *xe, const RefRun *ref, const Tolerance *tol, Profile *pr, DiagList *d)
{
    return prof_errors_mapped(xe, ref, tol, NULL, pr, d);
}

Status prof_errors_mapped(Exec *xe, const RefRun *ref, const Tolerance *tol, const int *to_timed,
                          Profile *pr, DiagList *d)
{
    const Plan *p = xe->p;
    const Graph *g = xe->g;
    Status st = exec_run(xe, false, d);
    pr->cpu_ref_us = ref->total_us;
    double worst = -1;
    for (int k = 0; k < p->nkernels && st == ST_OK; k++) {
        on_run(pr, "errors", k, p->nkernels); /* the kernels before k are judged */
        const PlanKernel *kn = &p->kernels[k];
        ProfKernel *pk = &pr->k[to_timed ? to_timed[k] : k];
        pk->cpu_us = 0;
        for (int i = 0; i < kn->nprov; i++) {
            int nd = graph_find_node(g, kn->prov[i]);
            if (nd >= 0 && ref->node_us) pk->cpu_us += ref->node_us[nd];
        }
        if (kn->nargs <= kn->nin) continue;
        int t = kn->args[kn->nargs - 1];
        /* a later kernel writing the same tensor (--break's corrupt rewrites its kernel's output
         * in place) leaves its value after the run: that is the later kernel's error, not this
         * one's, which is not measured (verdict "-") */
        bool overwritten = false;
        for (int j = k + 1; j < p->nkernels && !overwritten; j++) {
            const PlanKernel *kj = &p->kernels[j];
            overwritten = kj->nargs > kj->nin && kj->args[kj->nargs - 1] == t;
        }
        if (overwritten) continue;
        int gt = xe->gt[t];
        HTensor combined = {0}; /* a linear_concat output: its parts' reference values */
        if (gt >= 0 && gt < ref->ntensors && !ref->vals[gt].data && g->tensors[gt].producer < 0 &&
            g->tensors[gt].kind == TK_ACT)
            st = ref_assemble(g, gt, ref->vals, &combined);
        if (st != ST_OK) break;
        const HTensor *want = combined.data                   ? &combined
                              : gt >= 0 && gt < ref->ntensors ? &ref->vals[gt]
                                                              : NULL;
        if (!want || !want->data) continue;
        HTensor got = {0};
        st = exec_read(xe, t, &got, d);
        ArgmaxSrc am; /* an argmax's indices: judged by its input's reference values */
        bool is_am = cmp_argmax_source(g, gt, ref->vals, ref->ntensors, &am);
        if (st == ST_OK) pk->has_err = cmp_output(&got, want, is_am ? &am : NULL, tol, &pk->err);
        htensor_free(&got);
        htensor_free(&combined);
        if (st != ST_OK) break;
        if (!pk->has_err) continue;
        pk->ok = cmp_ok(&pk->err, tol);
        double e = cmp_error(&pk->err);
        if (e > worst) {
            worst = e;
            pr->worst_kernel = to_timed ? to_timed[k] : k;
        }
    }
    if (st == ST_OK) on_run(pr, "errors", p->nkernels, p->nkernels);
    return st;
}
