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
} VizOptions;

/* DOT text of a graph (malloc'd, caller frees). */
Status viz_dot(const Graph *g, const VizOptions *o, char **out, DiagList *d);
/* Writes .dot, .svg or .png by the path's extension, atomically. */
Status viz_write(const Graph *g, const VizOptions *o, const char *file, DiagList *d);

#endif
