/* CPU reference for reductions and normalisations: mean/sum/amax over dim lists, argmax, softmax
 * and log-softmax, layer_norm, eval-mode batch_norm, cumsum. Sums accumulate in double (int64 for
 * integer outputs, wrapping as torch does); results round to float32 once on store. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/cpu/cpu_kernels.h"

static inline void stf(HTensor *o, int64_t i, double v)
{
    if (o->dtype == DT_F32)
        ((float *)o->data)[i] = (float)v;
    else
        htensor_convert((char *)o->data + (size_t)i * dtype_size(o->dtype), o->dtype, &v, DT_F64,
                        1);
}

static inline void sti(HTensor *o, int64_t i, int64_t v)
{
    if (o->dtype == DT_I64)
        ((int64_t *)o->data)[i] = v;
    else
        htensor_convert((char *)o->data + (size_t)i * dtype_size(o->dtype), o->dtype, &v, DT_I64,
                        1);
}

static Status same_numel(const CpuCall *c, const HTensor *x, const HTensor *y)
{
    if (x->numel == y->numel) return ST_OK;
    return diag_error(c->diag, c->file, c->node->name, NULL,
                      "input has %lld elements, the output %lld", (long long)x->numel,
                      (long long)y->numel);
}

/* Reads int attribute `key` as a dim of x (negative counts from the end). */
static Status one_dim(const CpuCall *c, const HTensor *x, const char *key, int64_t dflt, int *dim)
{
    int64_t d = attr_int(c->node, key, dflt);
    const Attr *a = node_attr(c->node, key);
    if (a && a->kind != ATTR_INT && a->kind != ATTR_NONE && !(a->kind == ATTR_INTS && a->n == 1))
        return diag_error(c->diag, c->file, c->node->name, NULL, "`%s` is not an integer", key);
    *dim = norm_dim(d, x->rank);
    if (*dim < 0)
        return diag_error(c->diag, c->file, c->node->name, NULL,
                          "%s %lld is out of range for a tensor of rank %d", key, (long long)d,
                          x->rank);
    return ST_OK;
}

/* Splits x around dim: outer * len * inner elements, dim's stride is inner. */
static void split_at(const HTensor *x, int dim, int64_t *outer, int64_t *len, int64_t *inner)
{
    *outer = 1;
    *inner = 1;
    *len = x->rank ? x->shape[dim] : 1;
    for (int i = 0; i < dim; i++)
        *outer *= x->shape[i];
    for (int i = dim + 1; i < x->rank; i++)
        *inner *= x->shape[i];
}

/* ---- mean, sum, amax ---- */

/* Marks the reduced dims of x: the `dim` list, or every dim when absent, null or empty. */
static Status reduce_dims(const CpuCall *c, const HTensor *x, bool red[NPU_MAX_RANK])
{
    const Node *n = c->node;
    int64_t d[NPU_MAX_RANK + 1];
    int k = attr_present(n, "dim") ? attr_ints(n, "dim", d, NPU_MAX_RANK + 1) : 0;
    if (k < 0) return diag_error(c->diag, c->file, n->name, NULL, "`dim` is not an int list");
    for (int i = 0; i < NPU_MAX_RANK; i++)
        red[i] = k == 0;
    if (k > NPU_MAX_RANK)
        return diag_error(c->diag, c->file, n->name, NULL, "`dim` lists %d dims, more than rank %d",
                          k, x->rank);
    for (int i = 0; i < k; i++) {
        int nd = norm_dim(d[i], x->rank);
        if (nd < 0)
            return diag_error(c->diag, c->file, n->name, NULL,
                              "dim %lld is out of range for a tensor of rank %d", (long long)d[i],
                              x->rank);
        if (red[nd])
            return diag_error(c->diag, c->file, n->name, NULL, "dim %d is listed twice", nd);
        red[nd] = true;
    }
    return ST_OK;
}

/* vector_norm's running value of |x| values: max, min, count of non-zeros or sum of |x|^p. */
static double norm_acc(double acc, double a, double p)
{
    if (a != a) return a + acc; /* NaN propagates */
    if (p == INFINITY) return a > acc ? a : acc;
    if (p == -INFINITY) return a < acc ? a : acc;
    if (p == 0) return acc + (a != 0);
    return acc + (p == 1 ? a : p == 2 ? a * a : pow(a, p));
}

