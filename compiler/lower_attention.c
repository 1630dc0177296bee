/* decode_attention: the fused one-query attention of a KV-cache decode step (fuse_patterns.c
 * match_decode_attention): transpose(K) -> matmul(q, K^T) -> mul(scale) -> add(mask) -> softmax
 * -> matmul(probs, V), where K and V may come through the grouped-query repeat
 * unsqueeze(dim 2) -> expand -> view ("repeat_kv"), whose nodes are members of the instance. The
 * kernel reads the caches [B, Hkv, T, D] directly and maps query head h to kv head h / rep.
 *
 * Roles come from the member nodes, never from the input order: K is the source of the
 * transpose, V the second operand of the probs matmul, q the first operand of the scores
 * matmul, the mask the add's operand that is not the scaled scores. The inputs are reordered to
 * {K, V, q, mask}, then the output [B, Hq, 1, D].
 *
 * Design (flash-decoding): the cache is cut into nsplit chunks of about equal length
 * (attn_nsplit: enough workgroups over (batch, query head, chunk) to fill a big GPU, chunks of at
 * least ATTN_CHUNK_MIN positions). With one chunk, one workgroup per (batch, query head) walks the
 * cache with an online (flash) softmax and writes the output (stem decode_attention). With more,
 * two dispatches: decode_attention_split, one workgroup per (batch, query head, chunk), writes the
 * chunk's unnormalised (max, sum, weighted V) in fp32 to a scratch tensor of the plan
 * ("<out>.partials", [B*Hq, nsplit, D+2], kc_scratch: its own device buffer), then
 * decode_attention_combine (kc_append, same instance and provenance) rescales and sums them in a
 * fixed order; the backend's hazard tracking puts the barrier between the two. The split kernel
 * also binds the output (last) so its module variant follows the compute dtype and the combine
 * is ordered after it. Positions past the last non -inf mask entry are skipped in every chunk.
 *
 * Push (decode_attention): {T, D, Hq, rep_k, rep_v, scale, k_sb, k_sh, k_st, v_sb, v_sh, v_st,
 *        q_sb, q_sh, m_sb, m_sh, m_st, o_sb, o_sh} (strides in elements, 0 for a broadcast mask
 *        dim); decode_attention_split: the same then {nsplit, chunk}.
 * Spec: 0 = workgroup size (a power of two: 128, or 64 for the split kernel when chunks are
 *       64 positions and D <= 128), 1 = lanes per key row in the score phase.
 * decode_attention_combine: push {nsplit, D, Hq, o_sb, o_sh}, spec 0 = workgroup size. */
#include "kernels.h"

#include <string.h>

#define ATTN_WG 128
#define ATTN_MAX_D 256 /* shaders/decode_attention.glsl MAXD */
#define ATTN_CHUNK_MIN 64       /* positions: a shorter cache is walked by one workgroup */
#define ATTN_TARGET_GROUPS 256  /* workgroups over (batch, head, chunk) to aim for */
#define ATTN_COMBINE_WG 128

/* Splits of a cache of T positions for bh (batch, query head) pairs: about ATTN_TARGET_GROUPS
 * workgroups (the H100 has 132 SMs), chunks of at least ATTN_CHUNK_MIN positions, no empty
 * chunk. *chunk gets the positions per split. The plan is device independent, so this is one
 * choice for every device; a small GPU or lavapipe only pays the combine pass. */
static int64_t attn_nsplit(int64_t bh, int64_t T, int64_t *chunk)
{
    int64_t n = ATTN_TARGET_GROUPS / (bh > 0 ? bh : 1), nmax = T / ATTN_CHUNK_MIN;
    if (n > nmax) n = nmax;
    if (n < 1) n = 1;
    *chunk = (T + n - 1) / n;
    return (T + *chunk - 1) / *chunk;
}

static bool member_node(const KernelCtx *c, int node)
{
    for (int i = 0; i < c->fusion->nnodes; i++)
        if (c->fusion->nodes[i] == node) return true;
    return false;
}

/* Follows tensor t back through member unsqueeze/expand/view nodes (the kv repeat) to the
 * tensor that comes from outside the group; *rep gets the repeat factor (1 if none). */
