/* Shape inference of the ops real torchvision and transformers exports add to the first set:
 * fills of a tensor or a region of it, diff, advanced indexing, gather, conv1d, transposed
 * conv, group_norm, 2-D upsampling, pad, einsum and scaled_dot_product_attention. ATen's rules,
 * ATen's defaults for omitted attributes. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "compiler/shape/shape_int.h"

/* attribute values above this are refused before they enter shape arithmetic (no overflow) */
#define BIG ((int64_t)1 << 30)

/* fill.Tensor's value (input 1, when there is one) must be 0-dim, as in ATen; its dtype may
 * differ (ATen fills with value.item(), cast to the output's dtype). */
static Status fill_value(ShapeCtx *c)
{
    const GTensor *v = c->n->nin > 1 ? sh_in(c, 1) : NULL;
    if (v && v->rank != 0)
        return sh_err(c, v->name,
                      "fill_ only supports 0-dimension value tensor but got tensor with %d "
                      "dimensions",
                      v->rank);
    return ST_OK;
}

/* zero_ and fill keep the input's shape. */
Status shape_fill_like(ShapeCtx *c)
{
    Status st = fill_value(c);
    return st != ST_OK ? st : shape_same(c);
}

/* npu.slice_fill(x[, value]): x's shape; its region (shape_slice_box) must make sense. */
Status shape_slice_fill(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    SliceBox b;
    const char *why = NULL;
    if (!shape_slice_box(c->n, x->rank, x->shape, &b, &why)) return sh_err(c, x->name, "%s", why);
    Status st = fill_value(c);
    return st != ST_OK ? st : shape_same(c);
}

/* diff(x, n, dim, prepend, append): the IR lists the optional tensors that were given, in
 * schema order (prepend before append); with one extra tensor it is prepend, as transformers
 * writes it. */
Status shape_diff(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    if (x->rank == 0)
        return sh_err(c, x->name, "diff expects input to be at least one-dimensional");
    int d;
    int64_t n;
    Status st = sh_dim(c, "dim", false, -1, x->rank, &d);
    if (st == ST_OK) st = sh_int(c, "n", false, 1, &n);
    if (st != ST_OK) return st;
    if (n < 0) return sh_err(c, NULL, "order must be non-negative but got %lld", (long long)n);
    int64_t s[NPU_MAX_RANK];
    memcpy(s, x->shape, sizeof(int64_t) * (size_t)x->rank);
    for (int i = 1; i < c->n->nin; i++) {
        const GTensor *p = sh_in(c, i);
        bool ok = p->rank == x->rank;
        for (int k = 0; ok && k < x->rank; k++)
            ok = k == d || p->shape[k] == x->shape[k];
        if (!ok)
            return sh_err(c, p->name, "%s must have the input's shape except at dim %d",
                          i == 1 ? "prepend" : "append", d);
        s[d] += p->shape[d];
    }
    s[d] = s[d] > n ? s[d] - n : 0;
    return sh_set(c, x->rank, s);
}

/* x[i0, i1, ..]: k integer index tensors over dims 0..k-1 broadcast together; the result is
 * their broadcast shape followed by x's remaining dims. */
Status shape_index(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    int k = c->n->nin - 1;
    if (k > x->rank)
        return sh_err(c, x->name, "too many indices for tensor of dimension %d (got %d)", x->rank,
                      k);
    int rb = 0;
    int64_t b[NPU_MAX_RANK];
    for (int i = 1; i <= k; i++) {
        const GTensor *t = sh_in(c, i);
        if (!dtype_is_int(t->dtype) || t->dtype == DT_BOOL)
            return sh_err(c, t->name,
                          "index tensors must be int64 or int32 (bool masks are not supported), "
                          "got %s",
                          dtype_name(t->dtype));
        Status st = sh_broadcast(c, t->name, rb, b, t->rank, t->shape, &rb, b);
        if (st != ST_OK) return st;
    }
    int64_t s[2 * NPU_MAX_RANK];
    memcpy(s, b, sizeof(int64_t) * (size_t)rb);
    for (int i = k; i < x->rank; i++)
        s[rb + i - k] = x->shape[i];
    return sh_set(c, rb + x->rank - k, s);
}

