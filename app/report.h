/* Text and JSON reports shared by run, profile, bisect and --batch. */
#ifndef NPU_REPORT_H
#define NPU_REPORT_H

#include <stdio.h>
#include "../compiler/graph.h"
#include "../runtime/bind.h"
#include "../runtime/compare.h"
#include "options.h"

/* The tolerance of a compute dtype ("fp32", "fp16", "bf16"), overridden by --tol-rel/--tol-abs. */
Tolerance report_tolerance(const Options *o, const char *dtype);
/* `run --check`: one line per graph output, then a summary. Returns the exit code (0 all ok, 1
 * some mismatch, 2 no reference to check against). */
int report_check(FILE *f, const Graph *g, const Binding *b, const HTensor *vals,
                 const Tolerance *tol, const char *backend, int json);

#endif
