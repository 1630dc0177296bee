/* Profile and bisect as functions returning data, and the reporters that print that data. The
 * CLI's `profile` and `bisect` call them on a plan they compile; the session calls them on its
 * one plan and keeps the last complete result of each (a failed or cancelled job leaves the
 * previous one); the TUI reads the structs, never printed text. A result carries the session's
 * plan generation it belongs to, so a result of an older plan is known to be stale. Progress
 * (stage, step k of n) goes to an optional callback that may run on a worker thread. */
#ifndef NPU_RESULTS_H
#define NPU_RESULTS_H

#include <stdio.h>
#include "runtime/profile.h"
#include "app/runner.h"

/* Called as a job advances: `stage` ("timed runs", "bisect step", ...), k of n (n 0: unknown,
 * n < 0: about -n, an estimate). `rows` (profile_measure; NULL: nobody) is told with fn, on the
 * same thread, the measurement so far: the times of the timed runs done, the error and CPU
 * time of each kernel judged (runtime/profile.h on_run); it must copy what it keeps. */
typedef struct Progress {
    void (*fn)(void *ctx, const char *stage, int k, int n);
    void *ctx;
    void (*rows)(void *ctx, const Profile *so_far);
} Progress;

typedef struct ProfileResult {
    Profile pr;       /* per kernel and transfer of the plan measured (runtime/profile.h) */
    unsigned gen;     /* the session's plan generation it measured (0 outside a session) */
    int nkernels;     /* of that plan */
    char device[160]; /* the backend's device */
    char dtype[8];
    bool have; /* a complete result */
    /* [nkernels], NULL when no kernel is tuned: a kernel a tuning-cache entry shaped
     * (PlanKernel.tuned) timed alone with the defaults and with its knobs, on the values of the
     * error run (app/tune_bench.h); -1 for the others */
    double *tuned_default_us, *tuned_us;
} ProfileResult;

/* Times every kernel of `pipe` (the session's plan, borrowed; NULL: compile o->model's loaded
 * graph m as the CLI does, the plan then returned in *plan_out when given, else freed) over
 * o->iters runs on the device of o, then its errors against the CPU reference from a second
 * compile of the same state with no memory reuse (checked to have the same kernels). *out is
 * written only when the whole measurement succeeded. */
Status profile_measure(const Options *o, Model *m, const Pipeline *pipe, const RunTarget *t,
                       const Progress *pg, ProfileResult *out, DiagList *d);
void profile_result_free(ProfileResult *r);
/* Prints r, the measurement of plan p: o->format table|json|csv (json also with o->json), with
 * per-kernel deltas against o->baseline; o->save also gets the JSON lines. */
Status profile_report(FILE *f, const Plan *p, const ProfileResult *r, const Options *o,
                      DiagList *d);
/* A speedup for a table: "12x", "1.5x", "0.04x" (never "0.0x"), "-" when there is none. */
const char *report_speedup(double sp, char *buf, size_t n);

typedef enum BisectOutcome {
    BISECT_CULPRIT,    /* culprits found */
    BISECT_NOTHING,    /* every fusion on agrees: nothing to bisect */
    BISECT_NOT_FUSION, /* the outputs disagree with every fusion off */
    BISECT_FLAKY,      /* the verdict changed between two identical runs */
} BisectOutcome;

typedef struct BisectStep {
    char what[16];   /* "all off", "all on", "prefix", "subset", "complement", "remaining" */
    int enabled, of; /* instances on, of all */
    char list[256];  /* their ids, cut with "..." */
    bool ok;
    double worst; /* worst rel_l2 (an argmax output: the fraction of its rows beyond) */
} BisectStep;

typedef struct BisectCulprit {
    char id[32], pattern[64], nodes[1024];
    int kernel;         /* the first kernel computing its members in the plan bisected (all
                         * instances on: the plan on screen), -1 (app/attrib.h) */
    bool own;           /* that kernel is its own; else a fold runs its ops inside it */
    char shader[64];    /* that kernel's shader */
    char host[32];      /* that kernel's fusion id when not its own, "" */
    int alone_kernel;   /* the first diverging kernel of the plan with only it on, -1 */
    char tensor[128];   /* that kernel's output, "-" */
    int tensor_kernel;  /* the kernel of the plan bisected computing that tensor, -1 */
    bool tensor_inside; /* it is not that kernel's output but computed inside it */
    double rel_l2, max_abs;
    char note[128];      /* an argmax output's rows (report_argmax_note), "" */
    char json_note[160]; /* the same as JSON fields (report_argmax_json) */
} BisectCulprit;

typedef struct BisectResult {
    BisectOutcome outcome;
    BisectStep *steps;
    int nsteps, cap;
    BisectCulprit *culprits;
    int nculprits;
    unsigned gen; /* the session's plan generation bisected (0 outside a session) */
    bool have;    /* a complete result */
    int rc;       /* the exit code (docs/CLI.md): 0 culprit found or nothing to bisect, 1 nothing
                   * consistent (the fault is not in a fusion, or a flaky oracle) */
} BisectResult;

/* Bisects the fusion instances enabled under o (o->mode first|minimal) on the loaded model m.
 * Each step is appended to *out as it is judged and reported to pg with k = the step. On an
 * error or a cancel *out holds the steps so far and `have` stays false. */
Status bisect_run(const Options *o, Model *m, const Progress *pg, BisectResult *out, DiagList *d);
void bisect_result_free(BisectResult *r);
/* One step as its text line (json: its JSON line) into buf. */
void bisect_step_text(const BisectResult *r, int i, bool json, char *buf, size_t n);
/* The end: the culprit lines, or why there is nothing to find (json: JSON lines). */
void bisect_report_end(FILE *f, const BisectResult *r, bool json);
/* The result's one-line summary for headers: "culprit F2", "no culprit", ... */
const char *bisect_summary(const BisectResult *r, char *buf, size_t n);

#endif