Status shape_gather(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0), *idx = sh_in(c, 1);
    int d;
    Status st = sh_dim(c, "dim", true, 0, x->rank, &d);
    if (st != ST_OK) return st;
    if (attr_bool(c->n, "sparse_grad", false))
        return sh_err(c, NULL, "sparse_grad=True is not supported");
    if (idx->rank != x->rank && !(x->rank == 0 && idx->rank <= 1))
        return sh_err(c, idx->name,
                      "index tensor must have the same number of dimensions as input");
    for (int i = 0; i < idx->rank && idx->rank == x->rank; i++)
        if (i != d && idx->shape[i] > x->shape[i])
            return sh_err(c, idx->name,
                          "size of dimension %d of index (%lld) is larger than the "
                          "input's (%lld)",
                          i, (long long)idx->shape[i], (long long)x->shape[i]);
    return sh_set(c, idx->rank, idx->shape);
}

/* The output length of a convolution dim (a transposed one when tr). */
static int64_t conv_len(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, int64_t op, bool tr)
{
    if (tr) return (in - 1) * s - 2 * p + d * (k - 1) + op + 1;
    int64_t e = in + 2 * p - d * (k - 1) - 1;
    return e < 0 ? -1 : e / s + 1;
}

/* conv1d and conv_transpose2d: x [N,]C,spatial..; weight [Cout, C/g, k..] or, transposed,
 * [C, Cout/g, k..]. */
static Status conv_common(ShapeCtx *c, int sp, bool tr)
{
    const GTensor *x = sh_in(c, 0), *w = sh_in(c, 1);
    char a[128];
    if (x->rank != sp + 1 && x->rank != sp + 2)
        return sh_err(c, x->name, "expected a %d-D (unbatched) or %d-D (batched) input, got %s",
                      sp + 1, sp + 2, shape_str(x->shape, x->rank, a, sizeof a));
    if (w->rank != sp + 2)
        return sh_err(c, w->name, "expected a %d-D weight, got %s", sp + 2,
                      shape_str(w->shape, w->rank, a, sizeof a));
    int64_t groups, stride[2], dil[2], pad[2] = {0, 0}, opad[2] = {0, 0};
    Status st = sh_int(c, "groups", false, 1, &groups);
    if (st == ST_OK) st = sh_ints_n(c, "stride", sp, 1, stride);
    if (st == ST_OK) st = sh_ints_n(c, "dilation", sp, 1, dil);
    if (st == ST_OK && tr) st = sh_ints_n(c, "output_padding", sp, 0, opad);
    if (st != ST_OK) return st;
    const char *pmode = attr_str(c->n, "padding", NULL);
    if (pmode) {
        if (tr || (strcmp(pmode, "same") && strcmp(pmode, "valid")))
            return sh_err(c, NULL, "padding '%s' is not supported here", pmode);
        for (int i = 0; i < sp && !strcmp(pmode, "same"); i++) {
            if (stride[i] != 1)
                return sh_err(c, NULL, "padding='same' is not supported for strided convolutions");
            pad[i] = dil[i] * (w->shape[2 + i] - 1) / 2;
        }
    } else if ((st = sh_ints_n(c, "padding", sp, 0, pad)) != ST_OK)
        return st;
    if (groups < 1) return sh_err(c, NULL, "groups must be positive, got %lld", (long long)groups);
    int b = x->rank - sp - 1;
    int64_t cin = x->shape[b];
    int64_t wcin = tr ? w->shape[0] : w->shape[1] * groups;
    int64_t cout = tr ? w->shape[1] * groups : w->shape[0];
    if (cin != wcin || (!tr && cout % groups) || (tr && cin % groups))
        return sh_err(c, w->name,
                      "weight %s does not fit an input of %lld channels with groups %lld",
                      shape_str(w->shape, w->rank, a, sizeof a), (long long)cin, (long long)groups);
    if (c->n->nin == 3 && (sh_in(c, 2)->rank != 1 || sh_in(c, 2)->shape[0] != cout))
        return sh_err(c, sh_in(c, 2)->name, "bias must be [%lld]", (long long)cout);
    int64_t out[4];
    if (b) out[0] = x->shape[0];
    out[b] = cout;
    for (int i = 0; i < sp; i++) {
        if (stride[i] < 1 || dil[i] < 1 || pad[i] < 0 || opad[i] < 0 || stride[i] > BIG ||
            dil[i] > BIG || pad[i] > BIG || opad[i] > BIG ||
            (tr && opad[i] >= stride[i] && opad[i] >= dil[i]))
            return sh_err(c, NULL, "stride, dilation, padding or output_padding out of range");
        int64_t len =
            conv_len(x->shape[b + 1 + i], w->shape[2 + i], stride[i], pad[i], dil[i], opad[i], tr);
        if (len < 1)
            return sh_err(c, w->name, "kernel size can't be greater than the padded input");
        out[b + 1 + i] = len;
    }
    return sh_set(c, x->rank, out);
}

