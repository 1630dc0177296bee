/* `npu-explore profile`: per-kernel GPU time (timestamps; median and spread over --iters after
 * warm-ups), the CPU reference's time for the same IR nodes, speedup, and the error of each
 * kernel's output against the reference tensor; totals. Formats: table, json (one object per
 * line, schema npu-explore/profile/1), csv. --save FILE keeps the JSON lines; --baseline FILE
 * shows per-kernel deltas against such a file, matched by the kernel's output tensor.
 * A mixed plan's transfers between partitions are rows of their own, before the first kernel of
 * the partition that needs them: table `xN` rows (direction, tensor, cast/depad, host time,
 * bytes on the device side), json "kind":"transfer" lines, csv rows with kernel "transfer",
 * target the direction and fusion the cast; the totals count them apart ("transfers").
 * An argmax kernel's error is its rows (compare.h cmp_output): the table shows them after the
 * verdict (rel_l2 "-"), json adds argmax_* fields to its line, csv fills the argmax_* columns
 * (-1 for other rows). -o FILE writes the report to FILE instead of stdout. --format trace
 * writes Chrome trace-event JSON of the step laid out by level (app/timeline.h).
 * The measurement (profile_measure) returns a ProfileResult that the reporter (profile_report)
 * prints; the session keeps that result for the TUI (app/results.h). */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/schedule.h"
#include "runtime/profile.h"
#include "app/commands.h"
#include "app/report.h"
#include "app/results.h"
#include "app/saved_profile.h"
#include "app/timeline.h"
#include "app/tune_bench.h"

/* A name cut to the table's 24-column "fused from" field as report_fused_from cuts it. */
static void fused_name(const char *s, char *buf, size_t n)
{
    snprintf(buf, n, "%s", s);
    if (strlen(s) >= n && n > 4) strcpy(buf + n - 4, "...");
}

static const char *out_name(const Plan *p, const PlanKernel *k)
{
    return k->nargs > k->nin ? p->tensors[k->args[k->nargs - 1]].name : "";
}

/* A saved profile's GPU median of the kernel writing `name` (--baseline), NULL: none. */
static const double *baseline_find(const SavedProfile *b, const char *name)
{
    for (int i = 0; i < b->nk; i++)
        if (strcmp(b->k[i].output, name) == 0) return &b->k[i].gpu_us;
    return NULL;
}

/* The transfers that run before kernel k (at the start of its partition): [*lo, *hi) of pr->x. */
static void xfers_before(const Plan *p, const Profile *pr, int k, int *lo, int *hi)
{
    *lo = *hi = 0;
    for (int i = 0; i < pr->nxfers; i++) {
        if (p->parts[pr->x[i].part].first_kernel != k) continue;
        if (*hi == *lo) *lo = i;
        *hi = i + 1;
    }
}

static void print_json_xfer(FILE *f, const Plan *p, const Profile *pr, int i)
{
    PlanTransfer x = plan_transfer(p, pr->x[i].part, pr->x[i].j);
    fprintf(f,
            "{\"schema\":\"npu-explore/profile/1\",\"kind\":\"transfer\",\"index\":%d,"
            "\"partition\":%d,\"tensor\":\"%s\",\"direction\":\"%s\",\"from\":\"%s\","
            "\"to\":\"%s\",\"layout\":\"%s\",\"bytes\":%lld,\"us\":%.3f,\"min_us\":%.3f,"
            "\"max_us\":%.3f}\n",
            i, pr->x[i].part, p->tensors[x.tensor].name, x.to_cpu ? "npu->cpu" : "cpu->npu",
            dtype_short(x.from), dtype_short(x.to),
            x.relayout ? (x.to_cpu ? "depad" : "pad") : "same", (long long)x.device_bytes,
            pr->x[i].med, pr->x[i].min, pr->x[i].max);
}

/* A tuned kernel's times alone (ProfileResult's tuned arrays) as JSON fields to splice into
 * its line, "" for another kernel. */
