#include "compiler/shape/shape_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The op as the node spells it ("reshape", "add_"), so messages match what the user exported. */
static const char *op_label(const Node *n, char *buf, size_t cap)
{
    const char *a = n->aten;
    if (!a || strncmp(a, "aten.", 5) != 0) return op_short_name(n->op);
    a += 5;
    const char *dot = strchr(a, '.');
    size_t m = dot ? (size_t)(dot - a) : strlen(a);
    if (m >= cap) m = cap - 1;
    memcpy(buf, a, m);
    buf[m] = 0;
    return buf;
}

Status sh_err(const ShapeCtx *c, const char *tensor, const char *fmt, ...)
{
    char msg[768], lb[48];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return diag_error(c->d, c->g->path, c->n->name, tensor, "%s: %s", op_label(c->n, lb, sizeof lb),
                      msg);
}

const GTensor *sh_in(const ShapeCtx *c, int i)
{
    return node_input(c->g, c->n, i);
}

Status sh_set(ShapeCtx *c, int rank, const int64_t *shape)
{
    if (rank > NPU_MAX_RANK)
        return sh_err(c, NULL, "the result would have rank %d, more than the supported %d", rank,
                      NPU_MAX_RANK);
    int64_t tmp[NPU_MAX_RANK];
    memcpy(tmp, shape, sizeof(int64_t) * (size_t)rank);
    c->rank = rank;
    memcpy(c->shape, tmp, sizeof(int64_t) * (size_t)rank);
    return ST_OK;
}

Status sh_int(const ShapeCtx *c, const char *key, bool required, int64_t dflt, int64_t *out)
{
    const Attr *a = node_attr(c->n, key);
    *out = dflt; /* also on error: callers may not look, the optimiser cannot tell */
    if (!a || a->kind == ATTR_NONE) {
        if (required) return sh_err(c, NULL, "attribute '%s' is required", key);
        return ST_OK;
    }
    if (a->kind != ATTR_INT) return sh_err(c, NULL, "attribute '%s' must be an integer", key);
    *out = a->i;
    return ST_OK;
}

Status sh_dim(const ShapeCtx *c, const char *key, bool required, int64_t dflt, int rank, int *out)
{
    int64_t v;
    *out = 0;
    Status st = sh_int(c, key, required, dflt, &v);
    if (st != ST_OK) return st;
    int k = norm_dim(v, rank);
    if (k < 0) {
        int r = rank > 0 ? rank : 1;
        return sh_err(c, NULL, "%s %lld is out of range (expected to be in range of [%d, %d])", key,
                      (long long)v, -r, r - 1);
    }
    *out = k;
    return ST_OK;
}

Status sh_ints(const ShapeCtx *c, const char *key, int64_t *out, int maxn, int *cnt)
{
    const Attr *a = node_attr(c->n, key);
    *cnt = -1;
    if (!a || a->kind == ATTR_NONE) return ST_OK;
    if (a->kind == ATTR_INT) {
        out[0] = a->i;
        *cnt = 1;
        return ST_OK;
    }
    if (a->kind != ATTR_INTS)
        return sh_err(c, NULL, "attribute '%s' must be a list of integers", key);
    if (a->n > maxn)
        return sh_err(c, NULL, "attribute '%s' has %d entries, at most %d are supported", key, a->n,
                      maxn);
    for (int i = 0; i < a->n; i++)
        out[i] = a->ints[i];
    *cnt = a->n;
    return ST_OK;
}

Status sh_ints_n(const ShapeCtx *c, const char *key, int cnt, int64_t dflt, int64_t *out)
{
    int64_t v[NPU_MAX_RANK];
    int k;
    for (int i = 0; i < cnt; i++)
        out[i] = dflt;
    Status st = sh_ints(c, key, v, NPU_MAX_RANK, &k);
    if (st != ST_OK) return st;
    if (k != -1 && k != 1 && k != cnt)
        return sh_err(c, NULL, "attribute '%s' must have 1 or %d entries, it has %d", key, cnt, k);
    for (int i = 0; i < cnt; i++) {
        out[i] = k == -1 ? dflt : k == 1 ? v[0] : v[i];
        /* sizes, strides, paddings and dilations feed shape arithmetic: keep it overflow-free */
        if (out[i] > ((int64_t)1 << 40) || out[i] < -((int64_t)1 << 40))
            return sh_err(c, NULL, "attribute '%s' value %lld is out of range", key,
                          (long long)out[i]);
    }
    return ST_OK;
}