Status shape_conv1d(ShapeCtx *c)
{
    return conv_common(c, 1, false);
}

Status shape_conv_transpose2d(ShapeCtx *c)
{
    return conv_common(c, 2, true);
}

Status shape_group_norm(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    int64_t g;
    Status st = sh_int(c, "num_groups", true, 1, &g);
    if (st != ST_OK) return st;
    if (x->rank < 2) return sh_err(c, x->name, "expected an input of at least 2 dims");
    if (g < 1 || x->shape[1] % g)
        return sh_err(c, x->name, "expected the %lld channels to be divisible by num_groups %lld",
                      (long long)x->shape[1], (long long)g);
    for (int i = 1; i < c->n->nin; i++)
        if (sh_in(c, i)->rank != 1 || sh_in(c, i)->shape[0] != x->shape[1])
            return sh_err(c, sh_in(c, i)->name, "weight and bias must be [%lld]",
                          (long long)x->shape[1]);
    return shape_same(c);
}

bool shape_upsample_dim(const Node *n, int i, int64_t in, int64_t *out, double *scale,
                        const char **why)
{
    int64_t os[2];
    const Attr *sf = node_attr(n, "scale_factors");
    if (attr_present(n, "output_size")) {
        if (attr_ints(n, "output_size", os, 2) != 2) {
            *why = "output_size must have 2 entries";
            return false;
        }
        *out = os[i];
        *scale = *out > 0 ? (double)in / (double)*out : 0;
        /* ATen passes the scale factors on when given with output_size (they are not here) */
        return *out >= 0 || (*why = "negative output_size", false);
    }
    if (!sf || (sf->kind != ATTR_FLOATS && sf->kind != ATTR_INTS) || sf->n != 2) {
        *why = "needs output_size or 2 scale_factors";
        return false;
    }
    double f = sf->floats[i];
    if (!(f > 0) || (double)in * f > 1e12) {
        *why = "scale factors must be positive (and the result of a sane size)";
        return false;
    }
    *out = (int64_t)floor((double)in * f);
    *scale = 1.0 / f;
    return true;
}

Status shape_upsample2d(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    if (x->rank != 4) return sh_err(c, x->name, "expected a 4-D input [N, C, H, W]");
    int64_t s[4] = {x->shape[0], x->shape[1], 0, 0};
    for (int i = 0; i < 2; i++) {
        const char *why = NULL;
        double sc;
        if (!shape_upsample_dim(c->n, i, x->shape[2 + i], &s[2 + i], &sc, &why))
            return sh_err(c, NULL, "%s", why);
    }
    return sh_set(c, 4, s);
}

