/* The kernels/profiler pane: one row per kernel of the compiled program; after `p` (the
 * session's profile of this same plan: tui_prof_sync builds the rows from its data) with GPU time,
 * CPU-reference time, speedup, error and verdict, sortable by column with `s`; in a mixed plan also
 * the transfers between partitions (`xN` rows: direction, tensor, cast, host time), before the
 * partition that needs them. Selecting a kernel highlights its IR nodes and the pass that made it.
 */
#include <stdlib.h>
#include <string.h>
#include "app/report.h"
#include "tui/internal.h"

static const char *sort_names[] = {"#", "gpu", "cpu", "speedup", "error"};

const TuiProfRow *tui_prof_row(const Tui *t, int kernel)
{
    for (int i = 0; i < t->nprof; i++)
        if (!t->prof[i].xfer && t->prof[i].index == kernel) return &t->prof[i];
    return NULL;
}

static double key(const TuiProfRow *r, int col)
{
    switch (col) {
    case 1:
        return -r->gpu_us;
    case 2:
        return -r->cpu_us;
    case 3:
        return r->speedup;
    case 4:
        return -r->rel_l2;
    default:
        return r->xfer ? r->first_kernel - 0.5 : r->index; /* before its partition */
    }
}

static int g_col;
static int cmp(const void *a, const void *b)
{
    double x = key(a, g_col), y = key(b, g_col);
    if (x != y) return x < y ? -1 : 1;
    const TuiProfRow *p = a, *q = b;
    if (p->xfer != q->xfer) return p->xfer ? -1 : 1;
    return p->index - q->index;
}

/* A time for the table: "-" when there is none, "..." when it is still to come. */
static void num(char *buf, size_t n, double us, bool coming)
{
    if (us >= 0)
        snprintf(buf, n, "%.1f", us);
    else
        snprintf(buf, n, "%s", coming ? "..." : "-");
}

/* The kernel column's width: the longest shader stem (matmul_cmlx_glu_nb, generated
 * gen_<hash>), at least the heading's, at most 24. */
static int kernel_width(const Plan *p)
{
    int w = 6;
    for (int k = 0; k < p->nkernels; k++) {
        int n = (int)strlen(p->kernels[k].shader);
        if (n > w) w = n;
    }
    return w > 24 ? 24 : w;
}

void tui_view_kernels(Tui *t, TuiLines *out)
{
    const Plan *p = t->s.pipe.plan;
    if (!p) {
        tui_lines_add(out, TA_DIM, -1, "(no compiled program)");
        return;
    }
    int kw = kernel_width(p);
    BreakSite br[TUI_MAX_BREAKS];
    int nbr = tui_breaks(t, br);
    if (!t->nprof) {
        tui_lines_add(out, TA_BOLD, -1, "%3s %-*s %-3s %-5s %s", "#", kw, "kernel", "on", "fus",
                      "IR nodes");
        if (tui_profile_kept(t)) /* tui_prof_sync dropped it: it measured another plan */
            tui_lines_add(
                out, TA_COLOR(TC_YELLOW), -1,
                "(the last profile measured an earlier plan: not shown; p profiles this one)");
        for (int k = 0; k < p->nkernels; k++) {
            const PlanKernel *kn = &p->kernels[k];
            char prov[256];
            if (!tui_break_row(br, nbr, k, p, prov, sizeof prov))
                report_fused_from(kn, prov, sizeof prov);
            tui_lines_add(out, kn->target == KT_CPU ? TA_COLOR(TC_YELLOW) : 0, k,
                          "%3d %-*.*s %-3s %-5s %s", k, kw, kw, kn->shader,
                          kn->target == KT_NPU ? "npu" : "cpu",
                          kn->fusion >= 0 ? p->fusions[kn->fusion].id : "", prov);
        }
        return;
    }
    /* sorted by the chosen column (a copy, so the table stays keyed by kernel index) */
    TuiProfRow *rows = malloc(sizeof *rows * (size_t)t->nprof);
    if (!rows) return;
    memcpy(rows, t->prof, sizeof *rows * (size_t)t->nprof);
    g_col = t->timeline ? 0 : t->sort_col; /* the timeline's rows: by index */
    qsort(rows, (size_t)t->nprof, sizeof *rows, cmp);
    tui_lines_add(out, TA_BOLD, -1, "%3s %-*s %-8s %9s %9s %7s %8s %s   sorted by %s", "#", kw,
                  "kernel", "verdict", "gpu_us", "cpu_us", "speedup", "rel_l2", "fusion/IR",
                  sort_names[t->sort_col]);
    for (int i = 0; i < t->nprof; i++) {
        const TuiProfRow *r = &rows[i];
        int a = strcmp(r->verdict, "MISMATCH") == 0 ? TA_BOLD | TA_COLOR(TC_RED)
                : strcmp(r->target, "cpu") == 0     ? TA_COLOR(TC_YELLOW)
                                                    : 0;
        if (r->xfer) { /* a transfer between partitions: not a kernel, nothing to select */
            char id[16];
            snprintf(id, sizeof id, "x%d", r->index);
            tui_lines_add(out, TA_COLOR(TC_YELLOW), -1, "%3s %-*.*s %-8s %9.1f %9s %7s %8s  %s", id,
                          kw, kw, r->kernel, "-", r->gpu_us, "-", "-", "-", r->from);
            continue;
        }
        /* a running profile's numbers still to come read "..." */
        char rel[16] = "-", sp[16], gpu[16], cpu[16];
        if (r->rel_l2 >= 0)
            snprintf(rel, sizeof rel, "%.1e", r->rel_l2);
        else if (r->pending)
            snprintf(rel, sizeof rel, "...");
        num(gpu, sizeof gpu, r->gpu_us, t->prof_live);
        num(cpu, sizeof cpu, r->pending && r->cpu_us <= 0 ? -1 : r->cpu_us, r->pending);
        char brk[160];
        bool corrupt = tui_break_row(br, nbr, r->index, p, brk, sizeof brk);
        tui_lines_add(out, a, r->index, "%3d %-*.*s %-8s %9s %9s %7s %8s %s %s", r->index, kw, kw,
                      r->kernel, r->verdict, gpu, cpu,
                      r->pending ? "..." : report_speedup(r->speedup, sp, sizeof sp), rel,
                      r->fusion, corrupt ? brk : r->from);
    }
    tui_lines_add(out, TA_DIM, -1, "%s", t->prof_summary);
    free(rows);
}