static void tuned_json(const Plan *p, const ProfileResult *r, int k, char *buf, size_t n)
{
    buf[0] = '\0';
    if (!r->tuned_us || r->tuned_us[k] < 0) return;
    snprintf(buf, n, ",\"tuned\":\"%s\",\"tuned_default_us\":%.3f,\"tuned_us\":%.3f",
             p->kernels[k].tuned, r->tuned_default_us[k], r->tuned_us[k]);
}

static void print_json(FILE *f, const Plan *p, const ProfileResult *r)
{
    const Profile *pr = &r->pr;
    const char *dev = r->device, *dtype = r->dtype;
    char from[512];
    for (int k = 0; k < p->nkernels; k++) {
        const PlanKernel *kn = &p->kernels[k];
        int lo, hi;
        xfers_before(p, pr, k, &lo, &hi);
        for (int i = lo; i < hi; i++)
            print_json_xfer(f, p, pr, i);
        const ProfKernel *pk = &pr->k[k];
        report_fused_from(kn, from, sizeof from);
        char amj[160] = "", tj[200];
        if (pk->has_err) report_argmax_json(&pk->err, amj, sizeof amj);
        tuned_json(p, r, k, tj, sizeof tj);
        /* "nodes": every IR node it computes (fused_from is cut to fit), for dot --profile */
        json_object *nodes = json_object_new_array();
        for (int i = 0; i < kn->nprov; i++)
            json_object_array_add(nodes, json_object_new_string(kn->prov[i]));
        fprintf(f,
                "{\"schema\":\"npu-explore/profile/1\",\"kind\":\"kernel\",\"index\":%d,"
                "\"kernel\":\"%s\",\"target\":\"%s\",\"fusion\":\"%s\",\"output\":\"%s\","
                "\"fused_from\":\"%s\",\"nodes\":%s,\"gpu_us\":%.3f,\"gpu_min_us\":%.3f,\"gpu_max_"
                "us\":%.3f,"
                "\"cpu_us\":%.3f,\"rel_l2\":%.6g,\"max_abs\":%.6g%s%s,\"verdict\":\"%s\"}\n",
                k, kn->shader, kn->target == KT_NPU ? "npu" : "cpu",
                kn->fusion >= 0 ? p->fusions[kn->fusion].id : "", out_name(p, kn), from,
                json_object_to_json_string_ext(nodes, JSON_C_TO_STRING_PLAIN), pk->gpu_med,
                pk->gpu_min, pk->gpu_max, pk->cpu_us, pk->has_err ? pk->err.rel_l2 : -1,
                pk->has_err ? pk->err.max_abs : -1, amj, tj,
                !pk->has_err ? "-"
                : pk->ok     ? "ok"
                             : "MISMATCH");
        json_object_put(nodes);
    }
    fprintf(f,
            "{\"schema\":\"npu-explore/profile/1\",\"kind\":\"summary\",\"model\":\"%s\","
            "\"device\":\"%s\",\"dtype\":\"%s\",\"tier\":\"%s\",\"iters\":%d,\"kernels\":%d,"
            "\"dispatches\":%d,\"levels\":%d,\"barriers\":%d,"
            "\"gpu_sum_us\":%.3f,\"gpu_step_us\":%.3f,\"wall_us\":%.3f,\"upload_us\":%.3f,"
            "\"submit_us\":%.3f,\"cpu_ref_us\":%.3f,\"device_bytes\":%lld,"
            "\"cpu_partition_us\":%.3f,\"transfers\":%d,\"transfer_us\":%.3f,"
            "\"state_reset\":%d}\n",
            p->model_name ? p->model_name : "", dev, dtype, plan_tier_name(p->tier), pr->iters,
            p->nkernels, pr->dispatches, p->nlevels, plan_barriers_total(p), pr->gpu_sum_us,
            pr->gpu_step_us, pr->wall_med_us, pr->upload_us, pr->submit_us, pr->cpu_ref_us,
            (long long)pr->device_bytes, pr->cpu_part_us, pr->nxfers, pr->xfer_sum_us, p->nstates);
}

