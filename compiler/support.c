#include "compiler/support.h"

#include <stdio.h>

static bool compares(OpId op)
{
    return op == OP_EQ || op == OP_NE || op == OP_LT || op == OP_LE || op == OP_GT || op == OP_GE ||
           op == OP_LOGICAL_NOT || op == OP_LOGICAL_AND || op == OP_LOGICAL_OR;
}

/* Integer arithmetic stays on the CPU; integer data may move through NPU data ops (the caller
 * skips views). Bools live on the device as 0/1 in the compute dtype: comparisons and logical
 * ops of float or bool tensors make them, and float ops (where, masked_fill, a mul by a mask)
 * read them. NULL when n's dtypes suit the NPU. */
static const char *int_reason(const Graph *g, const Node *n)
{
    if (n->op == OP_ARGMAX) /* float data in, an int32 index out */
        return dtype_is_float(node_input(g, n, 0)->dtype) ? NULL
                                                          : "argmax of integers runs on the CPU";
    for (int k = 0; k < n->nout; k++) {
        DType dt = node_output(g, n, k)->dtype;
        if (dtype_is_int(dt) && (dt != DT_BOOL || !compares(n->op)))
            return "integer arithmetic runs on the CPU";
    }
    for (int k = 0; k < n->nin && compares(n->op); k++) {
        DType dt = node_input(g, n, k)->dtype;
        if (dtype_is_int(dt) && dt != DT_BOOL) return "integer comparison runs on the CPU";
    }
    return NULL;
}

