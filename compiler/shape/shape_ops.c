/* Shape rules of the compute ops: elementwise, linear algebra, convolution, normalisation,
 * reductions and pooling. The messages follow ATen's own wording where it has one. */
#include "compiler/shape/shape_int.h"

#include <string.h>

Status shape_same(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    if (c->n->op == OP_DROPOUT) {
        double p = attr_float(c->n, "p", 0.5);
        if (!(p >= 0 && p <= 1))
            return sh_err(c, NULL, "dropout probability has to be between 0 and 1, but got %g", p);
    }
    return sh_set(c, x->rank, x->shape);
}

/* Ops whose second operand may be a scalar attribute instead of a tensor. */
static const bool takes_scalar[OP_COUNT] = {
    [OP_POW] = true,     [OP_ADD] = true,     [OP_SUB] = true,       [OP_RSUB] = true,
    [OP_MUL] = true,     [OP_DIV] = true,     [OP_EQ] = true,        [OP_NE] = true,
    [OP_LT] = true,      [OP_LE] = true,      [OP_GT] = true,        [OP_GE] = true,
    [OP_MAXIMUM] = true, [OP_MINIMUM] = true, [OP_REMAINDER] = true,
};

/* Broadcast result must keep input 0's shape when the op writes into it (add_, masked_fill_). */
static Status check_inplace(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    bool same = c->rank == x->rank;
    for (int i = 0; same && i < x->rank; i++)
        same = c->shape[i] == x->shape[i];
    if (same || !sh_inplace(c->n)) return ST_OK;
    char a[128], b[128];
    return sh_err(c, x->name, "output with shape %s doesn't match the broadcast shape %s",
                  shape_str(x->shape, x->rank, a, sizeof a),
                  shape_str(c->shape, c->rank, b, sizeof b));
}

/* Every tensor input broadcast together into (*r, s). */
static Status broadcast_inputs(ShapeCtx *c, int *r, int64_t *s)
{
    const GTensor *x = sh_in(c, 0);
    *r = x->rank;
    memcpy(s, x->shape, sizeof(int64_t) * (size_t)x->rank);
    for (int i = 1; i < c->n->nin; i++) {
        const GTensor *y = sh_in(c, i);
        Status st = sh_broadcast(c, y->name, *r, s, y->rank, y->shape, r, s);
        if (st != ST_OK) return st;
    }
    return ST_OK;
}

Status shape_eltwise(ShapeCtx *c)
{
    const Node *n = c->n;
    int r;
    int64_t s[NPU_MAX_RANK];
    Status bs = broadcast_inputs(c, &r, s);
    if (bs != ST_OK) return bs;
    const char *key = n->op == OP_POW ? "exponent" : "other";
    if (n->nin == 1 && takes_scalar[n->op] && !attr_present(n, key))
        return sh_err(c, NULL, "needs a second tensor or the scalar attribute '%s'", key);
    if (n->op == OP_MASKED_FILL && n->nin == 2 && !attr_present(n, "value"))
        return sh_err(c, NULL, "attribute 'value' is required");
    if (n->op == OP_CLAMP && !attr_present(n, "min") && !attr_present(n, "max"))
        return sh_err(c, NULL, "at least one of 'min' or 'max' must not be None");
    if (n->op == OP_DIV) {
        const char *m = attr_str(n, "rounding_mode", NULL);
        if (attr_present(n, "rounding_mode") && (!m || (strcmp(m, "trunc") && strcmp(m, "floor"))))
            return sh_err(c, NULL, "rounding_mode must be null, 'trunc' or 'floor'");
    }
    if (n->op == OP_GELU) {
        const char *m = attr_str(n, "approximate", "none");
        if (strcmp(m, "none") && strcmp(m, "tanh"))
            return sh_err(c, NULL, "approximate must be 'none' or 'tanh', got '%s'", m);
    }
    Status st = sh_set(c, r, s);
    return st != ST_OK ? st : check_inplace(c);
}

