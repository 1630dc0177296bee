/* Strided views through chains of permutes and reshapes (compiler/strided.h). */
#include "compiler/strided.h"

#include <string.h>

void sv_physical(StrideView *v, int r, const int64_t *shape, const int64_t *pshape)
{
    int64_t s = 1;
    v->rank = r;
    for (int d = r - 1; d >= 0; d--) {
        v->shape[d] = shape[d];
        v->stride[d] = s;
        s *= pshape ? pshape[d] : shape[d];
    }
}

static int64_t numel(int r, const int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < r; d++)
        n *= shape[d];
    return n;
}

bool sv_view_as(const StrideView *v, int r, const int64_t *shape, StrideView *out)
{
    if (r < 0 || r > NPU_MAX_RANK || numel(v->rank, v->shape) != numel(r, shape)) return false;
    StrideView o = {.rank = r};
    memcpy(o.shape, shape, sizeof(int64_t) * (size_t)r);
    /* as torch's view: walk both shapes from the innermost dim; each chunk of v's dims that are
     * contiguous with one another (size-1 dims ignored) must be covered exactly by new dims, which
     * take strides inside that chunk */
    int nd = r - 1;
    int64_t base = 1, tn = 1, vn = 1;
    int first = v->rank - 1;
    while (first >= 0 && v->shape[first] == 1)
        first--;
    if (first >= 0) base = v->stride[first];
    for (int d = v->rank - 1; d >= 0; d--) {
        if (v->shape[d] == 1) continue;
        tn *= v->shape[d];
        int prev = d - 1;
        while (prev >= 0 && v->shape[prev] == 1)
            prev--;
        if (prev >= 0 && v->stride[prev] == tn * base) continue; /* the chunk goes on */
        while (nd >= 0 && (vn < tn || shape[nd] == 1)) {
            o.stride[nd] = shape[nd] == 1 ? 0 : vn * base;
            vn *= shape[nd];
            nd--;
        }
        if (vn != tn) return false;
        if (prev >= 0) {
            base = v->stride[prev];
            tn = vn = 1;
        }
    }
    for (; nd >= 0; nd--) { /* size-1 dims left (all of them for a one-element tensor) */
        if (shape[nd] != 1) return false;
        o.stride[nd] = 0;
    }
    *out = o;
    return true;
}

bool sv_chain_op(const Graph *g, const Node *n)
{
    OpClass k = op_class(n->op);
    if ((k != OC_permute && k != OC_reshape && k != OC_identity) || n->nin != 1 || n->nout != 1)
        return false;
    const GTensor *i = node_input(g, n, 0), *o = node_output(g, n, 0);
    return dtype_is_float(i->dtype) && i->dtype == o->dtype && i->rank <= NPU_MAX_RANK &&
           o->rank <= NPU_MAX_RANK && numel(i->rank, i->shape) == numel(o->rank, o->shape);
}

bool sv_link_op(const Graph *g, const Node *n)
{
    if (n->op != OP_SELECT) return sv_chain_op(g, n);
    if (n->nin != 1 || n->nout != 1) return false;
    const GTensor *i = node_input(g, n, 0), *o = node_output(g, n, 0);
    return dtype_is_float(i->dtype) && i->dtype == o->dtype && i->rank <= NPU_MAX_RANK &&
           o->rank == i->rank - 1;
}

int sv_member_walk(const Graph *g, int t, bool (*member)(const void *ctx, int node),
                   const void *ctx, int *chain, int max, int *src)
{
    int n = 0;
    for (int p = g->tensors[t].producer;
         p >= 0 && n < max && member(ctx, p) && sv_link_op(g, &g->nodes[p]);
         p = g->tensors[t].producer) {
        memmove(chain + 1, chain, sizeof(int) * (size_t)n++);
        chain[0] = p;
        t = g->nodes[p].in[0];
    }
    *src = t;
    return n;
}

bool sv_permute_keeps_order(const Graph *g, const Node *n)
{
    const GTensor *in = node_input(g, n, 0);
    int perm[NPU_MAX_RANK], last = -1;
    if (op_class(n->op) != OC_permute || !node_perm(n, in->rank, perm)) return false;
    for (int d = 0; d < in->rank; d++) {
        if (in->shape[perm[d]] == 1) continue;
        if (perm[d] < last) return false;
        last = perm[d];
    }
    return true;
}

