/* What the fusion patterns' match functions share (fuse_patterns.c, fuse_attention.c): walking
 * single-consumer chains of usable nodes and collecting an instance's members. Internal to the
 * fusion pass; compiler/fusion.h is its interface. */
#ifndef NPU_FUSE_MATCH_H
#define NPU_FUSE_MATCH_H

#include <stdbool.h>
#include "compiler/fusion.h"

/* The longest chain of permutes and reshapes fuse_in_chain walks. */
#define FUSE_PERMUTE_CHAIN 8

/* Can node join an instance: live, on the NPU, not in another instance? */
bool fuse_usable(const Graph *g, int node, const bool *taken);
/* Appends node to m's members; false when m is full (FUSE_MAX_NODES). */
bool fuse_add(FuseMatch *m, int node);
bool fuse_same_shape(const GTensor *a, const GTensor *b);
/* Follows t to its single consumer if that consumer is a usable node of op `op`, else -1. */
int fuse_next_op(const Graph *g, int t, OpId op, const bool *taken);
/* A binary node of two operands with alpha 1 (add and sub's scale). */
bool fuse_plain_binary(const Node *n);
/* The permutes and reshapes making tensor t, each read only by the next (t by the pattern's
 * node), nearest first: into chain[] (FUSE_PERMUTE_CHAIN at most), their count; *move: 1 + the
 * index of the farthest that moves data (0: none). *why when the walk stops at a node read by
 * others with a permute moving data upstream of it (its copy stays: a residual reads it too). */
int fuse_in_chain(const Graph *g, int t, const bool *taken, int *chain, int *move,
                  const char **why);

/* The attention patterns (fuse_attention.c): decode_attention (one query row) and attention
 * (several rows), FuseMatchFn's of the registry. */
bool fuse_match_decode_attention(const Graph *g, int node, const bool *taken, FuseMatch *m,
                                 const char **why);
bool fuse_match_attention(const Graph *g, int node, const bool *taken, FuseMatch *m,
                          const char **why);

#endif