Status shape_where(ShapeCtx *c)
{
    const Node *n = c->n;
    int operands = n->nin - 1 + attr_present(n, "self") + attr_present(n, "other");
    if (operands < 2)
        return sh_err(c, NULL, "needs self and other (tensors or the scalar attributes)");
    int r;
    int64_t s[NPU_MAX_RANK];
    Status st = broadcast_inputs(c, &r, s);
    return st != ST_OK ? st : sh_set(c, r, s);
}

/* ---- convolution and normalisation ---- */

Status shape_conv2d(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0), *w = sh_in(c, 1);
    char a[128];
    if (x->rank != 3 && x->rank != 4)
        return sh_err(c, x->name, "expected a 3-D (unbatched) or 4-D (batched) input, got %s",
                      shape_str(x->shape, x->rank, a, sizeof a));
    if (w->rank != 4)
        return sh_err(c, w->name, "expected a 4-D weight [out, in/groups, kH, kW], got %s",
                      shape_str(w->shape, w->rank, a, sizeof a));
    int64_t groups, stride[2], dil[2], pad[2] = {0, 0};
    Status st = sh_int(c, "groups", false, 1, &groups);
    if (st == ST_OK) st = sh_ints_n(c, "stride", 2, 1, stride);
    if (st == ST_OK) st = sh_ints_n(c, "dilation", 2, 1, dil);
    if (st != ST_OK) return st;
    const char *pmode = attr_str(c->n, "padding", NULL);
    if (pmode) {
        if (strcmp(pmode, "same") && strcmp(pmode, "valid"))
            return sh_err(c, NULL, "padding must be 'same', 'valid' or integers, got '%s'", pmode);
        if (!strcmp(pmode, "same") && (stride[0] != 1 || stride[1] != 1))
            return sh_err(c, NULL, "padding='same' is not supported for strided convolutions");
    } else if ((st = sh_ints_n(c, "padding", 2, 0, pad)) != ST_OK)
        return st;
    if (groups < 1) return sh_err(c, NULL, "groups must be positive, got %lld", (long long)groups);
    for (int i = 0; i < 2; i++) {
        if (stride[i] < 1 || dil[i] < 1 || pad[i] < 0)
            return sh_err(c, NULL, "stride and dilation must be positive and padding non-negative");
        if (w->shape[2 + i] < 1) return sh_err(c, w->name, "kernel size must be positive");
    }
    int b = x->rank - 3; /* 1 when batched */
    int64_t cin = x->shape[b], cout = w->shape[0];
    if (cin != w->shape[1] * groups)
        return sh_err(c, x->name,
                      "expected input with %lld channels (weight %s, groups %lld), got %lld "
                      "channels",
                      (long long)(w->shape[1] * groups), shape_str(w->shape, 4, a, sizeof a),
                      (long long)groups, (long long)cin);
    if (cout % groups)
        return sh_err(c, w->name, "out_channels %lld is not divisible by groups %lld",
                      (long long)cout, (long long)groups);
    if (c->n->nin == 3) {
        const GTensor *bias = sh_in(c, 2);
        if (bias->rank != 1 || bias->shape[0] != cout)
            return sh_err(c, bias->name, "bias must be [%lld], got %s", (long long)cout,
                          shape_str(bias->shape, bias->rank, a, sizeof a));
    }
    int64_t out[4];
    if (b) out[0] = x->shape[0];
    out[b] = cout;
    for (int i = 0; i < 2; i++) {
        int64_t in = x->shape[b + 1 + i], k = dil[i] * (w->shape[2 + i] - 1) + 1;
        if (pmode && !strcmp(pmode, "same")) {
            out[b + 1 + i] = in;
            continue;
        }
        if (in + 2 * pad[i] < k)
            return sh_err(c, x->name,
                          "padded input size %lld is smaller than the (dilated) kernel size %lld",
                          (long long)(in + 2 * pad[i]), (long long)k);
        out[b + 1 + i] = (in + 2 * pad[i] - k) / stride[i] + 1;
    }
    return sh_set(c, x->rank, out);
}

