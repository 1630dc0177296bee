/* `npu-explore tune`: a beam search over the tuning table's knobs (compiler/tuning.def, the
 * TU_SEARCH knobs of each kernel's kind), per kernel of a model, on its device, as tinygrad's
 * BEAM searches its kernels' shapes. Each distinct kernel (one tuning key: kind, shapes, dtypes,
 * attributes; the repeated layers of a transformer share one) is lowered with one knob value
 * after another and timed alone on the values its inputs had in a run of the model (app/
 * tune_bench.h); a configuration that lowers to a kernel already timed is skipped, one whose
 * outputs differ from the defaults' beyond the dtype's tolerance is refused. A round extends
 * every configuration of the beam by one knob value; the `beam` fastest go on; the search of a
 * kernel ends when a round finds nothing faster. The winner is timed again against the
 * defaults, alternating, and kept only when it beats them by TUNE_MARGIN; kept winners go to
 * the tuning cache (app/tuned.h) under the device and key, where every later compile for the
 * device finds them. */
#ifndef NPU_APP_TUNE_H
#define NPU_APP_TUNE_H

#include <stdio.h>
#include "compiler/tuning.h"
#include "app/results.h"

#define TUNE_MARGIN 0.03 /* a winner must be this much faster than the defaults (3%) */

typedef struct TuneRow {
    int kernel;     /* the instance's first kernel in the plan the device runs (profile's #) */
    int count;      /* instances with this key in the model */
    char stem[64];  /* that kernel's shader */
    char key[1024]; /* the tuning key */
    TuneMask knobs; /* the knobs searched (bit i: TuneId i) */
    double default_us, best_us; /* alone, median; the confirming runs' */
    Tuning best;    /* the winner's knobs (set: those it changes); none: the defaults kept */
    bool improved;  /* best beats the defaults by TUNE_MARGIN: cached */
    int tried;      /* configurations timed (the defaults included) */
    int same;       /* configurations that lowered to a kernel timed already */
    int rejected;   /* configurations whose outputs differ from the defaults' */
    int failed;     /* configurations lowering or the device refused */
    char note[256]; /* the first refusal: its knobs and why */
    bool skipped;   /* the budget ran out (or the search was cancelled) before it */
} TuneRow;

typedef struct TuneResult {
    TuneRow *rows;
    int n;
    char model[256];
    char device[512];
    char dtype[8];
    int tier, beam, iters;
    double seconds;
    char cache[4096]; /* the cache file written ("" none: --tuned none) */
    int cached;       /* its entries for this device */
} TuneResult;

/* What to search. */
typedef struct TuneSearch {
    int kernel;      /* only the instance of this kernel of the plan the device runs; -1 all */
    int beam;        /* configurations kept per round */
    double budget_s; /* seconds in all */
    int iters;       /* timed runs per configuration */
    /* The knobs the search may change: 0, every TU_SEARCH knob of the kernel's kind not set
     * for the whole compile (--tune). Tests add a TU_BENCH one to see it refused. */
    TuneMask knobs;
} TuneSearch;

/* The knobs the search changes for kernels of `kind`: its TU_SEARCH knobs that `global` (the
 * compile's --tune) leaves unset. Never a TU_BENCH knob. */
TuneMask tune_search_knobs(KernelKind kind, const Tuning *global);
/* Searches m (loaded and bound) on o's Vulkan device; *out (freed first) on success, also when
 * the budget ran out (rows skipped). Progress to pg (may be NULL); o->cancel stops it with
 * ST_CANCELLED. */
Status tune_measure(const Options *o, Model *m, const TuneSearch *ts, const Progress *pg,
                    TuneResult *out, DiagList *d);
/* The rows measured into the cache o names (improved: their entry; else any entry of their key
 * dropped) and the file written; r->cache and r->cached say where and how many. A file that is
 * no tuning cache is not overwritten (an error naming it). --tuned none: nothing written. */
Status tune_store(const Options *o, TuneResult *r, DiagList *d);
/* The table (or JSON lines, schema npu-explore/tune/1) of r. */
void tune_report(FILE *f, const TuneResult *r, bool json);
void tune_result_free(TuneResult *r);

/* The order tune_measure searches n kernels in: their indices, the largest cost (GPU time in the
 * model) first, ties in index order (so without per-kernel times it is kernel order). The caller
 * frees it; NULL when out of memory. */
int *tune_order(const double *cost, int n);

#endif
