/* timeline_build: the profiled step laid out by level; timeline_write_trace: that layout as
 * Chrome trace-event JSON ({"traceEvents":[...]}, "X" complete events with ts and dur in
 * microseconds, "M" events naming the processes and lanes). */
#include "app/timeline.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "app/report.h"

Status timeline_build(const Plan *p, const Profile *pr, Timeline *tl, DiagList *d)
{
    memset(tl, 0, sizeof *tl);
    if (pr->nkernels != p->nkernels)
        return diag_error(d, p->source, NULL, NULL,
                          "timeline: the profile measured %d kernels, "
                          "the plan has %d",
                          pr->nkernels, p->nkernels);
    tl->nkernels = p->nkernels;
    tl->nxfers = pr->nxfers;
    tl->bar = calloc((size_t)(p->nkernels + pr->nxfers) + 1, sizeof *tl->bar);
    if (!tl->bar) return diag_add(d, DIAG_ERROR, ST_NOMEM, NULL, NULL, NULL, "out of memory");
    int nlev = 0;
    for (int k = 0; k < p->nkernels; k++)
        if (p->kernels[k].level + 1 > nlev) nlev = p->kernels[k].level + 1;
    tl->nlevels = nlev;
    for (int i = 0; i < pr->nxfers; i++) /* placed below; one before no kernel stays at 0 */
        tl->bar[p->nkernels + i] = (TimelineBar){-1, i, 0, 0, 0, 0};
    double t = 0;
    for (int lv = 0; lv < nlev; lv++) {
        /* the transfers a partition needs run before its first kernel's level */
        for (int i = 0; i < pr->nxfers; i++) {
            int fk = p->parts[pr->x[i].part].first_kernel;
            if (fk < 0 || fk >= p->nkernels || p->kernels[fk].level != lv) continue;
            TimelineBar *b = &tl->bar[p->nkernels + i];
            *b = (TimelineBar){-1, i, lv, 0, t, pr->x[i].med > 0 ? pr->x[i].med : 0};
            t += b->dur;
        }
        double longest = 0;
        int lane = 0;
        for (int k = 0; k < p->nkernels; k++) {
            if (p->kernels[k].level != lv) continue;
            double dur = pr->k[k].gpu_med > 0 ? pr->k[k].gpu_med : 0;
            tl->bar[k] = (TimelineBar){k, -1, lv, lane++, t, dur};
            if (dur > longest) longest = dur;
        }
        if (lane > tl->nlanes) tl->nlanes = lane;
        t += longest;
    }
    tl->end = t;
    for (int k = 0; k < p->nkernels; k++)
        tl->cpu_end += pr->k[k].cpu_us > 0 ? pr->k[k].cpu_us : 0;
    return ST_OK;
}

void timeline_free(Timeline *tl)
{
    free(tl->bar);
    memset(tl, 0, sizeof *tl);
}

static json_object *meta(const char *what, int pid, int tid, const char *name)
{
    json_object *e = json_object_new_object(), *a = json_object_new_object();
    json_object_object_add(e, "name", json_object_new_string(what));
    json_object_object_add(e, "ph", json_object_new_string("M"));
    json_object_object_add(e, "pid", json_object_new_int(pid));
    json_object_object_add(e, "tid", json_object_new_int(tid));
    json_object_object_add(a, "name", json_object_new_string(name));
    json_object_object_add(e, "args", a);
    return e;
}

static json_object *complete(const char *name, const char *cat, int pid, int tid, double ts,
                             double dur, json_object *args)
{
    json_object *e = json_object_new_object();
    json_object_object_add(e, "name", json_object_new_string(name));
    json_object_object_add(e, "cat", json_object_new_string(cat));
    json_object_object_add(e, "ph", json_object_new_string("X"));
    json_object_object_add(e, "ts", json_object_new_double(ts));
    json_object_object_add(e, "dur", json_object_new_double(dur));
    json_object_object_add(e, "pid", json_object_new_int(pid));
    json_object_object_add(e, "tid", json_object_new_int(tid));
    json_object_object_add(e, "args", args);
    return e;
}

/* A kernel's args: what the profile table says of it. */
static json_object *kernel_args(const Plan *p, const ProfKernel *pk, const TimelineBar *b)
{
    const PlanKernel *kn = &p->kernels[b->kernel];
    char from[512];
    report_fused_from(kn, from, sizeof from);
    json_object *a = json_object_new_object();
    json_object_object_add(a, "kernel", json_object_new_int(b->kernel));
    json_object_object_add(a, "shader", json_object_new_string(kn->shader));
    json_object_object_add(a, "target",
                           json_object_new_string(kn->target == KT_NPU ? "npu" : "cpu"));
    json_object_object_add(
        a, "fusion", json_object_new_string(kn->fusion >= 0 ? p->fusions[kn->fusion].id : ""));
    json_object_object_add(a, "level", json_object_new_int(b->level));
    json_object_object_add(a, "output",
                           json_object_new_string(kn->nargs > kn->nin
                                                      ? p->tensors[kn->args[kn->nargs - 1]].name
                                                      : ""));
    json_object_object_add(a, "fused_from", json_object_new_string(from));
    json_object_object_add(a, "gpu_us", json_object_new_double(pk->gpu_med));
    json_object_object_add(a, "gpu_min_us", json_object_new_double(pk->gpu_min));
    json_object_object_add(a, "gpu_max_us", json_object_new_double(pk->gpu_max));
    json_object_object_add(a, "cpu_us", json_object_new_double(pk->cpu_us));
    json_object_object_add(a, "rel_l2", json_object_new_double(pk->has_err ? pk->err.rel_l2 : -1));
    json_object_object_add(a, "max_abs",
                           json_object_new_double(pk->has_err ? pk->err.max_abs : -1));
    json_object_object_add(a, "verdict",
                           json_object_new_string(!pk->has_err ? "-"
                                                  : pk->ok     ? "ok"
                                                               : "MISMATCH"));
    return a;
}

