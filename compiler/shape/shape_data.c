/* Shape inference of data-movement ops beyond views (stack, flip, roll, tril/triu, repeat,
 * repeat_interleave, pixel_shuffle) and of baddbmm and instance_norm. ATen's rules. */
#include <string.h>
#include "compiler/shape/shape_int.h"

Status shape_stack(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    int d;
    Status st = sh_dim(c, "dim", false, 0, x->rank + 1, &d);
    if (st != ST_OK) return st;
    for (int i = 1; i < c->n->nin; i++) {
        const GTensor *t = sh_in(c, i);
        if (t->rank != x->rank || memcmp(t->shape, x->shape, sizeof(int64_t) * (size_t)x->rank))
            return sh_err(c, t->name, "stack expects each tensor to be equal size");
    }
    int64_t s[NPU_MAX_RANK + 1];
    for (int i = 0, k = 0; i <= x->rank; i++)
        s[i] = i == d ? c->n->nin : x->shape[k++];
    return sh_set(c, x->rank + 1, s);
}

/* The dims a `dims` attribute lists must be distinct dims of x. */
static Status dims_ok(ShapeCtx *c, const char *key, int *cnt)
{
    const GTensor *x = sh_in(c, 0);
    int64_t d[NPU_MAX_RANK];
    bool seen[NPU_MAX_RANK] = {false};
    Status st = sh_ints(c, key, d, NPU_MAX_RANK, cnt);
    if (st != ST_OK) return st;
    for (int i = 0; i < *cnt; i++) {
        int k = norm_dim(d[i], x->rank > 0 ? x->rank : 1);
        if (k < 0 || (x->rank > 0 && seen[k]))
            return sh_err(c, NULL, "`%s` must list distinct dims of the input", key);
        if (x->rank > 0) seen[k] = true;
    }
    return ST_OK;
}

Status shape_flip(ShapeCtx *c)
{
    int cnt;
    Status st = dims_ok(c, "dims", &cnt);
    return st != ST_OK ? st : shape_same(c);
}

Status shape_roll(ShapeCtx *c)
{
    int nd, ns;
    int64_t s[NPU_MAX_RANK];
    Status st = dims_ok(c, "dims", &nd);
    if (st == ST_OK) st = sh_ints(c, "shifts", s, NPU_MAX_RANK, &ns);
    if (st != ST_OK) return st;
    if (ns < 1 || (nd > 0 && nd != ns) || (nd <= 0 && ns != 1))
        return sh_err(c, NULL, "shifts and dims must align (shifts %d, dims %d)", ns, nd);
    return shape_same(c);
}

Status shape_tri(ShapeCtx *c)
{
    if (sh_in(c, 0)->rank < 2)
        return sh_err(c, sh_in(c, 0)->name,
                      "tril/triu: input tensor must have at least 2 dimensions");
    return shape_same(c);
}

Status shape_repeat(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    int64_t r[NPU_MAX_RANK], s[NPU_MAX_RANK];
    int k;
    Status st = sh_ints(c, "repeats", r, NPU_MAX_RANK, &k);
    if (st != ST_OK) return st;
    if (k < x->rank)
        return sh_err(c, NULL,
                      "number of dimensions of repeat dims (%d) can not be smaller than "
                      "number of dimensions of tensor (%d)",
                      k, x->rank);
    for (int i = 0; i < k; i++) {
        if (r[i] < 0 || r[i] > ((int64_t)1 << 30))
            return sh_err(c, NULL, "repeat %lld out of range", (long long)r[i]);
        if (__builtin_mul_overflow(r[i], i < k - x->rank ? 1 : x->shape[i - (k - x->rank)], &s[i]))
            return sh_err(c, NULL, "the repeated size overflows");
    }
    return sh_set(c, k, s);
}

/* repeat_interleave.self_int: `repeats` an int; no `dim` flattens first. */
Status shape_repeat_interleave(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    int64_t rep;
    Status st;
    if (c->n->nin == 2) { /* self_Tensor: the size depends on the data unless output_size */
        const GTensor *r = sh_in(c, 1);
        int64_t os;
        if (!attr_present(c->n, "output_size"))
            return sh_err(c, NULL,
                          "repeats is a tensor: the result's size depends on its values "
                          "(export with output_size)");
        if (!dtype_is_int(r->dtype) || r->dtype == DT_BOOL || r->rank > 1)
            return sh_err(c, r->name, "repeats must be an integer tensor of at most one dim");
        if ((st = sh_int(c, "output_size", true, 0, &os)) != ST_OK) return st;
        if (os < 0) return sh_err(c, NULL, "output_size must be non-negative");
        if (!attr_present(c->n, "dim")) return sh_set(c, 1, &os);
        int d;
        if ((st = sh_dim(c, "dim", true, 0, x->rank > 0 ? x->rank : 1, &d)) != ST_OK) return st;
        int64_t s[NPU_MAX_RANK] = {os};
        if (x->rank == 0) return sh_set(c, 1, s);
        memcpy(s, x->shape, sizeof(int64_t) * (size_t)x->rank);
        s[d] = os;
        return sh_set(c, x->rank, s);
    }
    st = sh_int(c, "repeats", true, 1, &rep);
    if (st != ST_OK) return st;
    if (rep < 0 || rep > ((int64_t)1 << 30))
        return sh_err(c, NULL, "repeats %lld out of range", (long long)rep);
    if (!attr_present(c->n, "dim")) {
        int64_t n;
        if (__builtin_mul_overflow(tensor_numel(x), rep, &n))
            return sh_err(c, NULL, "the repeated size overflows");
        return sh_set(c, 1, &n);
    }
    int d;
    if ((st = sh_dim(c, "dim", true, 0, x->rank > 0 ? x->rank : 1, &d)) != ST_OK) return st;
    int64_t s[NPU_MAX_RANK];
    if (x->rank == 0) {
        s[0] = rep;
        return sh_set(c, 1, s);
    }
    memcpy(s, x->shape, sizeof(int64_t) * (size_t)x->rank);
    if (__builtin_mul_overflow(s[d], rep, &s[d]))
        return sh_err(c, NULL, "the repeated size overflows");
    return sh_set(c, x->rank, s);
}