Status sh_broadcast(const ShapeCtx *c, const char *tensor, int ra, const int64_t *a, int rb,
                    const int64_t *b, int *ro, int64_t *o)
{
    int r = ra > rb ? ra : rb;
    int64_t tmp[NPU_MAX_RANK];
    for (int i = 0; i < r; i++) {
        int64_t da = i < r - ra ? 1 : a[i - (r - ra)];
        int64_t db = i < r - rb ? 1 : b[i - (r - rb)];
        if (da == db || db == 1)
            tmp[i] = da;
        else if (da == 1)
            tmp[i] = db;
        else {
            char sa[128], sb[128];
            return sh_err(c, tensor,
                          "shapes %s and %s cannot be broadcast together (size %lld vs %lld at "
                          "dim %d of the result)",
                          shape_str(a, ra, sa, sizeof sa), shape_str(b, rb, sb, sizeof sb),
                          (long long)da, (long long)db, i);
        }
    }
    memcpy(o, tmp, sizeof(int64_t) * (size_t)r);
    *ro = r;
    return ST_OK;
}

bool sh_inplace(const Node *n)
{
    const char *a = n->aten;
    if (!a || strncmp(a, "aten.", 5) != 0) return false;
    const char *dot = strchr(a + 5, '.');
    /* aten.__and__.Tensor is a & b, not in place (that is __iand__) */
    return dot && dot > a + 5 && dot[-1] == '_' && strncmp(a + 5, "__", 2) != 0;
}

int shape_op_nout(OpId op)
{
    return op_has(op, OPF_NOOP) ? 0 : shape_is_multi(op) && op != OP_UNBIND ? 2 : 1;
}

/* _assert_tensor_metadata produces nothing; a `size` it asserts must be the tensor's. */
static Status shape_assert_meta(ShapeCtx *c)
{
    int64_t sz[NPU_MAX_RANK];
    int k;
    Status st = sh_ints(c, "size", sz, NPU_MAX_RANK, &k);
    if (st != ST_OK || k < 0) return st;
    const GTensor *x = sh_in(c, 0);
    int same = k == x->rank;
    for (int i = 0; same && i < k; i++)
        same = sz[i] == x->shape[i];
    char a[128], b[128];
    if (!same)
        return sh_err(c, x->name, "asserts size %s but the tensor is %s",
                      shape_str(sz, k, a, sizeof a), shape_str(x->shape, x->rank, b, sizeof b));
    return ST_OK;
}

/* Eval dropout is the identity; training-mode dropout zeroes random elements, so running it as
 * the identity would give a different answer: refused as training-mode batch_norm is. */
static Status shape_dropout(ShapeCtx *c)
{
    if ((attr_bool(c->n, "train", false) || attr_bool(c->n, "training", false)) &&
        attr_float(c->n, "p", 0.5) > 0)
        return sh_err(c, NULL,
                      "training-mode dropout (p=%g) is random and is not supported: "
                      "export the model in eval mode (model.eval())",
                      attr_float(c->n, "p", 0.5));
    return shape_same(c);
}

/* clamp.Tensor with one bound: which bound it is is lost in the IR. */
static Status shape_clamp_t(ShapeCtx *c)
{
    if (c->n->nin == 2)
        return sh_err(c, NULL,
                      "one bound tensor: the IR does not say whether it is min or "
                      "max (export clamp_min/clamp_max, or pass both bounds)");
    return shape_eltwise(c);
}

/* Each op's shape rule: ops.def's SHAPE column. */
typedef Status (*ShapeRule)(ShapeCtx *c);
static const ShapeRule shape_rules[OP_COUNT] = {
#define X(id, nm, mn, mx, fl, kind, cls, shape, dt, doc) [OP_##id] = shape_##shape,
#include "compiler/ops.def"
#undef X
};

