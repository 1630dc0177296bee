/* Helpers of the pass tests (test_passes.c, test_passes_late.c, test_schedule.c): compile a graph
 * in the exporter's JSON (built with T and NODE; tests/testutil.h compiles files and other
 * options), count fusions and kernels. Failures fail the calling cmocka test. */
#ifndef NPU_TESTS_PASS_CHECK_H
#define NPU_TESTS_PASS_CHECK_H

#include "compiler/pass.h"
#include "compiler/plan.h"

#define T(n, s) "{\"name\":\"" n "\",\"shape\":" s "}"
#define TIB(n, s) "{\"name\":\"" n "\",\"dtype\":\"int64\",\"shape\":" s "}"
#define TBB(n, s) "{\"name\":\"" n "\",\"dtype\":\"bool\",\"shape\":" s "}"
#define NODE(name, op, ins, outs, attrs)                                                           \
    "{\"name\":\"" name "\",\"op_type\":\"" op "\",\"inputs\":[" ins "],\"outputs\":[" outs        \
    "],\"attrs\":{" attrs "}}"

/* Fusion instances whose pattern starts with prefix. */
int tp_count_pattern(const Graph *g, const char *prefix);
/* The pipeline of a JSON graph with the defaults (tu_compile_json with other options). */
Pipeline tp_compile_json(const char *json);
/* The partition as the partition pass leaves it: fuse-elementwise off. */
Pipeline tp_compile_json_no_gen(const char *json);
/* The kernels of plan p with stem `stem`. */
int tp_count_shader(const Plan *p, const char *stem);

/* The plan's partitions' targets in order, "cpu npu ..." (in buf, returned). */
const char *tp_parts(const Plan *p, char *buf, size_t n);
/* Node `name`'s placement (the node must exist). */
Placement tp_place(const Graph *g, const char *name);

#endif