Status timeline_write_trace(FILE *f, const Plan *p, const ProfileResult *r, DiagList *d)
{
    const Profile *pr = &r->pr;
    Timeline tl;
    Status st = timeline_build(p, pr, &tl, d);
    if (st != ST_OK) return st;
    json_object *root = json_object_new_object(), *ev = json_object_new_array();
    char name[256];
    snprintf(name, sizeof name, "%s: %s kernels by level (%d levels)", r->device,
             p->model_name ? p->model_name : "", p->nlevels);
    json_object_array_add(ev, meta("process_name", 1, 0, name));
    for (int lane = 0; lane < tl.nlanes; lane++) {
        snprintf(name, sizeof name, "lane %d", lane);
        json_object_array_add(ev, meta("thread_name", 1, lane, name));
    }
    if (tl.nxfers) json_object_array_add(ev, meta("thread_name", 1, tl.nlanes, "transfers"));
    json_object_array_add(ev, meta("process_name", 2, 0, "CPU reference (kernel by kernel)"));
    json_object_array_add(ev, meta("thread_name", 2, 0, "cpu reference"));
    double cpu_t = 0;
    for (int k = 0; k < tl.nkernels; k++) {
        const TimelineBar *b = &tl.bar[k];
        const ProfKernel *pk = &pr->k[k];
        snprintf(name, sizeof name, "%d %s", k, p->kernels[k].shader);
        json_object_array_add(
            ev, complete(name, "kernel", 1, b->lane, b->start, b->dur, kernel_args(p, pk, b)));
        double cpu = pk->cpu_us > 0 ? pk->cpu_us : 0;
        json_object_array_add(
            ev, complete(name, "cpu-reference", 2, 0, cpu_t, cpu, kernel_args(p, pk, b)));
        cpu_t += cpu;
    }
    for (int i = 0; i < tl.nxfers; i++) {
        const TimelineBar *b = &tl.bar[tl.nkernels + i];
        PlanTransfer x = plan_transfer(p, pr->x[i].part, pr->x[i].j);
        char what[96];
        plan_transfer_text(p, &x, what, sizeof what);
        json_object *a = json_object_new_object();
        json_object_object_add(a, "transfer", json_object_new_int(i));
        json_object_object_add(a, "tensor", json_object_new_string(p->tensors[x.tensor].name));
        json_object_object_add(a, "what", json_object_new_string(what));
        json_object_object_add(a, "bytes", json_object_new_int64(x.device_bytes));
        json_object_object_add(a, "level", json_object_new_int(b->level));
        snprintf(name, sizeof name, "x%d %s", i, x.to_cpu ? "npu->cpu" : "cpu->npu");
        json_object_array_add(ev, complete(name, "transfer", 1, tl.nlanes, b->start, b->dur, a));
    }
    json_object_object_add(root, "traceEvents", ev);
    json_object_object_add(root, "displayTimeUnit", json_object_new_string("ns"));
    json_object *other = json_object_new_object();
    json_object_object_add(other, "schema", json_object_new_string("npu-explore/trace/1"));
    json_object_object_add(other, "model",
                           json_object_new_string(p->model_name ? p->model_name : ""));
    json_object_object_add(other, "device", json_object_new_string(r->device));
    json_object_object_add(other, "dtype", json_object_new_string(r->dtype));
    json_object_object_add(other, "tier", json_object_new_string(plan_tier_name(p->tier)));
    json_object_object_add(other, "iters", json_object_new_int(pr->iters));
    json_object_object_add(other, "kernels", json_object_new_int(p->nkernels));
    json_object_object_add(other, "levels", json_object_new_int(p->nlevels));
    json_object_object_add(
        other, "layout",
        json_object_new_string(
            "kernels of one barrier level side by side (a lane each), levels one after another, "
            "each "
            "as long as its slowest kernel; bars are the median GPU time of the timed runs"));
    json_object_object_add(root, "otherData", other);
    const char *s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
    if (!s || fputs(s, f) < 0 || fputc('\n', f) < 0)
        st = diag_error(d, NULL, NULL, NULL, "profile: cannot write the trace");
    json_object_put(root);
    timeline_free(&tl);
    return st;
}
