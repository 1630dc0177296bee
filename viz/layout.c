/* viz_layout: a graph snapshot laid out by Graphviz's dot engine and copied out of libgvc into a
 * plain VizLayout (node boxes, edge splines, fusion clusters, in points, y downwards), so the
 * TUI can draw it in the terminal without including Graphviz. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gvc.h>

#include "compiler/fusion.h"
#include "viz/internal.h"
#include "viz/viz.h"

static char *dup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

void viz_layout_free(VizLayout *l)
{
    for (int i = 0; i < l->nbox; i++)
        free(l->box[i].label);
    for (int i = 0; i < l->nedge; i++)
        free(l->edge[i].pts);
    free(l->box);
    free(l->edge);
    free(l->cl);
    memset(l, 0, sizeof *l);
}

/* The box index of a Graphviz node named n<i> (graph node) or t<i> (input tensor). */
static int box_of(const VizLayout *l, Agnode_t *n)
{
    const char *nm = agnameof(n);
    int id;
    if (!nm || sscanf(nm + 1, "%d", &id) != 1) return -1;
    for (int i = 0; i < l->nbox; i++)
        if ((nm[0] == 'n' && l->box[i].node == id) || (nm[0] == 't' && l->box[i].tensor == id))
            return i;
    return -1;
}

static Status copy_out(const Graph *g, Agraph_t *ag, VizLayout *l)
{
    boxf bb = GD_bb(ag);
    double top = bb.UR.y;
    l->w = bb.UR.x - bb.LL.x;
    l->h = bb.UR.y - bb.LL.y;
    int nn = agnnodes(ag), ne = agnedges(ag);
    l->box = calloc((size_t)nn + 1, sizeof *l->box);
    l->edge = calloc((size_t)ne + 1, sizeof *l->edge);
    l->cl = calloc((size_t)GD_n_cluster(ag) + 1, sizeof *l->cl);
    if (!l->box || !l->edge || !l->cl) return ST_NOMEM;
    for (Agnode_t *n = agfstnode(ag); n; n = agnxtnode(ag, n)) {
        const char *nm = agnameof(n);
        int id;
        if (!nm || sscanf(nm + 1, "%d", &id) != 1) continue;
        VizBox *b = &l->box[l->nbox];
        b->x = ND_coord(n).x - bb.LL.x;
        b->y = top - ND_coord(n).y;
        b->w = ND_width(n) * 72.0;
        b->h = ND_height(n) * 72.0;
        b->node = b->tensor = b->fusion = -1;
        if (nm[0] == 'n' && id >= 0 && id < g->nnodes) {
            b->node = id;
            b->fusion = g->nodes[id].fusion;
            b->label = dup(op_short_name(g->nodes[id].op));
        } else if (nm[0] == 't' && id >= 0 && id < g->ntensors) {
            b->tensor = id;
            b->label = dup(g->tensors[id].name);
        } else {
            continue;
        }
        if (!b->label) return ST_NOMEM;
        l->nbox++;
    }
    for (Agnode_t *n = agfstnode(ag); n; n = agnxtnode(ag, n)) {
        for (Agedge_t *e = agfstout(ag, n); e; e = agnxtout(ag, e)) {
            int a = box_of(l, agtail(e)), b = box_of(l, aghead(e));
            splines *sp = ED_spl(e);
            if (a < 0 || b < 0 || !sp || sp->size < 1) continue;
            const bezier *bz = &sp->list[0];
            VizEdge *ed = &l->edge[l->nedge];
            ed->pts = malloc(sizeof(double) * 2 * ((size_t)bz->size + 1));
            if (!ed->pts) return ST_NOMEM;
            for (int i = 0; i < bz->size; i++) {
                ed->pts[2 * i] = bz->list[i].x - bb.LL.x;
                ed->pts[2 * i + 1] = top - bz->list[i].y;
            }
            ed->npts = bz->size;
            if (bz->eflag) { /* the arrow's tip lies beyond the last control point */
                ed->pts[2 * ed->npts] = bz->ep.x - bb.LL.x;
                ed->pts[2 * ed->npts + 1] = top - bz->ep.y;
                ed->npts++;
            }
            ed->from = a;
            ed->to = b;
            l->nedge++;
        }
    }
    for (int i = 1; i <= GD_n_cluster(ag); i++) {
        Agraph_t *sub = GD_clust(ag)[i];
        int f;
        if (!sub || sscanf(agnameof(sub), "cluster_f%d", &f) != 1 || f < 0 || f >= g->nfusions)
            continue;
        boxf cb = GD_bb(sub);
        l->cl[l->ncl++] =
            (VizCluster){cb.LL.x - bb.LL.x, top - cb.UR.y, cb.UR.x - bb.LL.x, top - cb.LL.y, f,
                         fuse_fold_of(g, f)};
    }
    return ST_OK;
}

Status viz_layout(const Graph *g, VizLayout *out, DiagList *d)
{
    memset(out, 0, sizeof *out);
    VizOptions o = {.color = VIZ_COLOR_KIND, .compact = true};
    char *text;
    Status st = viz_dot(g, &o, &text, d);
    if (st != ST_OK) return st;
    GVC_t *gvc = viz_gvc();
    Agraph_t *ag = gvc ? agmemread(text) : NULL;
    free(text);
    if (!ag) {
        return diag_add(d, DIAG_ERROR, ST_INTERNAL, g->path, NULL, NULL,
                        "Graphviz could not read the graph");
    }
    if (gvLayout(gvc, ag, "dot") != 0) {
        st = diag_add(d, DIAG_ERROR, ST_INTERNAL, g->path, NULL, NULL, "Graphviz layout failed");
    } else {
        st = copy_out(g, ag, out);
        if (st != ST_OK)
            diag_add(d, DIAG_ERROR, st, g->path, NULL, NULL, "out of memory laying out");
        gvFreeLayout(gvc, ag);
    }
    if (st != ST_OK) viz_layout_free(out);
    agclose(ag);
    return st;
}
