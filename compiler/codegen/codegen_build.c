/* The expression DAG of one generated kernel (codegen.h): the value of the anchor's output at
 * the coordinates of output element `gid`, built backwards through the members. A member's value
 * at coordinates c is its op applied to its inputs' values at the coordinates the op maps c to:
 * elementwise ops broadcast (right-aligned, 0 on size-1 dims), views move coordinates (reshape
 * through the row-major linear index, permute, expand, slice, select, cat as a select between
 * clamped branches), an eval batch_norm is an affine map per channel (dim 1) whose parameters
 * are read at the channel, and a tensor from outside the group is a load at sum c[d]*stride[d]
 * with its physical strides (channel padding included). Semantics are the CPU reference's
 * (runtime/cpu/cpu_eltwise.c, cpu_data.c, cpu_reduce.c): float results in float32, scalar
 * attributes rounded to float32, comparisons in the operands' common type. */
#include "compiler/codegen/codegen_build.h"
#include "compiler/lower/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MEMO_MAX 256

typedef struct Memo {
    int t, rank, val;
    int c[NPU_MAX_RANK];
} Memo;

typedef struct Build {
    const KernelCtx *c;
    const PlanKernel *k;
    Cg *g;
    int fusion; /* index of the group in g->fusions, -1 for a single node */
    Memo memo[MEMO_MAX];
    int nmemo;
    int depth;
} Build;

/* ---- what a member may be ----------------------------------------------------------------- */

/* Reads a number, bool or "inf"/"-inf"/"nan" string attribute (cpu_eltwise.c scalar_attr). */
static bool scalar_attr(const Node *n, const char *key, double *v, bool *is_int)
{
    const Attr *a = node_attr(n, key);
    *is_int = a && (a->kind == ATTR_INT || a->kind == ATTR_BOOL);
    return attr_number(n, key, v); /* as the hand-written kernels read it */
}

/* A numeric attribute, dflt when absent or not a number. */
static double fattr(const Node *n, const char *key, double dflt)
{
    double v;
    bool isint;
    return scalar_attr(n, key, &v, &isint) ? v : dflt;
}

/* The input's elements in order, in a new shape: reshapes, identities, and depad (a padded
 * tensor's logical elements). */
static bool keeps_order(OpId op)
{
    return op_keeps_order(op) || op == OP_DEPAD;
}

bool cg_is_view(OpId op)
{
    return keeps_order(op) || op_class(op) == OC_permute || op_class(op) == OC_expand ||
           op == OP_SLICE || op == OP_SELECT || op == OP_CAT;
}

/* The generated form of each elementwise op that has one: the node of a unary op (cg_unary), of
 * a comparison or logical op and the operator of an arithmetic one (cg_binary); the clamps,
 * leaky_relu, gelu, where and the cast name the node they build (member_val). CG_CONST (0): no
 * generated form. */
static const CgOp cg_form[OP_COUNT] = {
    [OP_RELU] = CG_RELU,
    [OP_RELU6] = CG_CLAMP,
    [OP_HARDTANH] = CG_CLAMP,
    [OP_CLAMP] = CG_CLAMP,
    [OP_LEAKY_RELU] = CG_WHERE,
    [OP_GELU] = CG_GELU,
    [OP_HARDSWISH] = CG_HARDSWISH,
    [OP_HARDSIGMOID] = CG_HARDSIGMOID,
    [OP_SIGMOID] = CG_SIGMOID,
    [OP_TANH] = CG_TANH,
    [OP_SILU] = CG_SILU,
    [OP_NEG] = CG_NEG,
    [OP_EXP] = CG_EXP,
    [OP_LOG] = CG_LOG,
    [OP_ABS] = CG_ABS,
    [OP_SQRT] = CG_SQRT,
    [OP_RSQRT] = CG_RSQRT,
    [OP_COS] = CG_COS,
    [OP_SIN] = CG_SIN,
    [OP_ADD] = CG_ADD,
    [OP_SUB] = CG_SUB,
    [OP_RSUB] = CG_SUB,
    [OP_MUL] = CG_MUL,
    [OP_DIV] = CG_DIV,
    [OP_POW] = CG_POW,
    [OP_EQ] = CG_EQ,
    [OP_NE] = CG_NE,
    [OP_LT] = CG_LT,
    [OP_LE] = CG_LE,
    [OP_GT] = CG_GT,
    [OP_GE] = CG_GE,
    [OP_LOGICAL_NOT] = CG_NOT,
    [OP_LOGICAL_AND] = CG_AND,
    [OP_LOGICAL_OR] = CG_OR,
    [OP_WHERE] = CG_WHERE,
    [OP_MASKED_FILL] = CG_WHERE,
    [OP_TO_DTYPE] = CG_CAST,
};