static double norm_end(double acc, double p)
{
    if (p == INFINITY || p == -INFINITY || p == 0 || p == 1) return acc;
    return p == 2 ? sqrt(acc) : pow(acc, 1.0 / p);
}

/* Walks x in row-major order calling f(acc slot, value index); off is the output element that
 * input element i reduces into (ost: output strides per input dim, 0 on reduced dims). */
#define FOR_REDUCED(x, ost, i, off, body)                                                          \
    do {                                                                                           \
        int64_t idx_[NPU_MAX_RANK] = {0}, off = 0;                                                 \
        for (int64_t i = 0; i < (x)->numel; i++) {                                                 \
            body;                                                                                  \
            for (int d_ = (x)->rank - 1; d_ >= 0; d_--) {                                          \
                off += (ost)[d_];                                                                  \
                if (++idx_[d_] < (x)->shape[d_]) break;                                            \
                off -= (ost)[d_] * (x)->shape[d_];                                                 \
                idx_[d_] = 0;                                                                      \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* var/std's divisor offset: `correction` (default 1) or, in var.dim, `unbiased`. */
static double correction(const Node *n)
{
    if (attr_present(n, "correction")) return attr_float(n, "correction", 1);
    return attr_bool(n, "unbiased", true) ? 1 : 0;
}

Status cpu_reduce(const CpuCall *c)
{
    const Node *n = c->node;
    const HTensor *x = c->in[0];
    HTensor *y = c->out[0];
    OpId op = n->op;
    bool mx = op == OP_AMAX, mn = op == OP_AMIN, norm = op == OP_VECTOR_NORM;
    bool logic = op == OP_ANY || op == OP_ALL, prod = op == OP_PROD;
    bool two = op == OP_VAR || op == OP_STD || op == OP_LOGSUMEXP; /* a mean or max first */
    if (op != OP_MEAN && op != OP_SUM && !mx && !mn && !norm && !logic && !prod && !two)
        return diag_add(c->diag, DIAG_ERROR, ST_INTERNAL, c->file, n->name, NULL,
                        "cpu_reduce called for op %s", op_short_name(op));
    bool red[NPU_MAX_RANK];
    Status st = reduce_dims(c, x, red);
    if (st != ST_OK) return st;
    /* Output strides per input dim (0 on reduced dims), in the kept dims' row-major order. */
    int64_t ost[NPU_MAX_RANK] = {0}, onumel = 1, count = 1;
    for (int d = x->rank - 1; d >= 0; d--) {
        if (red[d]) {
            count *= x->shape[d];
        } else {
            ost[d] = onumel;
            onumel *= x->shape[d];
        }
    }
    if (onumel != y->numel)
        return diag_error(c->diag, c->file, n->name, NULL,
                          "reducing leaves %lld elements but the output has %lld",
                          (long long)onumel, (long long)y->numel);
    if ((mx || mn) && count == 0 && y->numel > 0)
        return diag_error(c->diag, c->file, n->name, NULL, "%s over an empty dimension",
                          op_short_name(op));
    double p = norm ? attr_float(n, "ord", 2.0) : 1.0; /* linalg_vector_norm's ord */
    bool ints = !dtype_is_float(y->dtype) && !dtype_is_float(x->dtype) && op != OP_MEAN && !norm &&
                !logic && !two;
    double *accf = NULL, *pre = NULL;
    int64_t *acci = NULL;
    size_t cnt = (size_t)(onumel ? onumel : 1);
    if (ints)
        acci = malloc(sizeof *acci * cnt);
    else
        accf = malloc(sizeof *accf * cnt);
    if (two) pre = malloc(sizeof *pre * cnt);
    if ((!accf && !acci) || (two && !pre)) {
        free(accf), free(acci), free(pre);
        return ST_NOMEM;
    }
    for (int64_t i = 0; i < onumel; i++) {
        if (ints) acci[i] = mx ? INT64_MIN : mn ? INT64_MAX : prod ? 1 : 0;
        if (!ints)
            accf[i] = mx                               ? -INFINITY
                      : mn || (norm && p == -INFINITY) ? INFINITY
                      : prod || op == OP_ALL           ? 1
                                                       : 0;
        if (two) pre[i] = op == OP_LOGSUMEXP ? -INFINITY : 0;
    }
    if (two) { /* the mean (var, std) or the max (logsumexp) of each output's elements */
        FOR_REDUCED(x, ost, i, off, {
            double v = cpu_ldf(x, i);
            if (op != OP_LOGSUMEXP)
                pre[off] += v;
            else if (v > pre[off] || v != v)
                pre[off] = v;
        });
        for (int64_t i = 0; i < onumel && op != OP_LOGSUMEXP; i++)
            pre[i] /= (double)count;
        for (int64_t i = 0; i < onumel && op == OP_LOGSUMEXP; i++)
            if (isinf(pre[i])) pre[i] = 0; /* ATen: an infinite max does not shift */
    }
    FOR_REDUCED(x, ost, i, off, {
        if (ints) {
            int64_t v = cpu_ldi(x, i);
            if (mx)
                acci[off] = v > acci[off] ? v : acci[off];
            else if (mn)
                acci[off] = v < acci[off] ? v : acci[off];
            else if (prod)
                acci[off] = (int64_t)((uint64_t)acci[off] * (uint64_t)v);
            else
                acci[off] = cpu_wadd(acci[off], v);
        } else {
            double v = cpu_ldf(x, i);
            if (norm)
                accf[off] = norm_acc(accf[off], fabs(v), p);
            else if (op == OP_ANY)
                accf[off] = accf[off] != 0 || v != 0;
            else if (op == OP_ALL)
                accf[off] = accf[off] != 0 && v != 0;
            else if (prod)
                accf[off] *= v;
            else if (op == OP_LOGSUMEXP)
                accf[off] += exp(v - pre[off]);
            else if (two)
                accf[off] += (v - pre[off]) * (v - pre[off]);
            else if (!mx && !mn)
                accf[off] += v;
            else if ((mx ? v > accf[off] : v < accf[off]) || (v != v && accf[off] == accf[off]))
                accf[off] = v; /* NaN propagates, as torch.amax/amin do */
        }
    });
    double dof = two ? (double)count - correction(n) : 0;
    for (int64_t i = 0; i < onumel; i++) {
        if (ints) {
            sti(y, i, acci[i]);
            continue;
        }
        double v = accf[i];
        if (op == OP_MEAN) v /= (double)count;
        if (norm) v = norm_end(v, p);
        if (op == OP_VAR || op == OP_STD) v /= dof > 0 ? dof : 0;
        if (op == OP_STD) v = sqrt(v);
        if (op == OP_LOGSUMEXP) v = log(v) + pre[i];
        stf(y, i, v);
    }
    free(accf);
    free(acci);
    free(pre);
    return ST_OK;
}

/* ---- argmax ---- */

/* The index of the first maximum along `dim` (of the flattened input when absent or null). NaN is
 * the maximum (its first index wins), as in torch; with `skip_nan` NaN is ignored and a row of
 * nothing else gives -1 (generate's greedy pick, which reports such logits). */
Status cpu_argmax(const CpuCall *c)
{
    const HTensor *x = c->in[0];
    HTensor *y = c->out[0];
    bool skip = attr_bool(c->node, "skip_nan", false), ints = !dtype_is_float(x->dtype);
    double sg = c->node->op == OP_ARGMIN ? -1 : 1; /* argmin: the first maximum of -x */
    int64_t outer = 1, len = x->numel, inner = 1;
    if (attr_present(c->node, "dim")) {
        int dim;
        Status st = one_dim(c, x, "dim", -1, &dim);
        if (st != ST_OK) return st;
        split_at(x, dim, &outer, &len, &inner);
    }
    if (outer * inner != y->numel)
        return diag_error(c->diag, c->file, c->node->name, NULL,
                          "argmax leaves %lld elements but the output has %lld",
                          (long long)(outer * inner), (long long)y->numel);
    if (len == 0 && y->numel > 0)
        return diag_error(c->diag, c->file, c->node->name, NULL, "argmax over an empty dimension");
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t in = 0; in < inner; in++) {
            int64_t base = o * len * inner + in, best = -1;
            double bv = 0;
            int64_t bi = 0;
            for (int64_t j = 0; j < len; j++) {
                int64_t p = base + j * inner;
                if (ints) {
                    int64_t v = cpu_ldi(x, p);
                    if (best < 0 || (sg > 0 ? v > bi : v < bi)) best = j, bi = v;
                    continue;
                }
                double v = sg * cpu_ldf(x, p);
                if (v != v) {
                    if (skip) continue;
                    if (best < 0 || bv == bv) best = j, bv = v; /* the first NaN wins */
                } else if (best < 0 || v > bv) {
                    best = j, bv = v;
                }
            }
            sti(y, o * inner + in, best);
        }
    }
    return ST_OK;
}

/* ---- softmax, log_softmax ---- */

Status cpu_softmax(const CpuCall *c)
{
    const HTensor *x = c->in[0];
    HTensor *y = c->out[0];
    bool logsm = c->node->op == OP_LOG_SOFTMAX, safe = attr_bool(c->node, "safe", false);
    int dim;
    Status st = same_numel(c, x, y);
    if (st == ST_OK) st = one_dim(c, x, "dim", -1, &dim);
    if (st != ST_OK) return st;
    int64_t outer, len, inner;
    split_at(x, dim, &outer, &len, &inner);
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t in = 0; in < inner; in++) {
            int64_t base = o * len * inner + in;
            double mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < len; j++) {
                double v = cpu_ldf(x, base + j * inner);
                if (v > mx || v != v) mx = v; /* NaN sticks: v > NaN is false */
            }
            /* An all -inf row gives exp(-inf - -inf) = NaN everywhere, as in PyTorch; zeros
             * with `safe` (an exported sdpa's softmax, compiler/canon_sdpa.c) */
            if (safe && mx == -INFINITY) {
                for (int64_t j = 0; j < len; j++)
                    stf(y, base + j * inner, logsm ? -INFINITY : 0);
                continue;
            }
            for (int64_t j = 0; j < len; j++)
                sum += exp(cpu_ldf(x, base + j * inner) - mx);
            double lse = log(sum);
            for (int64_t j = 0; j < len; j++) {
                double d = cpu_ldf(x, base + j * inner) - mx;
                stf(y, base + j * inner, logsm ? d - lse : exp(d) / sum);
            }
        }
    }
    return ST_OK;
}

