/* Executing a plan: NPU partitions on a backend, CPU partitions on the CPU reference, with the
 * tensors that cross a boundary moved through the host (read from the backend, computed, set
 * back). Weights are uploaded once, at exec_open; graph inputs at each exec_run. One submit per
 * NPU partition per run. The plan's transfers (PlanPart.in) run at the start of the partition
 * that needs them, each timed. Used by `run`, the session, the profiler and the tests. */
#ifndef NPU_EXEC_H
#define NPU_EXEC_H

#include "compiler/graph.h"
#include "compiler/plan.h"
#include "runtime/backend.h"
#include "runtime/bind.h"

typedef struct Exec {
    const Plan *p;
    const Graph *g;       /* the compiled graph the plan came from (CPU kernels run its nodes) */
    Backend *be;          /* not owned */
    const HTensor **vals; /* [ntensors] bound values (weights, constants, inputs), borrowed */
    HTensor *host;        /* [ntensors] values computed on the CPU this run (owned) */
    int *gt;              /* [ntensors] plan tensor -> graph tensor id */
    int *node;            /* [nkernels] a CPU kernel's node in g (by name: g may be the IR a
                           * .npubin carries rather than the compiled graph), else -1 */
    double *cpu_us;       /* [nkernels] wall time of CPU kernels in the last run */
    double *xfer_us;      /* [plan_ntransfers] wall time of each transfer in the last run, in
                           * partition order (a device read or an upload with its cast) */
    double wall_us;       /* last run, end to end */
    double gpu_us;    /* last run, the NPU partitions' GPU time by the device clock (-1: none) */
    double upload_us; /* last run, wall time spent uploading graph inputs */
    double submit_us; /* last run, wall time inside the backend's run calls (submit + wait) */
    bool keep_inputs; /* exec_run leaves the graph inputs as an earlier run uploaded them (the
                       * profiler's back-to-back runs: a kernel that writes an input in place,
                       * a KV-cache write, meets its own last write, the same values again) */
} Exec;

/* Maps plan tensors to the values bound on graph g by name (the compiled graph, or the IR a
 * .npubin carries, extended with its recipe outputs) and CPU kernels to g's nodes, prepares the
 * backend with the weights. `b` must outlive the Exec. */
Status exec_open(Exec *x, const Plan *p, const Graph *g, const Binding *b, Backend *be,
                 DiagList *d);
/* Uploads the graph inputs and runs every partition in order. timed: per-kernel timestamps. */
Status exec_run(Exec *x, bool timed, DiagList *d);
/* Reads plan tensor t after a run (from the host when a CPU kernel made it). */
Status exec_read(Exec *x, int t, HTensor *out, DiagList *d);
void exec_close(Exec *x);

#endif