static bool bcasts_to(const GTensor *in, const GTensor *out)
{
    return shape_bcasts_to(in->rank, in->shape, out->rank, out->shape);
}

/* An eval batch_norm over channel dim 1 (x, [weight, bias,] running mean, running var; each
 * parameter [C]): per channel, y = x * a + c (batchnorm_of). Not elementwise by the op table, so
 * it has a check and a builder of its own. */
static bool batchnorm_ok(const Graph *g, const Node *n, const char **why)
{
    const GTensor *x = node_input(g, n, 0), *o = node_output(g, n, 0);
    if (attr_bool(n, "training", false)) return (*why = "training-mode batch_norm"), false;
    if (n->nin != 3 && n->nin != 5) return (*why = "batch_norm without its statistics"), false;
    if (!dtype_is_float(o->dtype) || o->rank < 2 ||
        !shape_equal(x->rank, x->shape, o->rank, o->shape))
        return (*why = "batch_norm shapes"), false;
    for (int i = 1; i < n->nin; i++) {
        const GTensor *p = node_input(g, n, i);
        if (p->rank != 1 || p->shape[0] != o->shape[1])
            return (*why = "batch_norm parameters are not [C]"), false;
    }
    return true;
}

bool cg_node_supported(const Graph *g, const Node *n, const char **why)
{
    *why = NULL;
    if (n->nout != 1) return (*why = "not one output"), false;
    const GTensor *o = node_output(g, n, 0);
    if (o->rank > NPU_MAX_RANK || tensor_numel(o) > INT32_MAX || tensor_numel(o) < 1)
        return (*why = "output size"), false;
    for (int i = 0; i < n->nin; i++)
        if (tensor_numel(node_input(g, n, i)) > INT32_MAX) return (*why = "input size"), false;
    bool fl = dtype_is_float(o->dtype), bo = o->dtype == DT_BOOL;
    double v;
    bool isint;
    if (cg_is_view(n->op)) {
        if (n->nin < 1) return (*why = "no input"), false;
        if (n->op == OP_CAT) {
            if (n->nin > CG_MAX_BINDINGS) return (*why = "cat of too many inputs"), false;
            return true;
        }
        if (n->nin != 1) return (*why = "view of several inputs"), false;
        const GTensor *in = node_input(g, n, 0);
        int perm[NPU_MAX_RANK];
        if (keeps_order(n->op))
            return tensor_numel(in) == tensor_numel(o) || (*why = "element count changes", false);
        if (n->op == OP_EXPAND) return bcasts_to(in, o) || (*why = "bad expand", false);
        if (n->op == OP_SLICE && attr_present(n, "step") && attr_int(n, "step", 1) <= 0)
            return (*why = "slice step is not positive"), false;
        if ((n->op == OP_SLICE || n->op == OP_SELECT) &&
            norm_dim(attr_int(n, "dim", 0), in->rank) < 0)
            return (*why = "dim out of range"), false;
        if (op_class(n->op) == OC_permute && (!node_perm(n, in->rank, perm) || in->rank != o->rank))
            return (*why = "not a permutation"), false;
        return true;
    }
    if (op_has(n->op, OPF_SOURCE)) {
        if (n->nin != 0) return (*why = "a source with inputs"), false;
        if (n->op != OP_ARANGE) return true;
        double start = fattr(n, "start", 0), step = fattr(n, "step", 1);
        if (o->rank != 1 || step == 0) return (*why = "arange shape or step"), false;
        if (!fl && (start != (double)(int32_t)start || step != (double)(int32_t)step))
            return (*why = "integer arange with a fractional start or step"), false;
        return true;
    }
    if (n->op == OP_BATCH_NORM)
        return fl ? batchnorm_ok(g, n, why) : (*why = "not a float output", false);
    if (!(op_info[n->op].flags & OPF_ELTWISE)) return (*why = "not elementwise"), false;
    for (int i = 0; i < n->nin; i++)
        if (!bcasts_to(node_input(g, n, i), o))
            return (*why = "an operand does not broadcast"), false;
    if (!cg_form[n->op]) return (*why = "no generated form"), false;
    switch (op_class(n->op)) {
    case OC_unary:
        if (n->op == OP_GELU) {
            const char *ap = attr_str(n, "approximate", "none");
            if (!fl || (strcmp(ap, "none") != 0 && strcmp(ap, "tanh") != 0))
                return (*why = "gelu approximation"), false;
            return true;
        }
        if (op_has(n->op, OPF_INT_OK)) return fl || (*why = "integer arithmetic", false);
        return fl || (*why = "not a float output", false);
    case OC_binary:
        if (!fl) return (*why = "integer arithmetic"), false;
        if (n->nin == 1 && !scalar_attr(n, n->op == OP_POW ? "exponent" : "other", &v, &isint))
            return (*why = "no scalar operand"), false;
        if (attr_present(n, "alpha") && !scalar_attr(n, "alpha", &v, &isint))
            return (*why = "alpha is not a number"), false;
        if (n->op == OP_DIV && attr_present(n, "rounding_mode")) {
            const char *rm = attr_str(n, "rounding_mode", "");
            if (strcmp(rm, "trunc") != 0 && strcmp(rm, "floor") != 0)
                return (*why = "rounding mode"), false;
        }
        return true;
    case OC_compare:
        if (n->nin == 1 && !scalar_attr(n, "other", &v, &isint))
            return (*why = "no scalar operand"), false;
        return bo || (*why = "not a bool output", false);
    case OC_logical:
        return bo || (*why = "bitwise op on integers", false);
    case OC_select:
        if (n->op == OP_MASKED_FILL)
            return (n->nin == 2 && scalar_attr(n, "value", &v, &isint)) ||
                   (*why = "masked_fill without a value", false);
        if (n->nin == 3) return true;
        if (n->nin == 2 &&
            (scalar_attr(n, "other", &v, &isint) || scalar_attr(n, "self", &v, &isint)))
            return true;
        if (n->nin == 1 && scalar_attr(n, "self", &v, &isint) &&
            scalar_attr(n, "other", &v, &isint))
            return true;
        return (*why = "where without its operands"), false;
    case OC_other: /* the cast */
        return (fl || bo || !dtype_is_float(node_input(g, n, 0)->dtype)) ||
               (*why = "float to integer conversion", false);
    case OC_reshape:
    case OC_identity:
    case OC_permute:
    case OC_slice:
    case OC_expand:
        break;
    }
    return (*why = "no generated form"), false;
}

