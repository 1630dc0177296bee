#include "runtime/compare.h"

#include <math.h>
#include <stdlib.h>

#include "compiler/ops.h"

/* bf16's largest finite value: beyond it both 16-bit storage dtypes round to infinity. */
#define BF16_MAX 3.3895313892515355e38

static void topk(const HTensor *t, int64_t base, int64_t len, int k, int64_t *idx)
{
    for (int j = 0; j < k; j++)
        idx[j] = -1;
    for (int64_t i = 0; i < len; i++) {
        double v = htensor_get_f(t, base + i);
        for (int j = 0; j < k; j++) {
            if (idx[j] < 0 || v > htensor_get_f(t, base + idx[j])) {
                for (int m = k - 1; m > j; m--)
                    idx[m] = idx[m - 1];
                idx[j] = i;
                break;
            }
        }
    }
}

static bool same_set(const int64_t *a, const int64_t *b, int k)
{
    for (int i = 0; i < k; i++) {
        bool f = false;
        for (int j = 0; j < k; j++)
            f |= a[i] == b[j];
        if (!f) return false;
    }
    return true;
}

bool cmp_tensors(const HTensor *got, const HTensor *want, CmpStats *s)
{
    *s = (CmpStats){0};
    if (got->numel != want->numel) return false;
    int64_t n = got->numel;
    s->n = n;
    double se = 0, sw = 0, sg = 0, dot = 0, mg = 0, mw = 0;
    for (int64_t i = 0; i < n; i++) {
        double g = htensor_get_f(got, i), w = htensor_get_f(want, i);
        if (isinf(g) && isfinite(w) && fabs(w) > BF16_MAX && (g < 0) == (w < 0))
            continue; /* a mask constant (finfo(float32).min) that 16-bit storage made -inf */
        if (!isfinite(g) && isfinite(w)) {
            s->nonfinite++;
            continue;
        }
        if (!isfinite(w)) continue; /* -inf masks etc.: compared only for finiteness */
        double e = g - w;
        if (fabs(e) > s->max_abs) s->max_abs = fabs(e);
        se += e * e;
        sw += w * w;
        sg += g * g;
        dot += g * w;
        mg += g;
        mw += w;
    }
    s->rel_l2 = sw > 0 ? sqrt(se / sw) : sqrt(se);
    s->cosine = (sg > 0 && sw > 0) ? dot / sqrt(sg * sw) : (sg == sw ? 1.0 : 0.0);
    if (n > 0) {
        mg /= (double)n;
        mw /= (double)n;
        double cgw = 0, cg = 0, cw = 0;
        for (int64_t i = 0; i < n; i++) {
            double g = htensor_get_f(got, i), w = htensor_get_f(want, i);
            if (!isfinite(g) || !isfinite(w)) continue;
            cgw += (g - mg) * (w - mw);
            cg += (g - mg) * (g - mg);
            cw += (w - mw) * (w - mw);
        }
        s->pearson = (cg > 0 && cw > 0) ? cgw / sqrt(cg * cw) : (se == 0 ? 1.0 : 0.0);
    }
    int64_t last = want->rank > 0 ? want->shape[want->rank - 1] : 0;
    if (want->rank >= 1 && last >= 5 && dtype_is_float(want->dtype)) {
        s->has_topk = true;
        s->rows = n / last;
        for (int64_t r = 0; r < s->rows; r++) {
            int64_t a[5], b[5];
            topk(got, r * last, last, 5, a);
            topk(want, r * last, last, 5, b);
            s->top1_agree += a[0] == b[0];
            s->top5_agree += same_set(a, b, 5);
        }
    }
    return true;
}

/* Whether index i is acceptable for the row of x at base, len elements `step` apart (the
 * rules at cmp_output); *gap grows to the row maximum's distance from x[i] when both are finite. */