bool shape_is_multi(OpId op)
{
    return op >= 0 && op < OP_COUNT && shape_rules[op] == shape_multi;
}

Status shape_infer(const Graph *g, const Node *n, int *rank, int64_t (*shape)[NPU_MAX_RANK],
                   DiagList *d)
{
    ShapeCtx c = {.g = g, .n = n, .d = d, .ranks = rank, .shapes = shape};
    if (n->op < 0 || n->op >= OP_COUNT)
        return diag_add(d, DIAG_ERROR, ST_INTERNAL, g->path, n->name, NULL,
                        "shape inference has no rule for op %d ('%s')", (int)n->op,
                        n->aten ? n->aten : "?");
    const OpInfo *oi = &op_info[n->op];
    if (n->nin < oi->min_in || n->nin > oi->max_in)
        return sh_err(&c, NULL, "takes %d..%d tensor inputs, the node has %d", oi->min_in,
                      oi->max_in, n->nin);
    /* split and the other multi-output rules fill every output and check their count */
    ShapeRule rule = shape_rules[n->op];
    if (rule == shape_split || rule == shape_multi) return rule(&c);
    int want = shape_op_nout(n->op);
    if (n->nout != want)
        return sh_err(&c, NULL, "produces %d output%s, the node declares %d", want,
                      want == 1 ? "" : "s", n->nout);
    Status st = rule(&c);
    if (st != ST_OK) return st;
    if (want == 1) {
        rank[0] = c.rank;
        memcpy(shape[0], c.shape, sizeof(int64_t) * (size_t)c.rank);
    }
    return ST_OK;
}

/* ---- dtype classes ---- */

typedef enum Cls { CL_BOOL, CL_INT, CL_FLOAT, CL_UNKNOWN } Cls;

static const char *cls_name(Cls c)
{
    static const char *names[] = {"bool", "integer", "floating-point", "unknown"};
    return names[c];
}

static Cls cls_of(DType t)
{
    if (t == DT_BOOL) return CL_BOOL;
    if (dtype_is_float(t)) return CL_FLOAT;
    if (dtype_is_int(t)) return CL_INT;
    return CL_UNKNOWN;
}

/* Type promotion between categories: bool < integer < float (a Python scalar counts by its
 * category, so int tensor * 0.5 is float, float16 tensor * 2 stays float). */
static Cls promote(Cls a, Cls b)
{
    if (a == CL_UNKNOWN || b == CL_UNKNOWN) return CL_UNKNOWN;
    return a > b ? a : b;
}

/* Category of a scalar attribute; absent promotes nothing (returns `with`). */
static Cls promote_attr(Cls with, const Node *n, const char *key)
{
    const Attr *a = node_attr(n, key);
    if (!a || a->kind == ATTR_NONE) return with;
    switch (a->kind) {
    case ATTR_BOOL:
        return promote(with, CL_BOOL);
    case ATTR_INT:
        return promote(with, CL_INT);
    case ATTR_FLOAT:
        return promote(with, CL_FLOAT);
    case ATTR_NONE:
    case ATTR_STR:
    case ATTR_INTS:
    case ATTR_FLOATS:
    case ATTR_OTHER:
        break;
    }
    return CL_UNKNOWN;
}

typedef struct OutType {
    Cls cls;
    DType exact; /* DT_INVALID when only the class is known */
} OutType;

static OutType exact(DType t)
{
    return (OutType){cls_of(t), t};
}
static OutType of_cls(Cls c)
{
    return (OutType){c, DT_INVALID};
}

static DType dtype_attr(const Node *n)
{
    const Attr *a = node_attr(n, "dtype");
    return a && a->kind == ATTR_STR ? dtype_parse(a->s) : DT_INVALID;
}

static bool is_bitwise(const Node *n)
{
    /* a & b is bitwise_and: logical on bools, bitwise on integers, refused on floats */
    return n->aten &&
           (strncmp(n->aten, "aten.bitwise_", 13) == 0 || strncmp(n->aten, "aten.__", 7) == 0);
}