static int kv_cache_of(const KernelCtx *c, int t, int64_t *rep)
{
    const Graph *g = c->g;
    *rep = 1;
    for (;;) {
        int pr = g->tensors[t].producer;
        if (pr < 0 || !member_node(c, pr)) return t;
        const Node *n = &g->nodes[pr];
        if (n->op == OP_EXPAND) {
            const GTensor *o = &g->tensors[n->out[0]];
            if (o->rank == 5) *rep = o->shape[2];
        } else if (n->op != OP_VIEW && n->op != OP_UNSQUEEZE) {
            return -1;
        }
        t = n->in[0];
    }
}

/* The kernel argument holding graph tensor t (plan tensors keep their graph names). */
static int arg_of(const KernelCtx *c, const PlanKernel *k, int t)
{
    for (int i = 0; i < k->nin; i++)
        if (strcmp(kc_arg(k, c->p, i)->name, c->g->tensors[t].name) == 0) return i;
    return -1;
}

/* Strides of a tensor right-aligned to rank 4, 0 where a dim broadcasts (size 1). */
static void strides4(const PlanTensor *t, int64_t *st)
{
    int64_t s[NPU_MAX_RANK];
    kc_strides(t, s);
    for (int i = 0; i < 4; i++) {
        int j = i - (4 - t->rank);
        st[i] = j < 0 || t->shape[j] == 1 ? 0 : s[j];
    }
}