/* ---- building ----------------------------------------------------------------------------- */

static CgType type_of(DType dt)
{
    if (dtype_is_float(dt)) return CGT_F32;
    return dt == DT_BOOL || dt == DT_U8 ? CGT_BOOL : CGT_I32;
}

static bool member(const Build *b, int node)
{
    if (b->fusion < 0) return b->c->anchor == &b->c->g->nodes[node];
    return b->c->g->nodes[node].fusion == b->fusion;
}

static int val(Build *b, int t, const int *coord);

/* A scalar attribute as an operand: an int constant beside an int tensor, else float32. */
static int scalar(Build *b, const Node *n, const char *key, CgType beside)
{
    double v = 0;
    bool isint = false;
    if (!scalar_attr(n, key, &v, &isint)) return -1;
    if (isint && beside != CGT_F32) {
        if (v > INT32_MAX || v < INT32_MIN) return cg_fconst(b->g, v);
        return cg_iconst(b->g, (int64_t)v);
    }
    return cg_fconst(b->g, v);
}

/* Input i of elementwise node n at output coordinates oc (broadcast right-aligned). */
static int operand(Build *b, const Node *n, int i, const int *oc)
{
    const GTensor *in = node_input(b->c->g, n, i), *o = node_output(b->c->g, n, 0);
    int ic[NPU_MAX_RANK];
    for (int j = 0; j < in->rank; j++) {
        int d = j + o->rank - in->rank;
        ic[j] = in->shape[j] == 1 ? cg_iconst(b->g, 0) : oc[d];
    }
    return val(b, n->in[i], ic);
}