Status shape_batch_norm(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    char a[128];
    if (x->rank < 2)
        return sh_err(c, x->name, "expected an input of rank >= 2 [N, C, ...], got %s",
                      shape_str(x->shape, x->rank, a, sizeof a));
    for (int i = 1; i < c->n->nin; i++) {
        const GTensor *p = sh_in(c, i);
        if (p->rank != 1 || p->shape[0] != x->shape[1])
            return sh_err(c, p->name, "expected a [%lld] tensor (the input's channels), got %s",
                          (long long)x->shape[1], shape_str(p->shape, p->rank, a, sizeof a));
    }
    return sh_set(c, x->rank, x->shape);
}

Status shape_layer_norm(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    int64_t ns[NPU_MAX_RANK];
    int k;
    char a[128], b[128];
    Status st = sh_ints(c, "normalized_shape", ns, NPU_MAX_RANK, &k);
    if (st != ST_OK) return st;
    if (k < 1) return sh_err(c, NULL, "attribute 'normalized_shape' must be a non-empty list");
    bool ok = x->rank >= k;
    for (int i = 0; ok && i < k; i++)
        ok = x->shape[x->rank - k + i] == ns[i];
    if (!ok)
        return sh_err(c, x->name,
                      "normalized_shape %s does not match the trailing dims of the input %s",
                      shape_str(ns, k, a, sizeof a), shape_str(x->shape, x->rank, b, sizeof b));
    for (int i = 1; i < c->n->nin; i++) {
        const GTensor *p = sh_in(c, i);
        ok = p->rank == k;
        for (int j = 0; ok && j < k; j++)
            ok = p->shape[j] == ns[j];
        if (!ok)
            return sh_err(c, p->name, "weight and bias must have normalized_shape %s, got %s",
                          shape_str(ns, k, a, sizeof a), shape_str(p->shape, p->rank, b, sizeof b));
    }
    return sh_set(c, x->rank, x->shape);
}

/* ---- matrix products ---- */

static Status k_mismatch(ShapeCtx *c, const GTensor *x, const GTensor *y)
{
    char a[128], b[128];
    return sh_err(c, y->name, "mat1 and mat2 shapes cannot be multiplied (%s and %s)",
                  shape_str(x->shape, x->rank, a, sizeof a),
                  shape_str(y->shape, y->rank, b, sizeof b));
}

Status sh_expands_to(const ShapeCtx *c, const GTensor *t, int rank, const int64_t *shape,
                     const char *what, const char *target)
{
    int r;
    int64_t s[NPU_MAX_RANK];
    Status st = sh_broadcast(c, t->name, rank, shape, t->rank, t->shape, &r, s);
    if (st != ST_OK) return st;
    bool same = r == rank;
    for (int i = 0; same && i < r; i++)
        same = s[i] == shape[i];
    char a[128], b[128];
    if (!same)
        return sh_err(c, t->name, "%s %s cannot be expanded to %s %s", what,
                      shape_str(t->shape, t->rank, a, sizeof a), target,
                      shape_str(shape, rank, b, sizeof b));
    return ST_OK;
}

/* The bias of linear/addmm must broadcast to the product's shape without changing it. */
static Status check_bias(ShapeCtx *c, const GTensor *bias)
{
    return sh_expands_to(c, bias, c->rank, c->shape, "bias", "the product's shape");
}

static Status rank_is(ShapeCtx *c, const GTensor *t, int want, const char *what)
{
    if (t->rank == want) return ST_OK;
    char a[128];
    return sh_err(c, t->name, "%s must be a %d-D tensor, got %s", what, want,
                  shape_str(t->shape, t->rank, a, sizeof a));
}

Status shape_linear(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0), *w = sh_in(c, 1);
    char a[128];
    if (x->rank < 1) return sh_err(c, x->name, "the input must be at least 1-D");
    if (w->rank != 1 && w->rank != 2)
        return sh_err(c, w->name, "weight must be [out, in] or [in], got %s",
                      shape_str(w->shape, w->rank, a, sizeof a));
    int64_t k = w->shape[w->rank - 1];
    if (x->shape[x->rank - 1] != k) return k_mismatch(c, x, w);
    int64_t s[NPU_MAX_RANK];
    memcpy(s, x->shape, sizeof(int64_t) * (size_t)x->rank);
    int r = x->rank - 1;
    if (w->rank == 2) s[r++] = w->shape[0];
    Status st = sh_set(c, r, s);
    if (st == ST_OK && c->n->nin == 3) st = check_bias(c, sh_in(c, 2));
    return st;
}

