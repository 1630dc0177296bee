/* decode_attention: the fused attention reading the KV caches (fuse_attention.c
 * match_attention_rows; patterns decode_attention, one query row, and attention, several):
 * transpose(K) -> matmul(q, K^T) -> mul(scale) -> add(mask) -> softmax -> matmul(probs, V), the
 * scale a multiply of the scores, of q before the matmul, both or neither, where
 * K and V may come through the grouped-query repeat unsqueeze(dim 2) -> expand -> view
 * ("repeat_kv"), whose nodes are members of the instance. The kernel reads the caches
 * [B, Hkv, T, D] directly and maps query head h to kv head h / rep.
 *
 * Roles come from the member nodes, never from the input order: K is the source of the
 * transpose, V the second operand of the probs matmul, q the first operand of the scores
 * matmul (before its member multiply), the mask the add's operand that is not the scaled scores,
 * the scale the product of the member multiplies' scalars. The inputs are reordered to
 * {K, V, q, mask}, then the output [B, Hq, Tq, D] (the graph's layout: its own transpose follows).
 *
 * Design (shaders/decode_attention.glsl has the kernel's side): one workgroup per (batch, group
 * of G query heads sharing one K head and one V head, query row, split of the cache), so each K/V
 * row is read once for the G heads of a row; one dispatch whatever the split count: the last
 * split of a (batch, group, row) to finish merges the fp32 partials (an atomic ticket each in
 * the scratch tensor "<out>.partials", kind PT_SCRATCH: its own device buffer, zero-filled once at
 * load, left zero by every run). The cache is split (attn_params) to bring the grid near a GPU's
 * ATTN_GPU_TARGET workgroups counting the query rows (chunks of at least one trip of the
 * workgroup, at most ATTN_MAX_SPLIT splits: the merging workgroup reads every partial; a
 * prefill's Tq rows usually fill the GPU unsplit: no partials, no merge) and hardly on a CPU
 * device (lavapipe: a few workgroups). Each row's positions past its last non -inf mask entry
 * are skipped in every split (a causal prefill's early rows do less work). K/V rows are read
 * with 16-byte loads where every row start is provably 16-byte aligned (D and the cache strides
 * multiples of the vector, binding offsets aligned), else element by element.
 *
 * Push: AttnPush (shaders/abi.h ATTN_PUSH; strides in elements, 0 for a broadcast mask dim;
 *       ngroups = B * Hq / G * Tq: the tickets; q_st, m_sq, o_st: the query row strides of q,
 *       the mask and the output).
 * Spec: 0 = workgroup size, 1 = G, 2 = L lanes per key row, 3 = VEC (1: 16-byte loads),
 *       4 = NV vectors or elements per row, 5 = RB rows per team and trip, 6 = ABLATE (0; bench),
 *       7 = SAFE (1: a row with no valid position gives zeros; the softmax's `safe`).
 * Bindings: {K, V, q, mask, scratch, out}; without a split the output is bound in the scratch's
 * place (not accessed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/fusion.h"
#include "compiler/lower/kernels.h"
#include "compiler/plan.h"
#include "compiler/strided.h"

#define ATTN_MAX_L 8     /* lanes per key row: every subgroup the backend accepts holds a team */
#define ATTN_MAX_ACC 128 /* fp32 accumulators per lane: G * elements per lane */
#define ATTN_GPU_WG 128  /* at most 128: MAXSG */
#define ATTN_CPU_WG 64
#define ATTN_GPU_TARGET (2 * TIER_NV_COOPMAT_SMS) /* workgroups to aim for on a GPU */
#define ATTN_CPU_CHUNK 256                        /* positions per split at least on a CPU device */
#define ATTN_CPU_TARGET 4                         /* workgroups to aim for on a CPU device */

typedef struct AttnParams {
    int64_t wg, g, lanes, vec, nv, rb, nsplit, chunk;
} AttnParams;

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The kernel's shape for B batches, Hq query heads in groups sharing kv heads (rep_k, rep_v), Tq
 * query rows, head dim D, cache T; vec_ok: 16-byte loads are possible, ew elements per vector. */
