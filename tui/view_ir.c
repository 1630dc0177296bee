/* The IR pane for the current pass: what the pass changed (+ added, - removed, ~ rewritten, with
 * why), or with `d` the whole graph after it, changed nodes marked. Both use the compiler's one
 * text printer (node_line), so the TUI shows what --dump-after and the goldens show. The nodes of
 * the selected kernel are highlighted. */
#include <stdlib.h>
#include <string.h>
#include "../compiler/dump.h"
#include "internal.h"

static bool in_kernel(const Tui *t, const char *name)
{
    const Plan *p = t->s.pipe.plan;
    if (!p || t->sel_kernel < 0 || t->sel_kernel >= p->nkernels) return false;
    const PlanKernel *k = &p->kernels[t->sel_kernel];
    for (int i = 0; i < k->nprov; i++)
        if (strcmp(k->prov[i], name) == 0) return true;
    return false;
}

void tui_view_ir(Tui *t, TuiLines *out)
{
    if (!t->s.pipe.nsnaps) return;
    const Snapshot *sn = &t->s.pipe.snaps[t->s.cursor];
    const Graph *g = sn->g;
    char buf[1024];
    static const char mark[] = "+-~";
    static const int color[] = {TC_GREEN, TC_RED, TC_YELLOW};
    if (!t->full_ir) {
        for (int i = 0; i < sn->nchanges; i++) {
            const Change *c = &sn->changes[i];
            int a = TA_COLOR(color[c->kind]);
            if (in_kernel(t, g->nodes[c->node].name)) a = TA_BOLD | TA_COLOR(TC_MAGENTA);
            tui_lines_add(out, a, c->node, "%c %s   # %s", mark[c->kind],
                          node_line(g, c->node, buf, sizeof buf), c->what ? c->what : "");
        }
        if (!sn->nchanges) tui_lines_add(out, TA_DIM, -1, "(%s changed nothing; d: full graph)", sn->pass);
        return;
    }
    signed char *kind = calloc((size_t)g->nnodes + 1, 1);
    if (!kind) return;
    for (int i = 0; i < sn->nchanges; i++)
        if (sn->changes[i].node >= 0 && sn->changes[i].node < g->nnodes)
            kind[sn->changes[i].node] = (signed char)(sn->changes[i].kind + 1);
    for (int i = 0; i < g->nnodes; i++) {
        if (g->nodes[i].dead && !kind[i]) continue;
        int a = kind[i] ? TA_COLOR(color[kind[i] - 1]) : 0;
        if (in_kernel(t, g->nodes[i].name)) a = TA_BOLD | TA_COLOR(TC_MAGENTA);
        tui_lines_add(out, a, i, "%c %s", kind[i] ? mark[kind[i] - 1] : ' ', node_line(g, i, buf, sizeof buf));
    }
    free(kind);
}
