/* lower: the final graph of the pipeline into a Plan. One kernel per enabled fusion instance
 * (at its anchor) and per remaining NPU node that moves or computes data (aliases take none),
 * one CPU kernel per CPU node; partitions are runs of kernels on one target, with the tensors
 * that cross them (transfers); levels group kernels that need no barrier between them. */
#ifndef NPU_LOWER_H
#define NPU_LOWER_H

#include "compiler/pass.h"
#include "compiler/plan.h"

Status plan_build(const Graph *g, const CompileOptions *o, Plan **out, DiagList *d);
/* Only the kernels anchored at graph node `node` (its instance: a K split's reduce included,
 * in lowering order, which is their execution order), over every tensor of g: what the tuner
 * times alone (runtime/isolate.h). No partitions, levels, recipes or embedded IR. An error
 * naming the node when it runs no NPU kernel. */
Status plan_build_node(const Graph *g, const CompileOptions *o, int node, Plan **out, DiagList *d);

#endif