/* ---- layer_norm ---- */

Status cpu_layer_norm(const CpuCall *c)
{
    const Node *n = c->node;
    const HTensor *x = c->in[0];
    const HTensor *w = c->nin > 1 ? c->in[1] : NULL, *b = c->nin > 2 ? c->in[2] : NULL;
    HTensor *y = c->out[0];
    Status st = same_numel(c, x, y);
    if (st != ST_OK) return st;
    int64_t ns[NPU_MAX_RANK + 1];
    int k;
    if (attr_present(n, "normalized_shape")) {
        k = attr_ints(n, "normalized_shape", ns, NPU_MAX_RANK + 1);
        if (k < 0)
            return diag_error(c->diag, c->file, n->name, NULL,
                              "`normalized_shape` is not an int list");
    } else if (w) { /* required by ATen; fall back to the weight's shape */
        k = w->rank;
        memcpy(ns, w->shape, sizeof(int64_t) * (size_t)k);
    } else {
        return diag_error(c->diag, c->file, n->name, NULL, "layer_norm has no `normalized_shape`");
    }
    bool ok = k <= x->rank;
    int64_t N = 1;
    for (int i = 0; ok && i < k; i++) {
        ok = ns[i] == x->shape[x->rank - k + i];
        N *= ns[i];
    }
    if (!ok) {
        char buf[96];
        return diag_error(c->diag, c->file, n->name, NULL,
                          "normalized_shape (%d dims) is not the trailing shape of the input %s", k,
                          shape_str(x->shape, x->rank, buf, sizeof buf));
    }
    if ((w && w->numel != N) || (b && b->numel != N))
        return diag_error(c->diag, c->file, n->name, NULL,
                          "weight/bias must have %lld elements (normalized_shape)", (long long)N);
    double eps = attr_float(n, "eps", 1e-5);
    int64_t rows = N ? x->numel / N : 0;
    for (int64_t r = 0; r < rows; r++) {
        int64_t base = r * N;
        double mean = 0, var = 0;
        for (int64_t j = 0; j < N; j++)
            mean += cpu_ldf(x, base + j);
        mean /= (double)N;
        for (int64_t j = 0; j < N; j++) {
            double d = cpu_ldf(x, base + j) - mean;
            var += d * d;
        }
        var /= (double)N; /* biased, as layer_norm uses */
        double rstd = 1.0 / sqrt(var + eps);
        for (int64_t j = 0; j < N; j++) {
            double v = (cpu_ldf(x, base + j) - mean) * rstd;
            if (w) v *= cpu_ldf(w, j);
            if (b) v += cpu_ldf(b, j);
            stf(y, base + j, v);
        }
    }
    return ST_OK;
}