/* *v over exactly the shape of t (rank and dims), composing strides where it is a walk of
 * another shape; false where the memory order does not allow it. */
static bool exact(StrideView *v, const GTensor *t)
{
    if (v->rank == t->rank && memcmp(v->shape, t->shape, sizeof(int64_t) * (size_t)t->rank) == 0)
        return true;
    return sv_view_as(v, t->rank, t->shape, v);
}

/* One node of a chain: forward, *v describes n's input and then its output; backward, its
 * output and then its input. A reshape-like node gives per-dim strides of the other side where
 * they exist, else the walk stays (a reshape keeps the row-major order); a permute needs v's
 * shape to be its side's exactly. */
static bool step(const Graph *g, const Node *n, StrideView *v, bool forward)
{
    const GTensor *in = node_input(g, n, 0), *out = node_output(g, n, 0);
    const GTensor *from = forward ? in : out, *to = forward ? out : in;
    if (op_class(n->op) != OC_permute) {
        StrideView o;
        if (sv_view_as(v, to->rank, to->shape, &o)) *v = o;
        return true;
    }
    int perm[NPU_MAX_RANK];
    if (!node_perm(n, in->rank, perm) || out->rank != in->rank || !exact(v, from)) return false;
    StrideView o = {.rank = in->rank};
    for (int d = 0; d < in->rank; d++) {
        int a = forward ? d : perm[d], b = forward ? perm[d] : d; /* out dim d is in dim perm[d] */
        o.shape[a] = v->shape[b];
        o.stride[a] = v->stride[b];
    }
    *v = o;
    return true;
}

bool sv_forward(const Graph *g, const Node *n, StrideView *v)
{
    return step(g, n, v, true);
}

bool sv_backward(const Graph *g, const Node *n, StrideView *v)
{
    return step(g, n, v, false);
}

/* An operand's walk (sv_chain_strides): each dim of the tensor reached is a group of sub-dims
 * (shape, stride), outermost first, which a reshape splits and regroups as the element order
 * allows; a dim merged from dims of other strides (ViT's [L, N * H, hd] of a strided [L, N, E])
 * stays a group, so a later permute moves it whole and a later reshape can split it again. */
#define WALK_SUB (2 * NPU_MAX_RANK)
typedef struct Walk {
    int rank, nsub;
    int first[NPU_MAX_RANK + 1]; /* dim d: sub-dims first[d] .. first[d + 1] - 1 */
    int64_t sh[WALK_SUB], st[WALK_SUB], off;
} Walk;

/* w regrouped as the rank-r `shape` over the same elements in the same order: false where a
 * sub-dim would have to be split unevenly or there are too many. */
static bool walk_reshape(Walk *w, int r, const int64_t *shape)
{
    /* neighbours contiguous with one another merge first (a reshape ignores the groups) */
    int m = 0;
    for (int k = 0; k < w->nsub; k++) {
        if (w->sh[k] == 1) continue;
        if (m > 0 && w->st[m - 1] == w->sh[k] * w->st[k]) {
            w->sh[m - 1] *= w->sh[k];
            w->st[m - 1] = w->st[k];
            continue;
        }
        w->sh[m] = w->sh[k], w->st[m++] = w->st[k];
    }
    w->nsub = m;
    Walk o = {.rank = r, .off = w->off};
    int j = 0;
    for (int d = 0; d < r; d++) {
        o.first[d] = o.nsub;
        int64_t need = shape[d];
        while (need > 1) {
            while (j < w->nsub && w->sh[j] == 1)
                j++;
            if (j == w->nsub || o.nsub == WALK_SUB) return false;
            int64_t a = w->sh[j];
            if (a <= need) { /* the whole sub-dim */
                if (need % a) return false;
                o.sh[o.nsub] = a, o.st[o.nsub++] = w->st[j++];
                need /= a;
            } else { /* its outer part: need of it, the rest stays for the next dim */
                if (a % need) return false;
                o.sh[o.nsub] = need, o.st[o.nsub++] = w->st[j] * (a / need);
                w->sh[j] = a / need;
                need = 1;
            }
        }
    }
    o.first[r] = o.nsub;
    *w = o;
    return true;
}

/* One node of the walk, forward: a permute moves the groups, a select drops one at its index
 * (the offset moves there), a reshape regroups. */
