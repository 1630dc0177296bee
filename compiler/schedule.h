/* schedule: the levels, the order and the barriers of a plan's kernels. A kernel's level is one
 * more than the highest level of the earlier kernels it must wait for: those that wrote bytes it
 * reads, or read or wrote bytes it writes (common/hazard.h, the rule of the Vulkan recorder),
 * bytes counted where the plan puts them (the arena with its reuse, a tensor's own buffer, a
 * view's offset in its base). Kernels of one level touch no byte in a conflicting way, so they
 * need no barrier between them; ordering each NPU partition by level (stably) therefore keeps
 * every conflicting pair in its order (the memory plan stays valid) and lets the recorder place
 * exactly one barrier between consecutive levels. Called by lower.c, describe and the tests. */
#ifndef NPU_SCHEDULE_H
#define NPU_SCHEDULE_H

#include "common/hazard.h"
#include "compiler/graph.h"
#include "compiler/plan.h"

/* The kernel order in graph terms, decided before plan-memory so that lifetimes are counted in
 * it: every node that runs a kernel gets a level by storage (one more than the levels of the
 * kernels that last wrote what it reads, and of those that last read or wrote what it writes, a
 * view counting as its base), then the kernels of each run of NPU nodes are ordered by level
 * (stable) and CPU nodes keep their places. Node.slot is the step of that order: equal for the
 * kernels of one level of one run, increasing along the order (fused members take their
 * anchor's). plan-memory lets two tensors share bytes only when the second is written at a
 * later slot than the last read of the first, so reuse never joins two kernels of one level. */
Status graph_schedule(Graph *g);

/* Where plan tensor t lives in the model: buffer key 0 is the arena, k + 1 the own buffer of
 * base tensor k; bytes [lo, hi). */
HzSpan plan_span(const Plan *p, int t);
/* Orders the kernels: with slot (slot[k] of kernel k, from its node), the kernels of each
 * partition by slot; then computes every kernel's level by the bytes it touches in that order,
 * and p->nlevels; then orders the kernels of each NPU partition by level. Both sorts are stable
 * and renumber the fusions' kernel indices. slot may be NULL (a plan kept as it is ordered). */
Status plan_schedule(Plan *p, const int *slot);
/* Barriers the recorder puts between kernels [first, first + n) recorded in plan order (none
 * before the first), or -1 when out of memory. */
int plan_barriers(const Plan *p, int first, int n);
/* The sum of plan_barriers over the NPU partitions (each is recorded on its own). */
int plan_barriers_total(const Plan *p);

#endif