/* The output of the matrix product of inputs a and b (2-D each, named xname and "mat2"). */
static Status mm_of(ShapeCtx *c, int a, int b, const char *xname)
{
    const GTensor *x = sh_in(c, a), *y = sh_in(c, b);
    Status st = rank_is(c, x, 2, xname);
    if (st == ST_OK) st = rank_is(c, y, 2, "mat2");
    if (st != ST_OK) return st;
    if (x->shape[1] != y->shape[0]) return k_mismatch(c, x, y);
    int64_t s[2] = {x->shape[0], y->shape[1]};
    return sh_set(c, 2, s);
}

Status shape_addmm(ShapeCtx *c)
{
    Status st = mm_of(c, 1, 2, "mat1");
    return st != ST_OK ? st : check_bias(c, sh_in(c, 0));
}

Status shape_mm(ShapeCtx *c)
{
    return mm_of(c, 0, 1, "self");
}

Status shape_bmm(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0), *y = sh_in(c, 1);
    Status st = rank_is(c, x, 3, "batch1");
    if (st == ST_OK) st = rank_is(c, y, 3, "batch2");
    if (st != ST_OK) return st;
    if (x->shape[0] != y->shape[0])
        return sh_err(c, y->name, "batch sizes differ: %lld and %lld", (long long)x->shape[0],
                      (long long)y->shape[0]);
    if (x->shape[2] != y->shape[1]) return k_mismatch(c, x, y);
    int64_t s[3] = {x->shape[0], x->shape[1], y->shape[2]};
    return sh_set(c, 3, s);
}

/* torch.matmul: a 1-D left operand is a row (dim dropped after), a 1-D right operand a column;
 * dims before the last two broadcast. */
Status shape_matmul(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0), *y = sh_in(c, 1);
    if (x->rank < 1 || y->rank < 1)
        return sh_err(c, x->rank < 1 ? x->name : y->name,
                      "both arguments to matmul need to be at least 1D");
    int64_t kx = x->shape[x->rank - 1], ky = y->shape[y->rank == 1 ? 0 : y->rank - 2];
    if (kx != ky) return k_mismatch(c, x, y);
    int bx = x->rank > 2 ? x->rank - 2 : 0, by = y->rank > 2 ? y->rank - 2 : 0;
    int r;
    int64_t s[NPU_MAX_RANK];
    Status st = sh_broadcast(c, y->name, bx, x->shape, by, y->shape, &r, s);
    if (st != ST_OK) return st;
    if (x->rank >= 2) s[r++] = x->shape[x->rank - 2];
    if (y->rank >= 2) s[r++] = y->shape[y->rank - 1];
    return sh_set(c, r, s);
}

Status shape_t(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    if (x->rank > 2)
        return sh_err(c, x->name, "t() expects a tensor with <= 2 dimensions, but self is %dD",
                      x->rank);
    int64_t s[2] = {0, 0};
    for (int i = 0; i < x->rank; i++)
        s[i] = x->shape[x->rank - 1 - i];
    return sh_set(c, x->rank, s);
}

/* ---- reductions ---- */

/* softmax, log_softmax, cumsum: one required dim, shape unchanged. */
Status shape_along_dim(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    int d;
    Status st = sh_dim(c, "dim", true, 0, x->rank, &d);
    return st != ST_OK ? st : sh_set(c, x->rank, x->shape);
}

