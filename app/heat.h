/* The data of a heat map (viz/viz.h VizHeat): a profile's per-kernel time and error as
 * VizKernelData, from the session's ProfileResult of its plan (the explorer's graph pane) or from
 * a profile saved by `profile --save` (dot --profile), which must be of the same model and plan:
 * its kernels are matched to the plan's by the IR nodes each computes, and a mismatch is refused
 * with what does not match. */
#ifndef NPU_HEAT_H
#define NPU_HEAT_H

#include "compiler/graph.h"
#include "compiler/plan.h"
#include "viz/viz.h"
#include "app/results.h"
#include "app/saved_profile.h"

/* The colour named by --color ("kind", "partition", "time", "error"); -1 for another word. */
int heat_color_parse(const char *name);
/* One VizKernelData per kernel of p from r (its measurement); *out malloc'd, node names borrowed
 * from p. */
Status heat_from_result(const Plan *p, const ProfileResult *r, VizKernelData **out, DiagList *d);
/* One per kernel of the saved profile sp (read from `path`), after checking it measured plan p
 * (of graph g): the same model, every node it names in g, and each kernel computing exactly the
 * nodes of some kernel of p and the other way round (a K-split's two kernels compute the same
 * nodes, so a plan of another device's split still matches). Node names borrowed from sp. */
Status heat_from_saved(const SavedProfile *sp, const char *path, const Plan *p, const Graph *g,
                       VizKernelData **out, DiagList *d);

#endif