Status shape_pad(ShapeCtx *c)
{
    const GTensor *x = sh_in(c, 0);
    int64_t p[2 * NPU_MAX_RANK];
    int k;
    Status st = sh_ints(c, "pad", p, 2 * NPU_MAX_RANK, &k);
    if (st != ST_OK) return st;
    if (k < 0) return sh_err(c, NULL, "attribute 'pad' is required");
    if (k % 2 || k / 2 > x->rank)
        return sh_err(c, NULL, "padding length must be even and at most twice the rank, got %d", k);
    const char *mode = attr_str(c->n, "mode", "constant");
    if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "replicate") &&
        strcmp(mode, "circular"))
        return sh_err(c, NULL, "unknown padding mode '%s'", mode);
    int64_t s[NPU_MAX_RANK];
    memcpy(s, x->shape, sizeof(int64_t) * (size_t)x->rank);
    for (int j = 0; j < k / 2; j++) {
        int d = x->rank - 1 - j;
        int64_t lo = p[2 * j], hi = p[2 * j + 1];
        /* reflect needs pads below the size, circular at most the size, replicate any */
        int64_t most = !strcmp(mode, "reflect")    ? x->shape[d] - 1
                       : !strcmp(mode, "circular") ? x->shape[d]
                                                   : INT64_MAX;
        if (strcmp(mode, "constant") && (lo < 0 || hi < 0 || lo > most || hi > most))
            return sh_err(c, NULL, "%s padding (%lld, %lld) does not fit dim %d of size %lld", mode,
                          (long long)lo, (long long)hi, d, (long long)x->shape[d]);
        s[d] += lo + hi;
        if (s[d] < 0) return sh_err(c, NULL, "the padded size of dim %d would be negative", d);
    }
    return sh_set(c, x->rank, s);
}

bool shape_einsum_parse(const char *eq, int nops, EinsumSpec *s, const char **why)
{
    memset(s, 0, sizeof *s);
    s->nops = nops;
    int op = 0, used[EINSUM_MAX_LABELS] = {0};
    const char *p = eq;
    bool arrow = false;
    s->orank = 0;
    for (; *p; p++) {
        char ch = *p;
        if (ch == ' ') continue;
        if (ch == '.') {
            *why = "ellipsis ('...') is not supported";
            return false;
        }
        if (ch == ',') {
            if (arrow || ++op >= nops) {
                *why = "more operands in the equation than tensors";
                return false;
            }
            continue;
        }
        if (ch == '-' && p[1] == '>') {
            if (arrow) {
                *why = "two '->'";
                return false;
            }
            arrow = true;
            p++;
            continue;
        }
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))) {
            *why = "a subscript must be a letter";
            return false;
        }
        int l = 0;
        while (l < s->nlabels && s->labels[l] != ch)
            l++;
        if (l == s->nlabels) {
            if (arrow) {
                *why = "an output subscript appears in no operand";
                return false;
            }
            if (s->nlabels == EINSUM_MAX_LABELS) {
                *why = "more than 16 subscripts";
                return false;
            }
            s->labels[s->nlabels++] = ch;
        }
        if (arrow) {
            for (int i = 0; i < s->orank; i++)
                if (s->olab[i] == l) {
                    *why = "an output subscript appears twice";
                    return false;
                }
            if (s->orank == NPU_MAX_RANK) {
                *why = "output rank too large";
                return false;
            }
            s->olab[s->orank++] = l;
        } else {
            if (s->rank[op] == NPU_MAX_RANK) {
                *why = "operand rank too large";
                return false;
            }
            s->lab[op][s->rank[op]++] = l;
            used[l]++;
        }
    }
    if (op != nops - 1) {
        *why = "fewer operands in the equation than tensors";
        return false;
    }
    if (!arrow) /* implicit output: labels used once, alphabetically (upper case first) */
        for (char ch = 'A'; ch <= 'z'; ch++)
            for (int l = 0; l < s->nlabels; l++)
                if (s->labels[l] == ch && used[l] == 1 && s->orank < NPU_MAX_RANK)
                    s->olab[s->orank++] = l;
    return true;
}

/* The size of every label: equal across operands, or 1 broadcast. */
static Status einsum_sizes(ShapeCtx *c, const EinsumSpec *s, int64_t *size)
{
    for (int l = 0; l < s->nlabels; l++)
        size[l] = 1;
    for (int o = 0; o < s->nops; o++) {
        const GTensor *t = sh_in(c, o);
        if (t->rank != s->rank[o])
            return sh_err(c, t->name, "the equation gives operand %d %d subscripts for %d dims", o,
                          s->rank[o], t->rank);
        for (int d = 0; d < t->rank; d++) {
            int64_t *z = &size[s->lab[o][d]];
            if (t->shape[d] != 1 && *z != 1 && *z != t->shape[d])
                return sh_err(c, t->name, "subscript '%c' has size %lld, elsewhere %lld",
                              s->labels[s->lab[o][d]], (long long)t->shape[d], (long long)*z);
            if (t->shape[d] != 1) *z = t->shape[d];
        }
    }
    return ST_OK;
}

