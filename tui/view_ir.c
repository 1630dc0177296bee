/* The IR pane for the current pass: what the pass changed (+ added, - removed, ~ rewritten, with
 * why), or with `d` the whole graph after it, changed nodes marked. Both use the compiler's one
 * text printer (node_line), so the TUI shows what --dump-after and the goldens show. The nodes of
 * the selected kernel are highlighted. */
#include <stdlib.h>
#include <string.h>
#include "compiler/dump.h"
#include "tui/internal.h"

static bool in_kernel(const Tui *t, const char *name)
{
    const Plan *p = t->s.pipe.plan;
    if (!p || t->sel_kernel < 0 || t->sel_kernel >= p->nkernels) return false;
    const PlanKernel *k = &p->kernels[t->sel_kernel];
    for (int i = 0; i < k->nprov; i++)
        if (strcmp(k->prov[i], name) == 0) return true;
    return false;
}

static int live_nodes(const Graph *g)
{
    int n = 0;
    for (int i = 0; i < g->nnodes; i++)
        n += !g->nodes[i].dead;
    return n;
}

/* A pass that changed nothing (the explorer opens on `lower`): what the whole compile did and
 * the main keys instead of an empty pane. */
static void compile_summary(const Tui *t, TuiLines *out, int width)
{
    const Pipeline *pp = &t->s.pipe;
    const Plan *p = pp->plan;
    char buf[1024];
    size_t u = 0;
    snprintf(buf, sizeof buf, "(%s changed nothing in the graph; d: the whole graph after it)",
             pp->snaps[t->s.cursor].pass);
    tui_lines_wrap(out, TA_DIM, -1, "", 0, width, buf);
    tui_lines_wrap(out, TA_BOLD, -1, "keys: ", 6, width, tui_keys_hint());
    tui_lines_add(out, 0, -1, "%s", "");
    tui_lines_add(out, TA_BOLD, -1, "what the compile did to %s:",
                  pp->g->model_name ? pp->g->model_name : "the model");
    snprintf(buf, sizeof buf, "%d IR nodes imported, %d live after the passes",
             live_nodes(pp->snaps[0].g), live_nodes(pp->g));
    tui_lines_wrap(out, 0, -1, "  - ", 4, width, buf);
    u = (size_t)snprintf(buf, sizeof buf, "the passes that changed it:");
    for (int i = 1; i < pp->nsnaps && u < sizeof buf; i++) {
        const Snapshot *sn = &pp->snaps[i];
        if (sn->added + sn->removed + sn->rewritten)
            u += (size_t)snprintf(buf + u, sizeof buf - u, " %s,", sn->pass);
    }
    if (u < sizeof buf && buf[u - 1] == ',')
        snprintf(buf + u - 1, sizeof buf - u + 1, " (Left/Right: each one's changes)");
    tui_lines_wrap(out, 0, -1, "  - ", 4, width, buf);
    if (p) {
        snprintf(
            buf, sizeof buf,
            "its plan: %d kernels in %d levels, %d partition%s (4: the kernels, p: profile them)",
            p->nkernels, p->nlevels, p->nparts, p->nparts == 1 ? "" : "s");
        tui_lines_wrap(out, 0, -1, "  - ", 4, width, buf);
    }
    int en = 0;
    for (int i = 0; i < pp->g->nfusions; i++)
        en += pp->g->fusions[i].enabled;
    snprintf(buf, sizeof buf, "%d of %d fusion instances on (5: switch them, b: bisect them)", en,
             pp->g->nfusions);
    tui_lines_wrap(out, 0, -1, "  - ", 4, width, buf);
    BreakSite b[TUI_MAX_BREAKS];
    for (int i = 0, nb = tui_breaks(t, b); i < nb; i++) { /* a deliberate fault: where it lands */
        int n = snprintf(buf, sizeof buf, "--break %s: ", b[i].id);
        attrib_break_text(p, &b[i], buf + n, sizeof buf - (size_t)n);
        tui_lines_wrap(out, TA_BOLD | TA_COLOR(TC_RED), -1, "  - ", 4, width, buf);
    }
}

void tui_view_ir(Tui *t, TuiLines *out, int width)
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
        if (!sn->nchanges) compile_summary(t, out, width);
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
        tui_lines_add(out, a, i, "%c %s", kind[i] ? mark[kind[i] - 1] : ' ',
                      node_line(g, i, buf, sizeof buf));
    }
    free(kind);
}