static AttnParams attn_params(const KernelCtx *c, int64_t B, int64_t Hq, int64_t Tq, int64_t rep_k,
                              int64_t rep_v, int64_t D, int64_t T, bool vec_ok, int64_t ew)
{
    AttnParams a = {.wg = c->cpu_device ? ATTN_CPU_WG : ATTN_GPU_WG, .vec = vec_ok};
    a.nv = vec_ok ? D / ew : D;
    a.lanes = 1;
    while (a.lanes < ATTN_MAX_L && a.lanes < a.nv)
        a.lanes *= 2;
    int64_t vpl = (a.nv + a.lanes - 1) / a.lanes, epl = vpl * (vec_ok ? ew : 1);
    /* the largest group of heads sharing both kv heads whose accumulators fit */
    int64_t r = gcd64(rep_k, rep_v);
    /* at most gmax heads per group (attn.g): on a GPU one for a decode step, so each query head
     * has its own workgroups and the kernel reads its K/V rows once per head rather than per
     * kv head, which measured faster inside the H100's decode step; else ATTN_MAX_G (a
     * prefill's rows already fill the GPU) */
    int64_t gmax = kc_tune(c, TUNE_ATTN_G);
    if (gmax == TUNE_AUTO) gmax = c->cpu_device || Tq > 1 ? ATTN_MAX_G : 1;
    a.g = 1;
    for (int64_t g = 2; g <= gmax && g <= r; g++)
        if (r % g == 0 && g * epl <= ATTN_MAX_ACC) a.g = g;
    /* rows per team and trip: on a CPU device at most 8 vectors of K and 8 of V in flight per
     * lane; on a GPU one row (the trip's code is then a quarter, and the rows stream from an L2
     * that the layer's weights have just gone through) */
    a.rb = c->cpu_device ? (8 / vpl < 1 ? 1 : 8 / vpl) : 1;
    /* attn.wg, attn.rb: the workgroup size and rows per team on a GPU; WG up to 512 only on the
     * nv-coopmat tier, whose subgroups have 32 lanes (at most MAXSG = 16 subgroups): an invalid
     * pair leaves lowering's own */
    int64_t owg = kc_tune(c, TUNE_ATTN_WG), orb = kc_tune(c, TUNE_ATTN_RB);
    if (!c->cpu_device && (owg != TUNE_AUTO || orb != TUNE_AUTO)) {
        owg = owg == TUNE_AUTO ? a.wg : owg;
        orb = orb == TUNE_AUTO ? a.rb : orb;
        if (owg <= (c->tier == TIER_NV_COOPMAT ? 512 : 128)) {
            a.wg = owg;
            a.rb = orb;
        }
    }
    /* workgroups without a split: one per (batch, head group, query row) */
    int64_t groups = B * (Hq / a.g) * Tq, trip = a.wg / a.lanes * a.rb;
    int64_t n;
    if (c->cpu_device) {
        n = (T + ATTN_CPU_CHUNK - 1) / ATTN_CPU_CHUNK;
        int64_t want = ATTN_CPU_TARGET / groups;
        if (n > want) n = want;
    } else {
        /* the split count whose grid is nearest the target (a decode's few groups: the target
         * divided by them, rounded; Qwen2.5-1.5B prefill's 2 x 128 rows: 1, no split) */
        n = (T + trip - 1) / trip;
        int64_t want = (ATTN_GPU_TARGET + groups / 2) / groups;
        if (n > want) n = want;
    }
    int64_t cap = kc_tune(c, TUNE_ATTN_SPLITS); /* at most this many splits */
    if (n > cap) n = cap;
    if (n < 1) n = 1;
    a.chunk = (T + n - 1) / n;
    a.nsplit = (T + a.chunk - 1) / a.chunk;
    return a;
}

/* Follows tensor t back through member unsqueeze/expand/view nodes (the kv repeat) and a member
 * transpose of dims 1 and 2 to the tensor that comes from outside the group; *rep gets the
 * repeat factor (1 if none), *swapped whether the transpose was passed (the tensor is then
 * [B, T, Hkv, D]). */
