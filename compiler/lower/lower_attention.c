/* decode_attention: the fused attention reading the KV caches (fuse_patterns.c
 * match_attention_rows; patterns decode_attention, one query row, and attention, several):
 * transpose(K) -> matmul(q, K^T) -> mul(scale) -> add(mask) -> softmax -> matmul(probs, V), where
 * K and V may come through the grouped-query repeat unsqueeze(dim 2) -> expand -> view
 * ("repeat_kv"), whose nodes are members of the instance. The kernel reads the caches
 * [B, Hkv, T, D] directly and maps query head h to kv head h / rep.
 *
 * Roles come from the member nodes, never from the input order: K is the source of the
 * transpose, V the second operand of the probs matmul, q the first operand of the scores
 * matmul, the mask the add's operand that is not the scaled scores. The inputs are reordered to
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
 * of 16 up to FLASH_MAX_D, every operand's rows contiguous along D, K and V in 16-byte vectors, and
 * at least attn.flash rows (0: never). Elsewhere decode_attention takes them, one workgroup per
 * row. */
static bool flash_applies(const KernelCtx *c, const PlanTensor *const t[5], int64_t Tq, int64_t D,
                          int64_t T, const int64_t *const last[4], const int64_t *ks,
                          const int64_t *vs)
{
    /* K and V are read as 16-byte vectors: strides multiples of 8 elements, aligned bindings */
    bool vec = kc_binding_offset(c->p, t[0]) % 16 == 0 && kc_binding_offset(c->p, t[1]) % 16 == 0;
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
    int64_t spec[] = {FLASH_WG, o->D, safe, mvec};
    for (int i = 0; i < 4 && st == ST_OK; i++)
        st = kc_spec(c, k, (uint32_t)spec[i]);
    if (st != ST_OK) return st;
    kc_grid(k, o->B * o->Hq * nqb, 1);
    st = kc_pick(c, k,
                 (KernelKey){.kind = KK_decode_attention, .impl = c->cm_emulate ? KI_CMX : KI_CM});
    if (st != ST_OK) return st;
    int bind[5] = {k->args[0], k->args[1], k->args[2], k->args[3], k->args[4]};
    return kc_set_args(c, k, bind, 4, 5);
}