/* a OP alpha*b for add/sub/rsub, mul, div (three modes), pow. */
static int arith(Build *b, const Node *n, const int *oc)
{
    Cg *g = b->g;
    int x = operand(b, n, 0, oc);
    if (x < 0) return -1;
    int y = n->nin >= 2 ? operand(b, n, 1, oc)
                        : scalar(b, n, n->op == OP_POW ? "exponent" : "other", g->n[x].type);
    double alpha = fattr(n, "alpha", 1.0);
    int al = cg_fconst(g, alpha);
    switch (n->op) {
    case OP_ADD:
        return cg_binary(g, CG_ADD, x, cg_binary(g, CG_MUL, y, al));
    case OP_SUB:
        return cg_binary(g, CG_SUB, x, cg_binary(g, CG_MUL, y, al));
    case OP_RSUB:
        return cg_binary(g, CG_SUB, y, cg_binary(g, CG_MUL, x, al));
    case OP_MUL:
        return cg_binary(g, CG_MUL, x, y);
    case OP_POW:
        return cg_binary(g, CG_POW, x, y);
    case OP_DIV: {
        const char *rm = attr_present(n, "rounding_mode") ? attr_str(n, "rounding_mode", "") : "";
        CgOp op = !strcmp(rm, "trunc")   ? CG_DIV_TRUNC
                  : !strcmp(rm, "floor") ? CG_DIV_FLOOR
                                         : CG_DIV;
        return cg_binary(g, op, x, y);
    }
    default:
        return -1;
    }
}

static int where_of(Build *b, const Node *n, const int *oc)
{
    Cg *g = b->g;
    CgType ot = type_of(node_output(b->c->g, n, 0)->dtype);
    if (n->op == OP_MASKED_FILL)
        return cg_where(g, operand(b, n, 1, oc), scalar(b, n, "value", ot), operand(b, n, 0, oc));
    int cond = operand(b, n, 0, oc), x, y;
    if (n->nin == 3) {
        x = operand(b, n, 1, oc);
        y = operand(b, n, 2, oc);
    } else if (n->nin == 2 && attr_present(n, "other")) {
        x = operand(b, n, 1, oc);
        y = scalar(b, n, "other", ot);
    } else if (n->nin == 2) {
        x = scalar(b, n, "self", ot);
        y = operand(b, n, 1, oc);
    } else {
        x = scalar(b, n, "self", ot);
        y = scalar(b, n, "other", ot);
    }
    return cg_where(g, cond, x, y);
}

/* Row-major linear index of coordinates c over shape. */
static int linear(Cg *g, const int64_t *shape, int rank, const int *c)
{
    int lin = cg_iconst(g, 0);
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        lin = cg_iadd(g, lin, cg_imul(g, c[d], s));
        s *= shape[d];
    }
    return lin;
}

/* Coordinates of linear index lin over shape. */
static void unravel(Cg *g, int lin, const int64_t *shape, int rank, int *c)
{
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        c[d] = cg_imod(g, cg_idiv(g, lin, s), shape[d]);
        s *= shape[d];
    }
}

static int cat_of(Build *b, const Node *n, const int *oc)
{
    Cg *g = b->g;
    const GTensor *o = node_output(b->c->g, n, 0);
    int dim = norm_dim(attr_int(n, "dim", 0), o->rank);
    if (dim < 0) return (g->err = "cat dim out of range"), -1;
    int branch[CG_MAX_BINDINGS + 4], nb = 0;
    int64_t end[CG_MAX_BINDINGS + 4], at = 0;
    for (int i = 0; i < n->nin && nb < CG_MAX_BINDINGS + 4; i++) {
        const GTensor *x = node_input(b->c->g, n, i);
        if (x->rank == 1 && x->shape[0] == 0) continue; /* legacy empty input */
        if (x->rank != o->rank) return (g->err = "cat input of another rank"), -1;
        if (x->shape[dim] == 0) continue;
        int ic[NPU_MAX_RANK];
        memcpy(ic, oc, sizeof(int) * (size_t)o->rank);
        ic[dim] =
            cg_imin(g, cg_imax(g, cg_iadd(g, oc[dim], cg_iconst(g, -at)), 0), x->shape[dim] - 1);
        branch[nb] = val(b, n->in[i], ic);
        at += x->shape[dim];
        end[nb++] = at;
    }
    if (nb == 0 || at != o->shape[dim]) return (g->err = "cat sizes do not add up"), -1;
    int v = branch[nb - 1];
    for (int i = nb - 2; i >= 0; i--)
        v = cg_where(g, cg_binary(g, CG_LT, oc[dim], cg_iconst(g, end[i])), branch[i], v);
    return v;
}