Status shape_einsum(ShapeCtx *c)
{
    EinsumSpec s;
    const char *why = NULL;
    const char *eq = attr_str(c->n, "equation", NULL);
    if (!eq) return sh_err(c, NULL, "attribute 'equation' is required");
    if (!shape_einsum_parse(eq, c->n->nin, &s, &why))
        return sh_err(c, NULL, "equation '%s': %s", eq, why);
    int64_t size[EINSUM_MAX_LABELS], o[NPU_MAX_RANK];
    Status st = einsum_sizes(c, &s, size);
    if (st != ST_OK) return st;
    for (int i = 0; i < s.orank; i++)
        o[i] = size[s.olab[i]];
    return sh_set(c, s.orank, o);
}

/* q [.., L, E], k [.., S, E], v [.., S, Ev] -> [.., L, Ev] (q's leading dims); a mask
 * broadcasts to [.., L, S]; enable_gqa lets q have a multiple of k's and v's heads (dim -3). */
Status shape_sdpa(ShapeCtx *c)
{
    const GTensor *q = sh_in(c, 0), *k = sh_in(c, 1), *v = sh_in(c, 2);
    char a[128], b[128];
    if (q->rank < 2 || k->rank != q->rank || v->rank != q->rank)
        return sh_err(c, q->name, "q, k and v must have the same rank, at least 2");
    int r = q->rank;
    bool gqa = attr_bool(c->n, "enable_gqa", false);
    if (k->shape[r - 1] != q->shape[r - 1] || v->shape[r - 2] != k->shape[r - 2])
        return sh_err(c, k->name, "q %s, k %s and v %s do not fit (E and S must agree)",
                      shape_str(q->shape, r, a, sizeof a), shape_str(k->shape, r, b, sizeof b),
                      shape_str(v->shape, r, a, sizeof a));
    for (int d = 0; d < r - 2; d++) {
        bool heads = gqa && d == r - 3;
        for (int i = 1; i < 3; i++) {
            int64_t kv = sh_in(c, i)->shape[d];
            if (kv == q->shape[d] || (heads && kv > 0 && q->shape[d] % kv == 0)) continue;
            return sh_err(c, sh_in(c, i)->name, "dim %d is %lld, q's is %lld%s", d, (long long)kv,
                          (long long)q->shape[d],
                          d == r - 3 && !gqa ? " (grouped heads need enable_gqa)" : "");
        }
    }
    if (attr_float(c->n, "dropout_p", 0.0) != 0.0)
        return sh_err(c, NULL,
                      "dropout_p %g: attention dropout is random; export in eval mode "
                      "with dropout_p=0",
                      attr_float(c->n, "dropout_p", 0.0));
    int64_t s[NPU_MAX_RANK];
    memcpy(s, q->shape, sizeof(int64_t) * (size_t)r);
    s[r - 1] = v->shape[r - 1];
    if (c->n->nin == 4) {
        const GTensor *m = sh_in(c, 3);
        int64_t ls[NPU_MAX_RANK];
        memcpy(ls, q->shape, sizeof(int64_t) * (size_t)r);
        ls[r - 1] = k->shape[r - 2];
        int ro;
        int64_t o[NPU_MAX_RANK];
        Status st = sh_broadcast(c, m->name, r, ls, m->rank, m->shape, &ro, o);
        if (st != ST_OK) return st;
        if (ro != r || memcmp(o, ls, sizeof(int64_t) * (size_t)r))
            return sh_err(c, m->name, "attn_mask %s does not broadcast to the scores %s",
                          shape_str(m->shape, m->rank, a, sizeof a), shape_str(ls, r, b, sizeof b));
        if (attr_bool(c->n, "is_causal", false))
            return sh_err(c, m->name, "is_causal with an attn_mask is an error in torch");
    }
    return sh_set(c, r, s);
}