static bool index_ok(const HTensor *x, int64_t base, int64_t len, int64_t step, int64_t i,
                     bool skip_nan, const Tolerance *tol, double *gap)
{
    bool nan = false, any = false;
    double mx = -INFINITY, ss = 0;
    int64_t nf = 0;
    for (int64_t j = 0; j < len; j++) {
        double v = htensor_get_f(x, base + j * step);
        if (isnan(v)) {
            nan = true;
            continue;
        }
        any = true;
        if (v > mx) mx = v;
        if (isfinite(v)) ss += v * v, nf++;
    }
    if (nan && !skip_nan) return i >= 0 && i < len && isnan(htensor_get_f(x, base + i * step));
    if (!any) return i == -1; /* NaN alone with skip_nan */
    if (i < 0 || i >= len) return false;
    double v = htensor_get_f(x, base + i * step);
    if (isnan(v)) return false;
    if (v == mx) return true;
    if (!isfinite(v) || !isfinite(mx)) return false;
    if (mx - v > *gap) *gap = mx - v;
    if (!dtype_is_float(x->dtype)) return false;
    double win = tol->rel_l2 * sqrt(ss / (double)nf); /* nf > 0: v is finite */
    if (tol->max_abs > win) win = tol->max_abs;
    return mx - v <= win;
}

bool cmp_near_max(const HTensor *x, int64_t i, const Tolerance *tol)
{
    double gap = 0;
    return index_ok(x, 0, x->numel, 1, i, false, tol, &gap);
}

/* The argmax rows of cmp_output. */
static void argmax_rows(const HTensor *got, const HTensor *want, const ArgmaxSrc *a,
                        const Tolerance *tol, CmpStats *s)
{
    const HTensor *x = a->x.data ? &a->x : NULL;
    int64_t len = x ? x->numel : 0, inner = 1;
    if (x && a->dim >= 0 && a->dim < x->rank) {
        len = x->shape[a->dim];
        for (int k = a->dim + 1; k < x->rank; k++)
            inner *= x->shape[k];
    }
    if (x && (len < 1 || x->numel / len != want->numel)) x = NULL; /* not its input: exactly */
    s->argmax = true;
    s->am_rows = want->numel;
    for (int64_t r = 0; r < want->numel; r++) {
        int64_t gi = htensor_get_i(got, r), wi = htensor_get_i(want, r);
        s->am_differ += gi != wi;
        if (!x) {
            s->am_beyond += gi != wi;
            continue;
        }
        int64_t base = r / inner * len * inner + r % inner;
        s->am_beyond += !index_ok(x, base, len, inner, gi, a->skip_nan, tol, &s->am_gap);
    }
}

bool cmp_output(const HTensor *got, const HTensor *want, const ArgmaxSrc *a, const Tolerance *tol,
                CmpStats *s)
{
    if (!cmp_tensors(got, want, s)) return false;
    if (a) argmax_rows(got, want, a, tol, s);
    return true;
}

bool cmp_argmax_source(const Graph *g, int t, const HTensor *vals, int nvals, ArgmaxSrc *a)
{
    *a = (ArgmaxSrc){.dim = -1};
    if (t < 0 || t >= g->ntensors || g->tensors[t].producer < 0) return false;
    const Node *n = &g->nodes[g->tensors[t].producer];
    if (n->op != OP_ARGMAX || n->nin < 1) return false;
    int in = n->in[0];
    int64_t dim;
    if (g->tensors[in].rank > 0 && attr_present(n, "dim") && attr_ints(n, "dim", &dim, 1) == 1)
        a->dim = norm_dim(dim, g->tensors[in].rank);
    a->skip_nan = attr_bool(n, "skip_nan", false);
    if (vals && in < nvals && vals[in].data) {
        a->x = vals[in];
        a->x.borrowed = true;
    }
    return true;
}

double cmp_error(const CmpStats *s)
{
    if (s->argmax) return s->am_rows ? (double)s->am_beyond / (double)s->am_rows : 0;
    return s->nonfinite ? INFINITY : s->rel_l2;
}

bool cmp_ok(const CmpStats *s, const Tolerance *tol)
{
    if (s->argmax) return s->am_beyond == 0;
    if (s->nonfinite) return false;
    if (s->rel_l2 <= tol->rel_l2) return true;
    return tol->max_abs > 0 && s->max_abs <= tol->max_abs;
}