/* A view's input coordinates for output coordinates oc. */
static int view_of(Build *b, const Node *n, const int *oc)
{
    Cg *g = b->g;
    if (n->op == OP_CAT) return cat_of(b, n, oc);
    const GTensor *in = node_input(b->c->g, n, 0), *o = node_output(b->c->g, n, 0);
    int ic[NPU_MAX_RANK];
    int r = in->rank;
    if (keeps_order(n->op)) {
        if (in->rank == o->rank && memcmp(in->shape, o->shape, sizeof(int64_t) * (size_t)r) == 0)
            memcpy(ic, oc, sizeof(int) * (size_t)r);
        else
            unravel(g, linear(g, o->shape, o->rank, oc), in->shape, r, ic);
    } else if (op_class(n->op) == OC_permute) {
        int perm[NPU_MAX_RANK];
        if (!node_perm(n, r, perm)) return (g->err = "bad permutation"), -1;
        for (int i = 0; i < r; i++)
            ic[perm[i]] = oc[i];
    } else if (n->op == OP_EXPAND) {
        for (int j = 0; j < r; j++)
            ic[j] = in->shape[j] == 1 ? cg_iconst(g, 0) : oc[j + o->rank - r];
    } else if (n->op == OP_SLICE || n->op == OP_SELECT) {
        int dim = norm_dim(attr_int(n, "dim", 0), r);
        if (dim < 0) return (g->err = "slice dim out of range"), -1;
        int64_t size = in->shape[dim], start, step = 1;
        if (n->op == OP_SELECT) {
            start = attr_int(n, "index", 0);
            if (start < 0) start += size;
            if (start < 0 || start >= size) return (g->err = "select index out of range"), -1;
        } else {
            start = attr_present(n, "start") ? attr_int(n, "start", 0) : 0;
            step = attr_present(n, "step") ? attr_int(n, "step", 1) : 1;
            if (start < 0) start += size;
            if (start < 0) start = 0;
            if (start > size) start = size;
        }
        for (int i = 0, k = 0; i < r; i++) {
            if (n->op == OP_SELECT && i == dim) {
                ic[i] = cg_iconst(g, start);
                continue;
            }
            ic[i] = i == dim ? cg_iadd(g, cg_imul(g, oc[k], step), cg_iconst(g, start)) : oc[k];
            k++;
        }
        if (n->op == OP_SLICE && start + (o->shape[dim] - 1) * step >= size)
            return (g->err = "slice runs past its input"), -1;
    } else {
        return (g->err = "not a view"), -1;
    }
    return val(b, n->in[0], ic);
}

/* A source op's value: full, zeros, ones, arange. */
static int source_of(Build *b, const Node *n, CgType ot, const int *oc)
{
    Cg *g = b->g;
    if (n->op == OP_ARANGE) {
        double start = fattr(n, "start", 0), step = fattr(n, "step", 1);
        if (ot == CGT_I32)
            return cg_iadd(g, cg_imul(g, oc[0], (int64_t)step), cg_iconst(g, (int64_t)start));
        return cg_binary(g, CG_ADD, cg_fconst(g, start),
                         cg_binary(g, CG_MUL, cg_cast(g, CGT_F32, oc[0]), cg_fconst(g, step)));
    }
    double fill = n->op == OP_ONES ? 1 : n->op == OP_FULL ? fattr(n, "fill_value", 0) : 0;
    return ot == CGT_F32    ? cg_fconst(g, fill)
           : ot == CGT_BOOL ? cg_bconst(g, fill != 0)
                            : cg_iconst(g, (int64_t)fill);
}

/* A unary op's value: the clamps, leaky_relu and gelu's approximations built here, the others
 * one node of cg_form. */
