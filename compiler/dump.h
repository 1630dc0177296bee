/* The one text printer of a graph: --dump-after, golden tests and the explorer's diff view all
 * use it, so what a person reads and what tests pin down are the same text. */
#ifndef NPU_DUMP_H
#define NPU_DUMP_H

#include <stdio.h>
#include "compiler/graph.h"

/* One line per live node:
 *   %name = op(%in, ...) -> f32[1,64,56,56]  @npu:p0  F3:add_relu
 * after a header of inputs, outputs, weights, recipes and fusion instances. */
void graph_dump(FILE *f, const Graph *g);
/* One node's line (without newline) into buf. */
char *node_line(const Graph *g, int node, char *buf, size_t n);

#endif
