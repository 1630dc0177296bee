/* Graph drawing: a graph snapshot to DOT text (nodes shaped and coloured by op class or by
 * partition, fusion instances as clusters, edges labelled with shapes), and rendering through
 * libgvc to .dot, .svg or .png. Only viz/ includes Graphviz headers. */
#ifndef NPU_VIZ_H
#define NPU_VIZ_H

#include <stdbool.h>
#include "../common/diag.h"
#include "../compiler/graph.h"

typedef enum VizColor { VIZ_COLOR_KIND, VIZ_COLOR_PARTITION } VizColor;

typedef struct VizOptions {
    VizColor color;
    bool collapse_fusions; /* each enabled fusion instance drawn as one box */
    bool compact;          /* terminal drawing: op names as labels, no edge labels */
} VizOptions;

/* A graph laid out by Graphviz (dot), in points with y growing downwards from the top-left of
 * the drawing: what the TUI draws in the terminal without knowing Graphviz. */
typedef struct VizBox {
    double x, y, w, h; /* centre and size */
    char *label;       /* op name, or the input tensor's name */
    int node;          /* graph node index; -1 for a graph input */
    int tensor;        /* the input's tensor id, -1 for a node */
    int fusion;        /* the node's fusion instance (index into g->fusions), -1 */
} VizBox;

typedef struct VizEdge {
    int from, to; /* box indices */
    int npts;
    double *pts;  /* [2*npts] x,y: the spline's control points (1 + 3k of them), then the arrow tip */
} VizEdge;

typedef struct VizCluster {
    double x0, y0, x1, y1; /* top-left, bottom-right */
    int fusion;            /* index into g->fusions */
} VizCluster;

typedef struct VizLayout {
    double w, h; /* size of the drawing */
    VizBox *box;
    int nbox;
    VizEdge *edge;
    int nedge;
    VizCluster *cl;
    int ncl;
} VizLayout;

/* DOT text of a graph (malloc'd, caller frees). */
Status viz_dot(const Graph *g, const VizOptions *o, char **out, DiagList *d);
/* Writes .dot, .svg or .png by the path's extension, atomically. */
Status viz_write(const Graph *g, const VizOptions *o, const char *file, DiagList *d);

/* Lays out the graph with dot (compact labels, fusion instances as clusters). */
Status viz_layout(const Graph *g, VizLayout *out, DiagList *d);
void viz_layout_free(VizLayout *l);

#endif
