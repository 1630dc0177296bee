/* The passes pane: one row per pipeline snapshot with its change counts and wall time; passes
 * that changed nothing are dimmed (and hidden with `h`, the current one excepted). The pass that
 * made the selected kernel is starred (fuse or fuse-elementwise for a fused kernel, lower for the
 * rest). */
#include <string.h>
#include "tui/internal.h"

const char *tui_ms(const Tui *t, double ms, char *buf, size_t n)
{
    if (t->stable)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.2f", ms);
    return buf;
}

static int creator_pass(const Tui *t)
{
    const Plan *p = t->s.pipe.plan;
    if (!p || t->sel_kernel < 0 || t->sel_kernel >= p->nkernels) return -1;
    int f = p->kernels[t->sel_kernel].fusion;
    const char *want = f < 0                                               ? "lower"
                       : strcmp(p->fusions[f].pattern, "elementwise") == 0 ? "fuse-elementwise"
                                                                           : "fuse";
    for (int i = 0; i < t->s.pipe.nsnaps; i++)
        if (strcmp(t->s.pipe.snaps[i].pass, want) == 0) return i;
    return -1;
}

void tui_view_passes(Tui *t, TuiLines *out)
{
    const Pipeline *pp = &t->s.pipe;
    int star = creator_pass(t);
    int w = pp->nsnaps > 10 ? 2 : 1; /* numbers right-aligned: " 9 plan-memory", "10 lower" */
    for (int i = 0; i < pp->nsnaps; i++) {
        const Snapshot *sn = &pp->snaps[i];
        bool none = sn->added + sn->removed + sn->rewritten == 0;
        if (none && t->hide_unchanged && i != t->s.cursor) continue;
        char ch[32] = "", *c = ch, ms[16];
        if (sn->added) c += snprintf(c, 10, "+%d ", sn->added);
        if (sn->removed) c += snprintf(c, 10, "-%d ", sn->removed);
        if (sn->rewritten) snprintf(c, 10, "~%d", sn->rewritten);
        if (none) snprintf(ch, sizeof ch, "%s", sn->skipped ? "skipped" : "-");
        int a = none ? TA_DIM : 0;
        if (i == star) a = TA_BOLD | TA_COLOR(TC_MAGENTA);
        tui_lines_add(out, a, i, "%*d %-16s %-8s%6s%s", w, i, sn->pass, ch,
                      tui_ms(t, sn->ms, ms, sizeof ms), i == star ? "*" : "");
    }
    /* the selection is the session's cursor */
    for (int r = 0; r < out->n; r++)
        if (out->v[r].id == t->s.cursor) t->pane[P_PASSES].sel = r;
}