static int unary_of(Build *b, const Node *n, const int *oc)
{
    Cg *g = b->g;
    int x = operand(b, n, 0, oc);
    switch (n->op) {
    case OP_RELU6:
        return cg_clamp(g, x, 0, 6);
    case OP_HARDTANH:
        return cg_clamp(g, x, fattr(n, "min_val", -1), fattr(n, "max_val", 1));
    case OP_CLAMP:
        return cg_clamp(g, x, fattr(n, "min", -INFINITY), fattr(n, "max", INFINITY));
    case OP_LEAKY_RELU: /* x > 0 ? x : x * slope (NaN: the product, NaN) */
        return cg_where(g, cg_binary(g, CG_GT, x, cg_fconst(g, 0)), x,
                        cg_binary(g, CG_MUL, x, cg_fconst(g, fattr(n, "negative_slope", 0.01))));
    case OP_GELU: {
        bool tanh_form = strcmp(attr_str(n, "approximate", "none"), "tanh") == 0;
        return cg_unary(g, tanh_form ? CG_GELU_TANH : CG_GELU, x);
    }
    default:
        return cg_unary(g, cg_form[n->op], x);
    }
}

/* A comparison's or logical and/or's value (bool); the second operand may be the scalar `other`. */
static int compare_of(Build *b, const Node *n, const int *oc)
{
    Cg *g = b->g;
    int x = operand(b, n, 0, oc);
    if (x < 0) return -1;
    int y = n->nin >= 2 ? operand(b, n, 1, oc) : scalar(b, n, "other", g->n[x].type);
    if (op_class(n->op) == OC_logical) {
        x = cg_cast(g, CGT_BOOL, x);
        y = cg_cast(g, CGT_BOOL, y);
    }
    return cg_binary(g, cg_form[n->op], x, y);
}

/* Logical not is one unary node; and/or compare their operands as bools. */
static int logical_of(Build *b, const Node *n, const int *oc)
{
    return n->op == OP_LOGICAL_NOT ? unary_of(b, n, oc) : compare_of(b, n, oc);
}

/* A cast: the operand; member_val converts every value to the output's type. */
static int cast_of(Build *b, const Node *n, const int *oc)
{
    return operand(b, n, 0, oc);
}

/* batch_norm's value: per channel ch = oc[1], a = [w] / sqrt(var + eps), c = [b] - mean * a, and
 * x * a + c, in the order of the CPU reference (runtime/cpu/cpu_reduce.c) and
 * shaders/batchnorm.glsl. The parameters are loads (or members) at [ch]. */
static int batchnorm_of(Build *b, const Node *n, const int *oc)
{
    Cg *g = b->g;
    bool affine = n->nin == 5;
    int ch[1] = {oc[1]};
    int x = operand(b, n, 0, oc), mean = val(b, n->in[affine ? 3 : 1], ch),
        var = val(b, n->in[affine ? 4 : 2], ch);
    int eps = cg_fconst(g, attr_float(n, "eps", 1e-5));
    int a =
        cg_binary(g, CG_DIV, cg_fconst(g, 1), cg_unary(g, CG_SQRT, cg_binary(g, CG_ADD, var, eps)));
    if (affine) a = cg_binary(g, CG_MUL, a, val(b, n->in[1], ch));
    int bias = affine ? val(b, n->in[2], ch) : cg_fconst(g, 0);
    int c = cg_binary(g, CG_SUB, bias, cg_binary(g, CG_MUL, mean, a));
    return cg_binary(g, CG_ADD, cg_binary(g, CG_MUL, x, a), c);
}

/* The value of a member of each class but the views (view_of), OC_expand the last class. */
static int (*const class_val[OC_expand + 1])(Build *b, const Node *n, const int *oc) = {
    [OC_unary] = unary_of,     [OC_binary] = arith,    [OC_compare] = compare_of,
    [OC_logical] = logical_of, [OC_select] = where_of, [OC_other] = cast_of,
};

/* The value of member n's output at coordinates oc. */
static int member_val(Build *b, const Node *n, const int *oc)
{
    Cg *g = b->g;
    const char *why;
    if (!cg_node_supported(b->c->g, n, &why)) return (g->err = why), -1;
    CgType ot = type_of(node_output(b->c->g, n, 0)->dtype);
    if (cg_is_view(n->op)) return view_of(b, n, oc);
    if (op_has(n->op, OPF_SOURCE)) return cg_cast(g, ot, source_of(b, n, ot, oc));
    if (n->op == OP_BATCH_NORM) return cg_cast(g, ot, batchnorm_of(b, n, oc));
    int (*val_of)(Build *, const Node *, const int *) = class_val[op_class(n->op)];
    if (!val_of) return (g->err = "no generated form"), -1;
    return cg_cast(g, ot, val_of(b, n, oc));
}

