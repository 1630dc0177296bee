/* viz_dot and viz_write: DOT text of a graph snapshot, rendered through libgvc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gvc.h>

#include "common/fileio.h"
#include "common/strbuf.h"
#include "compiler/fusion.h"
#include "viz/internal.h"
#include "viz/viz.h"

static GVC_t *the_gvc;

static void free_gvc(void)
{
    if (the_gvc) gvFreeContext(the_gvc);
    the_gvc = NULL;
}

GVC_t *viz_gvc(void)
{
    if (!the_gvc) {
        the_gvc = gvContext();
        if (the_gvc) atexit(free_gvc);
    }
    return the_gvc;
}

/* DOT-quoted string. */
static void quoted(StrBuf *b, const char *s)
{
    sb_printf(b, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            sb_printf(b, "\\%c", *s);
        else if (*s == '\n')
            sb_printf(b, "\\n");
        else
            sb_printf(b, "%c", *s);
    }
    sb_printf(b, "\"");
}

static const char *kind_color(OpId op)
{
    switch (op) {
    case OP_CONV2D:
    case OP_LINEAR:
    case OP_ADDMM:
    case OP_MATMUL:
    case OP_BMM:
    case OP_MM:
        return "#f4a582";
    case OP_SOFTMAX:
    case OP_LOG_SOFTMAX:
    case OP_MEAN:
    case OP_SUM:
    case OP_AMAX:
    case OP_ARGMAX:
    case OP_LAYER_NORM:
    case OP_BATCH_NORM:
    case OP_MAX_POOL2D:
    case OP_AVG_POOL2D:
    case OP_ADAPTIVE_AVG_POOL2D:
    case OP_CUMSUM:
        return "#92c5de";
    case OP_DEPAD:
    case OP_PACK:
        return "#ffff99";
    default:
        break;
    }
    if (op_has(op, OPF_VIEW)) return "#e0e0e0";
    if (op_has(op, OPF_SOURCE)) return "#c2a5cf";
    return "#a6dba0"; /* elementwise */
}

/* Text for an HTML-like label: &, < and > escaped. */
static void html(StrBuf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '&')
            sb_printf(b, "&amp;");
        else if (*s == '<')
            sb_printf(b, "&lt;");
        else if (*s == '>')
            sb_printf(b, "&gt;");
        else
            sb_printf(b, "%c", *s);
    }
}

/* The heat map's legend as the graph's label (top left): a swatch and its range per bin. */
static void heat_legend(StrBuf *b, const VizHeat *h)
{
    sb_printf(b, "  labelloc=t; labeljust=l; fontname=\"Helvetica\"; fontsize=10; label=<<table "
                 "border=\"0\" "
                 "cellborder=\"1\" cellspacing=\"0\" cellpadding=\"3\"><tr><td colspan=\"2\">");
    html(b, h->title);
    sb_printf(b, "</td></tr>");
    for (int i = 0; i <= VIZ_HEAT_BINS; i++) {
        int bin = i < VIZ_HEAT_BINS ? i : -1;
        sb_printf(b, "<tr><td bgcolor=\"%s\" width=\"24\"> </td><td align=\"left\">",
                  viz_heat_fill(h, bin));
        html(b, bin < 0 ? viz_heat_none(h) : h->label[bin]);
        sb_printf(b, "</td></tr>");
    }
    sb_printf(b, "</table>>;\n");
}

/* A node's fill: its heat bin's colour, its placement's, or its op class's. */
static const char *node_fill(const VizOptions *o, const Node *n, int i)
{
    if (o->heat && i < o->heat->nnodes) return viz_heat_fill(o->heat, o->heat->bin[i]);
    if (o->color == VIZ_COLOR_PARTITION) return n->place == PLACE_CPU ? "#fbb4ae" : "#b3cde3";
    return kind_color(n->op);
}

/* Appends " + ID PATTERN[ (off)]" of instance f to buf (u bytes used of n); the new length. */
static int name_more(const Graph *g, int f, const char *sep, char *buf, int u, size_t n)
{
    if (u < 0 || (size_t)u >= n) return u;
    const Fusion *o = &g->fusions[f];
    int w = snprintf(buf + u, n - (size_t)u, "%s%s %s%s", sep, o->id, o->pattern,
                     o->enabled ? "" : " (off)");
    return w < 0 ? u : u + w;
}

