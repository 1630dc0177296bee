/* Tensor comparison: the numbers behind every verdict (run --check, profile, bisect). Compares
 * a computed tensor with an expected one of the same element count, in float64; an argmax's
 * index output is judged tie-aware (cmp_output with an ArgmaxSrc): by the reference value its
 * index points at, not by the index alone. */
#ifndef NPU_COMPARE_H
#define NPU_COMPARE_H

#include <stdbool.h>
#include <stdint.h>
#include "runtime/htensor.h"

typedef struct CmpStats {
    int64_t n;
    int64_t nonfinite;  /* NaN/Inf in `got` where `want` is finite */
    double max_abs;     /* max |got - want| */
    double rel_l2;      /* ||got - want|| / ||want|| (||got - want|| when want is all zero) */
    double cosine;      /* cosine similarity (1 when both are zero) */
    double pearson;     /* Pearson correlation (1 when both are constant and equal) */
    bool has_topk;      /* logits-like: last dim >= 5 */
    int64_t rows;       /* rows of the last dim */
    int64_t top1_agree; /* rows whose argmax agrees */
    int64_t top5_agree; /* rows whose top-5 index sets are equal */
    /* an argmax's index output (cmp_output with an ArgmaxSrc); cmp_ok then judges am_beyond */
    bool argmax;
    int64_t am_rows;   /* rows (reduced slices) compared */
    int64_t am_differ; /* rows whose index is not the reference's */
    int64_t am_beyond; /* rows whose index is not acceptable (cmp_output): the mismatches */
    double am_gap;     /* largest reference (row max - value at the index) over the rows */
} CmpStats;

typedef struct Tolerance {
    double rel_l2;  /* pass when rel_l2 <= this */
    double max_abs; /* and (when > 0) max_abs <= this OR rel_l2 passes */
} Tolerance;

/* What judging an argmax's index output needs (cmp_output). */
typedef struct ArgmaxSrc {
    HTensor x;     /* the reference value of the argmax's input (data NULL: unknown, and the
                    * indices are compared exactly); owned or borrowed as HTensor says */
    int dim;       /* the dim of x it reduces; -1: the flattened input */
    bool skip_nan; /* the node's skip_nan: NaN ignored, -1 for a row of nothing else */
} ArgmaxSrc;

/* Fails (returns false) when element counts differ. Elements the reference has non-finite are
 * compared only for finiteness; an infinity where the reference holds a finite value beyond
 * bf16's range with the same sign (finfo(float32).min as a mask value, which f16 and bf16
 * storage round to -inf) counts as agreeing. */
bool cmp_tensors(const HTensor *got, const HTensor *want, CmpStats *s);
/* cmp_tensors, and with `a` (an argmax output) the rows: a row's index i is acceptable when
 * a->x's value at i is within the tolerance of the row's maximum there: max - x[i] <=
 * max(tol->max_abs, tol->rel_l2 * rms of the row's finite values), which is the error per
 * element that tol admits for the input tensor itself (its rel_l2 is the rms error over the rms
 * value). So two near-equal maxima that 16-bit compute rounds the other way may swap; an
 * index to anything farther from the maximum is a mismatch. Integer inputs: exact ties only.
 * NaN as the op defines it: without skip_nan a row holding NaN accepts a NaN's index only; with
 * skip_nan NaN is never acceptable, and a row of NaN alone accepts -1 only. An index outside
 * the row is a mismatch. Returns false when element counts differ. */
bool cmp_output(const HTensor *got, const HTensor *want, const ArgmaxSrc *a, const Tolerance *tol,
                CmpStats *s);
/* Whether tensor t of g is an argmax's output: then *a gets the node's dim and skip_nan, and
 * as a->x a borrowed view of vals[its input] when vals holds it (vals: [nvals] by tensor id of g,
 * may be NULL). */
bool cmp_argmax_source(const Graph *g, int t, const HTensor *vals, int nvals, ArgmaxSrc *a);
/* Is index i of row x (a reference's logits) an acceptable argmax: the row's maximum, or within
 * the tolerance's window of it (rel_l2 times the row's rms, at least max_abs)? The rule
 * cmp_output judges an argmax's indices by; generate's near ties. */
bool cmp_near_max(const HTensor *x, int64_t i, const Tolerance *tol);
/* The verdict: finite everywhere and rel_l2 within tolerance; for an argmax output, no row
 * beyond tolerance (am_beyond == 0). */
bool cmp_ok(const CmpStats *s, const Tolerance *tol);
/* The error that ranks comparisons (profile's worst kernel, bisect's worst output): rel_l2,
 * infinity when non-finite; for an argmax output the fraction of rows beyond tolerance. */
double cmp_error(const CmpStats *s);

#endif