/* ---- batch_norm (eval) ---- */

Status cpu_batch_norm(const CpuCall *c)
{
    const Node *n = c->node;
    const HTensor *x = c->in[0];
    HTensor *y = c->out[0];
    if (attr_bool(n, "training", false))
        return diag_error(c->diag, c->file, n->name, NULL,
                          "training-mode batch_norm is not supported (export the model in eval "
                          "mode)");
    const HTensor *w = NULL, *b = NULL, *rm, *rv;
    if (c->nin == 5) {
        w = c->in[1];
        b = c->in[2];
        rm = c->in[3];
        rv = c->in[4];
    } else if (c->nin == 3) {
        rm = c->in[1];
        rv = c->in[2];
    } else {
        return diag_error(c->diag, c->file, n->name, NULL,
                          "batch_norm takes 5 inputs (x, weight, bias, running_mean, running_var) "
                          "or 3 (x, running_mean, running_var), the node has %d",
                          c->nin);
    }
    Status st = same_numel(c, x, y);
    if (st != ST_OK) return st;
    if (x->rank < 2)
        return diag_error(c->diag, c->file, n->name, NULL,
                          "batch_norm input has rank %d, needs at least 2", x->rank);
    int64_t C = x->shape[1];
    if ((w && w->numel != C) || (b && b->numel != C) || rm->numel != C || rv->numel != C)
        return diag_error(c->diag, c->file, n->name, NULL,
                          "weight, bias and running statistics must have %lld elements (channels)",
                          (long long)C);
    double eps = attr_float(n, "eps", 1e-5);
    int64_t inner = 1;
    for (int i = 2; i < x->rank; i++)
        inner *= x->shape[i];
    int64_t batch = x->shape[0];
    for (int64_t ch = 0; ch < C; ch++) {
        double alpha = 1.0 / sqrt(cpu_ldf(rv, ch) + eps);
        if (w) alpha *= cpu_ldf(w, ch);
        double beta = (b ? cpu_ldf(b, ch) : 0) - cpu_ldf(rm, ch) * alpha;
        for (int64_t nb = 0; nb < batch; nb++) {
            int64_t base = (nb * C + ch) * inner;
            for (int64_t j = 0; j < inner; j++)
                stf(y, base + j, cpu_ldf(x, base + j) * alpha + beta);
        }
    }
    return ST_OK;
}

/* ---- cumsum ---- */

Status cpu_cumsum(const CpuCall *c)
{
    const HTensor *x = c->in[0];
    HTensor *y = c->out[0];
    if (!attr_present(c->node, "dim"))
        return diag_error(c->diag, c->file, c->node->name, NULL, "cumsum has no `dim`");
    int dim;
    Status st = same_numel(c, x, y);
    if (st == ST_OK) st = one_dim(c, x, "dim", 0, &dim);
    if (st != ST_OK) return st;
    int64_t outer, len, inner;
    split_at(x, dim, &outer, &len, &inner);
    bool ints = !dtype_is_float(y->dtype);
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t in = 0; in < inner; in++) {
            int64_t base = o * len * inner + in;
            double sf = 0;
            int64_t si = 0;
            for (int64_t j = 0; j < len; j++) {
                int64_t p = base + j * inner;
                if (ints) {
                    si = cpu_wadd(si, cpu_ldi(x, p));
                    sti(y, p, si);
                } else {
                    sf += cpu_ldf(x, p);
                    stf(y, p, sf);
                }
            }
        }
    }
    return ST_OK;
}
