/* Strided views through chains of data-movement nodes: where each element of a permute's or
 * reshape's output lies in the memory of the tensor the chain starts from (or, backwards, where
 * each element of a chain's input goes in the memory of its end), so one kernel can read a
 * permuted (and channel-padded) tensor in place or write its result in a permuted layout, and
 * the copies the chain would make never exist (the layernorm_t fusion: fuse_patterns.c,
 * pass_layout.c, lower_norm.c). */
#ifndef NPU_STRIDED_H
#define NPU_STRIDED_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler/graph.h"
#include "shaders/abi.h" /* ROW_OUTER */

/* A tensor T seen through a walk: T's element of row-major index i lies at offset
 * sum_d c[d] * stride[d], c = i unravelled over `shape` (the walk's element count is T's). The
 * walk's shape is T's own where the chain keeps per-dim strides; after a reshape that the
 * memory order does not allow to split or merge dims it stays the shape before it (a reshape
 * keeps the row-major order, so the walk still enumerates T). */
typedef struct StrideView {
    int rank;
    int64_t shape[NPU_MAX_RANK], stride[NPU_MAX_RANK];
} StrideView;

/* The tensor of `shape` (rank r) stored row-major over `pshape` (its channel padding). */
void sv_physical(StrideView *v, int r, const int64_t *shape, const int64_t *pshape);
/* The same elements as the rank-r `shape` with strides over v's memory (a reshape the memory
 * order allows, as torch.view); false where no strides exist. Size-1 dims get stride 0. */
bool sv_view_as(const StrideView *v, int r, const int64_t *shape, StrideView *out);
/* Is node n a link of such a chain: a permute-class or reshape-like node of one float input and
 * one output of its dtype? */
bool sv_chain_op(const Graph *g, const Node *n);
/* Is node n a link of an operand's walk (sv_chain_strides): a chain link (sv_chain_op) or a
 * select of one float input? */
bool sv_link_op(const Graph *g, const Node *n);
/* The nodes making tensor t through walk links (sv_link_op) that `member` accepts (an instance's
 * members), at most max, source first: into chain[], their count; the tensor the first of them
 * reads (t itself when none) in *src. */
int sv_member_walk(const Graph *g, int t, bool (*member)(const void *ctx, int node),
                   const void *ctx, int *chain, int max, int *src);
/* Is n a permute (a valid one) that keeps the order of its input's dims of size > 1, so its
 * output is a view of its input's memory? A permute for which this is false moves data. */
bool sv_permute_keeps_order(const Graph *g, const Node *n);
/* Forward: *v describes n's input; afterwards n's output. False where a permute needs per-dim
 * strides the walk does not have. */
bool sv_forward(const Graph *g, const Node *n, StrideView *v);
/* Backward: *v describes where each element of n's output lies; afterwards n's input. */
bool sv_backward(const Graph *g, const Node *n, StrideView *v);

/* The strides over the memory of the chain's source (the first node's input as stored: its
 * channel padding) of the chain's end (the last node's output, every dim), and in *off where
 * its first element lies: the n nodes (sv_link_op: permutes, reshapes, selects) in order, each
 * reading the one before. A reshape may merge dims of unrelated strides that a later node splits
 * again ([L, N, E] strided -> [L, N * H, hd] -> transpose -> [N, H, L, hd]); false where a dim
 * of the end is not one stride, or a reshape splits a dim unevenly. (The attention's q, K and V
 * read through the views, transposes and selects making them: fuse_patterns.c,
 * lower_attention.c.) */
bool sv_chain_strides(const Graph *g, const int *chain, int n, int64_t *st, int64_t *off);

/* Rows of n elements for a row kernel reading x and writing y through walks: row r's element j
 * at xo(r) + j * xl in x and yo(r) + j * yl in y, xo and yo over the collapsed outer dims
 * (outermost first, right-aligned in ROW_OUTER dims, leading dims 1 with strides 0). */
typedef struct SvRows {
    int64_t rows, n, xl, yl;
    int64_t oshape[ROW_OUTER], xs[ROW_OUTER], ys[ROW_OUTER];
} SvRows;
/* The rows of walks x and y over one tensor shape whose last elements, n at a time, form a row
 * (a norm over its trailing dims): each walk's trailing dims covering n must merge into one
 * strided run, and the outer dims of both walks must split into common dims, at most ROW_OUTER
 * after size-1 dims are dropped and neighbours contiguous in both merged. False with *why. */
bool sv_rows(const StrideView *x, const StrideView *y, int64_t n, SvRows *r, const char **why);

/* The rows of a layer_norm read through an in-chain and written through an out-chain: members
 * (graph order, nm of them) are the in-chain's nodes, each reading the one before, the first
 * reading the kernel's input x; the layer_norm node `ln`; the out-chain's nodes, the last writing
 * the kernel's output. x as stored now (its pshape: channel padding after the layout pass), the
 * output dense. False with *why. */
bool sv_norm_rows(const Graph *g, const int *members, int nm, int ln, SvRows *r, const char **why);

#endif
