/* rope: the fused rotary-embedding chain out = x*cos + cat(-x[..., h:], x[..., :h])*sin
 * (match_rope in fuse_patterns.c: two last-dim slices of x, neg, cat, two muls, add). Which
 * input is x, cos and sin is read off the member nodes, not the input order: x feeds the slices,
 * sin multiplies the cat, cos multiplies x. cos and sin (and x) broadcast to the output's shape
 * (typically [B, 1, S, D] over the heads of x [B, H, S, D]).
 *
 * One invocation per pair (j, j + h) of a row, h = D / 2 (shaders/rope.glsl):
 *   out[j]     = x[j] * cos[j]         + (-x[j + h]) * sin[j]
 *   out[j + h] = x[j + h] * cos[j + h] + x[j] * sin[j + h]
 * The outer dims (all but the last) are collapsed to at most three over the four tensors, each
 * with its own (broadcast 0 or physical) strides; cos and sin may broadcast the last dim too.
 *   bindings: x, cos, sin, out
 *   push RopePush (shaders/abi.h ROPE_PUSH)
 *
 * rope_cache: the same rotation whose output is the source of index_copy(cache, index, .) along
 * a dim before the last (match_rope_cache): the rope output is never stored, each pair goes to
 * the cache row its index names (shaders/rope_cache.comp). The index_copy dim stays an outer dim
 * of its own (idim of the three); ys are the cache's strides. Mode and geometry as index_copy's
 * (kc_index_copy_geom): mode 1 writes the rope rows into the cache in place, mode 0 writes every
 * pair of out from the cache or the rope.
 *   bindings: x, cos, sin, cache, index, out
 *   push RopeCachePush (ROPE_CACHE_PUSH: rope's words, then mode, idim, size, m) */
#include "compiler/fusion.h"
#include "compiler/lower/kernels.h"

#include <string.h>

/* 64 invocations (pairs) per workgroup: a KV head of D = 128 is one workgroup, so the decode's
 * few heads spread over several SMs rather than one */
#define ROPE_WG 64

/* The member transpose (or permute) whose output is x (fuse_patterns.c rope_transpose), or
 * NULL: the kernel then binds its input and reads it with permuted strides. */
static const Node *rope_x_transpose(const KernelCtx *c)
{
    int x, cos, sin, tp;
    if (!c->fusion || !fuse_rope_operands(c->g, c->fusion, &x, &cos, &sin, &tp) || tp < 0)
        return NULL;
    return &c->g->nodes[tp];
}

/* Binds x (or the input of the transpose making it), cos, sin (read off the members) then
 * extra[0..nextra) as the kernel's inputs, in that order; *rope_out: the chain's output (the
 * add's). */
static Status rope_inputs(const KernelCtx *c, PlanKernel *k, const int *extra, int nextra,
                          int *rope_out)
{
    const Fusion *f = c->fusion;
    int x, cos, sin, tp;
    *rope_out = -1;
    if (!f || !fuse_rope_operands(c->g, f, &x, &cos, &sin, &tp))
        return kc_error(c, "rope kernel needs the fused slice/neg/cat/mul/mul/add chain");
    for (int i = 0; i < f->nnodes; i++) {
        const Node *m = &c->g->nodes[f->nodes[i]];
        if (m->op == OP_ADD) *rope_out = m->out[0];
    }
    if (*rope_out < 0) return kc_error(c, "rope: no x*cos and rotate_half(x)*sin multiplies");
    if (kc_is_member(c, c->g->tensors[cos].producer) ||
        kc_is_member(c, c->g->tensors[sin].producer))
        return kc_error(c, "rope: x, cos and sin must be outside inputs");
    int want[5] = {tp >= 0 ? c->g->nodes[tp].in[0] : x, cos, sin, -1, -1}, n = 3 + nextra, ids[5];
    for (int i = 0; i < nextra; i++)
        want[3 + i] = extra[i];
    bool ok = k->nin == n && n <= 5;
    for (int i = 0; i < n && ok; i++) {
        int a = kc_arg_of(c, k, want[i]);
        ok = a >= 0;
        for (int j = 0; j < i && ok; j++)
            ok = want[j] != want[i];
        if (ok) ids[i] = k->args[a];
    }
    if (!ok)
        return kc_error(c, "rope: x, cos and sin%s must be distinct outside inputs",
                        nextra ? ", the cache and the index" : "");
    memcpy(k->args, ids, sizeof(int) * (size_t)n);
    return ST_OK;
}