Status shape_pixel_shuffle(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    int64_t f;
    Status st = sh_int(c, "upscale_factor", true, 1, &f);
    if (st != ST_OK) return st;
    int r = x->rank;
    if (r < 3 || f < 1 || f > ((int64_t)1 << 15) || x->shape[r - 3] % (f * f))
        return sh_err(c, x->name,
                      "pixel_shuffle expects at least 3 dims and channels divisible "
                      "by upscale_factor^2 (%lld)",
                      (long long)(f * f));
    int64_t s[NPU_MAX_RANK];
    memcpy(s, x->shape, sizeof(int64_t) * (size_t)r);
    s[r - 3] /= f * f;
    s[r - 2] *= f;
    s[r - 1] *= f;
    return sh_set(c, r, s);
}

Status shape_baddbmm(ShapeCtx *c)
{
    const GTensor *self = sh_in(c, 0), *a = sh_in(c, 1), *b = sh_in(c, 2);
    if (a->rank != 3 || b->rank != 3 || a->shape[0] != b->shape[0] || a->shape[2] != b->shape[1])
        return sh_err(c, b->name, "batch1 [B, N, M] and batch2 [B, M, P] do not fit");
    int64_t s[3] = {a->shape[0], a->shape[1], b->shape[2]};
    int ro;
    int64_t o[NPU_MAX_RANK];
    Status st = sh_broadcast(c, self->name, 3, s, self->rank, self->shape, &ro, o);
    if (st != ST_OK) return st;
    if (ro != 3 || memcmp(o, s, sizeof s))
        return sh_err(c, self->name, "self does not broadcast to [B, N, P]");
    return sh_set(c, 3, s);
}

/* instance_norm(input, weight, bias, running_mean, running_var): the IR lists the tensors
 * given, in that order, [C] each; with some absent it cannot say which are there. */
Status shape_instance_norm(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    if (x->rank < 2) return sh_err(c, x->name, "expected an input of at least 2 dims");
    for (int i = 1; i < c->n->nin; i++)
        if (sh_in(c, i)->rank != 1 || sh_in(c, i)->shape[0] != x->shape[1])
            return sh_err(c, sh_in(c, i)->name, "must be [%lld]", (long long)x->shape[1]);
    if (!attr_bool(c->n, "use_input_stats", true) && c->n->nin != 5)
        return sh_err(c, NULL,
                      "use_input_stats=False needs running_mean and running_var (and "
                      "the IR must list weight and bias to tell them apart)");
    if (c->n->nin != 1 && c->n->nin != 5)
        return sh_err(c, NULL,
                      "%d of weight, bias, running_mean and running_var: the IR does "
                      "not say which they are (only none or all four can be told apart)",
                      c->n->nin - 1);
    return shape_same(c);
}

Status shape_multi(ShapeCtx *c)
{
    int *rank = c->ranks;
    int64_t(*shape)[NPU_MAX_RANK] = c->shapes;
    const GTensor *x = sh_in(c, 0);
    OpId op = c->n->op;
    int nout = op == OP_UNBIND ? 0 : 2, r = x->rank, d = 0;
    int64_t s[NPU_MAX_RANK];
    Status st = ST_OK;
    memcpy(s, x->shape, sizeof(int64_t) * (size_t)r);
    if (op == OP_MAX_POOL2D_WI) {
        if ((st = shape_pool2d(c)) != ST_OK) return st;
        r = c->rank;
        memcpy(s, c->shape, sizeof(int64_t) * (size_t)r);
    } else {
        int64_t dflt = op == OP_TOPK || op == OP_SORT ? -1 : 0;
        st = sh_dim(c, "dim", op == OP_MAX_DIM, dflt, r > 0 ? r : 1, &d);
        if (st != ST_OK) return st;
        if (r == 0 && op == OP_UNBIND)
            return sh_err(c, x->name, "needs a tensor of at least one dim");
    }
    if (op == OP_MAX_DIM && r > 0) {
        if (x->shape[d] == 0) return sh_err(c, x->name, "cannot reduce an empty dim");
        if (attr_bool(c->n, "keepdim", false))
            s[d] = 1;
        else
            memmove(&s[d], &s[d + 1], sizeof(int64_t) * (size_t)(--r - d));
    } else if (op == OP_TOPK) {
        int64_t k;
        if ((st = sh_int(c, "k", true, 1, &k)) != ST_OK) return st;
        int64_t size = r ? x->shape[d] : 1; /* a 0-dim tensor is one value */
        if (k < 0 || k > size)
            return sh_err(c, NULL, "selected index k out of range (k %lld, size %lld)",
                          (long long)k, (long long)size);
        if (r) s[d] = k;
    } else if (op == OP_UNBIND) {
        nout = (int)x->shape[d];
        memmove(&s[d], &s[d + 1], sizeof(int64_t) * (size_t)(--r - d));
    }
    if (c->n->nout != nout)
        return sh_err(c, NULL, "produces %d outputs, the node declares %d", nout, c->n->nout);
    for (int k = 0; k < nout; k++) {
        rank[k] = r;
        memcpy(shape[k], s, sizeof(int64_t) * (size_t)r);
    }
    return ST_OK;
}