static int kv_cache_of(const KernelCtx *c, int t, int64_t *rep, bool *swapped)
{
    const Graph *g = c->g;
    *rep = 1;
    *swapped = false;
    for (;;) {
        int pr = g->tensors[t].producer;
        if (pr < 0 || !kc_is_member(c, pr)) return t;
        const Node *n = &g->nodes[pr];
        if (n->op == OP_EXPAND) {
            const GTensor *o = &g->tensors[n->out[0]];
            if (o->rank == 5) *rep = o->shape[2];
        } else if (n->op == OP_TRANSPOSE && !*swapped) {
            *swapped = true; /* fuse_patterns.c kv_transpose: dims 1 and 2 */
        } else if (n->op != OP_VIEW && n->op != OP_UNSQUEEZE) {
            return -1;
        }
        t = n->in[0];
    }
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

/* flash_attn_cm (shaders/flash_attn_cm.glsl): several query rows on the tensor cores, on the
 * nv-coopmat tier (or its emulation, tests) for f16/bf16 storage, a head dim that is a multiple
 * of 16 up to FLASH_MAX_D, every operand's rows contiguous along D, K and V in 16-byte vectors
 * (their strides and offsets multiples of 8 elements), and at least attn.flash rows (0: never).
 * Elsewhere decode_attention takes them, one workgroup per row. */
static bool flash_applies(const KernelCtx *c, const PlanTensor *const t[5], int64_t Tq, int64_t D,
                          int64_t T, const int64_t *const last[4], const int64_t *ks,
                          const int64_t *vs, int64_t koff, int64_t voff)
{
    /* K and V are read as 16-byte vectors: strides multiples of 8 elements, aligned bindings */
    bool vec = kc_binding_offset(c->p, t[0]) % 16 == 0 && kc_binding_offset(c->p, t[1]) % 16 == 0 &&
               koff % 8 == 0 && voff % 8 == 0;
    for (int i = 0; i < 3 && vec; i++)
        vec = ks[i] % 8 == 0 && vs[i] % 8 == 0;
    int64_t rows = kc_tune(c, TUNE_ATTN_FLASH);
    DType s = t[0]->storage;
    bool ok = vec && c->tier == TIER_NV_COOPMAT && rows > 0 && Tq >= rows && D % 16 == 0 &&
              D <= FLASH_MAX_D && T < (1 << 24) && (s == DT_F16 || s == DT_BF16);
    for (int i = 1; i < 5 && ok; i++)
        ok = t[i]->storage == s;
    for (int i = 0; i < 4 && ok; i++)
        ok = *last[i] == 1;
    return ok;
}

/* The shapes both attention kernels take, q [B, Hq, Tq, D] over caches of T positions whose heads
 * repeat rep_k and rep_v times, and the operands' strides: K, V, q and the output by batch, head
 * and row, the mask by batch, head, query row and key (0 where it broadcasts). */
typedef struct AttnOps {
    int64_t B, Hq, Tq, D, T, rep_k, rep_v;
    double scale;
    int64_t ks[4], vs[4], qs[4], ms[4], os[4];
    int64_t koff, voff, qoff; /* where K, V and q start in their bindings (selects) */
} AttnOps;

/* The words decode_attention's and flash's blocks share, as designated initialisers (the blocks
 * order them differently). */
#define ATTN_WORDS(w, o)                                                                           \
    .T = kc_word(w, (o)->T), .Tq = kc_word(w, (o)->Tq), .Hq = kc_word(w, (o)->Hq),                 \
    .rep_k = kc_word(w, (o)->rep_k), .rep_v = kc_word(w, (o)->rep_v), .scale = (float)(o)->scale,  \
    .k_sb = kc_word(w, (o)->ks[0]), .k_sh = kc_word(w, (o)->ks[1]),                                \
    .k_st = kc_word(w, (o)->ks[2]), .v_sb = kc_word(w, (o)->vs[0]),                                \
    .v_sh = kc_word(w, (o)->vs[1]), .v_st = kc_word(w, (o)->vs[2]),                                \
    .q_sb = kc_word(w, (o)->qs[0]), .q_sh = kc_word(w, (o)->qs[1]),                                \
    .q_st = kc_word(w, (o)->qs[2]), .m_sb = kc_word(w, (o)->ms[0]),                                \
    .m_sh = kc_word(w, (o)->ms[1]), .m_sq = kc_word(w, (o)->ms[2]),                                \
    .m_st = kc_word(w, (o)->ms[3]), .o_sb = kc_word(w, (o)->os[0]),                                \
    .o_sh = kc_word(w, (o)->os[1]), .o_st = kc_word(w, (o)->os[2])

/* Push FlashPush (shaders/abi.h FLASH_PUSH); spec {workgroup, D, SAFE, MVEC}; bindings {K, V, q,
 * mask, out}; one workgroup per (batch, head, block of FLASH_ROWS query rows). */
static Status lower_flash(const KernelCtx *c, PlanKernel *k, const AttnOps *o, bool safe)
{
    int64_t nqb = (o->Tq + FLASH_ROWS - 1) / FLASH_ROWS;
    const int64_t *ms = o->ms;
    KcWords w = {0};
    FlashPush pf = {ATTN_WORDS(&w, o), .nqb = kc_word(&w, nqb)};
    Status st = kc_words_ok(c, k, &w);
    if (st == ST_OK) st = kc_push_block(c, k, &pf, sizeof pf);
    /* the mask as 16-byte vectors in the kernel's key-range scan: keys contiguous, T and the
     * other strides multiples of 8 elements, an aligned binding */
    const PlanTensor *M = kc_arg(k, c->p, 3);
    bool mvec = ms[3] == 1 && o->T % 8 == 0 && kc_binding_offset(c->p, M) % 16 == 0;
    for (int i = 0; i < 3 && mvec; i++)
        mvec = ms[i] % 8 == 0;
    int64_t spec[] = {FLASH_WG, o->D, safe, mvec, o->koff, o->voff, o->qoff};
    for (int i = 0; i < 7 && st == ST_OK; i++)
        st = kc_spec(c, k, (uint32_t)spec[i]);
    if (st != ST_OK) return st;
    kc_grid(k, o->B * o->Hq * nqb, 1);
    st = kc_pick(c, k,
                 (KernelKey){.kind = KK_decode_attention, .impl = c->cm_emulate ? KI_CMX : KI_CM});
    if (st != ST_OK) return st;
    int bind[5] = {k->args[0], k->args[1], k->args[2], k->args[3], k->args[4]};
    return kc_set_args(c, k, bind, 4, 5);
}

/* The roles in attention instance f, read off its members, never the input order: K is the
 * source of the transpose making the scores' second operand, V the probs matmul's second operand
 * (each traced back through the member repeat views and transpose: the caches as the kernel
 * reads them, rep_* the repeats, sw* whether the member transpose was passed), q the scores'
 * first operand (the input of a member multiply making it), the mask the add's operand that is
 * not the scaled scores; scale the member multiplies' product, sm the softmax, pv the probs
 * matmul. */
typedef struct AttnRoles {
    int k, v, q, mask;
    /* the operands as the products read them: K [B, Hkv, T, D] (the transpose's source), V
     * [B, Hkv, T, D], q [B, Hq, Tq, D] */
    int kshape, vshape, qshape;
    /* member permutes/reshapes from k, v and q (their sources) to them, in order */
    int kchain[FUSE_ATTN_CHAIN], vchain[FUSE_ATTN_CHAIN], qchain[FUSE_ATTN_CHAIN], nkchain, nvchain,
        nqchain;
    int64_t rep_k, rep_v;
    bool swk, swv;
    double scale; /* of the scores */
    const Node *sm, *pv;
} AttnRoles;

static bool is_member(const void *cf, int node)
{
    return kc_is_member(cf, node);
}

/* The source of the member permutes, reshapes and selects making t (fuse_attention.c
 * operand_chain, select_sources): into chain[] in order, *n of them (0: t itself). */
static int member_chain(const KernelCtx *cf, int t, int *chain, int *n)
{
    int src;
    *n = sv_member_walk(cf->g, t, is_member, cf, chain, FUSE_ATTN_CHAIN, &src);
    return src;
}

/* K or V read as operand t: the source of a member chain making it, unless that source is a
 * member too (the grouped-query repeat's expand: kv_cache_of, no chain). */
static int kv_operand(const KernelCtx *cf, int t, int *chain, int *n, int64_t *rep, bool *sw)
{
    int src = member_chain(cf, t, chain, n);
    int p = cf->g->tensors[src].producer;
    *rep = 1;
    *sw = false;
    if (p < 0 || !kc_is_member(cf, p)) return src;
    *n = 0;
    return kv_cache_of(cf, t, rep, sw);
}

static Status attn_roles(const KernelCtx *c, const Fusion *f, AttnRoles *r)
{
    const Graph *g = c->g;
    KernelCtx cf = *c;
    cf.fusion = f; /* kc_member and kv_cache_of walk f's members */
    const Node *ad = f ? kc_member(&cf, OP_ADD) : NULL;
    if (!ad)
        return kc_error(c, "decode_attention needs the fused transpose, matmul, add, softmax, "
                           "matmul group");
    /* the two matmuls in member order: scores (reads the transposed K) and probs @ V; K's
     * transpose is the member making the scores' second operand (V's may be a member too) */
    const Node *mm[2] = {NULL, NULL}, *tr = NULL;
    int nmm = 0;
    for (int i = 0; i < f->nnodes && nmm < 2; i++)
        if (g->nodes[f->nodes[i]].op == OP_MATMUL) mm[nmm++] = &g->nodes[f->nodes[i]];
    for (int i = 0; i < f->nnodes && nmm == 2; i++) {
        const Node *n = &g->nodes[f->nodes[i]];
        if (n->op == OP_TRANSPOSE && n->out[0] == mm[0]->in[1]) tr = n;
    }
    if (nmm != 2 || !tr)
        return kc_error(c, "decode_attention: no scores matmul reading the transposed K");
    /* the scale: the product of the member multiplies by a scalar, of the scores or of q
     * (fuse_attention.c); sc: the scores' value the mask is added to */
    int qin = mm[0]->in[0], sc = mm[0]->out[0];
    r->scale = 1.0;
    for (int i = 0; i < f->nnodes; i++) {
        const Node *n = &g->nodes[f->nodes[i]];
        if (n->op != OP_MUL || n->nin != 1) continue;
        if (n->in[0] == sc)
            sc = n->out[0];
        else if (n->out[0] == qin)
            qin = n->in[0];
        else
            return kc_error(c, "attention: a multiply neither of the scores nor of q");
        r->scale *= attr_float(n, "other", 1.0);
    }
    r->kshape = tr->in[0];
    r->vshape = mm[1]->in[1];
    r->k = kv_operand(&cf, r->kshape, r->kchain, &r->nkchain, &r->rep_k, &r->swk);
    r->v = kv_operand(&cf, r->vshape, r->vchain, &r->nvchain, &r->rep_v, &r->swv);
    /* q: the scores' first operand, or the source of the member permutes and reshapes making
     * it (fuse_attention.c operand_chain), read through their strides */
    r->qshape = qin;
    r->q = member_chain(&cf, r->qshape, r->qchain, &r->nqchain);
    r->mask = ad->in[0] == sc ? ad->in[1] : ad->in[0];
    r->sm = kc_member(&cf, OP_SOFTMAX);
    r->pv = mm[1];
    if (r->k < 0 || r->v < 0)
        return kc_error(c, "decode_attention: cannot tell K, V, q and the mask apart");
    return ST_OK;
}

/* Operand `shape_of` ([B, H, T, D]) as the kernel reads it from plan tensor `bound`: through
 * the member chain (n nodes) over it, else bound itself, dims 1 and 2 swapped when `sw` (a
 * repeated cache read through its transpose); sh, st and *off its shape, strides and first
 * element. False where the chain has no strides. */
static bool operand_view(const KernelCtx *c, const PlanTensor *bound, int shape_of,
                         const int *chain, int n, bool sw, int64_t *sh, int64_t *st, int64_t *off)
{
    *off = 0;
    if (n > 0) {
        memcpy(sh, c->g->tensors[shape_of].shape, sizeof(int64_t) * 4);
        return sv_chain_strides(c->g, chain, n, st, off);
    }
    memcpy(sh, bound->shape, sizeof(int64_t) * 4);
    kc_strides(bound, st);
    if (sw) {
        int64_t t = sh[1];
        sh[1] = sh[2], sh[2] = t;
        t = st[1], st[1] = st[2], st[2] = t;
    }
    return true;
}

/* The shapes and strides both attention kernels take (AttnOps) from K and V as bound (read
 * through their member chains or swapped, operand_view), q's shape and strides (q:
 * [B, Hq, Tq, D]), the mask M and the output O (read through a member permute after P V when f
 * has one). */
static Status attn_ops(const KernelCtx *c, const Fusion *f, const AttnRoles *r, const PlanTensor *K,
                       const PlanTensor *Vt, const int64_t *qsh, const int64_t *qst, int64_t qoff,
                       const PlanTensor *M, const PlanTensor *O, AttnOps *o)
{
    const Graph *g = c->g;
    if (g->tensors[r->kshape].rank != 4 || g->tensors[r->vshape].rank != 4 || O->rank != 4 ||
        M->rank > 4 || (r->nkchain == 0 && K->rank != 4) || (r->nvchain == 0 && Vt->rank != 4))
        return kc_error(c, "decode_attention: K, V, q and the output must be 4-d");
    *o = (AttnOps){0};
    int64_t ksh[4], vsh[4];
    if (!operand_view(c, K, r->kshape, r->kchain, r->nkchain, r->swk, ksh, o->ks, &o->koff) ||
        !operand_view(c, Vt, r->vshape, r->vchain, r->nvchain, r->swv, vsh, o->vs, &o->voff))
        return kc_error(c, "attention: K's or V's permutes have no strides over their source");
    /* the result [B, Hq, Tq, D]: shape and strides of the output, or, when the permute after
     * P V is a member (fuse_patterns.c), of the output read back through its permutation */
    int64_t osh[4], ost[NPU_MAX_RANK];
    int perm[4] = {0, 1, 2, 3};
    for (int i = 0; i < f->nnodes; i++) {
        const Node *n = &g->nodes[f->nodes[i]];
        if (op_class(n->op) == OC_permute && n->in[0] == r->pv->out[0] && !node_perm(n, 4, perm))
            return kc_error(c, "decode_attention: bad permutation after P V");
    }
    kc_strides(O, ost);
    for (int i = 0; i < 4; i++) {
        osh[perm[i]] = O->shape[i];
        o->os[perm[i]] = ost[i];
    }
    int64_t B = qsh[0], Hq = qsh[1], Tq = qsh[2], D = qsh[3], T = ksh[2];
    bool ok = ksh[0] == B && vsh[0] == B && ksh[3] == D && vsh[3] == D && vsh[2] == T &&
              r->rep_k >= 1 && r->rep_v >= 1 && ksh[1] * r->rep_k == Hq &&
              vsh[1] * r->rep_v == Hq && osh[0] == B && osh[1] == Hq && osh[2] == Tq && osh[3] == D;
    int64_t want_m[4] = {B, Hq, Tq, T};
    for (int i = 0; i < M->rank && ok; i++) {
        int64_t s = M->shape[i], w = want_m[i + 4 - M->rank];
        ok = s == w || s == 1;
    }
    if (!ok)
        return kc_error(c, "decode_attention: shapes do not fit q [B,Hq,Tq,D], caches [B,Hkv,T,D] "
                           "with Hq = Hkv * repeat, mask broadcasting to [B,Hq,Tq,T]");
    if (D > 1 && (o->ks[3] != 1 || o->vs[3] != 1))
        return kc_error(c, "decode_attention: K and V must be contiguous along the head dim");
    if (D > ATTN_MAX_D || T < 1)
        return kc_error(c, "decode_attention: head dim %lld above %d (or an empty cache)",
                        (long long)D, ATTN_MAX_D);
    o->B = B, o->Hq = Hq, o->Tq = Tq, o->D = D, o->T = T, o->rep_k = r->rep_k;
    o->rep_v = r->rep_v;
    /* scores * scale: the product of the member multiplies by a scalar (attn_roles) */
    o->scale = r->scale;
    memcpy(o->qs, qst, sizeof o->qs);
    o->qoff = qoff;
    strides4(M, o->ms);
    return ST_OK;
}

/* attention_cache's bindings and words beyond the attention's (lower_attention_cache). */
typedef struct AttnCache {
    int cos, sin, kx, vx, idx, kw, vw; /* plan tensors */
    bool rope_q, rope_k;
    AttnCachePush words; /* the tail; the attention's words are filled by attn_finish */
} AttnCache;

/* decode_attention's kernel (ca NULL) or attention_cache's for o over the caches K and V (as the
 * kernel reads them: 16-byte loads when every row start is aligned): parameters, push words, spec
 * constants, grid, the split's scratch and the bindings {K, V, q, mask, [cache's], scratch,
 * out}, k's first four inputs being K, V (as bound), q and the mask. */
static Status attn_finish(const KernelCtx *c, PlanKernel *k, const AttnOps *o, bool safe,
                          const PlanTensor *K, const PlanTensor *V, AttnCache *ca)
{
    const int64_t *ks = o->ks, *vs = o->vs;
    int64_t D = o->D;
    /* 16-byte loads of K/V rows: every row start a multiple of the vector from an aligned
     * binding (arena offsets are 256-aligned, own buffers start at 0) */
    int64_t ew = 16 / (int64_t)dtype_size(K->storage);
    bool vec_ok = dtype_is_float(K->storage) && K->storage == V->storage && D % ew == 0;
    for (int i = 0; i < 3 && vec_ok; i++)
        vec_ok = ks[i] % ew == 0 && vs[i] % ew == 0;
    vec_ok = vec_ok && o->koff % ew == 0 && o->voff % ew == 0;
    vec_ok = vec_ok && kc_binding_offset(c->p, K) % 16 == 0 && kc_binding_offset(c->p, V) % 16 == 0;
    AttnParams a = attn_params(c, o->B, o->Hq, o->Tq, o->rep_k, o->rep_v, D, o->T, vec_ok, ew);
    /* the tickets: one per (batch, head group, query row) */
    int64_t ngroups = o->B * (o->Hq / a.g) * o->Tq;
    KcWords w = {0};
    AttnPush pa = {ATTN_WORDS(&w, o), .D = kc_word(&w, D), .nsplit = kc_word(&w, a.nsplit),
                   .chunk = kc_word(&w, a.chunk), .ngroups = kc_word(&w, ngroups)};
    Status st = kc_words_ok(c, k, &w);
    if (st == ST_OK && ca) {
        ca->words.attn = pa;
        st = kc_push_block(c, k, &ca->words, sizeof ca->words);
    } else if (st == ST_OK) {
        st = kc_push_block(c, k, &pa, sizeof pa);
    }
    /* spec 6, attn.ablate: parts of the kernel left out (bench only, wrong results by design);
     * SAFE: the member softmax is an exported sdpa's (canon_sdpa.c): empty rows give zeros;
     * attention_cache's ROPE_Q, ROPE_K: the ropes it applies, SPLIT_ROWS: the splits in use
     * by the step's position (attn.split_rows) */
    int64_t spec[] = {a.wg,
                      a.g,
                      a.lanes,
                      a.vec,
                      a.nv,
                      a.rb,
                      kc_tune(c, TUNE_ATTN_ABLATE),
                      safe,
                      ca && ca->rope_q,
                      ca && ca->rope_k,
                      ca ? kc_tune(c, TUNE_ATTN_SPLIT_ROWS) : 0,
                      o->koff,
                      o->voff,
                      o->qoff};
    /* K_OFF, V_OFF and Q_OFF (ids 11..13) only where one is not 0 */
    int nspec = o->koff || o->voff || o->qoff ? 14 : ca ? 11 : 8;
    for (int i = 0; i < nspec && st == ST_OK; i++)
        st = kc_spec(c, k, (uint32_t)spec[i]);
    if (st != ST_OK) return st;
    kc_grid(k, ngroups * a.nsplit, 1);
    int out = k->args[k->nargs - 1], scratch = out;
    if (a.nsplit > 1) {
        /* tickets (one per (batch, group, row), padded to 4 words), then the partials
         * {m, l, acc[D]} of every (batch, group, row, split, head) */
        int64_t n = (ngroups + 3) / 4 * 4 + ngroups * a.nsplit * a.g * (D + 2);
        scratch = kc_scratch(c, k, ".partials", 1, &n, DT_F32);
        if (scratch < 0) return ST_BAD_INPUT;
        c->grow->tensors[scratch].kind = PT_SCRATCH;
    }
    if (!ca) {
        int bind[6] = {k->args[0], k->args[1], k->args[2], k->args[3], scratch, out};
        return kc_set_args(c, k, bind, 4, 6);
    }
    int bind[13] = {k->args[0], k->args[1], k->args[2], k->args[3], ca->cos, ca->sin, ca->kx,
                    ca->vx,     ca->idx,    ca->kw,     ca->vw,     scratch, out};
    return kc_set_args(c, k, bind, 9, 13);
}

/* The plan tensor of graph tensor t (plan tensors keep the graph's names), or -1. */
static int plan_tensor_of(const KernelCtx *c, int t)
{
    for (int i = 0; i < c->p->ntensors; i++)
        if (strcmp(c->p->tensors[i].name, c->g->tensors[t].name) == 0) return i;
    return -1;
}

/* A row operand [B, H, 1, D] of attention_cache (q, the new K or V row: graph tensor `shape_of`'s
 * shape) read from plan tensor `bound` (through transpose tp when not NULL): its batch and head
 * strides into st[0..1]; false unless contiguous along D. */
static bool row_strides(const KernelCtx *c, const PlanTensor *bound, const Node *tp, int shape_of,
                        int64_t st[NPU_MAX_RANK])
{
    const GTensor *x = &c->g->tensors[shape_of];
    if (x->rank != 4 || x->shape[2] != 1) return false;
    if (tp) {
        if (!kc_permuted_strides(bound, tp, 4, x->shape, st)) return false;
    } else {
        if (bound->rank != 4 || memcmp(bound->shape, x->shape, sizeof(int64_t) * 4) != 0)
            return false;
        kc_strides(bound, st);
    }
    return st[3] == 1 || x->shape[3] == 1;
}

/* attention_cache: the merge decode_attention_cache (fuse_merge.c) as decode_attention's kernel
 * with ATTN_CACHE (shaders/decode_attention.glsl). It binds the caches' selves as K and V (their
 * updated outputs alias them: index_copy in place), q as the input of the rope making it (read
 * with its strides, the rope applied as q is loaded) or q itself, the mask, then cos and sin (q
 * again when no rope reads them: not accessed), the new K row's source (the rope's input, or the
 * index_copy's source), the new V row, the index, and as outputs the two updated caches, the
 * split's scratch and the attention's output. */
static Status lower_attention_cache(const KernelCtx *c, PlanKernel *k)
{
    const Graph *g = c->g;
    MergeParts mp;
    if (!c->fusion || !fuse_merge_of(g, c->fusion, &mp))
        return kc_error(c, "attention_cache: not a decode_attention_cache merge");
    const Node *ick = &g->nodes[mp.ick], *icv = &g->nodes[mp.icv];
    const Fusion *D = &g->fusions[mp.d];
    AttnRoles r;
    Status st = attn_roles(c, D, &r);
    if (st != ST_OK) return st;
    if (r.k != ick->out[0] || r.v != icv->out[0] || r.swk || r.swv || r.nkchain || r.nvchain)
        return kc_error(c, "attention_cache: the attention does not read the updated caches");
    int q = r.q, qtp = -1, kx = ick->in[2], ktp = -1, cos = -1, sin = -1;
    if (mp.q >= 0 && !fuse_rope_operands(g, &g->fusions[mp.q], &q, &cos, &sin, &qtp))
        return kc_error(c, "attention_cache: q's rope does not name its operands");
    if (mp.k >= 0 && !fuse_rope_operands(g, &g->fusions[mp.k], &kx, &cos, &sin, &ktp))
        return kc_error(c, "attention_cache: k's rope does not name its operands");
    int want[7] = {ick->in[0],
                   icv->in[0],
                   qtp >= 0 ? g->nodes[qtp].in[0] : q,
                   r.mask,
                   ktp >= 0 ? g->nodes[ktp].in[0] : kx,
                   icv->in[2],
                   ick->in[1]};
    int ids[7];
    for (int i = 0; i < 7; i++) {
        int a = kc_arg_of(c, k, want[i]);
        if (a < 0)
            return kc_error(c, "attention_cache: %s is not an input of the kernel",
                            g->tensors[want[i]].name);
        ids[i] = k->args[a];
    }
    AttnCache ca = {
        .kx = ids[4], .vx = ids[5], .idx = ids[6], .rope_q = mp.q >= 0, .rope_k = mp.k >= 0};
    ca.cos = cos >= 0 ? kc_arg_of(c, k, cos) : -1;
    ca.sin = sin >= 0 ? kc_arg_of(c, k, sin) : -1;
    if (cos >= 0 && (ca.cos < 0 || ca.sin < 0))
        return kc_error(c, "attention_cache: the rope's cos and sin must be inputs");
    ca.cos = ca.cos >= 0 ? k->args[ca.cos] : ids[2];
    ca.sin = ca.sin >= 0 ? k->args[ca.sin] : ids[2];
    ca.kw = plan_tensor_of(c, ick->out[0]);
    ca.vw = plan_tensor_of(c, icv->out[0]);
    memcpy(k->args, ids, sizeof(int) * 4); /* K, V, q, mask: as attn_finish reads them */
    const PlanTensor *K = kc_arg(k, c->p, 0), *Vt = kc_arg(k, c->p, 1);
    const PlanTensor *M = kc_arg(k, c->p, 3), *O = kc_out(k, c->p);
    if (ca.kw < 0 || ca.vw < 0 || plan_base(c->p, ca.kw) != plan_base(c->p, k->args[0]) ||
        plan_base(c->p, ca.vw) != plan_base(c->p, k->args[1]))
        return kc_error(c, "attention_cache: the caches are not updated in place (--no-fuse "
                           "decode_attention_cache runs the update on its own)");
    const PlanTensor *idx = &c->p->tensors[ca.idx];
    if (idx->storage != DT_I32 || kc_numel(idx) != 1 || K->storage != c->p->tensors[ca.kw].storage)
        return kc_error(c, "attention_cache: one int index and caches of the output's storage");
    /* q, the new K row and the new V row: [B, H, 1, D], contiguous along D */
    int64_t qs[NPU_MAX_RANK], kxs[NPU_MAX_RANK], vxs[NPU_MAX_RANK];
    const Node *qt = qtp >= 0 ? &g->nodes[qtp] : NULL, *kt = ktp >= 0 ? &g->nodes[ktp] : NULL;
    if (!row_strides(c, kc_arg(k, c->p, 2), qt, r.q, qs) ||
        !row_strides(c, &c->p->tensors[ca.kx], kt, ick->in[2], kxs) ||
        !row_strides(c, &c->p->tensors[ca.vx], NULL, icv->in[2], vxs))
        return kc_error(c, "attention_cache: q and the new rows must be [B, H, 1, D], "
                           "contiguous along D");
    /* the rope tables: broadcast over heads and the row, contiguous along D, one layout */
    int64_t cs[4] = {0, 0, 0, 1}, ss[4] = {0, 0, 0, 1};
    if (cos >= 0) {
        strides4(&c->p->tensors[ca.cos], cs);
        strides4(&c->p->tensors[ca.sin], ss);
        if (cs[1] != 0 || cs[3] != 1 || memcmp(cs, ss, sizeof cs) != 0)
            return kc_error(c, "attention_cache: cos and sin must be [.., 1, 1, D] of one layout");
    }
    AttnOps o;
    st = attn_ops(c, D, &r, K, Vt, g->tensors[r.q].shape, qs, 0, M, O, &o);
    if (st != ST_OK) return st;
    if (o.Tq != 1 || o.T < 2)
        return kc_error(c, "attention_cache: one query row over a cache of two positions or more");
    KcWords w = {0};
    ca.words.c_sb = kc_word(&w, cs[0]);
    ca.words.kx_sb = kc_word(&w, kxs[0]);
    ca.words.kx_sh = kc_word(&w, kxs[1]);
    ca.words.vx_sb = kc_word(&w, vxs[0]);
    ca.words.vx_sh = kc_word(&w, vxs[1]);
    st = kc_words_ok(c, k, &w);
    if (st != ST_OK) return st;
    bool safe = r.sm && attr_bool(r.sm, "safe", false);
    return attn_finish(c, k, &o, safe, K, Vt, &ca);
}

Status lower_attention(const KernelCtx *c, PlanKernel *k)
{
    if (c->kind == KK_attention_cache) return lower_attention_cache(c, k);
    AttnRoles r;
    Status st = attn_roles(c, c->fusion, &r);
    if (st != ST_OK) return st;
    /* K, V and q may be one tensor (read through selects of it: select_sources) */
    int ik = kc_arg_of(c, k, r.k), iv = kc_arg_of(c, k, r.v);
    int iq = kc_arg_of(c, k, r.q), im = kc_arg_of(c, k, r.mask);
    int distinct = 2 + (iv != ik) + (iq != ik && iq != iv);
    if (ik < 0 || iv < 0 || iq < 0 || im < 0 || im == ik || im == iv || im == iq ||
        k->nin != distinct)
        return kc_error(c, "decode_attention: cannot tell K, V, q and the mask apart");
    int args[5] = {k->args[ik], k->args[iv], k->args[iq], k->args[im], k->args[k->nin]};
    st = kc_set_args(c, k, args, 4, 5);
    if (st != ST_OK) return st;
    const PlanTensor *K = kc_arg(k, c->p, 0), *Vt = kc_arg(k, c->p, 1), *Q = kc_arg(k, c->p, 2);
    const PlanTensor *M = kc_arg(k, c->p, 3), *O = kc_out(k, c->p);
    const GTensor *qg = &c->g->tensors[r.qshape];
    if (qg->rank != 4) return kc_error(c, "decode_attention: K, V, q and the output must be 4-d");
    int64_t qs[NPU_MAX_RANK], qsh[4], qoff;
    if (!operand_view(c, Q, r.qshape, r.qchain, r.nqchain, false, qsh, qs, &qoff))
        return kc_error(c, "attention: q's permutes have no strides over %s", Q->name);
    AttnOps o;
    st = attn_ops(c, c->fusion, &r, K, Vt, qsh, qs, qoff, M, O, &o);
    if (st != ST_OK) return st;
    bool safe = r.sm && attr_bool(r.sm, "safe", false);
    const PlanTensor *ops5[5] = {K, Vt, Q, M, O};
    const int64_t *last[4] = {&o.ks[3], &o.vs[3], &o.qs[3], &o.os[3]};
    if (flash_applies(c, ops5, o.Tq, o.D, o.T, last, o.ks, o.vs, o.koff, o.voff))
        return lower_flash(c, k, &o, safe);
    return attn_finish(c, k, &o, safe, K, Vt, NULL);
}
