/* What the NPU can run: decided per node from the op, its attributes, shapes and dtypes, never
 * from the op name alone. The partition pass and the Vulkan backend both ask here. */
#ifndef NPU_SUPPORT_H
#define NPU_SUPPORT_H

#include <stdbool.h>
#include "compiler/graph.h"

#define NPU_MAX_KERNEL_RANK 6
/* cat's inputs: one kernel (cat2 .. cat4) per group of at most NPU_CAT_GROUP of them, each
 * writing its slice of the output (compiler/lower/lower_cat.c) */
#define NPU_CAT_GROUP 4
#define NPU_MAX_CAT_INPUTS 1024

/* True when node n can run on the NPU; otherwise *why (static or arena string) says why. */
bool npu_supports(Graph *g, const Node *n, const char **why);

#endif
