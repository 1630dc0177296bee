/* The fusions pane: every fusion instance of the current compile with its switch ([x] on, [ ]
 * off; Space toggles through the session's `fusion off|on ID`, z undoes), then the near misses:
 * patterns that almost matched and why not. */
#include "tui/internal.h"

void tui_view_fusions(Tui *t, TuiLines *out)
{
    const Graph *g = t->s.pipe.g;
    if (!g) return;
    for (int i = 0; i < g->nfusions; i++) {
        const Fusion *f = &g->fusions[i];
        char nodes[512] = "";
        size_t u = 0;
        for (int k = 0; k < f->nnodes && u + 4 < sizeof nodes; k++) {
            int w = snprintf(nodes + u, sizeof nodes - u, "%s%s", k ? "," : "",
                             g->nodes[f->nodes[k]].name);
            if (w > 0) u += (size_t)w;
        }
        tui_lines_add(out, f->enabled ? 0 : TA_DIM, i, "[%c] %-5s %-15s %s", f->enabled ? 'x' : ' ',
                      f->id, f->pattern, nodes);
    }
    if (!g->nfusions) tui_lines_add(out, TA_DIM, -1, "(no fusion instances)");
    for (int i = 0; i < g->nmisses; i++)
        tui_lines_add(out, TA_DIM, -1, "    not fused: %s at %s: %s", g->misses[i].pattern,
                      g->nodes[g->misses[i].node].name, g->misses[i].reason);
}