static bool walk_step(const Graph *g, const Node *n, Walk *w)
{
    const GTensor *in = node_input(g, n, 0), *out = node_output(g, n, 0);
    if (w->rank != in->rank) return false;
    if (op_class(n->op) != OC_permute && n->op != OP_SELECT)
        return walk_reshape(w, out->rank, out->shape);
    Walk o = {.rank = out->rank, .off = w->off};
    int perm[NPU_MAX_RANK], sel = -1;
    if (n->op == OP_SELECT) {
        sel = norm_dim(attr_int(n, "dim", 0), in->rank);
        int64_t idx = attr_int(n, "index", 0);
        if (sel < 0) return false;
        if (idx < 0) idx += in->shape[sel];
        if (idx < 0 || idx >= in->shape[sel]) return false;
        for (int k = w->first[sel + 1] - 1; k >= w->first[sel]; k--) { /* unravel idx */
            o.off += idx % w->sh[k] * w->st[k];
            idx /= w->sh[k];
        }
        for (int d = 0, k = 0; d < in->rank; d++)
            if (d != sel) perm[k++] = d;
    } else if (!node_perm(n, in->rank, perm) || out->rank != in->rank) {
        return false;
    }
    for (int d = 0; d < out->rank; d++) {
        o.first[d] = o.nsub;
        for (int k = w->first[perm[d]]; k < w->first[perm[d] + 1]; k++)
            o.sh[o.nsub] = w->sh[k], o.st[o.nsub++] = w->st[k];
    }
    o.first[out->rank] = o.nsub;
    *w = o;
    return true;
}

bool sv_chain_strides(const Graph *g, const int *chain, int n, int64_t *st, int64_t *off)
{
    if (n < 1) return false;
    const GTensor *x = node_input(g, &g->nodes[chain[0]], 0);
    const GTensor *y = node_output(g, &g->nodes[chain[n - 1]], 0);
    if (x->rank > NPU_MAX_RANK) return false;
    Walk w = {.rank = x->rank, .nsub = x->rank};
    int64_t s = 1;
    for (int d = x->rank - 1; d >= 0; d--) {
        w.first[d] = d;
        w.sh[d] = x->shape[d];
        w.st[d] = s;
        s *= x->padded ? x->pshape[d] : x->shape[d];
    }
    w.first[x->rank] = x->rank;
    for (int i = 0; i < n; i++)
        if (!sv_link_op(g, &g->nodes[chain[i]]) || !walk_step(g, &g->nodes[chain[i]], &w))
            return false;
    if (w.rank != y->rank) return false;
    /* every dim one stride: its sub-dims (size 1 ignored) contiguous with one another */
    for (int d = 0; d < y->rank; d++) {
        int64_t inner = 0, span = 1;
        for (int k = w.first[d + 1] - 1; k >= w.first[d]; k--) {
            if (w.sh[k] == 1) continue;
            if (span > 1 && w.st[k] != span * inner) return false;
            if (span == 1) inner = w.st[k];
            span *= w.sh[k];
        }
        st[d] = inner;
    }
    *off = w.off;
    return true;
}

/* v without its size-1 dims. */
static void squeeze(const StrideView *v, StrideView *o)
{
    o->rank = 0;
    for (int d = 0; d < v->rank; d++) {
        if (v->shape[d] == 1) continue;
        o->shape[o->rank] = v->shape[d];
        o->stride[o->rank++] = v->stride[d];
    }
}

/* Splits v's dims (size 1 dropped) into outer dims and a trailing run of n elements with one
 * stride *l: o gets the outer dims. */
static bool split_row(const StrideView *v, int64_t n, StrideView *o, int64_t *l)
{
    squeeze(v, o);
    int k = o->rank;
    int64_t p = 1;
    while (k > 0 && p < n)
        p *= o->shape[--k];
    if (p != n) return false;
    for (int d = k; d + 1 < o->rank; d++)
        if (o->stride[d] != o->shape[d + 1] * o->stride[d + 1]) return false;
    *l = k < o->rank ? o->stride[o->rank - 1] : 1;
    o->rank = k;
    return true;
}