static void print_table(FILE *f, const Plan *p, const Profile *pr, const char *dev,
                        const char *dtype, const SavedProfile *base, bool csv)
{
    char from[40];
    if (csv)
        fprintf(f, "index,kernel,target,fusion,output,gpu_us,gpu_min_us,gpu_max_us,cpu_us,"
                   "speedup,rel_l2,max_abs,verdict,argmax_rows,argmax_differ,argmax_beyond\n");
    else
        fprintf(f,
                "profile %s on %s, %s, tier %s, %d timed runs (median)\n%-4s %-16s %-24s %9s "
                "%9s %9s %8s %9s  %-8s%s\n",
                p->model_name ? p->model_name : "", dev, dtype, plan_tier_name(p->tier), pr->iters,
                "#", "kernel", "fused from", "gpu_us", "spread", "cpu_us", "speedup", "rel_l2",
                "verdict", base ? "  vs baseline" : "");
    for (int k = 0; k < p->nkernels; k++) {
        const PlanKernel *kn = &p->kernels[k];
        const ProfKernel *pk = &pr->k[k];
        int lo, hi;
        xfers_before(p, pr, k, &lo, &hi);
        for (int i = lo; i < hi; i++) {
            PlanTransfer x = plan_transfer(p, pr->x[i].part, pr->x[i].j);
            const char *dir = x.to_cpu ? "npu->cpu" : "cpu->npu";
            char what[96], name[40];
            plan_transfer_text(p, &x, what, sizeof what);
            fused_name(p->tensors[x.tensor].name, name, sizeof name);
            if (csv)
                fprintf(f, "x%d,transfer,%s,%s,%s,%.3f,%.3f,%.3f,-1,0,-1,-1,-,-1,-1,-1\n", i, dir,
                        what, p->tensors[x.tensor].name, pr->x[i].med, pr->x[i].min, pr->x[i].max);
            else
                fprintf(f, "x%-3d %-16s %-24s %9.2f %9.2f %9s %8s %9s  %-8s  %lld B %s\n", i, dir,
                        name, pr->x[i].med, pr->x[i].max - pr->x[i].min, "-", "-", "-", "-",
                        (long long)x.device_bytes, what);
        }
        report_fused_from(kn, from, sizeof from);
        double sp = pk->gpu_med > 0 ? pk->cpu_us / pk->gpu_med : 0;
        char spd[16];
        const char *verdict = !pk->has_err ? "-" : pk->ok ? "ok" : "MISMATCH";
        bool am = pk->has_err && pk->err.argmax;
        if (csv) {
            fprintf(f, "%d,%s,%s,%s,%s,%.3f,%.3f,%.3f,%.3f,%.2f,%.6g,%.6g,%s,%lld,%lld,%lld\n", k,
                    kn->shader, kn->target == KT_NPU ? "npu" : "cpu",
                    kn->fusion >= 0 ? p->fusions[kn->fusion].id : "", out_name(p, kn), pk->gpu_med,
                    pk->gpu_min, pk->gpu_max, pk->cpu_us, sp, pk->has_err ? pk->err.rel_l2 : -1,
                    pk->has_err ? pk->err.max_abs : -1, verdict,
                    am ? (long long)pk->err.am_rows : -1, am ? (long long)pk->err.am_differ : -1,
                    am ? (long long)pk->err.am_beyond : -1);
            continue;
        }
        char delta[48] = "";
        if (base) {
            const double *b = baseline_find(base, out_name(p, kn));
            if (b && *b > 0)
                snprintf(delta, sizeof delta, "  %+.1f%%", 100.0 * (pk->gpu_med - *b) / *b);
            else
                snprintf(delta, sizeof delta, "  new");
        }
        char rel[16] = "-", note[128] = "";
        if (pk->has_err) snprintf(rel, sizeof rel, "%.2e", pk->err.rel_l2);
        if (am) { /* the indices' rel_l2 means nothing: the rows say it */
            snprintf(rel, sizeof rel, "-");
            note[0] = ' ', note[1] = ' ';
            report_argmax_note(&pk->err, note + 2, sizeof note - 2);
        }
        char cpu[16] = "-";
        if (pk->cpu_us >= 0) snprintf(cpu, sizeof cpu, "%.2f", pk->cpu_us);
        fprintf(f, "%-4d %-16s %-24s %9.2f %9.2f %9s %8s %9s  %-8s%s%s\n", k,
                kn->target == KT_CPU ? "cpu" : kn->shader, from, pk->gpu_med,
                pk->gpu_max - pk->gpu_min, cpu, report_speedup(sp, spd, sizeof spd), rel, verdict,
                delta, note);
    }
    if (csv) return;
    char step[48] = "", cref[48] = "no cpu reference (--time-only)";
    if (pr->cpu_ref_us >= 0) snprintf(cref, sizeof cref, "cpu reference %.1f us", pr->cpu_ref_us);
    if (pr->gpu_step_us >= 0) snprintf(step, sizeof step, "gpu step %.1f us, ", pr->gpu_step_us);
    fprintf(f,
            "total: %d kernels, %d dispatches, %d levels, %d barriers, gpu sum %.1f us, %swall "
            "%.1f us per run (min %.1f), %s, device memory %.2f MiB\n",
            p->nkernels, pr->dispatches, p->nlevels, plan_barriers_total(p), pr->gpu_sum_us, step,
            pr->wall_med_us, pr->wall_min_us, cref, (double)pr->device_bytes / (1024.0 * 1024.0));
    if (pr->gpu_step_us >= 0)
        fprintf(f, "per run: inputs upload %.1f us, submit + wait %.1f us (gpu step %.1f us)\n",
                pr->upload_us, pr->submit_us, pr->gpu_step_us);
    if (p->nkernels > pr->dispatches || pr->nxfers)
        fprintf(f, "mixed: %d cpu-partition kernels %.1f us, transfers: %d, %.1f us\n",
                p->nkernels - pr->dispatches, pr->cpu_part_us, pr->nxfers, pr->xfer_sum_us);
    if (p->nstates > 0) /* exec_run: state starts each run from its first value */
        fprintf(f,
                "model state: %d tensors, reset to their first values before every run (each "
                "run is the step from the initial state, its upload counted; generate carries "
                "the state from run to run)\n",
                p->nstates);
    if (pr->worst_kernel >= 0) {
        const CmpStats *w = &pr->k[pr->worst_kernel].err;
        char note[128];
        report_argmax_note(w, note, sizeof note);
        if (w->argmax)
            fprintf(f, "worst error: kernel %d (%s) %s\n", pr->worst_kernel,
                    p->kernels[pr->worst_kernel].shader, note);
        else
            fprintf(f, "worst error: kernel %d (%s) rel_l2 %.3e\n", pr->worst_kernel,
                    p->kernels[pr->worst_kernel].shader, w->rel_l2);
    }
}

