/* Whether two graphs are the same field by field (names and strings by content, operand and
 * consumer lists, attributes, constant values): the judge that the IR reader's two ways of
 * reading (compiler/ir_json.h) make one graph. Linked into every test binary and the IR fuzzer. */
#ifndef NPU_TESTS_GRAPH_EQ_H
#define NPU_TESTS_GRAPH_EQ_H

#include <stdbool.h>
#include <stddef.h>
#include "compiler/graph.h"

/* True when a and b are the same; else false with the first difference in why[0..n). */
bool geq_same(const Graph *a, const Graph *b, char *why, size_t n);

#endif
