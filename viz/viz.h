/* Graph drawing: a graph snapshot to DOT text (nodes shaped and coloured by op class, by
 * partition or by a profile's heat map with its legend, fusion instances as clusters, edges
 * labelled with shapes), and rendering through libgvc to .dot, .svg or .png. Only viz/ includes
 * Graphviz headers. */
#ifndef NPU_VIZ_H
#define NPU_VIZ_H

#include <stdbool.h>
#include "common/diag.h"
#include "compiler/graph.h"

/* Node colours: op class, placement, or a heat map of a profile (VizHeat): the GPU time or the
 * error of the kernel computing each node. */
typedef enum VizColor {
    VIZ_COLOR_KIND,
    VIZ_COLOR_PARTITION,
    VIZ_COLOR_TIME,
    VIZ_COLOR_ERROR
} VizColor;

/* What a profile measured of one kernel, overlaid on the IR nodes it computes. */
typedef struct VizKernelData {
    int kernel;               /* its index in the plan measured */
    const char *const *nodes; /* the IR node names it computes (borrowed) */
    int nnodes;
    double gpu_us;    /* median; < 0: not timed */
    double rel_l2;    /* < 0: no number (not judged, or an argmax: `bad` says) */
    bool judged, bad; /* compared with the reference; beyond its tolerance */
} VizKernelData;

#define VIZ_HEAT_BINS 5
/* A heat map over a graph's nodes: each node's value (time: the sum over the kernels computing
 * it; error: the worst of them) and its bin of the colour scale (one table in heat.c gives each
 * bin its SVG colour, its terminal colour and its legend). */
typedef struct VizHeat {
    VizColor by;                   /* VIZ_COLOR_TIME or VIZ_COLOR_ERROR */
    int nnodes;                    /* of the graph it was made for */
    signed char *bin;              /* [nnodes]: 0..VIZ_HEAT_BINS-1, -1: no kernel or not judged */
    int *kernel;                   /* [nnodes]: the first kernel computing it, -1 */
    double *value;                 /* [nnodes] */
    double max;                    /* time: the largest node value (the scale's top) */
    char title[96];                /* the legend's heading */
    char label[VIZ_HEAT_BINS][48]; /* the legend's line per bin */
    char share[VIZ_HEAT_BINS][24]; /* time: each bin as a share of the largest ("5-15%"); error:
                                    * the label again (the same every run: golden screens) */
} VizHeat;

/* Builds the heat map of g by `by` from per-kernel data, joining kernels to nodes by name (a
 * node no kernel computes has bin -1). */
Status viz_heat(const Graph *g, VizColor by, const VizKernelData *k, int nk, VizHeat *out,
                DiagList *d);
void viz_heat_free(VizHeat *h);
/* A bin's fill colour ("#rrggbb"; bin -1: the no-data grey) and its terminal colour (the ANSI
 * number 1 red .. 6 cyan; 0 for bin -1: drawn dim). */
const char *viz_heat_fill(const VizHeat *h, int bin);
int viz_heat_ansi(const VizHeat *h, int bin);
/* The legend's line for no data. */
const char *viz_heat_none(const VizHeat *h);

typedef struct VizOptions {
    VizColor color;
    const VizHeat *heat;   /* VIZ_COLOR_TIME/ERROR: the heat map to draw, with its legend */
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
    double
        *pts; /* [2*npts] x,y: the spline's control points (1 + 3k of them), then the arrow tip */
} VizEdge;

typedef struct VizCluster {
    double x0, y0, x1, y1; /* top-left, bottom-right */
    int fusion;            /* index into g->fusions */
    int also;              /* the prologue fold of that instance (framed with it), -1 */
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

/* A fusion frame's title: "F8 silu_mul", with the prologue fold framed with it ("F8 silu_mul +
 * F22 silu_mul_linear": the fold computes the base's members inside the GEMVs that read them),
 * "(off)" after a switched-off instance. */
const char *viz_cluster_title(const Graph *g, int f, char *buf, size_t n);
/* DOT text of a graph (malloc'd, caller frees). */
Status viz_dot(const Graph *g, const VizOptions *o, char **out, DiagList *d);
/* Writes .dot, .svg or .png by the path's extension, atomically. */
Status viz_write(const Graph *g, const VizOptions *o, const char *file, DiagList *d);

/* Lays out the graph with dot (compact labels, fusion instances as clusters). */
Status viz_layout(const Graph *g, VizLayout *out, DiagList *d);
void viz_layout_free(VizLayout *l);

#endif