/* Strides of t broadcast to the rank-r shape `shape` (0 where t has size 1 or no dim); false
 * if t does not broadcast to it. */
static bool bcast_strides(const PlanTensor *t, int r, const int64_t *shape, int64_t *st)
{
    int64_t s[NPU_MAX_RANK];
    kc_strides(t, s);
    int off = r - t->rank;
    if (off < 0) return false;
    for (int d = 0; d < r; d++) {
        int e = d - off;
        if (e >= 0 && t->shape[e] != 1 && t->shape[e] != shape[d]) return false;
        st[d] = (e < 0 || t->shape[e] == 1) ? 0 : s[e];
    }
    return true;
}

/* Strides of the kernel's inputs x, cos, sin (args 0..2) over the rope output's shape (rank r)
 * into st[0..2]: x through the member transpose's permutation when there is one. */
static Status input_strides(const KernelCtx *c, const PlanKernel *k, int r, const int64_t *shape,
                            int64_t st[4][NPU_MAX_RANK])
{
    const Node *tp = rope_x_transpose(c);
    for (int i = tp ? 1 : 0; i < 3; i++)
        if (!bcast_strides(kc_arg(k, c->p, i), r, shape, st[i]))
            return kc_error(c, "rope: an input does not broadcast to the output");
    if (tp && !kc_permuted_strides(kc_arg(k, c->p, 0), tp, r, shape, st[0]))
        return kc_error(c, "rope: the transposed x does not have the output's shape");
    return ST_OK;
}

/* The pushed geometry: three outer dims (od[0] implicit) with the strides of x, cos, sin and
 * the destination, the index_copy dim's place among them (idim; 0 for rope). */
typedef struct RopeGeom {
    int64_t od[3], os[4][3], h, cl, sl;
    int idim;
} RopeGeom;

/* Collapses the rope output's outer dims (shape, rank r; st: the strides of x, cos, sin
 * broadcast to it and the destination's): size-1 dims dropped, neighbours contiguous in all
 * four merged, except dim `keep` (-1: none), which stays a dim of its own. */
static Status rope_geom(const KernelCtx *c, int r, const int64_t *shape,
                        int64_t st[4][NPU_MAX_RANK], int keep, RopeGeom *gm)
{
    if (r < 1) return kc_error(c, "rope: scalar output");
    int64_t D = shape[r - 1];
    /* x and out are dense along the last dim (x is sliced there), cos/sin dense or broadcast */
    if (D % 2 || st[0][r - 1] != 1 || st[3][r - 1] != 1 || st[1][r - 1] > 1 || st[2][r - 1] > 1)
        return kc_error(c, "rope: the last dim must be even and contiguous in x and the output");
    int64_t sh[NPU_MAX_RANK], cs[4][NPU_MAX_RANK];
    int m = 0, kept = -1;
    for (int d = 0; d < r - 1; d++) {
        if (shape[d] == 1 && d != keep) continue;
        bool merge = m > 0 && d != keep && m - 1 != kept;
        for (int i = 0; i < 4 && merge; i++)
            merge = cs[i][m - 1] == st[i][d] * shape[d];
        if (merge) {
            sh[m - 1] *= shape[d];
            for (int i = 0; i < 4; i++)
                cs[i][m - 1] = st[i][d];
            continue;
        }
        if (d == keep) kept = m;
        sh[m] = shape[d];
        for (int i = 0; i < 4; i++)
            cs[i][m] = st[i][d];
        m++;
    }
    if (m > 3) return kc_error(c, "rope: more than 3 non-contiguous outer dims");
    memset(gm, 0, sizeof *gm);
    for (int j = 0; j < 3; j++)
        gm->od[j] = 1;
    for (int j = 0; j < m; j++) {
        gm->od[3 - m + j] = sh[j];
        for (int i = 0; i < 4; i++)
            gm->os[i][3 - m + j] = cs[i][j];
    }
    gm->idim = kept >= 0 ? 3 - m + kept : 0;
    gm->h = D / 2;
    gm->cl = st[1][r - 1];
    gm->sl = st[2][r - 1];
    return ST_OK;
}