const char *viz_cluster_title(const Graph *g, int f, char *buf, size_t n)
{
    const Fusion *fu = &g->fusions[f];
    int fo = fuse_fold_of(g, f);
    int u = snprintf(buf, n, "%s %s%s", fu->id, fu->pattern, fu->enabled ? "" : " (off)");
    if (fo >= 0) u = name_more(g, fo, " + ", buf, u, n);
    /* a merge that applies frames the instances it runs; one that does not is named in its
     * attention's frame */
    for (int k = 0; fu->enabled && k < fu->nmerges; k++)
        u = name_more(g, fu->merges[k], k ? ", " : ": ", buf, u, n);
    for (int m = 0; m < g->nfusions; m++)
        if (g->fusions[m].nmerges && g->fusions[m].merges[0] == f && !fu->merged)
            u = name_more(g, m, " + ", buf, u, n);
    return buf;
}

Status viz_dot(const Graph *g, const VizOptions *o, char **out, DiagList *d)
{
    StrBuf b = {0};
    VizOptions def = {.color = VIZ_COLOR_KIND};
    if (!o) o = &def;
    char sh[160];
    sb_printf(&b, "digraph ");
    quoted(&b, g->model_name ? g->model_name : "model");
    int live = 0;
    for (int i = 0; i < g->nnodes; i++)
        live += !g->nodes[i].dead;
    bool big = live > 300;
    sb_printf(&b, " {\n");
    if (big) /* keep Graphviz's crossing minimisation and spline routing bounded */
        sb_printf(&b, "  nslimit=1; nslimit1=1; mclimit=0.1; searchsize=5; remincross=false; "
                      "splines=line;\n");
    if (o->compact)
        sb_printf(&b,
                  "  nodesep=0.2; ranksep=0.3; node [fontname=\"Courier\", width=0.3, height=0.5, "
                  "margin=\"0.08,0.02\"];\n");
    if (o->heat) heat_legend(&b, o->heat);
    sb_printf(&b,
              "  rankdir=TB; node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", "
              "fontsize=10]; edge [fontsize=8, color=\"#555555\"];\n");
    for (int i = 0; i < g->ninputs; i++) {
        const GTensor *t = &g->tensors[g->inputs[i]];
        sb_printf(&b, "  t%d [shape=ellipse, fillcolor=\"#ffffff\", label=", g->inputs[i]);
        char lbl[512];
        if (o->compact)
            snprintf(lbl, sizeof lbl, "%s", t->name);
        else
            snprintf(lbl, sizeof lbl, "%s\n%s", t->name, tensor_describe(t, sh, sizeof sh));
        quoted(&b, lbl);
        sb_printf(&b, "];\n");
    }
    /* clusters: one per fusion instance; a prologue fold's members are its base's, so the fold
     * has no cluster of its own (a node in two clusters breaks dot's layout): the base's names it.
     * A merge that applies frames the members of the instances it runs (they have none of their
     * own then); one that does not has none, its attention's frame names it. */
    for (int f = 0; f < g->nfusions; f++) {
        const Fusion *fu = &g->fusions[f];
        if (fu->folds || fu->merged || (fu->nmerges && !fu->enabled)) continue;
        char title[160];
        viz_cluster_title(g, f, title, sizeof title);
        if (o->collapse_fusions && fu->enabled) {
            const char *fill = "#fdb863";
            int hot = -1; /* a heat map: the hottest member's colour */
            for (int k = 0; o->heat && k < fu->nnodes; k++)
                if (fu->nodes[k] < o->heat->nnodes && o->heat->bin[fu->nodes[k]] > hot)
                    hot = o->heat->bin[fu->nodes[k]];
            if (o->heat) fill = viz_heat_fill(o->heat, hot);
            sb_printf(&b, "  f%d [shape=box3d, fillcolor=\"%s\", label=", f, fill);
            char lbl[256];
            snprintf(lbl, sizeof lbl, "%s\n(%d nodes)\n%s", title, fu->nnodes,
                     tensor_describe(&g->tensors[fu->out], sh, sizeof sh));
            quoted(&b, lbl);
            sb_printf(&b, "];\n");
            continue;
        }
        sb_printf(&b, "  subgraph cluster_f%d {\n    label=", f);
        quoted(&b, title);
        sb_printf(&b, "; style=%s; color=\"#b35806\";\n", fu->enabled ? "rounded" : "dashed");
        for (int k = 0; k < fu->nnodes; k++)
            sb_printf(&b, "    n%d;\n", fu->nodes[k]);
        sb_printf(&b, "  }\n");
    }
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = &g->nodes[i];
        if (n->dead) continue;
        if (o->collapse_fusions && n->fusion >= 0 && g->fusions[n->fusion].enabled) continue;
        const char *fill = node_fill(o, n, i);
        int nw = 0;
        for (int k = 0; k < n->nin; k++)
            nw += g->tensors[n->in[k]].kind == TK_WEIGHT;
        char lbl[512], wl[32] = "";
        if (nw) snprintf(wl, sizeof wl, "\n+%d weight%s", nw, nw > 1 ? "s" : "");
        if (o->compact)
            snprintf(lbl, sizeof lbl, "%s", op_short_name(n->op));
        else
            snprintf(lbl, sizeof lbl, "%s\n%s\n%s%s", n->name, op_short_name(n->op),
                     n->nout ? tensor_describe(node_output(g, n, 0), sh, sizeof sh) : "", wl);
        sb_printf(&b, "  n%d [fillcolor=\"%s\"%s, label=", i, fill,
                  n->place == PLACE_CPU && g->nparts ? ", peripheries=2" : "");
        quoted(&b, lbl);
        sb_printf(&b, "];\n");
    }
    /* edges from producers (or graph inputs) to consumers; edges inside a collapsed fusion
     * vanish, edges into or out of it attach to its box */
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = &g->nodes[i];
        if (n->dead) continue;
        bool nc = o->collapse_fusions && n->fusion >= 0 && g->fusions[n->fusion].enabled;
        for (int k = 0; k < n->nin; k++) {
            const GTensor *t = &g->tensors[n->in[k]];
            if (t->kind == TK_WEIGHT || t->kind == TK_CONST) continue;
            char from[32], to[32];
            if (t->kind == TK_INPUT) {
                snprintf(from, sizeof from, "t%d", n->in[k]);
            } else {
                int p = t->producer;
                if (p < 0) continue;
                const Node *pn = &g->nodes[p];
                bool pc = o->collapse_fusions && pn->fusion >= 0 && g->fusions[pn->fusion].enabled;
                if (pc && nc && pn->fusion == n->fusion) continue;
                if (pc)
                    snprintf(from, sizeof from, "f%d", pn->fusion);
                else
                    snprintf(from, sizeof from, "n%d", p);
            }
            if (nc)
                snprintf(to, sizeof to, "f%d", n->fusion);
            else
                snprintf(to, sizeof to, "n%d", i);
            if (big || o->compact) {
                sb_printf(&b, "  %s -> %s;\n", from, to);
                continue;
            }
            sb_printf(&b, "  %s -> %s [label=", from, to);
            quoted(&b, shape_str(t->shape, t->rank, sh, sizeof sh));
            sb_printf(&b, "];\n");
        }
    }
    sb_printf(&b, "}\n");
    *out = sb_take(&b);
    if (!*out)
        return diag_add(d, DIAG_ERROR, ST_NOMEM, g->path, NULL, NULL, "out of memory drawing");
    return ST_OK;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), c = strlen(suf);
    return a >= c && strcmp(s + a - c, suf) == 0;
}