static Cls in_cls(const Graph *g, const Node *n, int i)
{
    return cls_of(node_input(g, n, i)->dtype);
}

/* Promotion over tensor inputs [from, nin). */
static Cls promote_inputs(const Graph *g, const Node *n, int from)
{
    Cls c = CL_BOOL;
    for (int i = from; i < n->nin; i++)
        c = promote(c, in_cls(g, n, i));
    return c;
}

/* The output dtype rules: ops.def's DTYPE column. */
typedef enum OutRule {
    OT_same,             /* input 0's class */
    OT_input,            /* input 0's dtype */
    OT_unknown,          /* nothing to check */
    OT_bool,             /* bool */
    OT_i64,              /* int64 */
    OT_dtype_or_same,    /* attr `dtype`, else input 0's class */
    OT_dtype_or_float,   /* attr `dtype`, else a float */
    OT_dtype_or_input,   /* attr `dtype`, else input 0's dtype */
    OT_sum,              /* attr `dtype`, else float for a float input, int64 otherwise */
    OT_promote,          /* the inputs' promoted class */
    OT_promote_from1,    /* the promoted class of inputs 1.. (addmm: not the bias) */
    OT_promote_other,    /* the inputs' and the scalar `other`'s */
    OT_promote_exponent, /* the inputs' and the scalar `exponent`'s */
    OT_clamp,            /* float for a float input; integers with float bounds vary */
    OT_logical,          /* bool, or the promoted class of a bitwise op */
    OT_to_dtype,
    OT_getitem,
    OT_div,
    OT_where,
    OT_cat,
    OT_arange,
    OT_full,
} OutRule;

static const OutRule out_rules[OP_COUNT] = {
#define X(id, nm, mn, mx, fl, kind, cls, shape, dt, doc) [OP_##id] = OT_##dt,
#include "compiler/ops.def"
#undef X
};

/* cat: legacy empty [0] inputs take no part in promotion, unless all are such. */
static Cls cat_cls(const Graph *g, const Node *n)
{
    Cls c = CL_BOOL, all = CL_BOOL;
    bool any = false;
    for (int i = 0; i < n->nin; i++) {
        const GTensor *t = node_input(g, n, i);
        all = promote(all, cls_of(t->dtype));
        if (!(t->rank == 1 && t->shape[0] == 0)) {
            c = promote(c, cls_of(t->dtype));
            any = true;
        }
    }
    return any ? c : all;
}

/* arange: int64 unless start, end or step is a float. */
static OutType arange_type(const Node *n)
{
    const char *keys[] = {"start", "end", "step"};
    for (int i = 0; i < 3; i++) {
        const Attr *a = node_attr(n, keys[i]);
        if (a && a->kind == ATTR_FLOAT) return of_cls(CL_FLOAT);
    }
    return exact(DT_I64);
}

/* full: the fill value's kind. */
static OutType full_type(const Node *n)
{
    const Attr *a = node_attr(n, "fill_value");
    if (a && a->kind == ATTR_BOOL) return exact(DT_BOOL);
    if (a && a->kind == ATTR_INT) return exact(DT_I64);
    return of_cls(CL_FLOAT);
}