/* The rope words of `total` pairs over the geometry gm. */
static RopePush rope_words(KcWords *w, int64_t total, const RopeGeom *gm)
{
    return (RopePush){
        .total = kc_word(w, total),
        .h = kc_word(w, gm->h),
        .od1 = kc_word(w, gm->od[1]),
        .od2 = kc_word(w, gm->od[2]),
        .xs0 = kc_word(w, gm->os[0][0]),
        .xs1 = kc_word(w, gm->os[0][1]),
        .xs2 = kc_word(w, gm->os[0][2]),
        .cs0 = kc_word(w, gm->os[1][0]),
        .cs1 = kc_word(w, gm->os[1][1]),
        .cs2 = kc_word(w, gm->os[1][2]),
        .ss0 = kc_word(w, gm->os[2][0]),
        .ss1 = kc_word(w, gm->os[2][1]),
        .ss2 = kc_word(w, gm->os[2][2]),
        .ys0 = kc_word(w, gm->os[3][0]),
        .ys1 = kc_word(w, gm->os[3][1]),
        .ys2 = kc_word(w, gm->os[3][2]),
        .cl = kc_word(w, gm->cl),
        .sl = kc_word(w, gm->sl),
    };
}

static Status lower_rope_cache(const KernelCtx *c, PlanKernel *k)
{
    const Node *ic = c->anchor;
    if (ic->op != OP_INDEX_COPY || ic->nin != 3)
        return kc_error(c, "rope_cache kernel needs the rope chain and its index_copy");
    int rope_out;
    Status s = rope_inputs(c, k, ic->in, 2, &rope_out);
    if (s != ST_OK) return s;
    if (ic->in[2] != rope_out)
        return kc_error(c, "rope_cache: the index_copy's source is not the rope");
    const GTensor *ro = &c->g->tensors[rope_out];
    const PlanTensor *out = kc_out(k, c->p), *self = kc_arg(k, c->p, 3);
    IcGeom icg;
    s = kc_index_copy_geom(c, k, ic, 3, 4, ro->rank, ro->shape, false, &icg);
    if (s != ST_OK) return s;
    int r = ro->rank;
    if (icg.dim == r - 1) return kc_error(c, "rope_cache: index_copy along the rotated dim");
    if (self->storage != out->storage || kc_arg(k, c->p, 0)->storage != out->storage)
        return kc_error(c, "rope_cache: x, the cache and the output must share one storage");
    int64_t st[4][NPU_MAX_RANK];
    s = input_strides(c, k, r, ro->shape, st);
    if (s != ST_OK) return s;
    kc_strides(out, st[3]);
    RopeGeom gm;
    s = rope_geom(c, r, ro->shape, st, icg.dim, &gm);
    if (s != ST_OK) return s;
    /* mode 1 iterates over the rope output's pairs, mode 0 over out's */
    gm.od[gm.idim] = icg.in_place ? icg.m : icg.size;
    int64_t rope_numel = 1;
    for (int d = 0; d < r; d++)
        rope_numel *= ro->shape[d];
    int64_t total = (icg.in_place ? rope_numel : kc_numel(out)) / 2;
    KcWords w = {0};
    RopeCachePush pr = {.rope = rope_words(&w, total, &gm),
                        .mode = icg.in_place ? 1 : 0,
                        .idim = kc_word(&w, gm.idim),
                        .size = kc_word(&w, icg.size),
                        .m = kc_word(&w, icg.m)};
    s = kc_words_ok(c, k, &w);
    if (s == ST_OK) s = kc_push_block(c, k, &pr, sizeof pr);
    if (s == ST_OK) s = kc_spec(c, k, ROPE_WG);
    kc_grid(k, total, ROPE_WG);
    return s;
}

Status lower_rope(const KernelCtx *c, PlanKernel *k)
{
    if (c->kind == KK_rope_cache) return lower_rope_cache(c, k);
    int rope_out;
    Status s = rope_inputs(c, k, NULL, 0, &rope_out);
    if (s != ST_OK) return s;
    const PlanTensor *o = kc_out(k, c->p);
    int r = o->rank;
    int64_t st[4][NPU_MAX_RANK];
    s = input_strides(c, k, r, o->shape, st);
    if (s != ST_OK) return s;
    kc_strides(o, st[3]);
    RopeGeom gm;
    s = rope_geom(c, r, o->shape, st, -1, &gm);
    if (s != ST_OK) return s;
    int64_t total = kc_numel(o) / 2;
    KcWords w = {0};
    RopePush pr = rope_words(&w, total, &gm);
    s = kc_words_ok(c, k, &w);
    if (s == ST_OK) s = kc_push_block(c, k, &pr, sizeof pr);
    if (s == ST_OK) s = kc_spec(c, k, ROPE_WG);
    kc_grid(k, total, ROPE_WG);
    return s;
}
