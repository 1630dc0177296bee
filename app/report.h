/* Text and JSON reports shared by run, profile, bisect and --batch. */
#ifndef NPU_REPORT_H
#define NPU_REPORT_H

#include <stdio.h>
#include "compiler/graph.h"
#include "compiler/plan.h"
#include "runtime/bind.h"
#include "runtime/compare.h"
#include "app/options.h"

/* The tolerance of a compute dtype ("fp32", "fp16", "bf16"), overridden by --tol-rel/--tol-abs. */
Tolerance report_tolerance(const Options *o, const char *dtype);
/* An argmax output's rows (CmpStats.argmax) for a text line: "argmax: R rows, D differ by
 * index, B beyond tolerance"; "" for other outputs. */
void report_argmax_note(const CmpStats *s, char *buf, size_t n);
/* The same as JSON fields to splice into an object: ',"argmax_rows":R,"argmax_differ":D,
 * "argmax_beyond":B,"argmax_gap":G' (G: the largest reference gap below a row's maximum at the
 * device's index); "" for other outputs. */
void report_argmax_json(const CmpStats *s, char *buf, size_t n);
/* The IR nodes a kernel computes, comma-joined ("conv2d,relu"), cut with "..." to fit n. */
void report_fused_from(const PlanKernel *k, char *buf, size_t n);
/* `run --check`: one line per graph output, then a summary. An argmax output is judged
 * tie-aware with b->argmax (compare.h cmp_output; exactly when that lacks it): in text its
 * max_abs, rel_l2 and cosine are "-" (JSON keeps the numbers), top1 shows the rows whose index
 * is the reference's, and the line ends with report_argmax_note (JSON: report_argmax_json).
 * Returns the exit code (0 all ok, 1 some mismatch, 2 no reference to check against). */
int report_check(FILE *f, const Graph *g, const Binding *b, const HTensor *vals,
                 const Tolerance *tol, const char *backend, int json);

/* A Progress callback for the CLI on a terminal: ctx (a const char *, the command's name) and
 * the stage on one line of stderr, rewritten in place. */
void report_tty_progress(void *ctx, const char *stage, int k, int n);

#endif
