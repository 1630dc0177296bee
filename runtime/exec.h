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
                       * a KV-cache write, meets its own last write, the same values again);
                       * model state is uploaded all the same: each run starts from its first
                       * value unless exec_carry_state carries it */
} Exec;

/* Maps plan tensors to the values bound on graph g by name (the compiled graph, or the IR a
 * .npubin carries, extended with its recipe outputs) and CPU kernels to g's nodes, prepares the
 * backend with the weights. `b` must outlive the Exec. */
Status exec_open(Exec *x, const Plan *p, const Graph *g, const Binding *b, Backend *be,
                 DiagList *d);
/* Uploads the graph inputs and runs every partition in order. timed: per-kernel timestamps. */
Status exec_run(Exec *x, bool timed, DiagList *d);
/* Pipelined steps (backend.h pipe_*): can this plan and backend run them (one NPU partition,
 * no transfers)? exec_submit uploads the bound inputs (vals; an input fed by the device has
 * none bound) into input slot `slot` and queues the step without waiting; exec_wait(slot) waits
 * for it (then exec_read and gpu_us are that step's; wall_us is the wait). Model state is the
 * caller's: a pipelined step reads what the step before left in place. */
bool exec_can_pipeline(const Exec *x);
/* Once, after prepare (and share), before the first exec_submit: each step copies tensor src
 * into the other slot's input dst (backend.h pipe_feed), and both slots' steps are recorded. */
Status exec_pipe_feed(Exec *x, int dst, int src, DiagList *d);
Status exec_submit(Exec *x, int slot, DiagList *d);
Status exec_wait(Exec *x, int slot, DiagList *d);
/* Reads plan tensor t after a run (from the host when a CPU kernel made it). */
Status exec_read(Exec *x, int t, HTensor *out, DiagList *d);
/* Sets input t of dst's backend, for its next run, to tensor src_t as src's last run left it
 * (read back, set again: through the host). dst and src may be the same executor. */
Status exec_move(Exec *dst, int t, Exec *src, int src_t, DiagList *d);
/* Makes the next run start from the model state the last run left (Plan.state_in/state_out):
 * a state the plan updates in place already is in its input's storage, any other is moved
 * there (exec_move); the state inputs are no longer uploaded from their bound first values
 * (vals cleared). Without it every run starts from the first values. Call after each run. */
Status exec_carry_state(Exec *x, DiagList *d);
/* Does the plan update state i in place (its output in its input's storage: carried with no
 * copy)? */
bool exec_state_in_place(const Exec *x, int i);
void exec_close(Exec *x);

#endif