Status shape_reduce(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    int64_t dims[NPU_MAX_RANK];
    int k;
    Status st = sh_ints(c, "dim", dims, NPU_MAX_RANK, &k);
    if (st != ST_OK) return st;
    const Attr *kd = node_attr(c->n, "keepdim");
    if (kd && kd->kind != ATTR_BOOL && kd->kind != ATTR_INT && kd->kind != ATTR_NONE)
        return sh_err(c, NULL, "attribute 'keepdim' must be a bool");
    bool keep = attr_bool(c->n, "keepdim", false);
    bool red[NPU_MAX_RANK] = {false};
    for (int i = 0; i < x->rank; i++)
        red[i] = k <= 0; /* absent, null or [] = every dim */
    for (int i = 0; i < k; i++) {
        int d = norm_dim(dims[i], x->rank);
        int r = x->rank > 0 ? x->rank : 1;
        if (d < 0)
            return sh_err(c, NULL, "dim %lld is out of range (expected to be in range of [%d, %d])",
                          (long long)dims[i], -r, r - 1);
        if (x->rank == 0) continue;
        if (red[d]) return sh_err(c, NULL, "dim %d appears multiple times in the list of dims", d);
        red[d] = true;
    }
    int64_t s[NPU_MAX_RANK];
    int r = 0;
    for (int i = 0; i < x->rank; i++) {
        if (!red[i])
            s[r++] = x->shape[i];
        else if (keep)
            s[r++] = 1;
    }
    return sh_set(c, r, s);
}

/* argmax: one dim (an int, or null / absent for the flattened input), keepdim as a reduction
 * (with no dim: every dim kept as 1), and the project's `skip_nan` flag. */
Status shape_argmax(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    const Attr *a = node_attr(c->n, "dim");
    if (a && a->kind != ATTR_INT && a->kind != ATTR_NONE && !(a->kind == ATTR_INTS && a->n == 1))
        return sh_err(c, NULL, "attribute 'dim' must be one integer or null");
    const Attr *sk = node_attr(c->n, "skip_nan");
    if (sk && sk->kind != ATTR_BOOL && sk->kind != ATTR_INT)
        return sh_err(c, NULL, "attribute 'skip_nan' must be a bool");
    if (a && a->kind != ATTR_NONE) {
        int64_t dv = 0;
        attr_ints(c->n, "dim", &dv, 1);
        int d = norm_dim(dv, x->rank);
        if (d < 0 && x->rank > 0) return shape_reduce(c); /* reports the range */
        if (x->rank > 0 && x->shape[d] == 0)
            return sh_err(c, NULL, "argmax over dim %d of size 0", d);
    } else if (tensor_numel(x) == 0) {
        return sh_err(c, NULL, "argmax of an empty tensor");
    }
    return shape_reduce(c);
}

/* ---- pooling ---- */

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int64_t shape_pool_out(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil)
{
    int64_t o = floor_div(in + 2 * pad - dil * (k - 1) - 1 + (ceil ? stride - 1 : 0), stride) + 1;
    if (ceil && (o - 1) * stride >= in + pad) o--;
    return o;
}

/* Input of 2-D pooling: [C,H,W] or [N,C,H,W] with non-zero C, H, W. */
static Status pool_input(ShapeCtx *c, const GTensor *x)
{
    char a[128];
    bool ok = x->rank == 3 || x->rank == 4;
    for (int i = x->rank - 3; ok && i < x->rank; i++)
        ok = x->shape[i] > 0;
    if (!ok)
        return sh_err(c, x->name,
                      "expected a 3-D or 4-D (batch mode) input with non-zero C, H, W, got %s",
                      shape_str(x->shape, x->rank, a, sizeof a));
    return ST_OK;
}

