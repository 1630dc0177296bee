/* One lowered instance timed alone with one set of knobs after another: what `tune` searches
 * with and what profile compares a tuned kernel's time with its default's by. The instance
 * (the kernels anchored at one node with one tuning key) is lowered again from the compiled
 * graph (plan_build_node) with the knobs asked for, run alone on the device
 * (runtime/isolate.h) on the values its inputs had in a run of the whole model, and what it
 * writes is compared with what the defaults wrote: a set of knobs that changes results beyond
 * the dtype's tolerance is refused, never timed into a winner. */
#ifndef NPU_APP_TUNE_BENCH_H
#define NPU_APP_TUNE_BENCH_H

#include "compiler/pass.h"
#include "runtime/compare.h"
#include "runtime/exec.h"

enum { BENCH_MAX_KERNELS = 16 };

/* Host tensors by name. */
typedef struct NamedVals {
    int n, cap;
    char **names;
    HTensor *v;
} NamedVals;

typedef struct TuneBench {
    const Graph *g;    /* the compiled graph the instance is lowered from (borrowed) */
    CompileOptions co; /* the options g compiled with; lowering sets tuned itself */
    Exec *x;           /* has run a plan of g that keeps every tensor: the inputs (borrowed) */
    Backend *with;     /* the Vulkan backend whose device runs the instance (borrowed) */
    int node;          /* the instance's anchor in g */
    const char *key;   /* its tuning key (borrowed) */
    int iters;         /* timed runs of each configuration (median) */
    Tolerance tol;     /* what a candidate's outputs must match the defaults' within */
    NamedVals in, ref; /* inputs read back so far; the defaults' outputs */
} TuneBench;

/* The instance lowered with one set of knobs: its plan and kernels, and a signature of what
 * they run (modules, constants, grids, bound shapes): equal signatures run the same work. */
typedef struct BenchPlan {
    Plan *p;
    int ks[BENCH_MAX_KERNELS], nk;
    uint64_t sig;
} BenchPlan;

/* co: the options g compiled with (copied; its tuned cache is not used). */
void bench_init(TuneBench *b, const Graph *g, const CompileOptions *co, Exec *x, Backend *with,
                int node, const char *key, int iters, Tolerance tol);
/* Lowers the instance with knobs `cfg` (NULL or none set: the defaults) over the compile's own
 * --tune knobs, as a tuning-cache entry would give them (a TU_BENCH knob, which no cache holds,
 * is set for the compile: tests of the refusal only). An error when lowering fails. */
Status bench_lower(TuneBench *b, const Tuning *cfg, BenchPlan *bp, DiagList *d);
/* Runs bp alone: *us the median of b->iters runs. The first plan run (the defaults) sets the
 * reference outputs; any later one is compared with them: *ok false and why ("rel_l2 0.3 on
 * 'x'") when an output differs beyond b->tol or is missing. */
Status bench_run(TuneBench *b, const BenchPlan *bp, double *us, bool *ok, char *why, size_t n,
                 DiagList *d);
void bench_plan_free(BenchPlan *bp);
void bench_free(TuneBench *b);
/* Times instance (node, key) of g alone with the defaults and with `knobs` (a tuned kernel's,
 * as profile shows it): *default_us, *tuned_us; *ok false (why) when the tuned one's outputs
 * differ from the defaults'. The bench's other arguments as bench_init's. */
Status bench_compare(const Graph *g, const CompileOptions *co, Exec *x, Backend *with, int node,
                     const char *key, const Tuning *knobs, int iters, Tolerance tol,
                     double *default_us, double *tuned_us, bool *ok, char *why, size_t n,
                     DiagList *d);

#endif
