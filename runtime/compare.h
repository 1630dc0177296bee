/* Tensor comparison: the numbers behind every verdict (run --check, profile, bisect). Compares
 * a computed tensor with an expected one of the same element count, in float64. */
#ifndef NPU_COMPARE_H
#define NPU_COMPARE_H

#include <stdbool.h>
#include <stdint.h>
#include "htensor.h"

typedef struct CmpStats {
    int64_t n;
    int64_t nonfinite;   /* NaN/Inf in `got` where `want` is finite */
    double max_abs;      /* max |got - want| */
    double rel_l2;       /* ||got - want|| / ||want|| (||got - want|| when want is all zero) */
    double cosine;       /* cosine similarity (1 when both are zero) */
    double pearson;      /* Pearson correlation (1 when both are constant and equal) */
    bool has_topk;       /* logits-like: last dim >= 5 */
    int64_t rows;        /* rows of the last dim */
    int64_t top1_agree;  /* rows whose argmax agrees */
    int64_t top5_agree;  /* rows whose top-5 index sets are equal */
} CmpStats;

typedef struct Tolerance {
    double rel_l2;  /* pass when rel_l2 <= this */
    double max_abs; /* and (when > 0) max_abs <= this OR rel_l2 passes */
} Tolerance;

/* Fails (returns false) when element counts differ. Elements the reference has non-finite are
 * compared only for finiteness; an infinity where the reference holds a finite value beyond
 * bf16's range with the same sign (finfo(float32).min as a mask value, which f16 and bf16
 * storage round to -inf) counts as agreeing. */
bool cmp_tensors(const HTensor *got, const HTensor *want, CmpStats *s);
/* The verdict: finite everywhere and rel_l2 within tolerance. */
bool cmp_ok(const CmpStats *s, const Tolerance *tol);

#endif