Status lower_attention(const KernelCtx *c, PlanKernel *k)
{
    const Graph *g = c->g;
    const Node *sc = kc_member(c, OP_MUL), *ad = kc_member(c, OP_ADD), *tr = NULL;
    if (!c->fusion || !sc || !ad || k->nin != 4)
        return kc_error(c, "decode_attention needs the fused transpose, matmul, mul, add, softmax, "
                           "matmul group with four outside inputs");
    /* the two matmuls in member order: scores (reads the transposed K) and probs @ V; K's
     * transpose is the member making the scores' second operand (V's may be a member too) */
    const Node *mm[2] = {NULL, NULL};
    int nmm = 0;
    for (int i = 0; i < c->fusion->nnodes && nmm < 2; i++) {
        const Node *n = &g->nodes[c->fusion->nodes[i]];
        if (n->op == OP_MATMUL) mm[nmm++] = n;
    }
    for (int i = 0; i < c->fusion->nnodes && nmm == 2; i++) {
        const Node *n = &g->nodes[c->fusion->nodes[i]];
        if (n->op == OP_TRANSPOSE && n->out[0] == mm[0]->in[1]) tr = n;
    }
    if (nmm != 2 || !tr)
        return kc_error(c, "decode_attention: no scores matmul reading the transposed K");
    int64_t rep_k, rep_v;
    bool swk, swv;
    int tk = kv_cache_of(c, tr->in[0], &rep_k, &swk),
        tv = kv_cache_of(c, mm[1]->in[1], &rep_v, &swv);
    int tq = mm[0]->in[0];
    int tm = ad->in[0] == sc->out[0] ? ad->in[1] : ad->in[0];
    int ik = tk < 0 ? -1 : kc_arg_of(c, k, tk), iv = tv < 0 ? -1 : kc_arg_of(c, k, tv);
    int iq = kc_arg_of(c, k, tq), im = kc_arg_of(c, k, tm);
    if (ik < 0 || iv < 0 || iq < 0 || im < 0 || ik == iv || ik == iq || ik == im || iv == iq ||
        iv == im || iq == im)
        return kc_error(c, "decode_attention: cannot tell K, V, q and the mask apart");
    int args[4] = {k->args[ik], k->args[iv], k->args[iq], k->args[im]};
    memcpy(k->args, args, sizeof args);
    const PlanTensor *K = kc_arg(k, c->p, 0), *Vt = kc_arg(k, c->p, 1), *Q = kc_arg(k, c->p, 2);
    const PlanTensor *M = kc_arg(k, c->p, 3), *O = kc_out(k, c->p);
    if (K->rank != 4 || Vt->rank != 4 || Q->rank != 4 || O->rank != 4 || M->rank > 4 || swk)
        return kc_error(c, "decode_attention: K, V, q and the output must be 4-d");
    /* V as the kernel reads it, [B, Hkv, T, D]: through the member transpose, its source
     * [B, T, Hkv, D] with dims 1 and 2 swapped (shape and strides) */
    PlanTensor vv = *Vt;
    AttnOps o = {0};
    int64_t *vs = o.vs, *os = o.os, *ks = o.ks, *qs = o.qs, *ms = o.ms;
    kc_strides(Vt, vs);
    if (swv) {
        int64_t t = vv.shape[1];
        vv.shape[1] = vv.shape[2], vv.shape[2] = t;
        t = vs[1], vs[1] = vs[2], vs[2] = t;
    }
    const PlanTensor *V = &vv;
    /* the result [B, Hq, Tq, D]: shape and strides of the output, or, when the transpose after
     * P V is a member (fuse_patterns.c), of the output read back through its permutation */
    int64_t osh[4], ost[NPU_MAX_RANK];
    int perm[4] = {0, 1, 2, 3};
    for (int i = 0; i < c->fusion->nnodes; i++) {
        const Node *n = &g->nodes[c->fusion->nodes[i]];
        if (n->op == OP_TRANSPOSE && n->in[0] == mm[1]->out[0] && !node_perm(n, 4, perm))
            return kc_error(c, "decode_attention: bad permutation after P V");
    }
    kc_strides(O, ost);
    for (int i = 0; i < 4; i++) {
        osh[perm[i]] = O->shape[i];
        os[perm[i]] = ost[i];
    }
    int64_t B = Q->shape[0], Hq = Q->shape[1], Tq = Q->shape[2], D = Q->shape[3];
    int64_t T = K->shape[2];
    bool ok = K->shape[0] == B && V->shape[0] == B && K->shape[3] == D && V->shape[3] == D &&
              V->shape[2] == T && rep_k >= 1 && rep_v >= 1 && K->shape[1] * rep_k == Hq &&
              V->shape[1] * rep_v == Hq && osh[0] == B && osh[1] == Hq && osh[2] == Tq &&
              osh[3] == D;
    int64_t want_m[4] = {B, Hq, Tq, T};
    for (int i = 0; i < M->rank && ok; i++) {
        int64_t s = M->shape[i], w = want_m[i + 4 - M->rank];
        ok = s == w || s == 1;
    }
    if (!ok)
        return kc_error(c, "decode_attention: shapes do not fit q [B,Hq,Tq,D], caches [B,Hkv,T,D] "
                           "with Hq = Hkv * repeat, mask broadcasting to [B,Hq,Tq,T]");
    if (D > ATTN_MAX_D || T < 1)
        return kc_error(c, "decode_attention: head dim %lld above %d (or an empty cache)",
                        (long long)D, ATTN_MAX_D);
    /* scores * scale: the mul's scalar operand (the match takes a one-input mul) */
    double scale = attr_float(sc, "other", 1.0);
    kc_strides(K, ks);
    kc_strides(Q, qs);
    strides4(M, ms);
    const Node *sm = kc_member(c, OP_SOFTMAX);
    bool safe = sm && attr_bool(sm, "safe", false);
    const PlanTensor *ops5[5] = {K, Vt, Q, M, O};
    const int64_t *last[4] = {&ks[3], &vs[3], &qs[3], &os[3]};
    o.B = B, o.Hq = Hq, o.Tq = Tq, o.D = D, o.T = T, o.rep_k = rep_k, o.rep_v = rep_v;
    o.scale = scale;
    if (flash_applies(c, ops5, Tq, D, T, last, ks, vs)) return lower_flash(c, k, &o, safe);
    /* 16-byte loads of K/V rows: every row start a multiple of the vector from an aligned
     * binding (arena offsets are 256-aligned, own buffers start at 0) */
    int64_t ew = 16 / (int64_t)dtype_size(K->storage);
    bool vec_ok = dtype_is_float(K->storage) && K->storage == V->storage && D % ew == 0;
    for (int i = 0; i < 3 && vec_ok; i++)
        vec_ok = ks[i] % ew == 0 && vs[i] % ew == 0;
    vec_ok = vec_ok && kc_binding_offset(c->p, K) % 16 == 0 && kc_binding_offset(c->p, V) % 16 == 0;
    AttnParams a = attn_params(c, B, Hq, Tq, rep_k, rep_v, D, T, vec_ok, ew);
    /* the tickets: one per (batch, head group, query row) */
    int64_t ngroups = B * (Hq / a.g) * Tq;
    KcWords w = {0};
    AttnPush pa = {ATTN_WORDS(&w, &o), .D = kc_word(&w, D), .nsplit = kc_word(&w, a.nsplit),
                   .chunk = kc_word(&w, a.chunk), .ngroups = kc_word(&w, ngroups)};
    Status st = kc_words_ok(c, k, &w);
    if (st == ST_OK) st = kc_push_block(c, k, &pa, sizeof pa);
    /* spec 6, attn.ablate: parts of the kernel left out (bench only, wrong results by design);
     * SAFE: the member softmax is an exported sdpa's (canon_sdpa.c): empty rows give zeros */
    int64_t spec[] = {a.wg, a.g, a.lanes, a.vec, a.nv, a.rb, kc_tune(c, TUNE_ATTN_ABLATE), safe};
    for (int i = 0; i < 8 && st == ST_OK; i++)
        st = kc_spec(c, k, (uint32_t)spec[i]);
    if (st != ST_OK) return st;
    kc_grid(k, ngroups * a.nsplit, 1);
    int out = k->args[4], scratch = out;
    if (a.nsplit > 1) {
        /* tickets (one per (batch, group, row), padded to 4 words), then the partials
         * {m, l, acc[D]} of every (batch, group, row, split, head) */
        int64_t n = (ngroups + 3) / 4 * 4 + ngroups * a.nsplit * a.g * (D + 2);
        scratch = kc_scratch(c, k, ".partials", 1, &n, DT_F32);
        if (scratch < 0) return ST_BAD_INPUT;
        c->grow->tensors[scratch].kind = PT_SCRATCH;
    }
    int bind[6] = {k->args[0], k->args[1], k->args[2], k->args[3], scratch, out};
    return kc_set_args(c, k, bind, 4, 6);
}
