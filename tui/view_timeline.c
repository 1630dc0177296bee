/* The kernels pane's timeline (t): the session's profile of this plan as a picture, laid out by
 * app/timeline.h as `profile --format trace` lays it out: time runs across, each level's kernels
 * are side by side on lanes (rows), levels follow one another, bars are as long as each kernel's
 * median GPU time ([index shader====], at least one cell), a mixed plan's transfers on a lane of
 * their own. The pane's rows are still the kernels table in index order (tui_view_kernels), so
 * j/k select a kernel, its bar is drawn with '#', and details, o and "computed by" name the same
 * kernel index. +/- zoom around the selected kernel. A profile of an earlier plan is never
 * drawn: the table says it is stale. Under --tui-stable every timed bar is one unit long and
 * times print as '-', so golden screens compare exactly. */
#include <stdlib.h>
#include <string.h>
#include "app/timeline.h"
#include "tui/internal.h"

#define TL_MAX_ZOOM 6 /* 2^6 x the whole step across the pane */

/* A time for the screen: "-" under --tui-stable. */
static const char *us(const Tui *t, double v, char *buf, size_t n)
{
    if (t->stable)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.1f", v);
    return buf;
}

/* The layout of r over p; under --tui-stable of a copy whose timed kernels and transfers all
 * took one microsecond (the same picture every run). */
static Status layout(const Tui *t, const Plan *p, const Profile *pr, Timeline *tl)
{
    DiagList d = {0};
    Profile one = *pr;
    if (t->stable) {
        one.k = malloc(sizeof *one.k * ((size_t)pr->nkernels + 1));
        one.x = malloc(sizeof *one.x * ((size_t)pr->nxfers + 1));
        if (one.k && one.x) {
            memcpy(one.k, pr->k, sizeof *one.k * (size_t)pr->nkernels);
            memcpy(one.x, pr->x, sizeof *one.x * (size_t)pr->nxfers);
            for (int i = 0; i < pr->nkernels; i++)
                one.k[i].gpu_med = one.k[i].gpu_med >= 0 ? 1 : -1;
            for (int i = 0; i < pr->nxfers; i++)
                one.x[i].med = 1;
        }
    }
    Status st = (one.k && one.x) || !t->stable ? timeline_build(p, &one, tl, &d) : ST_NOMEM;
    if (t->stable) {
        free(one.k);
        free(one.x);
    }
    diag_free(&d);
    return st;
}

/* The kernel of the selected row of the kernels pane, -1. */
static int selected_kernel(const Tui *t)
{
    const TuiLines *l = &t->lines[P_KERNELS];
    int s = t->pane[P_KERNELS].sel;
    return s >= 0 && s < l->n ? l->v[s].id : -1;
}

static int bar_attr(const TuiProfRow *r, int level)
{
    if (r && strcmp(r->verdict, "MISMATCH") == 0) return TA_BOLD | TA_COLOR(TC_RED);
    if (r && strcmp(r->target, "cpu") == 0) return TA_COLOR(TC_YELLOW);
    return TA_COLOR(level % 2 ? TC_CYAN : TC_GREEN); /* neighbouring levels told apart */
}

/* One bar from column c0 to c1 (exclusive) on row y, clipped to [x0, x1). */
static void bar(Tui *t, int c0, int c1, int y, int x0, int x1, int attr, bool sel,
                const char *label)
{
    if (c1 <= c0) c1 = c0 + 1;
    for (int c = c0; c < c1; c++) {
        if (c < x0 || c >= x1) continue;
        int i = c - c0, n = c1 - c0;
        char ch = n == 1                       ? (sel ? '#' : '|')
                  : i == 0                     ? (sel ? '#' : '[')
                  : i == n - 1                 ? (sel ? '#' : ']')
                  : i - 1 < (int)strlen(label) ? label[i - 1]
                  : sel                        ? '#'
                                               : '=';
        t->grid.c[y * t->grid.w + c] = (TuiCell){ch, (unsigned char)(attr | (sel ? TA_REV : 0))};
    }
}

