/* The CPU reference's per-op kernels: float32 math (float64 accumulation in reductions and dot
 * products), int64 for integers, ATen-exact semantics. The executor (cpu_ref.c) allocates every
 * output with the node's declared shape and the reference dtype (htensor_ref_dtype) before the
 * call; a kernel fills its outputs and returns ST_OK, or reports bad attributes/shapes with
 * diag_error naming the node and returns ST_BAD_INPUT. Kernels never allocate outputs and never
 * print. One kernel per OpId, in the table cpu_kernel_table (cpu_kernels.c). */
#ifndef NPU_CPU_KERNELS_H
#define NPU_CPU_KERNELS_H

#include "common/diag.h"
#include "compiler/graph.h"
#include "runtime/htensor.h"

typedef struct CpuCall {
    const Graph *g;
    const Node *node;
    const HTensor *const *in; /* node->nin inputs, in IR order */
    int nin;
    HTensor *const *out; /* node->nout outputs, preallocated */
    int nout;
    DiagList *diag;
    const char *file; /* for diagnostics */
} CpuCall;

typedef Status (*CpuKernelFn)(const CpuCall *c);

/* Indexed by OpId; every slot is filled (a unit test proves it). */
extern const CpuKernelFn cpu_kernel_table[OP_COUNT];

/* Element i of t as a double / an int64 (a fast path for the reference's own dtypes, f32 and
 * i64). */
static inline double cpu_ldf(const HTensor *t, int64_t i)
{
    if (t->dtype == DT_F32) return ((const float *)t->data)[i];
    return htensor_get_f(t, i);
}
static inline int64_t cpu_ldi(const HTensor *t, int64_t i)
{
    if (t->dtype == DT_I64) return ((const int64_t *)t->data)[i];
    return htensor_get_i(t, i);
}
/* Wrap-around int64 addition (torch wraps; C would be undefined). */
static inline int64_t cpu_wadd(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

/* Kernel families, one file each. */
/* cpu_eltwise.c */
Status cpu_unary(const CpuCall *c);  /* RELU..CLAMP, LOGICAL_NOT, TO_DTYPE */
Status cpu_binary(const CpuCall *c); /* ADD SUB RSUB MUL DIV POW, comparisons, logical and/or */
Status cpu_where(const CpuCall *c);  /* WHERE, MASKED_FILL */
/* cpu_reduce.c */
Status cpu_reduce(const CpuCall *c); /* MEAN SUM AMAX VECTOR_NORM */
Status cpu_argmax(const CpuCall *c);
Status cpu_softmax(const CpuCall *c); /* SOFTMAX LOG_SOFTMAX */
Status cpu_layer_norm(const CpuCall *c);
Status cpu_batch_norm(const CpuCall *c);
Status cpu_cumsum(const CpuCall *c);
/* cpu_conv.c */
Status cpu_conv2d(const CpuCall *c);
Status cpu_pool2d(const CpuCall *c); /* MAX_POOL2D(_WI) AVG_POOL2D ADAPTIVE_AVG_POOL2D */
Status cpu_conv1d(const CpuCall *c);
Status cpu_conv_transpose2d(const CpuCall *c);
/* cpu_more.c */
Status cpu_fill_like(const CpuCall *c);
Status cpu_diff(const CpuCall *c);
Status cpu_index(const CpuCall *c);
Status cpu_gather(const CpuCall *c);
Status cpu_pad(const CpuCall *c);
Status cpu_group_norm(const CpuCall *c);
Status cpu_upsample2d(const CpuCall *c); /* UPSAMPLE_BILINEAR2D UPSAMPLE_NEAREST2D */
Status cpu_einsum(const CpuCall *c);
Status cpu_sdpa(const CpuCall *c);
Status cpu_clamp_t(const CpuCall *c);
Status cpu_baddbmm(const CpuCall *c);
Status cpu_instance_norm(const CpuCall *c);
/* cpu_move.c */
Status cpu_stack(const CpuCall *c);
Status cpu_flip(const CpuCall *c);
Status cpu_roll(const CpuCall *c);
Status cpu_tri(const CpuCall *c);
Status cpu_repeat(const CpuCall *c);
Status cpu_repeat_interleave(const CpuCall *c);
Status cpu_pixel_shuffle(const CpuCall *c);
Status cpu_slice_fill(const CpuCall *c);
/* cpu_select.c */
Status cpu_max_dim(const CpuCall *c); /* MAX_DIM: max.dim, min.dim */
Status cpu_topk(const CpuCall *c);
Status cpu_sort(const CpuCall *c);
Status cpu_unbind(const CpuCall *c);
/* cpu_matmul.c */
Status cpu_matmul(const CpuCall *c); /* LINEAR ADDMM MATMUL BMM MM */
/* cpu_data.c */
Status cpu_copy(const CpuCall *c); /* IDENTITY DROPOUT VIEW FLATTEN UNSQUEEZE SQUEEZE, ASSERT */
Status cpu_getitem(const CpuCall *c);
Status cpu_split(const CpuCall *c);
Status cpu_permute(const CpuCall *c); /* PERMUTE TRANSPOSE T */
Status cpu_expand(const CpuCall *c);
Status cpu_copy_into(const CpuCall *c);
Status cpu_cat(const CpuCall *c);
Status cpu_slice(const CpuCall *c); /* SLICE SELECT */
Status cpu_index_copy(const CpuCall *c);
Status cpu_embedding(const CpuCall *c);
Status cpu_source(const CpuCall *c); /* ARANGE FULL ZEROS ONES */

/* Shared helpers (cpu_util.c). */
/* Broadcast strides: for input shape `in` (rank rin) viewed in the output shape `out` (rank
 * rout), strides in elements with 0 on broadcast dims. */
void bcast_strides(const int64_t *in, int rin, const int64_t *out, int rout, int64_t *strides);
/* Offset of flat output index i in an input with strides `st` (output shape out/rout). */
int64_t bcast_offset(int64_t i, const int64_t *out, int rout, const int64_t *st);

#endif
