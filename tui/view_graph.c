/* The graph pane: the fallback drawing that scales to any graph size, one row per live node of
 * the current pass with its fusion frame, placement (colour by partition) and its edges (the
 * producers it reads, the nodes that read it). `g` renders the real drawing through Graphviz to
 * an SVG file (the session's `dot` command). */
#include <string.h>
#include "internal.h"

static void edges_in(const Graph *g, const Node *n, char *buf, size_t cap)
{
    size_t u = 0;
    buf[0] = 0;
    for (int i = 0; i < n->nin && u + 8 < cap; i++) {
        const GTensor *ten = &g->tensors[n->in[i]];
        if (ten->kind == TK_WEIGHT || ten->kind == TK_CONST) continue;
        const char *nm = ten->producer >= 0 && ten->producer < g->nnodes ? g->nodes[ten->producer].name : ten->name;
        int w = snprintf(buf + u, cap - u, "%s%s", u ? "," : "", nm);
        if (w > 0) u += (size_t)w;
    }
}

static void edges_out(const Graph *g, const Node *n, char *buf, size_t cap)
{
    size_t u = 0;
    buf[0] = 0;
    for (int o = 0; o < n->nout; o++) {
        const GTensor *ten = &g->tensors[n->out[o]];
        for (int c = 0; c < ten->nconsumers && u + 8 < cap; c++) {
            int k = ten->consumers[c];
            if (k < 0 || k >= g->nnodes || g->nodes[k].dead) continue;
            int w = snprintf(buf + u, cap - u, "%s%s", u ? "," : "", g->nodes[k].name);
            if (w > 0) u += (size_t)w;
        }
        if (ten->is_output && u + 8 < cap) u += (size_t)snprintf(buf + u, cap - u, "%sOUT", u ? "," : "");
    }
}

void tui_view_graph(Tui *t, TuiLines *out)
{
    if (!t->s.pipe.nsnaps) return;
    const Graph *g = t->s.pipe.snaps[t->s.cursor].g;
    char in[256], outs[256];
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = &g->nodes[i];
        if (n->dead) continue;
        edges_in(g, n, in, sizeof in);
        edges_out(g, n, outs, sizeof outs);
        const char *fid = n->fusion >= 0 && n->fusion < g->nfusions ? g->fusions[n->fusion].id : "";
        int a = n->place == PLACE_CPU ? TA_COLOR(TC_YELLOW) : 0;
        tui_lines_add(out, a, i, "%-4s %-3s %-18s %-12s <- %s -> %s", fid[0] ? fid : "",
                      n->place == PLACE_CPU ? "cpu" : "npu", n->name, op_short_name(n->op), in, outs);
    }
}
