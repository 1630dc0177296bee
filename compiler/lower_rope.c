/* rope: the fused rotary-embedding chain out = x*cos + cat(-x[..., h:], x[..., :h])*sin
 * (match_rope in fuse_patterns.c: two last-dim slices of x, neg, cat, two muls, add). Which
 * input is x, cos and sin is read off the member nodes, not the input order: x feeds the slices,
 * sin multiplies the cat, cos multiplies x. cos and sin (and x) broadcast to the output's shape
 * (typically [B, 1, S, D] over the heads of x [B, H, S, D]).
 *
 * One invocation per pair (j, j + h) of a row, h = D / 2:
 *   out[j]     = x[j] * cos[j]         + (-x[j + h]) * sin[j]
 *   out[j + h] = x[j + h] * cos[j + h] + x[j] * sin[j + h]
 * The outer dims (all but the last) are collapsed to at most three over the four tensors, each
 * with its own (broadcast 0 or physical) strides; cos and sin may broadcast the last dim too.
 *   bindings: x, cos, sin, out
 *   push {total, h, od1, od2, xs0, xs1, xs2, cs0, cs1, cs2, ss0, ss1, ss2, ys0, ys1, ys2, cl, sl}
 *   (cl, sl: last-dim strides of cos and sin, 0 or 1) */
#include "kernels.h"

#include <string.h>

#define ROPE_WG 128

/* The kernel argument holding graph tensor t (plan tensors keep the graph's names), or -1. */
static int arg_of(const KernelCtx *c, const PlanKernel *k, int t)
{
    const char *name = c->g->tensors[t].name;
    for (int i = 0; i < k->nin; i++)
        if (strcmp(kc_arg(k, c->p, i)->name, name) == 0) return i;
    return -1;
}

static bool member(const Fusion *f, int node)
{
    for (int i = 0; i < f->nnodes; i++)
        if (f->nodes[i] == node) return true;
    return false;
}

/* Strides of t broadcast to the output's rank-r shape (0 where t has size 1 or no dim). */
static void bcast_strides(const PlanTensor *t, const PlanTensor *o, int64_t *st)
{
    int64_t s[NPU_MAX_RANK];
    kc_strides(t, s);
    int off = o->rank - t->rank;
    for (int d = 0; d < o->rank; d++) {
        int e = d - off;
        st[d] = (e < 0 || t->shape[e] == 1) ? 0 : s[e];
    }
}

Status lower_rope(const KernelCtx *c, PlanKernel *k)
{
    const Fusion *f = c->fusion;
    const Node *sl = kc_member(c, OP_SLICE), *cat = kc_member(c, OP_CAT);
    if (!f || !sl || !cat || cat->nout != 1)
        return kc_error(c, "rope kernel needs the fused slice/neg/cat/mul/mul/add chain");
    int x = sl->in[0], cat_out = cat->out[0], cos = -1, sin = -1;
    for (int i = 0; i < f->nnodes; i++) {
        const Node *m = &c->g->nodes[f->nodes[i]];
        if (m->op != OP_MUL || m->nin != 2) continue;
        if (m->in[0] == cat_out || m->in[1] == cat_out)
            sin = m->in[0] == cat_out ? m->in[1] : m->in[0];
        else
            cos = m->in[0] == x ? m->in[1] : m->in[0];
    }
    if (cos < 0 || sin < 0) return kc_error(c, "rope: no x*cos and rotate_half(x)*sin multiplies");
    int order[3] = {arg_of(c, k, x), arg_of(c, k, cos), arg_of(c, k, sin)};
    if (member(f, c->g->tensors[cos].producer) || member(f, c->g->tensors[sin].producer) ||
        order[0] < 0 || order[1] < 0 || order[2] < 0 || k->nin != 3 || order[0] == order[1] ||
        order[0] == order[2] || order[1] == order[2])
        return kc_error(c, "rope: x, cos and sin must be three distinct outside inputs");
    int ids[3] = {k->args[order[0]], k->args[order[1]], k->args[order[2]]};
    memcpy(k->args, ids, sizeof ids);

    const PlanTensor *t[4] = {kc_arg(k, c->p, 0), kc_arg(k, c->p, 1), kc_arg(k, c->p, 2),
                              kc_out(k, c->p)};
    const PlanTensor *o = t[3];
    int r = o->rank;
    if (r < 1) return kc_error(c, "rope: scalar output");
    int64_t D = o->shape[r - 1];
    int64_t st[4][NPU_MAX_RANK];
    for (int i = 0; i < 4; i++) {
        if (t[i]->rank > r) return kc_error(c, "rope: an input has a higher rank than the output");
        if (i < 3)
            bcast_strides(t[i], o, st[i]);
        else
            kc_strides(o, st[i]);
        for (int d = 0; d < r; d++) {
            int e = d - (r - t[i]->rank);
            if (e >= 0 && t[i]->shape[e] != 1 && t[i]->shape[e] != o->shape[d])
                return kc_error(c, "rope: an input does not broadcast to the output");
        }
    }
    /* x and out are dense along the last dim (x is sliced there), cos/sin dense or broadcast */
    if (D % 2 || st[0][r - 1] != 1 || st[3][r - 1] != 1 || st[1][r - 1] > 1 || st[2][r - 1] > 1)
        return kc_error(c, "rope: the last dim must be even and contiguous in x and the output");
    /* collapse the outer dims: drop size-1 dims, merge neighbours contiguous in all four */
    int64_t sh[NPU_MAX_RANK], cs[4][NPU_MAX_RANK];
    int m = 0;
    for (int d = 0; d < r - 1; d++) {
        if (o->shape[d] == 1) continue;
        bool merge = m > 0;
        for (int i = 0; i < 4 && merge; i++)
            merge = cs[i][m - 1] == st[i][d] * o->shape[d];
        if (merge) {
            sh[m - 1] *= o->shape[d];
            for (int i = 0; i < 4; i++)
                cs[i][m - 1] = st[i][d];
            continue;
        }
        sh[m] = o->shape[d];
        for (int i = 0; i < 4; i++)
            cs[i][m] = st[i][d];
        m++;
    }
    if (m > 3) return kc_error(c, "rope: more than 3 non-contiguous outer dims");
    int64_t od[3] = {1, 1, 1}, os[4][3] = {{0}};
    for (int j = 0; j < m; j++) {
        od[3 - m + j] = sh[j];
        for (int i = 0; i < 4; i++)
            os[i][3 - m + j] = cs[i][j];
    }
    int64_t total = kc_numel(o) / 2;
    Status s = kc_push_i(c, k, total);
    if (s == ST_OK) s = kc_push_i(c, k, D / 2);
    if (s == ST_OK) s = kc_push_i(c, k, od[1]);
    if (s == ST_OK) s = kc_push_i(c, k, od[2]);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3 && s == ST_OK; j++)
            s = kc_push_i(c, k, os[i][j]);
    if (s == ST_OK) s = kc_push_i(c, k, st[1][r - 1]);
    if (s == ST_OK) s = kc_push_i(c, k, st[2][r - 1]);
    if (s == ST_OK) s = kc_spec(c, k, ROPE_WG);
    kc_grid(k, total, ROPE_WG);
    return s;
}