Status viz_write(const Graph *g, const VizOptions *o, const char *file, DiagList *d)
{
    const char *fmt = ends_with(file, ".svg")   ? "svg"
                      : ends_with(file, ".png") ? "png"
                      : ends_with(file, ".dot") ? "dot"
                                                : NULL;
    if (!fmt) return diag_error(d, file, NULL, NULL, "output must end in .dot, .svg or .png");
    char *text;
    Status st = viz_dot(g, o, &text, d);
    if (st != ST_OK) return st;
    if (strcmp(fmt, "dot") == 0) {
        st = file_write_atomic(file, text, strlen(text), d);
        free(text);
        return st;
    }
    GVC_t *gvc = viz_gvc();
    Agraph_t *ag = gvc ? agmemread(text) : NULL;
    free(text);
    if (!ag) {
        return diag_add(d, DIAG_ERROR, ST_INTERNAL, file, NULL, NULL,
                        "Graphviz could not read the graph");
    }
    char *data = NULL;
    unsigned int len = 0;
    if (gvLayout(gvc, ag, "dot") != 0 || gvRenderData(gvc, ag, fmt, &data, &len) != 0) {
        st =
            diag_add(d, DIAG_ERROR, ST_INTERNAL, file, NULL, NULL, "Graphviz layout/render failed");
    } else {
        st = file_write_atomic(file, data, len, d);
    }
    if (data) gvFreeRenderData(data);
    gvFreeLayout(gvc, ag);
    agclose(ag);
    return st;
}
