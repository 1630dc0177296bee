/* Kernels of a plan run alone: one lowered instance (its kernels, a K split's reduce included)
 * as a plan of its own on a Vulkan device, so the tuner and profile time it apart from the
 * model and compare what it writes. The instance's plan binds the tensors its kernels bind:
 * every one it reads before writing is an input set from host values (the caller's, by
 * name), every one it writes and the model sees is an output to read back; weights and
 * constants become inputs too, and each base tensor gets its own range of the arena (aligned
 * as the source plan's, so lowering's alignment proofs hold). Private scratch buffers stay the
 * backend's own (zeroed where the plan says so). */
#ifndef NPU_ISOLATE_H
#define NPU_ISOLATE_H

#include "compiler/plan.h"
#include "runtime/backend.h"

typedef struct Isolated {
    Plan *q;       /* the kernels' own plan (borrows the source plan's strings) */
    int *from;     /* [q->ntensors]: the source plan's tensor id */
    bool *in;      /* [q->ntensors]: read before any of the kernels writes it */
    bool *out;     /* [q->ntensors]: written, and not a private scratch */
    int nin, nout; /* how many of each */
    Backend *be;   /* on the device of the backend passed to iso_open */
} Isolated;

/* Builds the plan of kernels[0..n) of p (indices in execution order) and prepares it on a new
 * Vulkan backend sharing `with`'s device. p must outlive iso. A kernel the device cannot run is
 * an error naming it (ST_BAD_INPUT). */
Status iso_open(Isolated *iso, const Plan *p, const int *kernels, int n, Backend *with,
                DiagList *d);
/* Sets every input: value(ctx, name, &v, d) gives the host value of the source tensor called
 * name (borrowed; the logical shape and reference dtype a backend reads back). */
typedef Status (*IsoValueFn)(void *ctx, const char *name, const HTensor **v, DiagList *d);
Status iso_set_inputs(Isolated *iso, IsoValueFn value, void *ctx, DiagList *d);
/* Runs the kernels once to warm up, then `iters` times; *us: the median GPU microseconds of a
 * run by the device clock (wall time where the device has none). */
Status iso_time(Isolated *iso, int iters, double *us, DiagList *d);
/* The value of the instance's tensor t (an index of iso->q) after the last run. */
Status iso_read(Isolated *iso, int t, HTensor *out, DiagList *d);
void iso_close(Isolated *iso);

#endif
