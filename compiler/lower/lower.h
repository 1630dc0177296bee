/* lower: the final graph of the pipeline into a Plan. One kernel per enabled fusion instance
 * (at its anchor) and per remaining NPU node that moves or computes data (aliases take none),
 * one CPU kernel per CPU node; partitions are runs of kernels on one target, with the tensors
 * that cross them (transfers); levels group kernels that need no barrier between them. */
#ifndef NPU_LOWER_H
#define NPU_LOWER_H

#include "compiler/pass.h"
#include "compiler/plan.h"

Status plan_build(const Graph *g, const CompileOptions *o, Plan **out, DiagList *d);

#endif