/* The tuned kernels' lines: each alone with the defaults and with its knobs. */
static void print_tuned(FILE *f, const Plan *p, const ProfileResult *r)
{
    if (!r->tuned_us) return;
    fprintf(f,
            "tuned kernels (knobs from the tuning cache), timed alone on this run's values with "
            "the defaults and with the knobs (once per tuning key):\n%-4s %-16s %10s %10s %8s  "
            "%s\n",
            "#", "kernel", "default_us", "tuned_us", "speedup", "knobs");
    for (int k = 0; k < p->nkernels; k++) {
        if (r->tuned_us[k] < 0) continue;
        char sp[16];
        fprintf(f, "%-4d %-16s %10.2f %10.2f %8s  %s\n", k, p->kernels[k].shader,
                r->tuned_default_us[k], r->tuned_us[k],
                report_speedup(r->tuned_us[k] > 0 ? r->tuned_default_us[k] / r->tuned_us[k] : 0, sp,
                               sizeof sp),
                p->kernels[k].tuned);
    }
}

const char *report_speedup(double sp, char *buf, size_t n)
{
    if (!(sp > 0))
        snprintf(buf, n, "-");
    else if (sp >= 9.95)
        snprintf(buf, n, "%.0fx", sp);
    else if (sp >= 0.095)
        snprintf(buf, n, "%.1fx", sp);
    else
        snprintf(buf, n, "%.1gx", sp); /* 0.04x, 0.003x: small, never 0.0x */
    return buf;
}