/* The dtype (or at least its class) ATen gives output 0 of n. */
static OutType out_type(const Graph *g, const Node *n)
{
    if (n->op < 0 || n->op >= OP_COUNT) return of_cls(CL_UNKNOWN);
    DType dt = dtype_attr(n);
    Cls c0 = n->nin > 0 ? in_cls(g, n, 0) : CL_UNKNOWN;
    switch (out_rules[n->op]) {
    case OT_same:
        return of_cls(c0);
    case OT_input:
        return exact(node_input(g, n, 0)->dtype);
    case OT_unknown:
        return of_cls(CL_UNKNOWN);
    case OT_bool:
        return exact(DT_BOOL);
    case OT_i64:
        return exact(DT_I64);
    case OT_dtype_or_same:
        return dt != DT_INVALID ? exact(dt) : of_cls(c0);
    case OT_dtype_or_float:
        return dt != DT_INVALID ? exact(dt) : of_cls(CL_FLOAT);
    case OT_dtype_or_input:
        return dt != DT_INVALID ? exact(dt) : exact(node_input(g, n, 0)->dtype);
    case OT_sum:
        if (dt != DT_INVALID) return exact(dt);
        return c0 == CL_FLOAT ? of_cls(CL_FLOAT) : exact(DT_I64);
    case OT_promote:
        return of_cls(promote_inputs(g, n, 0));
    case OT_promote_from1:
        return of_cls(promote_inputs(g, n, 1));
    case OT_promote_other:
        return of_cls(promote_attr(promote_inputs(g, n, 0), n, "other"));
    case OT_promote_exponent:
        return of_cls(promote_attr(promote_inputs(g, n, 0), n, "exponent"));
    case OT_clamp:
        /* Integer inputs with float bounds: promotion rules of clamp vary across versions. */
        return of_cls(c0 == CL_FLOAT ? CL_FLOAT : CL_UNKNOWN);
    case OT_logical:
        return is_bitwise(n) ? of_cls(promote_inputs(g, n, 0)) : exact(DT_BOOL);
    case OT_to_dtype:
        if (dt != DT_INVALID) return exact(dt);
        return exact(node_input(g, n, n->nin == 2 ? 1 : 0)->dtype);
    case OT_getitem: {
        int64_t i = attr_int(n, "index", 0);
        if (i < 0) i += n->nin;
        return i >= 0 && i < n->nin ? exact(node_input(g, n, (int)i)->dtype) : of_cls(CL_UNKNOWN);
    }
    case OT_div:
        if (!attr_str(n, "rounding_mode", NULL)) return of_cls(CL_FLOAT); /* true division */
        return of_cls(promote_attr(promote_inputs(g, n, 0), n, "other"));
    case OT_where:
        return of_cls(promote_attr(promote_attr(promote_inputs(g, n, 1), n, "self"), n, "other"));
    case OT_cat:
        return of_cls(cat_cls(g, n));
    case OT_arange:
        return dt != DT_INVALID ? exact(dt) : arange_type(n);
    case OT_full:
        return dt != DT_INVALID ? exact(dt) : full_type(n);
    }
    return of_cls(CL_UNKNOWN);
}

/* Input dtype rules; returns the number of errors reported. */
static int check_input_dtypes(const Graph *g, const Node *n, DiagList *d)
{
    int errs = 0;
    char lb[48];
    const char *op = op_label(n, lb, sizeof lb);
    int index_in = n->op == OP_EMBEDDING || n->op == OP_INDEX_COPY || n->op == OP_GATHER ? 1 : -1;
    if (!op_has(n->op, OPF_INT_OK) && !op_has(n->op, OPF_NOOP)) {
        for (int i = 0; i < n->nin; i++) {
            const GTensor *t = node_input(g, n, i);
            if (i == index_in || cls_of(t->dtype) == CL_FLOAT) continue;
            if (n->op == OP_SDPA && i == 3 && t->dtype == DT_BOOL) continue; /* attn_mask */
            diag_error(d, g->path, n->name, t->name,
                       "%s takes floating-point tensors, input %d is %s", op, i,
                       dtype_name(t->dtype));
            errs++;
        }
    }
    if (index_in >= 0 && index_in < n->nin) {
        const GTensor *t = node_input(g, n, index_in);
        if (cls_of(t->dtype) != CL_INT) {
            diag_error(d, g->path, n->name, t->name,
                       "%s indices must be an integer tensor (int64 or int32), got %s", op,
                       dtype_name(t->dtype));
            errs++;
        }
    }
    int cond = n->op == OP_WHERE ? 0 : n->op == OP_MASKED_FILL ? 1 : -1;
    if (cond >= 0 && cond < n->nin && node_input(g, n, cond)->dtype != DT_BOOL) {
        const GTensor *t = node_input(g, n, cond);
        diag_error(d, g->path, n->name, t->name, "%s %s must be a bool tensor, got %s", op,
                   cond ? "mask" : "condition", dtype_name(t->dtype));
        errs++;
    }
    if (is_bitwise(n)) {
        for (int i = 0; i < n->nin; i++) {
            const GTensor *t = node_input(g, n, i);
            if (cls_of(t->dtype) == CL_FLOAT) {
                diag_error(d, g->path, n->name, t->name,
                           "%s takes integer or bool tensors, input %d is %s", op, i,
                           dtype_name(t->dtype));
                errs++;
            }
        }
    }
    if (n->op == OP_INDEX_COPY && n->nin == 3 &&
        node_input(g, n, 0)->dtype != node_input(g, n, 2)->dtype) {
        diag_error(d, g->path, n->name, node_input(g, n, 2)->name,
                   "%s: self and source must have the same dtype (%s vs %s)", op,
                   dtype_name(node_input(g, n, 0)->dtype), dtype_name(node_input(g, n, 2)->dtype));
        errs++;
    }
    if (n->op == OP_ASSERT_META && n->nin == 1) {
        DType want = dtype_attr(n);
        const GTensor *t = node_input(g, n, 0);
        if (want != DT_INVALID && want != t->dtype) {
            diag_error(d, g->path, n->name, t->name, "%s asserts dtype %s but the tensor is %s", op,
                       dtype_name(want), dtype_name(t->dtype));
            errs++;
        }
    }
    return errs;
}

