#include "compiler/support.h"

#include <stdio.h>

/* Comparisons and logical ops: a bool result. */
static bool compares(OpId op)
{
    return op_class(op) == OC_compare || op_class(op) == OC_logical;
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

/* The checks of the ops whose NPU kernel takes only some of their attributes and shapes: true
 * when it takes n, else false with *why set. */
typedef bool (*SupportCheck)(Graph *g, const Node *n, const char **why);

static bool conv2d_ok(Graph *g, const Node *n, const char **why)
{
    return node_input(g, n, 0)->rank == 4 || (*why = "conv2d input is not 4-D", false);
}

static bool pool_ok(Graph *g, const Node *n, const char **why)
{
    return node_input(g, n, 0)->rank == 4 || (*why = "pool input is not 4-D", false);
}

static bool max_pool_ok(Graph *g, const Node *n, const char **why)
{
    int64_t dil[2];
    if (!attr_ints_n(n, "dilation", dil, 2, 1) || dil[0] != 1 || dil[1] != 1)
        return (*why = "dilated max_pool2d", false);
    return pool_ok(g, n, why);
}

static bool softmax_ok(Graph *g, const Node *n, const char **why)
{
    int r = node_input(g, n, 0)->rank;
    int dim = norm_dim(attr_int(n, "dim", -1), r);
    if (dim == r - 1 || r == 0) return true;
    *why = arena_printf(&g->arena, "softmax over dim %d of %d: the NPU kernel reduces the last dim",
                        dim, r);
    return false;
}

static bool reduce_ok(Graph *g, const Node *n, const char **why)
{
    int r = node_input(g, n, 0)->rank;
    int64_t dims[NPU_MAX_RANK];
    int nd = attr_ints(n, "dim", dims, NPU_MAX_RANK);
    return (nd == 1 && norm_dim(dims[0], r) == r - 1) ||
           (*why = "reduction over other than the last dim", false);
}

static bool argmax_ok(Graph *g, const Node *n, const char **why)
{
    int r = node_input(g, n, 0)->rank;
    int64_t dim;
    if (r <= 1 ||
        (attr_present(n, "dim") && attr_ints(n, "dim", &dim, 1) == 1 && norm_dim(dim, r) == r - 1))
        return true;
    *why = attr_present(n, "dim") ? "argmax over other than the last dim"
                                  : "argmax of a flattened tensor of rank above 1";
    return false;
}

static bool layer_norm_ok(Graph *g, const Node *n, const char **why)
{
    (void)g;
    int64_t ns[NPU_MAX_RANK];
    return attr_ints(n, "normalized_shape", ns, NPU_MAX_RANK) == 1 ||
           (*why = "layer_norm over more than the last dim", false);
}

static bool cat_ok(Graph *g, const Node *n, const char **why)
{
    if (tensor_numel(node_output(g, n, 0)) == 0)
        return (*why = "an empty cat runs on the CPU", false);
    if (n->nin <= NPU_MAX_CAT_INPUTS) return true;
    *why = arena_printf(&g->arena, "cat of %d inputs: the NPU kernels take at most %d", n->nin,
                        NPU_MAX_CAT_INPUTS);
    return false;
}

static bool to_dtype_ok(Graph *g, const Node *n, const char **why)
{
    return !dtype_is_int(node_output(g, n, 0)->dtype) ||
           (*why = "conversion to an integer type", false);
}

static bool batch_norm_ok(Graph *g, const Node *n, const char **why)
{
    (void)g;
    return !attr_bool(n, "training", false) || (*why = "training-mode batch_norm", false);
}

static bool masked_fill_ok(Graph *g, const Node *n, const char **why)
{
    (void)g;
    return n->nin != 3 || (*why = "masked_fill with a tensor value runs on the CPU", false);
}

static bool index_copy_ok(Graph *g, const Node *n, const char **why)
{
    return node_input(g, n, 0)->rank != 0 ||
           (*why = "index_copy of a 0-dim tensor runs on the CPU", false);
}

static bool where_ok(Graph *g, const Node *n, const char **why)
{
    (void)g;
    return n->nin >= 2 || (*why = "where of two scalars runs on the CPU", false);
}

static bool pad_ok(Graph *g, const Node *n, const char **why)
{
    /* integer tensors are int32 on the device: so must be their fill */
    const Attr *va = node_attr(n, "value");
    int64_t v = va && va->kind == ATTR_INT ? va->i : (int64_t)attr_float(n, "value", 0.0);
    return !dtype_is_int(node_output(g, n, 0)->dtype) || (v >= INT32_MIN && v <= INT32_MAX) ||
           (*why = "an integer pad value beyond int32", false);
}

/* By op; none: every node of an OPF_NPU op whose ranks and dtypes suit the kernels. */
static const SupportCheck support_checks[OP_COUNT] = {
    [OP_CONV2D] = conv2d_ok,
    [OP_MAX_POOL2D] = max_pool_ok,
    [OP_AVG_POOL2D] = pool_ok,
    [OP_ADAPTIVE_AVG_POOL2D] = pool_ok,
    [OP_SOFTMAX] = softmax_ok,
    [OP_LOG_SOFTMAX] = softmax_ok,
    [OP_MEAN] = reduce_ok,
    [OP_SUM] = reduce_ok,
    [OP_AMAX] = reduce_ok,
    [OP_ARGMAX] = argmax_ok,
    [OP_LAYER_NORM] = layer_norm_ok,
    [OP_CAT] = cat_ok,
    [OP_TO_DTYPE] = to_dtype_ok,
    [OP_BATCH_NORM] = batch_norm_ok,
    [OP_MASKED_FILL] = masked_fill_ok,
    [OP_INDEX_COPY] = index_copy_ok,
    [OP_WHERE] = where_ok,
    [OP_PAD] = pad_ok,
};

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
    /* integer data moves through the data ops (views, pad and roll) unchanged */
    if (!(oi->flags & OPF_VIEW) && oi->kernel != KK_pad && (*why = int_reason(g, n)) != NULL)
        return false;
    SupportCheck check = support_checks[n->op];
    return !check || check(g, n, why);
}
