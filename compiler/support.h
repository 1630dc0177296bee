/* What the NPU can run: decided per node from the op, its attributes, shapes and dtypes, never
 * from the op name alone. The partition pass and the Vulkan backend both ask here. */
#ifndef NPU_SUPPORT_H
#define NPU_SUPPORT_H

#include <stdbool.h>
#include "compiler/graph.h"

#define NPU_MAX_KERNEL_RANK 6
#define NPU_MAX_CAT_INPUTS 4

/* True when node n can run on the NPU; otherwise *why (static or arena string) says why. */
bool npu_supports(Graph *g, const Node *n, const char **why);

#endif
