/* Fusion patterns: a registry in priority order, each a trigger op plus a match function that
 * collects the member nodes of one instance or says why not ("why not fused"). The fuse pass
 * (pass_fuse.c) walks the graph, records instances with stable ids (F1, F2, ... in discovery
 * order) and near misses, and applies the user's switches. */
#ifndef NPU_FUSION_H
#define NPU_FUSION_H

#include <stdbool.h>
#include "graph.h"

#define FUSE_MAX_NODES 32
/* The pattern name of the fuse-elementwise pass's instances (generated kernels). */
#define FUSE_ELEMENTWISE "elementwise"

typedef struct FuseMatch {
    int nodes[FUSE_MAX_NODES];
    int n;
    const char *variant; /* pattern name as reported: "conv_add_relu", "linear_silu", ... */
} FuseMatch;

/* Returns true and fills m on a match rooted at `node`. On a near miss returns false with *why
 * set (NULL when the trigger simply does not start this pattern). `taken[i]` marks nodes already
 * in an instance. */
typedef bool (*FuseMatchFn)(const Graph *g, int node, const bool *taken, FuseMatch *m,
                            const char **why);

typedef struct FusePattern {
    const char *name;
    OpId trigger;
    FuseMatchFn match;
    const char *doc;
} FusePattern;

extern const FusePattern fuse_patterns[];
extern const int fuse_pattern_count;

/* Does `spec` (a --no-fuse argument) select fusion f? Pattern names, variants, ids and "all". */
bool fuse_selected(const char *spec, const Fusion *f);

#endif