/* The no-reuse compile must hold the timed plan's kernels (only its memory differs, and with it
 * the levels, so the order within a partition may differ): to_timed[k] is the timed kernel with
 * exact kernel k's shader, fusion and provenance. An error otherwise, never errors reported
 * against the wrong kernels. */
static bool same_kernel(const PlanKernel *a, const PlanKernel *b)
{
    if (strcmp(a->shader, b->shader) != 0 || a->nprov != b->nprov || a->fusion != b->fusion)
        return false;
    for (int i = 0; i < a->nprov; i++)
        if (strcmp(a->prov[i], b->prov[i]) != 0) return false;
    return true;
}

static Status match_kernels(const Plan *timed, const Plan *exact, int *to_timed, DiagList *d)
{
    bool ok = timed->nkernels == exact->nkernels;
    char *used = ok ? calloc((size_t)timed->nkernels + 1, 1) : NULL;
    if (ok && !used) return ST_NOMEM;
    for (int k = 0; ok && k < exact->nkernels; k++) {
        to_timed[k] = -1;
        /* the same index first (the usual case), then any unused match */
        if (same_kernel(&timed->kernels[k], &exact->kernels[k]) && !used[k]) to_timed[k] = k;
        for (int j = 0; to_timed[k] < 0 && j < timed->nkernels; j++)
            if (!used[j] && same_kernel(&timed->kernels[j], &exact->kernels[k])) to_timed[k] = j;
        if (to_timed[k] < 0)
            ok = false;
        else
            used[to_timed[k]] = 1;
    }
    free(used);
    if (ok) return ST_OK;
    return diag_add(d, DIAG_ERROR, ST_INTERNAL, timed->source, NULL, NULL,
                    "profile: the plan compiled with every output kept has other kernels than "
                    "the timed plan (%d vs %d): its errors would name the wrong kernels",
                    exact->nkernels, timed->nkernels);
}

/* Each tuned instance of the no-reuse compile ep (run by ex; its kernel k is the timed plan's
 * to_timed[k]) timed alone with the defaults and with its knobs, into r's tuned arrays at the
 * instance's first kernel; the instances of one key are timed once. */
static Status tuned_times(const Options *o, const RunTarget *t, const Pipeline *ep, Runner *ex,
                          const int *to_timed, ProfileResult *r, DiagList *d)
{
    const Plan *p = ep->plan;
    int any = 0;
    for (int k = 0; k < p->nkernels; k++)
        any += p->kernels[k].tuned != NULL;
    if (!any) return ST_OK;
    r->tuned_default_us = malloc(sizeof(double) * (size_t)p->nkernels);
    r->tuned_us = malloc(sizeof(double) * (size_t)p->nkernels);
    if (!r->tuned_default_us || !r->tuned_us) return ST_NOMEM;
    for (int k = 0; k < p->nkernels; k++)
        r->tuned_default_us[k] = r->tuned_us[k] = -1;
    CompileOptions co;
    Status st = runner_options(o, t, true, &co, d);
    Tolerance tol = report_tolerance(o, ex->dtype);
    for (int k = 0; st == ST_OK && k < p->nkernels; k++) {
        const PlanKernel *kn = &p->kernels[k];
        if (!kn->tuned) continue;
        int first = -1;     /* the first kernel of the key (timed already) */
        bool later = false; /* a later kernel of an instance (a K split's reduce) */
        for (int j = 0; j < k; j++) {
            const PlanKernel *e = &p->kernels[j];
            if (!e->tuned || strcmp(e->tune_key, kn->tune_key) != 0) continue;
            later |= e->node == kn->node;
            if (first < 0) first = j;
        }
        if (later) continue;
        double du = -1, tu = -1;
        if (first >= 0) {
            du = r->tuned_default_us[to_timed[first]];
            tu = r->tuned_us[to_timed[first]];
        } else {
            Tuning knobs = {0};
            bool ok = true;
            char why[200];
            st = tuning_parse_list(&knobs, kn->tuned, d);
            if (st == ST_OK)
                st = bench_compare(ep->g, &co, &ex->x, ex->be, kn->node, kn->tune_key, &knobs,
                                   o->iters, tol, &du, &tu, &ok, why, sizeof why, d);
            if (st == ST_OK && !ok)
                diag_add(d, DIAG_WARNING, ST_OK, p->source, kn->nprov ? kn->prov[0] : NULL, NULL,
                         "kernel %d's tuned knobs (%s) change its results: %s", to_timed[k],
                         kn->tuned, why);
        }
        r->tuned_default_us[to_timed[k]] = du;
        r->tuned_us[to_timed[k]] = tu;
    }
    return st;
}

