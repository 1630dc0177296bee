/* Private to compiler/shape*.c: the inference context, attribute readers that report what is wrong,
 * and one infer function per op family (shape_ops.c). Not for use outside the shape checker. */
#ifndef NPU_SHAPE_INT_H
#define NPU_SHAPE_INT_H

#include "compiler/shape/shape.h"

typedef struct ShapeCtx {
    const Graph *g;
    const Node *n;
    DiagList *d;
    int rank; /* the (single) output being inferred */
    int64_t shape[NPU_MAX_RANK];
    /* every output's, for the rules of several outputs (split, shape_multi) */
    int *ranks;
    int64_t (*shapes)[NPU_MAX_RANK];
} ShapeCtx;

/* Reports "<op>: message" against the node (and tensor, may be NULL); returns ST_BAD_INPUT. */
Status sh_err(const ShapeCtx *c, const char *tensor, const char *fmt, ...) NPU_PRINTF(3, 4);
/* Sets the output to (rank, shape); errors if rank exceeds NPU_MAX_RANK. */
Status sh_set(ShapeCtx *c, int rank, const int64_t *shape);
const GTensor *sh_in(const ShapeCtx *c, int i);

/* An int attribute: absent or null gives dflt, unless required (then an error). */
Status sh_int(const ShapeCtx *c, const char *key, bool required, int64_t dflt, int64_t *out);
/* A dim attribute normalised against rank (negative counts from the end). */
Status sh_dim(const ShapeCtx *c, const char *key, bool required, int64_t dflt, int rank, int *out);
/* An int list (a scalar int counts as one element): *cnt = -1 when absent or null. */
Status sh_ints(const ShapeCtx *c, const char *key, int64_t *out, int maxn, int *cnt);
/* A list of cnt ints where a scalar or one-element list repeats; dflt fills when absent. */
Status sh_ints_n(const ShapeCtx *c, const char *key, int cnt, int64_t dflt, int64_t *out);
/* NumPy broadcasting of a and b into o; errors name `tensor`. */
Status sh_broadcast(const ShapeCtx *c, const char *tensor, int ra, const int64_t *a, int rb,
                    const int64_t *b, int *ro, int64_t *o);
/* t must broadcast to (rank, shape) without changing it: "WHAT [..] cannot be expanded to
 * TARGET [..]" otherwise. */
Status sh_expands_to(const ShapeCtx *c, const GTensor *t, int rank, const int64_t *shape,
                     const char *what, const char *target);
/* True for an in-place ATen op ("aten.add_.Tensor"): the result must keep input 0's shape. */
bool sh_inplace(const Node *n);

Status shape_same(ShapeCtx *c);
Status shape_getitem(ShapeCtx *c);
Status shape_eltwise(ShapeCtx *c);
Status shape_where(ShapeCtx *c);
Status shape_conv2d(ShapeCtx *c);
Status shape_batch_norm(ShapeCtx *c);
Status shape_layer_norm(ShapeCtx *c);
Status shape_linear(ShapeCtx *c);
Status shape_addmm(ShapeCtx *c);
Status shape_mm(ShapeCtx *c);
Status shape_bmm(ShapeCtx *c);
Status shape_matmul(ShapeCtx *c);
Status shape_t(ShapeCtx *c);
Status shape_along_dim(ShapeCtx *c);
Status shape_reduce(ShapeCtx *c);
Status shape_argmax(ShapeCtx *c);
Status shape_pool2d(ShapeCtx *c);
Status shape_adaptive_pool2d(ShapeCtx *c);
Status shape_embedding(ShapeCtx *c);
Status shape_cat(ShapeCtx *c);
Status shape_slice(ShapeCtx *c);
Status shape_select(ShapeCtx *c);
/* split: every output's shape into c->ranks / c->shapes (n->nout of them, checked). */
Status shape_split(ShapeCtx *c);
Status shape_view(ShapeCtx *c);
Status shape_flatten(ShapeCtx *c);
Status shape_unsqueeze(ShapeCtx *c);
Status shape_squeeze(ShapeCtx *c);
Status shape_permute(ShapeCtx *c);
Status shape_transpose(ShapeCtx *c);
Status shape_expand(ShapeCtx *c);
Status shape_index_copy(ShapeCtx *c);
Status shape_copy(ShapeCtx *c);
Status shape_arange(ShapeCtx *c);
Status shape_filled(ShapeCtx *c);
/* shape_more.c */
Status shape_fill_like(ShapeCtx *c);
Status shape_slice_fill(ShapeCtx *c);
Status shape_diff(ShapeCtx *c);
Status shape_index(ShapeCtx *c);
Status shape_gather(ShapeCtx *c);
Status shape_conv1d(ShapeCtx *c);
Status shape_conv_transpose2d(ShapeCtx *c);
Status shape_group_norm(ShapeCtx *c);
Status shape_upsample2d(ShapeCtx *c);
Status shape_pad(ShapeCtx *c);
Status shape_einsum(ShapeCtx *c);
Status shape_sdpa(ShapeCtx *c);
/* shape_data.c */
/* The rule of the ops with several outputs besides split (c->ranks / c->shapes, n->nout of them,
 * checked): max.dim/min.dim, topk, sort, max_pool2d_with_indices (values and int64 indices)
 * and unbind (one output per slice). shape_is_multi (shape.c) tells them by this rule. */
bool shape_is_multi(OpId op);
Status shape_multi(ShapeCtx *c);
Status shape_stack(ShapeCtx *c);
Status shape_flip(ShapeCtx *c);
Status shape_roll(ShapeCtx *c);
Status shape_tri(ShapeCtx *c);
Status shape_repeat(ShapeCtx *c);
Status shape_repeat_interleave(ShapeCtx *c);
Status shape_pixel_shuffle(ShapeCtx *c);
Status shape_baddbmm(ShapeCtx *c);
Status shape_instance_norm(ShapeCtx *c);

#endif