bool tui_timeline_draw(Tui *t, int x, int y, int w, int h)
{
    const ProfileResult *r = tui_profile_result(t);
    const Plan *p = t->s.pipe.plan;
    if (!r || !p || w < 30 || h < 6) return false;
    Timeline tl;
    if (layout(t, p, &r->pr, &tl) != ST_OK) return false;
    char b1[24], b2[24], b3[24];
    int sel = selected_kernel(t);
    const int lab = 6; /* the lane names' column */
    int cols = w - lab - 1, lanes = tl.nlanes + (tl.nxfers > 0);
    double span = tl.end > 0 ? tl.end : 1; /* microseconds across the pane */
    for (int z = 0; z < t->tl_zoom; z++)
        span /= 2;
    double t0 = 0;
    if (sel >= 0 && sel < tl.nkernels) t0 = tl.bar[sel].start + tl.bar[sel].dur / 2 - span / 2;
    if (t0 > tl.end - span) t0 = tl.end - span;
    if (t0 < 0) t0 = 0;
    double per = span / cols; /* microseconds per cell */
    int rows = h - 4;         /* axis above, two lines of the selection below */
    int top = 0;              /* first lane shown: keeps the selection's in view */
    if (sel >= 0 && sel < tl.nkernels && tl.bar[sel].lane >= rows)
        top = tl.bar[sel].lane - rows + 1;
    /* the axis: start and end of the span shown, a '+' where each level starts */
    char a0[32], a1[32];
    snprintf(a0, sizeof a0, "%s us", us(t, t0, b1, sizeof b1));
    snprintf(a1, sizeof a1, "%s us", us(t, t0 + span, b2, sizeof b2));
    tui_fill(&t->grid, x + lab, y, cols, 1, '-', TA_DIM);
    double last = -1;
    for (int k = 0; k < tl.nkernels; k++)
        if (tl.bar[k].start != last) {
            last = tl.bar[k].start;
            int c = (int)((last - t0) / per);
            if (c >= 0 && c < cols) tui_put(&t->grid, x + lab + c, y, 1, TA_DIM, "+");
        }
    tui_put(&t->grid, x, y, lab, TA_DIM, "time");
    tui_put(&t->grid, x + lab, y, cols, TA_DIM, a0);
    tui_put(&t->grid, x + lab + cols - (int)strlen(a1), y, (int)strlen(a1), TA_DIM, a1);
    for (int ln = top; ln < lanes && ln - top < rows; ln++) {
        int ry = y + 1 + ln - top;
        if (ln < tl.nlanes)
            tui_putf(&t->grid, x, ry, lab, TA_DIM, "L%d", ln);
        else
            tui_put(&t->grid, x, ry, lab, TA_DIM, "xfer");
    }
    if (lanes - top > rows) tui_putf(&t->grid, x, y + rows, lab, TA_DIM, "+%d", lanes - top - rows);
    /* bars: the selected one last, so a neighbour's minimum cell never hides it */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < tl.nkernels + tl.nxfers; i++) {
            const TimelineBar *b = &tl.bar[i];
            bool is_sel = b->kernel >= 0 && b->kernel == sel;
            if (is_sel != (pass == 1)) continue;
            int lane = b->kernel >= 0 ? b->lane : tl.nlanes;
            if (lane < top || lane - top >= rows) continue;
            char label[48];
            if (b->kernel >= 0)
                snprintf(label, sizeof label, "%d %s", b->kernel, p->kernels[b->kernel].shader);
            else
                snprintf(label, sizeof label, "x%d", b->xfer);
            int c0 = (int)((b->start - t0) / per), c1 = (int)((b->start + b->dur - t0) / per);
            const TuiProfRow *pr = b->kernel >= 0 ? tui_prof_row(t, b->kernel) : NULL;
            int attr = b->kernel >= 0 ? bar_attr(pr, b->level) : TA_COLOR(TC_YELLOW);
            bar(t, x + lab + c0, x + lab + c1, y + 1 + lane - top, x + lab, x + lab + cols, attr,
                is_sel, label);
        }
    /* the selection, as the table and the details name it */
    int iy = y + h - 3;
    tui_fill(&t->grid, x, iy, w, 1, '-', TA_DIM);
    if (sel >= 0 && sel < tl.nkernels) {
        const TimelineBar *b = &tl.bar[sel];
        const TuiProfRow *pr = tui_prof_row(t, sel);
        const PlanKernel *kn = &p->kernels[sel];
        char rel[24] = "-";
        if (pr && pr->rel_l2 >= 0) snprintf(rel, sizeof rel, "%.1e", pr->rel_l2);
        if (t->stable && pr && pr->rel_l2 >= 0) snprintf(rel, sizeof rel, "-");
        tui_putf(
            &t->grid, x, iy + 1, w, TA_BOLD,
            "kernel %d %s%s%s  level %d lane %d  start %s us  gpu %s us  cpu %s us  rel_l2 %s %s",
            sel, kn->shader, kn->fusion >= 0 ? " " : "",
            kn->fusion >= 0 ? p->fusions[kn->fusion].id : "", b->level, b->lane,
            us(t, b->start, b1, sizeof b1), us(t, b->dur, b2, sizeof b2),
            us(t, pr ? pr->cpu_us : 0, b3, sizeof b3), rel, pr ? pr->verdict : "-");
    } else {
        tui_put(&t->grid, x, iy + 1, w, TA_DIM, "(j/k select a kernel)");
    }
    tui_putf(&t->grid, x, iy + 2, w, TA_DIM,
             "%d kernels in %d levels, step %s us by level (gpu sum %s us); zoom x%d (+/-)",
             tl.nkernels, p->nlevels, us(t, tl.end, b1, sizeof b1),
             us(t, r->pr.gpu_sum_us, b2, sizeof b2), 1 << t->tl_zoom);
    timeline_free(&tl);
    return true;
}

void tui_timeline_zoom(Tui *t, int dir)
{
    t->tl_zoom += dir;
    if (t->tl_zoom < 0) t->tl_zoom = 0;
    if (t->tl_zoom > TL_MAX_ZOOM) t->tl_zoom = TL_MAX_ZOOM;
}