bool npu_supports(Graph *g, const Node *n, const char **why)
{
    const OpInfo *oi = &op_info[n->op];
    *why = NULL;
    if (!(oi->flags & OPF_NPU)) {
        *why = arena_printf(&g->arena, "no NPU kernel for %s", op_short_name(n->op));
        return false;
    }
    for (int k = 0; k < n->nin; k++)
        if (node_input(g, n, k)->rank > NPU_MAX_KERNEL_RANK) {
            *why = "rank above 6";
            return false;
        }
    for (int k = 0; k < n->nout; k++)
        if (node_output(g, n, k)->rank > NPU_MAX_KERNEL_RANK) {
            *why = "rank above 6";
            return false;
        }
    if (!(oi->flags & OPF_VIEW) && (*why = int_reason(g, n)) != NULL) return false;
    switch (n->op) {
    case OP_CONV2D:
        if (node_input(g, n, 0)->rank != 4) {
            *why = "conv2d input is not 4-D";
            return false;
        }
        return true;
    case OP_MAX_POOL2D: {
        int64_t dil[2];
        if (!attr_ints_n(n, "dilation", dil, 2, 1) || dil[0] != 1 || dil[1] != 1) {
            *why = "dilated max_pool2d";
            return false;
        }
        return node_input(g, n, 0)->rank == 4 || (*why = "pool input is not 4-D", false);
    }
    case OP_AVG_POOL2D:
    case OP_ADAPTIVE_AVG_POOL2D:
        if (node_input(g, n, 0)->rank != 4) {
            *why = "pool input is not 4-D";
            return false;
        }
        return true;
    case OP_SOFTMAX:
    case OP_LOG_SOFTMAX: {
        int r = node_input(g, n, 0)->rank;
        int dim = norm_dim(attr_int(n, "dim", -1), r);
        if (dim != r - 1 && r > 0) {
            *why = arena_printf(&g->arena,
                                "softmax over dim %d of %d: the NPU kernel reduces the "
                                "last dim",
                                dim, r);
            return false;
        }
        return true;
    }
    case OP_MEAN:
    case OP_SUM:
    case OP_AMAX: {
        int r = node_input(g, n, 0)->rank;
        int64_t dims[NPU_MAX_RANK];
        int nd = attr_ints(n, "dim", dims, NPU_MAX_RANK);
        if (nd == 1 && norm_dim(dims[0], r) == r - 1) return true;
        *why = "reduction over other than the last dim";
        return false;
    }
    case OP_ARGMAX: {
        int r = node_input(g, n, 0)->rank;
        int64_t dim;
        if (r <= 1 || (attr_present(n, "dim") && attr_ints(n, "dim", &dim, 1) == 1 &&
                       norm_dim(dim, r) == r - 1))
            return true;
        *why = attr_present(n, "dim") ? "argmax over other than the last dim"
                                      : "argmax of a flattened tensor of rank above 1";
        return false;
    }
    case OP_LAYER_NORM: {
        int64_t ns[NPU_MAX_RANK];
        if (attr_ints(n, "normalized_shape", ns, NPU_MAX_RANK) != 1) {
            *why = "layer_norm over more than the last dim";
            return false;
        }
        return true;
    }
    case OP_CAT:
        if (tensor_numel(node_output(g, n, 0)) == 0) {
            *why = "an empty cat runs on the CPU";
            return false;
        }
        if (n->nin > NPU_MAX_CAT_INPUTS) {
            *why = arena_printf(&g->arena, "cat of %d inputs: the NPU kernels take at most %d",
                                n->nin, NPU_MAX_CAT_INPUTS);
            return false;
        }
        return true;
    case OP_TO_DTYPE:
        if (dtype_is_int(node_output(g, n, 0)->dtype)) {
            *why = "conversion to an integer type";
            return false;
        }
        return true;
    case OP_BATCH_NORM:
        if (attr_bool(n, "training", false)) {
            *why = "training-mode batch_norm";
            return false;
        }
        return true;
    case OP_MASKED_FILL:
        if (n->nin == 3) {
            *why = "masked_fill with a tensor value runs on the CPU";
            return false;
        }
        return true;
    case OP_INDEX_COPY:
        if (node_input(g, n, 0)->rank == 0) {
            *why = "index_copy of a 0-dim tensor runs on the CPU";
            return false;
        }
        return true;
    case OP_WHERE:
        if (n->nin < 2) {
            *why = "where of two scalars runs on the CPU";
            return false;
        }
        return true;
    case OP_EMBEDDING:
    case OP_MATMUL:
    case OP_BMM:
    case OP_MM:
    case OP_LINEAR:
    case OP_ADDMM:
        return true;
    case OP_ASSERT_META:
    case OP_IDENTITY:
    case OP_DROPOUT:
    case OP_GETITEM:
    case OP_T:
    case OP_RELU:
    case OP_RELU6:
    case OP_HARDTANH:
    case OP_HARDSWISH:
    case OP_HARDSIGMOID:
    case OP_SIGMOID:
    case OP_TANH:
    case OP_GELU:
    case OP_SILU:
    case OP_NEG:
    case OP_EXP:
    case OP_LOG:
    case OP_ABS:
    case OP_SQRT:
    case OP_RSQRT:
    case OP_COS:
    case OP_SIN:
    case OP_POW:
    case OP_CLAMP:
    case OP_ADD:
    case OP_SUB:
    case OP_RSUB:
    case OP_MUL:
    case OP_DIV:
    case OP_EQ:
    case OP_NE:
    case OP_LT:
    case OP_LE:
    case OP_GT:
    case OP_GE:
    case OP_LOGICAL_NOT:
    case OP_LOGICAL_AND:
    case OP_LOGICAL_OR:
    case OP_CUMSUM:
    case OP_SLICE:
    case OP_SELECT:
    case OP_SPLIT:
    case OP_VIEW:
    case OP_FLATTEN:
    case OP_UNSQUEEZE:
    case OP_SQUEEZE:
    case OP_PERMUTE:
    case OP_TRANSPOSE:
    case OP_EXPAND:
    case OP_ARANGE:
    case OP_FULL:
    case OP_ZEROS:
    case OP_ONES:
    case OP_DEPAD:
    case OP_PACK:
    case OP_LEAKY_RELU:
    case OP_FILL_LIKE:
    case OP_DIFF:
    case OP_INDEX:
    case OP_GATHER:
    case OP_CONV1D:
    case OP_CONV_TRANSPOSE2D:
    case OP_GROUP_NORM:
    case OP_UPSAMPLE_BILINEAR2D:
    case OP_UPSAMPLE_NEAREST2D:
    case OP_PAD:
    case OP_EINSUM:
    case OP_VECTOR_NORM:
    case OP_SDPA:
    case OP_ACOS:
    case OP_ASIN:
    case OP_ATAN:
    case OP_TAN:
    case OP_LOG1P:
    case OP_EXPM1:
    case OP_ERF:
    case OP_RECIPROCAL:
    case OP_SOFTPLUS:
    case OP_ELU:
    case OP_MISH:
    case OP_CEIL:
    case OP_FLOOR:
    case OP_ROUND:
    case OP_SIGN:
    case OP_SQUARE:
    case OP_ISNAN:
    case OP_MAXIMUM:
    case OP_MINIMUM:
    case OP_REMAINDER:
    case OP_AMIN:
    case OP_PROD:
    case OP_ANY:
    case OP_ALL:
    case OP_VAR:
    case OP_STD:
    case OP_LOGSUMEXP:
    case OP_ARGMIN:
    case OP_CLAMP_T:
    case OP_STACK:
    case OP_FLIP:
    case OP_ROLL:
    case OP_TRI:
    case OP_REPEAT:
    case OP_REPEAT_INTERLEAVE:
    case OP_PIXEL_SHUFFLE:
    case OP_BADDBMM:
    case OP_INSTANCE_NORM:
    case OP_SLICE_FILL:
    case OP_MAX_DIM:
    case OP_TOPK:
    case OP_SORT:
    case OP_UNBIND:
    case OP_MAX_POOL2D_WI:
    case OP_COPY:

        return true;
    case OP_COUNT:
    case OP_INVALID:
        break;
    }
    return true;
}
