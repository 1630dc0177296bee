#include "compare.h"

#include <math.h>
#include <stdlib.h>

/* bf16's largest finite value: beyond it both 16-bit storage dtypes round to infinity. */
#define BF16_MAX 3.3895313892515355e38

static void topk(const HTensor *t, int64_t base, int64_t len, int k, int64_t *idx)
{
    for (int j = 0; j < k; j++) idx[j] = -1;
    for (int64_t i = 0; i < len; i++) {
        double v = htensor_get_f(t, base + i);
        for (int j = 0; j < k; j++) {
            if (idx[j] < 0 || v > htensor_get_f(t, base + idx[j])) {
                for (int m = k - 1; m > j; m--) idx[m] = idx[m - 1];
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
        for (int j = 0; j < k; j++) f |= a[i] == b[j];
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

bool cmp_ok(const CmpStats *s, const Tolerance *tol)
{
    if (s->nonfinite) return false;
    if (s->rel_l2 <= tol->rel_l2) return true;
    return tol->max_abs > 0 && s->max_abs <= tol->max_abs;
}