Status lower_attention(const KernelCtx *c, PlanKernel *k)
{
    const Graph *g = c->g;
    const Node *tr = kc_member(c, OP_TRANSPOSE), *sc = kc_member(c, OP_MUL);
    const Node *ad = kc_member(c, OP_ADD);
    if (!c->fusion || !tr || !sc || !ad || k->nin != 4)
        return kc_error(c, "decode_attention needs the fused transpose, matmul, mul, add, softmax, "
                           "matmul group with four outside inputs");
    /* the two matmuls in member order: scores (reads the transposed K) and probs @ V */
    const Node *mm[2] = {NULL, NULL};
    int nmm = 0;
    for (int i = 0; i < c->fusion->nnodes && nmm < 2; i++) {
        const Node *n = &g->nodes[c->fusion->nodes[i]];
        if (n->op == OP_MATMUL) mm[nmm++] = n;
    }
    if (nmm != 2 || mm[0]->in[1] != tr->out[0])
        return kc_error(c, "decode_attention: no scores matmul reading the transposed K");
    int64_t rep_k, rep_v;
    int tk = kv_cache_of(c, tr->in[0], &rep_k), tv = kv_cache_of(c, mm[1]->in[1], &rep_v);
    int tq = mm[0]->in[0];
    int tm = ad->in[0] == sc->out[0] ? ad->in[1] : ad->in[0];
    int ik = tk < 0 ? -1 : arg_of(c, k, tk), iv = tv < 0 ? -1 : arg_of(c, k, tv);
    int iq = arg_of(c, k, tq), im = arg_of(c, k, tm);
    if (ik < 0 || iv < 0 || iq < 0 || im < 0 || ik == iv || ik == iq || ik == im || iv == iq ||
        iv == im || iq == im)
        return kc_error(c, "decode_attention: cannot tell K, V, q and the mask apart");
    int args[4] = {k->args[ik], k->args[iv], k->args[iq], k->args[im]};
    memcpy(k->args, args, sizeof args);
    const PlanTensor *K = kc_arg(k, c->p, 0), *V = kc_arg(k, c->p, 1), *Q = kc_arg(k, c->p, 2);
    const PlanTensor *M = kc_arg(k, c->p, 3), *O = kc_out(k, c->p);
    if (K->rank != 4 || V->rank != 4 || Q->rank != 4 || O->rank != 4 || M->rank > 4)
        return kc_error(c, "decode_attention: K, V, q and the output must be 4-d");
    int64_t B = Q->shape[0], Hq = Q->shape[1], D = Q->shape[3], T = K->shape[2];
    bool ok = Q->shape[2] == 1 && K->shape[0] == B && V->shape[0] == B && K->shape[3] == D &&
              V->shape[3] == D && V->shape[2] == T && rep_k >= 1 && rep_v >= 1 &&
              K->shape[1] * rep_k == Hq && V->shape[1] * rep_v == Hq && O->shape[0] == B &&
              O->shape[1] == Hq && O->shape[2] == 1 && O->shape[3] == D;
    int64_t want_m[4] = {B, Hq, 1, T};
    for (int i = 0; i < M->rank && ok; i++) {
        int64_t s = M->shape[i], w = want_m[i + 4 - M->rank];
        ok = s == w || s == 1;
    }
    if (!ok)
        return kc_error(c, "decode_attention: shapes do not fit q [B,Hq,1,D], caches [B,Hkv,T,D] "
                           "with Hq = Hkv * repeat, mask broadcasting to [B,Hq,1,T]");
    if (D > ATTN_MAX_D || T < 1)
        return kc_error(c, "decode_attention: head dim %lld above %d (or an empty cache)",
                        (long long)D, ATTN_MAX_D);
    /* scores * scale: the mul's scalar operand (the match takes a one-input mul) */
    double scale = attr_float(sc, "other", 1.0);
    int64_t ks[4], vs[4], qs[4], ms[4], os[4];
    kc_strides(K, ks);
    kc_strides(V, vs);
    kc_strides(Q, qs);
    kc_strides(O, os);
    strides4(M, ms);
    /* lanes per key row in the score phase: about 4 dims per lane, a power of two <= 32 */
    uint32_t lanes = 1;
    while (lanes < 32 && lanes * 4 < (uint32_t)D) lanes *= 2;
    int64_t chunk, nsplit = attn_nsplit(B * Hq, T, &chunk);
    int64_t w[] = {T, D, Hq, rep_k, rep_v};
    Status st = ST_OK;
    for (int i = 0; i < 5 && st == ST_OK; i++) st = kc_push_i(c, k, w[i]);
    if (st == ST_OK) st = kc_push_f(c, k, scale);
    int64_t s[] = {ks[0], ks[1], ks[2], vs[0], vs[1], vs[2], qs[0], qs[1],
                   ms[0], ms[1], ms[3], os[0], os[1]};
    for (int i = 0; i < 13 && st == ST_OK; i++) st = kc_push_i(c, k, s[i]);
    if (st == ST_OK) st = kc_spec(c, k, ATTN_WG);
    if (st == ST_OK) st = kc_spec(c, k, lanes);
    kc_grid(k, B * Hq, 1);
    if (st != ST_OK || nsplit == 1) return st;

    /* flash-decoding: partials of every (batch, head, chunk), then the combine */
    if (st == ST_OK) st = kc_push_i(c, k, nsplit);
    if (st == ST_OK) st = kc_push_i(c, k, chunk);
    int64_t pshape[3] = {B * Hq, nsplit, D + 2};
    int part = st == ST_OK ? kc_scratch(c, k, ".partials", 3, pshape, DT_F32) : -1;
    if (part < 0) return st == ST_OK ? ST_BAD_INPUT : st;
    int out = k->args[4];
    int sargs[6] = {k->args[0], k->args[1], k->args[2], k->args[3], part, out};
    st = kc_set_args(c, k, sargs, 4, 6);
    if (st != ST_OK) return st;
    k->shader = "decode_attention_split";
    /* a workgroup as wide as a chunk of 64 (one pass of the chunk loop, half the barriers of a
     * half-used 128-wide pass) where the shader's two dims per invocation still cover D */
    if (chunk <= 64 && D <= 128) k->spec[0] = 64;
    kc_grid(k, B * Hq * nsplit, 1);
    int cargs[2] = {part, out};
    PlanKernel *cb = kc_append(c, k, "decode_attention_combine", cargs, 1, 2);
    if (!cb) return ST_BAD_INPUT;
    int64_t cw[] = {nsplit, D, Hq, os[0], os[1]};
    for (int i = 0; i < 5 && st == ST_OK; i++) st = kc_push_i(c, cb, cw[i]);
    if (st == ST_OK) st = kc_spec(c, cb, ATTN_COMBINE_WG);
    kc_grid(cb, B * Hq, 1);
    return st;
}