bool sv_rows(const StrideView *x, const StrideView *y, int64_t n, SvRows *r, const char **why)
{
    StrideView xo, yo;
    memset(r, 0, sizeof *r);
    if (n < 1 || !split_row(x, n, &xo, &r->xl) || !split_row(y, n, &yo, &r->yl))
        return (*why = "the normalised elements are not one strided run in memory"), false;
    r->n = n;
    r->rows = numel(xo.rank, xo.shape);
    /* common dims of both outer shapes, innermost first: each step splits off the smaller of the
     * two current dims from the larger, which it must divide */
    int64_t sh[2 * NPU_MAX_RANK], sx[2 * NPU_MAX_RANK], sy[2 * NPU_MAX_RANK];
    int m = 0, i = xo.rank - 1, j = yo.rank - 1;
    int64_t ax = i >= 0 ? xo.shape[i] : 1, ay = j >= 0 ? yo.shape[j] : 1;
    int64_t tx = i >= 0 ? xo.stride[i] : 0, ty = j >= 0 ? yo.stride[j] : 0;
    while (i >= 0 && j >= 0) {
        int64_t k = ax < ay ? ax : ay;
        if (ax % k || ay % k || m == 2 * NPU_MAX_RANK)
            return (*why = "the rows' dims in the input and the output do not split alike"), false;
        sh[m] = k;
        sx[m] = tx;
        sy[m++] = ty;
        ax /= k, ay /= k, tx *= k, ty *= k;
        if (ax == 1 && --i >= 0) ax = xo.shape[i], tx = xo.stride[i];
        if (ay == 1 && --j >= 0) ay = yo.shape[j], ty = yo.stride[j];
    }
    if (i >= 0 || j >= 0) return (*why = "the input and the output have other row counts"), false;
    /* outermost first, neighbours contiguous in both merged */
    int64_t oh[2 * NPU_MAX_RANK], ox[2 * NPU_MAX_RANK], oy[2 * NPU_MAX_RANK];
    int c = 0;
    for (int d = m - 1; d >= 0; d--) {
        if (c > 0 && ox[c - 1] == sh[d] * sx[d] && oy[c - 1] == sh[d] * sy[d]) {
            oh[c - 1] *= sh[d];
            ox[c - 1] = sx[d];
            oy[c - 1] = sy[d];
            continue;
        }
        oh[c] = sh[d], ox[c] = sx[d], oy[c++] = sy[d];
    }
    if (c > ROW_OUTER) return (*why = "more than " ABI_STR(ROW_OUTER) " strided row dims"), false;
    for (int d = 0; d < ROW_OUTER; d++) {
        int e = d - (ROW_OUTER - c);
        r->oshape[d] = e < 0 ? 1 : oh[e];
        r->xs[d] = e < 0 ? 0 : ox[e];
        r->ys[d] = e < 0 ? 0 : oy[e];
    }
    return true;
}

/* The element count of layer_norm node ln's normalised (trailing) dims, or -1. */
static int64_t norm_len(const Graph *g, const Node *ln)
{
    const GTensor *x = node_input(g, ln, 0);
    int64_t ns[NPU_MAX_RANK + 1];
    int nd = -1;
    if (attr_present(ln, "normalized_shape"))
        nd = attr_ints(ln, "normalized_shape", ns, NPU_MAX_RANK + 1);
    else if (ln->nin > 1)
        nd = node_input(g, ln, 1)->rank;
    if (nd < 0 || nd > x->rank) return -1;
    return numel(nd, x->shape + x->rank - nd);
}

bool sv_norm_rows(const Graph *g, const int *members, int nm, int ln, SvRows *r, const char **why)
{
    int at = -1;
    for (int i = 0; i < nm; i++)
        if (members[i] == ln) at = i;
    const Node *lnn = &g->nodes[ln];
    int64_t n = norm_len(g, lnn);
    if (at < 0 || n < 0) return (*why = "no layer_norm with a normalized shape"), false;
    /* x: from the first member's input through the in-chain */
    const GTensor *x = node_input(g, &g->nodes[members[0]], 0);
    StrideView vx, vy;
    sv_physical(&vx, x->rank, x->shape, x->pshape);
    for (int i = 0; i < at; i++)
        if (!sv_forward(g, &g->nodes[members[i]], &vx))
            return (*why = "a permute of the input needs strides its reshape does not keep"), false;
    /* y: from the last member's output (dense) back through the out-chain */
    const GTensor *y = node_output(g, &g->nodes[members[nm - 1]], 0);
    sv_physical(&vy, y->rank, y->shape, NULL);
    for (int i = nm - 1; i > at; i--)
        if (!sv_backward(g, &g->nodes[members[i]], &vy))
            return (*why = "a permute of the output needs strides its reshape does not keep"),
                   false;
    return sv_rows(&vx, &vy, n, r, why);
}