/* ST_CANCELLED when the user asked to stop (checked between the measurement's stages). */
static Status cancel_point(const Options *o, const char *before, DiagList *d)
{
    if (!cancel_requested(o->cancel)) return ST_OK;
    return diag_add(d, DIAG_ERROR, ST_CANCELLED, NULL, NULL, NULL, "profile cancelled before %s",
                    before);
}

static void progress(const Progress *pg, const char *stage, int k, int n)
{
    if (pg && pg->fn) pg->fn(pg->ctx, stage, k, n);
}

/* The measurement's own progress (Profile.on_run): the stage to pg, and the rows so far. */
typedef struct Watch {
    const Progress *pg;
    const Profile *pr;
} Watch;

static void watch_run(void *ctx, const char *stage, int k, int n)
{
    const Watch *w = ctx;
    progress(w->pg, stage, k, n);
    if (w->pg->rows) w->pg->rows(w->pg->ctx, w->pr);
}

Status profile_measure(const Options *o, Model *m, const Pipeline *pipe, const RunTarget *t,
                       const Progress *pg, ProfileResult *out, DiagList *d)
{
    Runner timed = {0}, exact = {0};
    Pipeline exact_pipe = {0};
    RefRun ref = {0};
    ProfileResult r = {0};
    progress(pg, "loading the plan", 0, 0);
    Status st = runner_open_plan(&timed, o, m, pipe, d);
    if (st == ST_OK) st = prof_init(&r.pr, pipe->plan);
    r.pr.cancel = o->cancel;
    Watch w = {pg, &r.pr};
    if (pg) r.pr.on_run = watch_run, r.pr.on_run_ctx = &w;
    if (st == ST_OK) st = prof_time(&timed.x, o->iters, &r.pr, d);
    if (o->time_only) { /* no reference: every CPU time unknown, no kernel judged */
        for (int k = 0; k < r.pr.nkernels; k++)
            r.pr.k[k].cpu_us = -1;
        r.pr.cpu_ref_us = -1;
        goto done;
    }
    progress(pg, "errors: compile keeping every output", 0, 0);
    if (st == ST_OK) st = cancel_point(o, "the error runs", d);
    if (st == ST_OK) st = runner_compile(o, m, t, true, &exact_pipe, d);
    int *to_timed =
        st == ST_OK ? malloc(sizeof(int) * ((size_t)exact_pipe.plan->nkernels + 1)) : NULL;
    if (st == ST_OK && !to_timed) st = ST_NOMEM;
    if (st == ST_OK) st = match_kernels(pipe->plan, exact_pipe.plan, to_timed, d);
    if (st == ST_OK) st = runner_open_plan(&exact, o, m, &exact_pipe, d);
    progress(pg, "errors: CPU reference", 0, 0);
    if (st == ST_OK) st = cancel_point(o, "the CPU reference", d);
    RefOptions ro = {.keep_all = true};
    if (st == ST_OK) st = ref_run(exact_pipe.g, m->b.vals, &ro, &ref, d);
    Tolerance tol = report_tolerance(o, timed.dtype);
    if (st == ST_OK) st = cancel_point(o, "the comparison", d);
    if (st == ST_OK) st = prof_errors_mapped(&exact.x, &ref, &tol, to_timed, &r.pr, d);
    progress(pg, "tuned kernels: defaults and knobs, each alone", 0, 0);
    if (st == ST_OK) st = cancel_point(o, "the tuned kernels' times", d);
    if (st == ST_OK) st = tuned_times(o, t, &exact_pipe, &exact, to_timed, &r, d);
    free(to_timed);
done:
    if (st == ST_OK) {
        snprintf(r.device, sizeof r.device, "%s", timed.be->ops->device(timed.be));
        snprintf(r.dtype, sizeof r.dtype, "%s", timed.dtype);
        r.nkernels = pipe->plan->nkernels;
        r.have = true;
        r.pr.on_run = NULL; /* w lives on this stack */
        r.pr.on_run_ctx = NULL;
        profile_result_free(out);
        *out = r;
    } else {
        prof_free(&r.pr);
    }
    ref_free(&ref);
    runner_close(&exact);
    pipeline_free(&exact_pipe);
    runner_close(&timed);
    return st;
}