static bool check_out_dtype(const Graph *g, const Node *n, DiagList *d)
{
    /* split: every chunk has output 0's type */
    for (int k = 0; k < n->nout && n->op == OP_SPLIT; k++)
        if (node_output(g, n, k)->dtype != node_input(g, n, 0)->dtype) {
            diag_error(d, g->path, n->name, node_output(g, n, k)->name,
                       "declared dtype %s but split gives %s",
                       dtype_name(node_output(g, n, k)->dtype),
                       dtype_name(node_input(g, n, 0)->dtype));
            return false;
        }
    if (n->nout < 1) return true;
    OutType want = out_type(g, n);
    const GTensor *t = node_output(g, n, 0);
    char lb[48];
    const char *op = op_label(n, lb, sizeof lb);
    if (want.exact != DT_INVALID && t->dtype != want.exact) {
        diag_error(d, g->path, n->name, t->name, "declared dtype %s but %s gives %s",
                   dtype_name(t->dtype), op, dtype_name(want.exact));
        return false;
    }
    if (want.cls != CL_UNKNOWN && cls_of(t->dtype) != want.cls) {
        diag_error(d, g->path, n->name, t->name, "declared dtype %s but %s gives a %s tensor",
                   dtype_name(t->dtype), op, cls_name(want.cls));
        return false;
    }
    return true;
}

Status shape_check_graph(const Graph *g, DiagList *d)
{
    enum { MAXOUT = 64 };
    int rank[MAXOUT];
    int64_t shape[MAXOUT][NPU_MAX_RANK];
    Status worst = ST_OK;
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = &g->nodes[i];
        if (n->dead) continue;
        bool ok = true;
        Status st;
        if (n->nout > MAXOUT)
            st = diag_error(d, g->path, n->name, NULL, "too many outputs (%d)", n->nout);
        else
            st = shape_infer(g, n, rank, shape, d);
        if (st != ST_OK) {
            ok = false;
            if (st != ST_BAD_INPUT) worst = st;
        } else {
            char lb[48];
            for (int k = 0; k < n->nout; k++) {
                const GTensor *t = node_output(g, n, k);
                if (shape_equal(t->rank, t->shape, rank[k], shape[k])) continue;
                char a[160], b[160];
                diag_error(d, g->path, n->name, t->name, "declared shape %s but %s gives %s",
                           shape_str(t->shape, t->rank, a, sizeof a), op_label(n, lb, sizeof lb),
                           shape_str(shape[k], rank[k], b, sizeof b));
                ok = false;
            }
        }
        if (check_input_dtypes(g, n, d)) ok = false;
        if (!check_out_dtype(g, n, d)) ok = false;
        if (!ok && worst == ST_OK) worst = ST_BAD_INPUT;
    }
    return worst;
}