/* The binding of an outside tensor t: its position among the kernel's inputs. */
static int binding_of(const Build *b, int t)
{
    const char *name = b->c->g->tensors[t].name;
    for (int i = 0; i < b->k->nin; i++)
        if (strcmp(kc_arg(b->k, b->c->p, i)->name, name) == 0) return i;
    return -1;
}

static int offset_of(Cg *g, const PlanTensor *pt, const int *coord)
{
    int64_t st[NPU_MAX_RANK];
    kc_strides(pt, st);
    int off = cg_iconst(g, 0);
    for (int d = 0; d < pt->rank; d++)
        off = cg_iadd(g, off, cg_imul(g, coord[d], st[d]));
    return off;
}

static int val(Build *b, int t, const int *coord)
{
    const Graph *G = b->c->g;
    const GTensor *x = &G->tensors[t];
    for (int i = 0; i < b->nmemo; i++) {
        const Memo *m = &b->memo[i];
        if (m->t == t && memcmp(m->c, coord, sizeof(int) * (size_t)x->rank) == 0) return m->val;
    }
    if (++b->depth > 256) return (b->g->err = "the group is too deep"), -1;
    int v;
    if (x->producer >= 0 && member(b, x->producer)) {
        v = member_val(b, &G->nodes[x->producer], coord);
    } else {
        int bi = binding_of(b, t);
        if (bi < 0) return (b->g->err = "an outside input is not bound"), -1;
        const PlanTensor *pt = kc_arg(b->k, b->c->p, bi);
        if (pt->rank != x->rank) return (b->g->err = "plan tensor of another rank"), -1;
        v = cg_load(b->g, bi, type_of(pt->storage), offset_of(b->g, pt, coord));
    }
    b->depth--;
    if (b->nmemo < MEMO_MAX) {
        Memo *m = &b->memo[b->nmemo++];
        m->t = t;
        m->rank = x->rank;
        memcpy(m->c, coord, sizeof(int) * (size_t)x->rank);
        m->val = v;
    }
    return v;
}

Status cg_build(const KernelCtx *c, const PlanKernel *k, CgKernel *out)
{
    const PlanTensor *o = kc_out(k, c->p);
    int64_t n = kc_numel(o);
    cg_init(&out->g, n);
    out->storage = c->p->compute;
    if (k->nin > CG_MAX_BINDINGS)
        return kc_error(c, "generated kernel with %d inputs (at most %d)", k->nin, CG_MAX_BINDINGS);
    out->nbind = k->nin + 1;
    for (int i = 0; i < k->nargs; i++) {
        const PlanTensor *t = kc_arg(k, c->p, i);
        out->bind[i] = (CgBinding){t->name, type_of(t->storage)};
    }
    out->pack_bytes = out->bind[k->nin].type == CGT_BOOL;
    Build *b = calloc(1, sizeof *b);
    if (!b) return ST_NOMEM;
    b->c = c;
    b->k = k;
    b->g = &out->g;
    b->fusion = c->fusion ? (int)(c->fusion - c->g->fusions) : -1;
    Cg *g = &out->g;
    int gid = cg_gid(g), oc[NPU_MAX_RANK];
    int64_t s = 1;
    for (int d = o->rank - 1; d >= 0; d--) {
        oc[d] = cg_imod(g, cg_idiv(g, gid, s), o->shape[d]);
        s *= o->shape[d];
    }
    int anchor_out = c->fusion ? c->fusion->out : c->anchor->out[0];
    out->value = cg_cast(g, out->bind[k->nin].type, val(b, anchor_out, oc));
    out->offset = offset_of(g, o, oc);
    free(b);
    if (g->err || out->value < 0 || out->offset < 0)
        return kc_error(c, "generated kernel: %s", g->err ? g->err : "no value");
    if (out->pack_bytes && out->offset != gid)
        return kc_error(c, "generated kernel: bool output %s is not dense", o->name);
    return ST_OK;
}