void profile_result_free(ProfileResult *r)
{
    prof_free(&r->pr);
    free(r->tuned_default_us);
    free(r->tuned_us);
    memset(r, 0, sizeof *r);
}

/* Writes the report to path (written whole, then renamed over it). */
static Status report_file(const char *path, const Plan *p, const ProfileResult *r, const Options *o,
                          bool json, DiagList *d)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return diag_error(d, path, NULL, NULL, "cannot write");
    Options oo = *o;
    oo.json = json;
    if (json) oo.format = "json"; /* --save: JSON lines whatever the report's format */
    oo.save = oo.out = NULL;
    Status st = profile_report(f, p, r, &oo, d);
    if (fclose(f) != 0 || (st == ST_OK && rename(tmp, path) != 0))
        st = diag_error(d, path, NULL, NULL, "cannot write");
    if (st != ST_OK) remove(tmp);
    return st;
}

Status profile_report(FILE *f, const Plan *p, const ProfileResult *r, const Options *o, DiagList *d)
{
    if (!r->have || r->nkernels != p->nkernels)
        return diag_error(d, NULL, NULL, NULL, "profile: no result for this plan");
    SavedProfile base = {0};
    Status st = o->baseline ? saved_profile_load(o->baseline, &base, d) : ST_OK;
    if (st == ST_OK) {
        if (strcmp(o->format, "trace") == 0)
            st = timeline_write_trace(f, p, r, d);
        else if (strcmp(o->format, "json") == 0 || o->json)
            print_json(f, p, r);
        else {
            print_table(f, p, &r->pr, r->device, r->dtype, base.nk ? &base : NULL,
                        strcmp(o->format, "csv") == 0);
            if (strcmp(o->format, "csv") != 0) print_tuned(f, p, r);
        }
    }
    saved_profile_free(&base);
    if (st == ST_OK && o->save) st = report_file(o->save, p, r, o, true, d);
    return st;
}

Status app_profile(const Options *o, FILE *out, DiagList *d)
{
    Model m = {0};
    Pipeline pipe = {0};
    ProfileResult r = {0};
    RunTarget t;
    Status st = model_load_graph(&m, o->model, d);
    if (st == ST_OK) st = model_bind(&m, o, d);
    if (st == ST_OK) st = runner_target(o, &m.b, &t, d);
    if (st == ST_OK) st = runner_compile(o, &m, &t, false, &pipe, d);
    Progress pg = {report_tty_progress, (void *)"profile", NULL};
    bool tty = isatty(2) && out == stdout;
    if (st == ST_OK) st = profile_measure(o, &m, &pipe, &t, tty ? &pg : NULL, &r, d);
    if (tty) fprintf(stderr, "\r\033[K");
    /* -o FILE: the report goes there instead of stdout */
    if (st == ST_OK && o->out) {
        st = report_file(o->out, pipe.plan, &r, o, o->json, d);
        if (st == ST_OK && o->save) st = report_file(o->save, pipe.plan, &r, o, true, d);
    } else if (st == ST_OK) {
        st = profile_report(out, pipe.plan, &r, o, d);
    }
    profile_result_free(&r);
    pipeline_free(&pipe);
    model_free(&m);
    return st;
}

int cmd_profile(int argc, char **argv)
{
    Options o;
    DiagList d = {0};
    Status st = opt_read(&o, argc, argv, &d);
    if (st == ST_OK) st = app_profile(&o, stdout, &d);
    diag_print(&d, stderr);
    diag_free(&d);
    return status_exit_code(st);
}
