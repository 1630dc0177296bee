/* The profiler's measurements: per kernel, GPU time from timestamp queries (median and spread
 * over N timed runs after warm-ups), the CPU reference's time for the same IR nodes, and the
 * error of the kernel's output against the reference tensor of the same name; totals per run.
 * Timed runs put a barrier and a timestamp after every kernel; the untimed recording gives the
 * end-to-end wall time. Both compute the same values (profiling never changes results). In a
 * mixed plan, CPU-partition kernels are timed on the host, and so is every transfer between
 * partitions (its own rows: device read or upload with the cast and depad it does).
 * Printing is the caller's (app/cmd_profile.c). */
#ifndef NPU_PROFILE_H
#define NPU_PROFILE_H

#include "runtime/compare.h"
#include "runtime/cpu/cpu_ref.h"
#include "runtime/exec.h"

typedef struct ProfKernel {
    double gpu_med, gpu_min, gpu_max; /* microseconds; -1 when not timed on the device */
    double cpu_us;                    /* CPU reference time of the kernel's IR nodes */
    bool has_err;                     /* a reference tensor exists for its output */
    CmpStats err;
    bool ok; /* within tolerance (true when there is nothing to compare) */
} ProfKernel;

/* One transfer between partitions (compiler/plan.h PlanTransfer), host wall time. */
typedef struct ProfXfer {
    int part, j;          /* plan_transfer(p, part, j) */
    double med, min, max; /* microseconds over the timed runs */
} ProfXfer;

typedef struct Profile {
    int nkernels;
    ProfKernel *k; /* [nkernels] */
    int nxfers;
    ProfXfer *x; /* [nxfers], in partition order */
    int iters, dispatches;
    double wall_med_us, wall_min_us; /* untimed end-to-end runs (inputs uploaded, one submit) */
    double gpu_sum_us;               /* sum of NPU kernel medians */
    double gpu_step_us;              /* untimed runs by the device clock, median (-1: none): the
                                      * step without the timed recording's barrier per kernel,
                                      * back to back with the inputs left in place */
    double upload_us, submit_us;     /* untimed runs, medians: inputs upload; submit + wait */
    double cpu_part_us;              /* sum of CPU-partition kernel medians (mixed execution) */
    double xfer_sum_us;              /* sum of transfer medians */
    double cpu_ref_us;               /* the CPU reference, whole graph */
    int64_t device_bytes;            /* arena + weights + inputs on the device */
    int worst_kernel;                /* largest rel_l2, -1 */
    const atomic_bool *cancel;       /* polled between runs: ST_CANCELLED (NULL: never) */
    /* told as the measurement goes (NULL: nobody): before each run, the stage ("warm-up",
     * "timed runs", "untimed runs") and run k of n, k[] then holding the times of the timed
     * runs before k (so far); then "errors" k of n as each kernel is judged (the kernels
     * before k hold their error and CPU time). Called on the measuring thread (maybe a
     * worker's), which is the only one touching pr meanwhile: it must not block */
    void (*on_run)(void *ctx, const char *stage, int k, int n);
    void *on_run_ctx;
} Profile;

Status prof_init(Profile *pr, const Plan *p);
void prof_free(Profile *pr);
/* Runs x (prepared) 3 times untimed to warm up, then `iters` timed and `iters` untimed runs. */
Status prof_time(Exec *x, int iters, Profile *pr, DiagList *d);
/* Warm-up before timing: at least 3 runs and at least 0.5 s of them (at most 200 runs); the
 * first uploads the inputs, the others keep them in place (Exec.keep_inputs, reset after). A
 * GPU straight after a large upload or an idle spell runs 2-3x slower for a while (bench/NOTES.md
 * "A slow state of the GPU"). */
Status prof_warm_up(Exec *x, DiagList *d);
/* CPU times and errors. `xe` runs the same kernels as the timed plan (compiled with no_reuse,
 * so every output survives the run); `ref` is the CPU reference of that compiled graph with
 * every tensor kept. An argmax kernel's indices are judged tie-aware by that reference's values
 * of its input (compare.h cmp_output). */
Status prof_errors(Exec *xe, const RefRun *ref, const Tolerance *tol, Profile *pr, DiagList *d);
/* The same, with the results of xe's kernel k stored at pr's kernel to_timed[k]: the no_reuse
 * plan holds the timed plan's kernels, but its levels (which follow memory hazards, and it reuses
 * no memory) may order them otherwise. NULL: the same order. */
Status prof_errors_mapped(Exec *xe, const RefRun *ref, const Tolerance *tol, const int *to_timed,
                          Profile *pr, DiagList *d);

#endif
