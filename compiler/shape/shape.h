/* Import-time shape and dtype checker. Infers every node's output shapes from its input shapes and
 * attributes with ATen semantics (omitted attributes take ATen's defaults) and compares them with
 * the shapes the IR declares; also checks dtype classes (bool, integer, float). The import pass
 * calls shape_check_graph right after ir_read_file; other passes may call shape_infer to derive the
 * shape of a node they create. Nothing here allocates except the diagnostics. */
#ifndef NPU_SHAPE_H
#define NPU_SHAPE_H

#include "common/diag.h"
#include "compiler/graph.h"

/* How many outputs op produces (0 for _assert_tensor_metadata, else 1; split: as many as its
 * chunks, see shape_split_sizes). */
int shape_op_nout(OpId op);

/* The chunk sizes of split node n along a dim of `size`: aten.split.Tensor's int `split_size`
 * gives equal chunks (the last one shorter), split.sizes / split_with_sizes's list
 * `split_size` / `split_sizes` gives them (they must add up to size). Returns the chunk count
 * (writing at most max sizes), or -1 with *why saying what is wrong. Shared by the shape check,
 * the CPU reference and the NPU lowering. */
int shape_split_sizes(const Node *n, int64_t size, int64_t *sizes, int max, const char **why);

/* The region npu.slice_fill fills: its slices applied in turn (`dim`, `start`, `end`, `step`:
 * ints for one slice, lists of one length for a chain, each slicing the result of the one
 * before, slice's bounds rules), each level's start, step and count within the size its dim has
 * by then. Shared by the shape check and the CPU reference. */
typedef struct SliceBox {
    int n;
    int dim[NPU_MAX_RANK];
    int64_t start[NPU_MAX_RANK], step[NPU_MAX_RANK], count[NPU_MAX_RANK];
} SliceBox;
/* Reads n's region over a tensor of (rank, shape); false with *why when it is malformed. */
bool shape_slice_box(const Node *n, int rank, const int64_t *shape, SliceBox *b, const char **why);

/* ATen's pooling_output_shape of an input dim: floor (or, ceil_mode, ceiling) division, and with
 * ceil_mode the last window must start inside the input or the left padding. Shared by the shape
 * check, the CPU reference and the NPU lowering. */
int64_t shape_pool_out(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil);

/* An einsum equation parsed ("ij,jk->ik"; spaces ignored; no ellipsis): per operand its
 * labels (letters) in dim order, the output's labels (implicit output: the labels used once,
 * in alphabetical order), and every label's index in `labels`. */
#define EINSUM_MAX_LABELS 16
typedef struct EinsumSpec {
    int nops;
    int rank[8];
    int lab[8][NPU_MAX_RANK]; /* label index per dim of each operand */
    int orank;
    int olab[NPU_MAX_RANK];
    int nlabels;
    char labels[EINSUM_MAX_LABELS];
} EinsumSpec;
/* Parses eq for nops operands; false with *why set when it is malformed or unsupported. */
bool shape_einsum_parse(const char *eq, int nops, EinsumSpec *s, const char **why);

/* upsample_*2d.vec's output size of an input dim: output_size[i], else
 * floor(in * scale_factors[i]) as ATen computes it. *scale is the factor ATen's kernels map
 * coordinates with (1/scale_factor when given, else in/out); false with *why when neither
 * attribute is usable. */
bool shape_upsample_dim(const Node *n, int i, int64_t in, int64_t *out, double *scale,
                        const char **why);

/* Infers the output shapes of node n from its inputs (their declared shapes) and attributes:
 * rank[i] and shape[i] for each of the n->nout outputs (callers size both arrays by n->nout).
 * Returns ST_BAD_INPUT with a diagnostic naming g->path, the node and the tensor when the
 * attributes or input shapes make no sense (dim out of range, incompatible broadcast, conv
 * channel mismatch, view numel mismatch, an output count the op cannot produce). */
Status shape_infer(const Graph *g, const Node *n, int *rank, int64_t (*shape)[NPU_MAX_RANK],
                   DiagList *d);

/* Runs shape_infer on every live node and compares with the declared output shapes; checks dtype
 * classes (embedding/index_copy indices integer, where/masked_fill conditions bool, comparisons
 * produce bool, float-only ops get float inputs, explicit dtype attributes honoured). Reports every
 * mismatch, e.g. "declared shape [1,64,56,56] but conv2d gives [1,64,57,57]", and returns
 * ST_BAD_INPUT if there was any, else ST_OK. */
Status shape_check_graph(const Graph *g, DiagList *d);

#endif