Status shape_pool2d(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    bool is_max = c->n->op == OP_MAX_POOL2D || c->n->op == OP_MAX_POOL2D_WI;
    Status st = pool_input(c, x);
    if (st != ST_OK) return st;
    int64_t k[2], s[2], p[2], d[2] = {1, 1}, tmp[NPU_MAX_RANK];
    int nk, ns;
    if ((st = sh_ints(c, "kernel_size", tmp, NPU_MAX_RANK, &nk)) != ST_OK) return st;
    if (nk != 1 && nk != 2) return sh_err(c, NULL, "kernel_size must be one or two integers");
    k[0] = tmp[0];
    k[1] = tmp[nk - 1];
    if ((st = sh_ints(c, "stride", tmp, NPU_MAX_RANK, &ns)) != ST_OK) return st;
    if (ns > 2) return sh_err(c, NULL, "stride must be empty, one or two integers");
    for (int i = 0; i < 2; i++)
        s[i] = ns <= 0 ? k[i] : tmp[ns == 1 ? 0 : i]; /* [] = kernel */
    if ((st = sh_ints_n(c, "padding", 2, 0, p)) != ST_OK) return st;
    if (is_max && (st = sh_ints_n(c, "dilation", 2, 1, d)) != ST_OK) return st;
    bool ceil = attr_bool(c->n, "ceil_mode", false);
    if (!is_max && attr_present(c->n, "divisor_override") &&
        attr_int(c->n, "divisor_override", 0) == 0)
        return sh_err(c, NULL, "divisor must be not zero");
    int64_t out[4];
    memcpy(out, x->shape, sizeof(int64_t) * (size_t)x->rank);
    for (int i = 0; i < 2; i++) {
        if (k[i] < 1 || s[i] < 1 || d[i] < 1 || p[i] < 0)
            return sh_err(c, NULL,
                          "kernel_size, stride and dilation must be positive and padding "
                          "non-negative");
        int64_t eff = is_max ? ((k[i] - 1) * d[i] + 1) : k[i];
        if (p[i] > eff / 2)
            return sh_err(c, NULL,
                          "pad should be at most half of %skernel size, but got pad=%lld "
                          "and kernel_size=%lld",
                          is_max ? "effective " : "", (long long)p[i], (long long)k[i]);
        int64_t in = x->shape[x->rank - 2 + i];
        int64_t o = shape_pool_out(in, k[i], p[i], s[i], d[i], ceil);
        if (o < 1)
            return sh_err(c, x->name, "output size is too small (input %lld, kernel %lld)",
                          (long long)in, (long long)k[i]);
        out[x->rank - 2 + i] = o;
    }
    return sh_set(c, x->rank, out);
}

/* output_size entries: integers, or null (keep the input's size) in a list the reader kept as
 * JSON text. */
static Status parse_output_size(ShapeCtx *c, const GTensor *x, int64_t *o)
{
    const Attr *a = node_attr(c->n, "output_size");
    int64_t v[2];
    bool keep[2] = {false, false};
    int cnt = 0;
    o[0] = o[1] = 0;
    if (!a || a->kind == ATTR_NONE) return sh_err(c, NULL, "attribute 'output_size' is required");
    if (a->kind == ATTR_INT) {
        v[cnt++] = a->i;
    } else if (a->kind == ATTR_INTS && (a->n == 1 || a->n == 2)) {
        for (int i = 0; i < a->n; i++)
            v[cnt++] = a->ints[i];
    } else if (a->kind == ATTR_OTHER && a->s) {
        const char *p = a->s;
        while (*p == ' ' || *p == '[')
            p++;
        while (*p && *p != ']' && cnt < 3) {
            int j = cnt < 2 ? cnt : 0;
            if (!strncmp(p, "null", 4)) {
                keep[j] = true;
                v[j] = 0;
                p += 4;
            } else {
                bool neg = *p == '-';
                p += neg;
                if (*p < '0' || *p > '9') break;
                int64_t z = 0;
                while (*p >= '0' && *p <= '9' && z < ((int64_t)1 << 40))
                    z = z * 10 + (*p++ - '0');
                if (*p >= '0' && *p <= '9') break; /* absurdly large */
                v[j] = neg ? -z : z;
            }
            cnt++;
            while (*p == ' ' || *p == ',')
                p++;
        }
        if (*p != ']') cnt = 0;
    }
    if (cnt != 1 && cnt != 2)
        return sh_err(c, NULL, "output_size must be one or two integers (or null to keep)");
    for (int i = 0; i < 2; i++) {
        int j = cnt == 1 ? 0 : i;
        int64_t in = x->shape[x->rank - 2 + i];
        o[i] = keep[j] ? in : v[j];
        if (o[i] < 0)
            return sh_err(c, NULL,
                          "elements of output_size must be greater than or equal to 0 "
                          "but received %lld",
                          (long long)o[i]);
    }
    return ST_OK;
}

Status shape_adaptive_pool2d(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    Status st = pool_input(c, x);
    int64_t o[2], out[4];
    if (st == ST_OK) st = parse_output_size(c, x, o);
    if (st != ST_OK) return st;
    memcpy(out, x->shape, sizeof(int64_t) * (size_t)x->rank);
    out[x->rank - 2] = o[0];
    out[x->rank - 1] = o[1];
    return sh_set(c, x->rank, out);
}
