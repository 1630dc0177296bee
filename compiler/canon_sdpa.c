/* canonicalize, part: scaled_dot_product_attention written out as the chain the attention
 * fusion patterns match (fuse_attention.c match_attention_rows), so a transformers export gets
 * the fused attention kernel its hand-written twin gets:
 *   K' = transpose(K, -2, -1); S = matmul(q, K'); S = mul(S, scale); S = add(S, M);
 *   P = softmax(S, -1); out = matmul(P, V)
 * with M the float mask, where(mask, 0, -inf) for a bool one, full([1], 0) without one, and K
 * and V through the grouped-query repeat unsqueeze(2) -> expand -> view under enable_gqa (read
 * in place by the fused kernel). The last matmul is the sdpa node itself (its output keeps its
 * name); is_causal adds the causal mask (causal_mask). Left as it is (the CPU reference runs
 * it): rank other than 4, a value head dim other than q's, an sdpa forced onto the CPU by
 * --cpu-op, dropout (refused at import). The softmax is marked `safe`: a row masked everywhere
 * gives zeros as torch's sdpa does (its _safe_softmax), in the CPU reference, the fused
 * attention kernel (its SAFE constant) and the softmax kernels (code bit 2), where a plain
 * softmax gives NaN. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "compiler/pass.h"

/* A new activation tensor named "<sdpa>.<what>". */
static int new_tensor(Graph *g, const Node *s, const char *what, DType dt, int rank,
                      const int64_t *shape)
{
    char name[256];
    snprintf(name, sizeof name, "%s.%s", s->name, what);
    return graph_add_tensor(g, name, dt, rank, shape, TK_ACT);
}

/* Inserts node `op` before position *pos (advancing it), reading in[0..nin) and writing out;
 * attrs copied. -1 on allocation failure. */
static int insert(Graph *g, int *pos, const char *what, OpId op, const int *in, int nin, int out,
                  const Attr *attrs, int nattrs)
{
    char name[256];
    snprintf(name, sizeof name, "%s.%s", g->nodes[*pos].name, what);
    int k = graph_insert_node(g, *pos, name, op, in, nin, &out, 1);
    if (k < 0) return -1;
    for (int i = 0; i < nattrs; i++)
        if (!graph_add_attr_v(g, k, &attrs[i])) return -1;
    (*pos)++;
    return k;
}

static Attr ai(const char *key, int64_t v)
{
    return (Attr){.key = key, .kind = ATTR_INT, .i = v, .f = (double)v};
}

static Attr af(const char *key, double v)
{
    return (Attr){.key = key, .kind = ATTR_FLOAT, .f = v};
}

static Attr ints(const char *key, int64_t *v, int n)
{
    return (Attr){.key = key, .kind = ATTR_INTS, .ints = v, .n = n};
}

/* K or V repeated from Hkv to Hq heads as transformers' repeat_kv writes it; t itself when
 * rep is 1. -1 on allocation failure. */
static int repeat_kv(Graph *g, int *pos, int t, int64_t rep, const char *what)
{
    if (rep == 1) return t;
    const GTensor *x = &g->tensors[t];
    DType dt = x->dtype;
    int64_t B = x->shape[0], H = x->shape[1], S = x->shape[2], D = x->shape[3];
    int64_t us[5] = {B, H, 1, S, D}, es[5] = {B, H, rep, S, D}, vs[4] = {B, H * rep, S, D};
    const Node *s = &g->nodes[*pos];
    char nm[32];
    snprintf(nm, sizeof nm, "%s_u", what);
    int u = new_tensor(g, s, nm, dt, 5, us);
    snprintf(nm, sizeof nm, "%s_e", what);
    int e = new_tensor(g, s, nm, dt, 5, es);
    snprintf(nm, sizeof nm, "%s_r", what);
    int v = new_tensor(g, s, nm, dt, 4, vs);
    if (u < 0 || e < 0 || v < 0) return -1;
    Attr a = ai("dim", 2);
    Attr b = ints("size", es, 5);
    Attr c = ints("size", vs, 4);
    snprintf(nm, sizeof nm, "%s_unsqueeze", what);
    if (insert(g, pos, nm, OP_UNSQUEEZE, &t, 1, u, &a, 1) < 0) return -1;
    snprintf(nm, sizeof nm, "%s_expand", what);
    if (insert(g, pos, nm, OP_EXPAND, &u, 1, e, &b, 1) < 0) return -1;
    snprintf(nm, sizeof nm, "%s_view", what);
    if (insert(g, pos, nm, OP_VIEW, &e, 1, v, &c, 1) < 0) return -1;
    return v;
}

/* The float masks made so far: a bool mask shared by every layer is converted once. */
typedef struct MaskMemo {
    int from[64], to[64], n;
    int64_t cl[16], cs[16]; /* causal masks made so far, [L, S] -> ct */
    int ct[16], nc;
} MaskMemo;

/* is_causal's additive mask [L, S]: -inf where key j > query i (torch's tril, top-left
 * aligned), made once per (L, S) from arange(L) unsqueezed, arange(S) and gt, as where(gt, -inf,
 * 0). -1 on allocation failure. */
static int causal_mask(Graph *g, int *pos, int64_t L, int64_t S, DType dt, MaskMemo *memo)
{
    for (int i = 0; i < memo->nc; i++)
        if (memo->cl[i] == L && memo->cs[i] == S) return memo->ct[i];
    int64_t l1[2] = {L, 1}, ls[2] = {L, S};
    const Node *s = &g->nodes[*pos];
    int al = new_tensor(g, s, "causal_rows", DT_I64, 1, &L);
    int au = new_tensor(g, &g->nodes[*pos], "causal_rows2", DT_I64, 2, l1);
    int as = new_tensor(g, &g->nodes[*pos], "causal_cols", DT_I64, 1, &S);
    int gt = new_tensor(g, &g->nodes[*pos], "causal_above", DT_BOOL, 2, ls);
    int mf = new_tensor(g, &g->nodes[*pos], "causal_mask", dt, 2, ls);
    if (al < 0 || au < 0 || as < 0 || gt < 0 || mf < 0) return -1;
    Attr el = ai("end", L), es = ai("end", S), d1 = ai("dim", 1);
    Attr w[2] = {af("self", -INFINITY), af("other", 0.0)};
    int cmp[2] = {as, au};
    if (insert(g, pos, "arange_rows", OP_ARANGE, &al, 0, al, &el, 1) < 0 ||
        insert(g, pos, "unsqueeze_rows", OP_UNSQUEEZE, &al, 1, au, &d1, 1) < 0 ||
        insert(g, pos, "arange_cols", OP_ARANGE, &as, 0, as, &es, 1) < 0 ||
        insert(g, pos, "gt", OP_GT, cmp, 2, gt, NULL, 0) < 0 ||
        insert(g, pos, "causal", OP_WHERE, &gt, 1, mf, w, 2) < 0)
        return -1;
    if (memo->nc < 16) {
        memo->cl[memo->nc] = L;
        memo->cs[memo->nc] = S;
        memo->ct[memo->nc++] = mf;
    }
    return mf;
}

/* Rewrites the sdpa node at *pos; *pos ends at the node (now the P V matmul). */
static Status expand_one(Graph *g, int *pos, MaskMemo *memo)
{
    const Node *s = &g->nodes[*pos];
    int q = s->in[0], k = s->in[1], v = s->in[2], m = s->nin > 3 ? s->in[3] : -1;
    const GTensor *qt = &g->tensors[q], *kt = &g->tensors[k], *vt = &g->tensors[v];
    bool causal = attr_bool(s, "is_causal", false);
    if (qt->rank != 4 || (causal && m >= 0) || vt->shape[3] != qt->shape[3] || kt->shape[1] < 1 ||
        qt->shape[1] % kt->shape[1])
        return ST_OK;
    DType dt = qt->dtype;
    double scale =
        attr_present(s, "scale") ? attr_float(s, "scale", 1) : 1.0 / sqrt((double)qt->shape[3]);
    int64_t rep = qt->shape[1] / kt->shape[1];
    int64_t B = qt->shape[0], H = qt->shape[1], L = qt->shape[2], E = qt->shape[3];
    int64_t S = kt->shape[2];
    int64_t kts[4] = {B, H, E, S}, ss[4] = {B, H, L, S}, one = 1;
    k = repeat_kv(g, pos, k, rep, "k");
    v = k < 0 ? -1 : repeat_kv(g, pos, v, rep, "v");
    int tk = new_tensor(g, &g->nodes[*pos], "kt", dt, 4, kts);
    int sc = new_tensor(g, &g->nodes[*pos], "scores", dt, 4, ss);
    int sd = new_tensor(g, &g->nodes[*pos], "scaled", dt, 4, ss);
    int ad = new_tensor(g, &g->nodes[*pos], "masked", dt, 4, ss);
    int pr = new_tensor(g, &g->nodes[*pos], "probs", dt, 4, ss);
    if (k < 0 || v < 0 || tk < 0 || sc < 0 || sd < 0 || ad < 0 || pr < 0) return ST_NOMEM;
    Attr t2[2] = {ai("dim0", -2), ai("dim1", -1)};
    if (insert(g, pos, "transpose", OP_TRANSPOSE, &k, 1, tk, t2, 2) < 0) return ST_NOMEM;
    int qk[2] = {q, tk};
    if (insert(g, pos, "matmul", OP_MATMUL, qk, 2, sc, NULL, 0) < 0) return ST_NOMEM;
    Attr sa = af("other", scale);
    if (insert(g, pos, "mul", OP_MUL, &sc, 1, sd, &sa, 1) < 0) return ST_NOMEM;
    if (causal && (m = causal_mask(g, pos, L, S, dt, memo)) < 0) return ST_NOMEM;
    for (int i = 0; i < memo->n; i++)
        if (memo->from[i] == m) {
            m = memo->to[i];
            break;
        }
    if (m < 0 || g->tensors[m].dtype == DT_BOOL) { /* an additive float mask */
        int from = m;
        int64_t ms[NPU_MAX_RANK] = {1};
        int mr = m < 0 ? 1 : g->tensors[m].rank; /* copied: adding tensors may move them */
        if (m >= 0) memcpy(ms, g->tensors[m].shape, sizeof(int64_t) * (size_t)mr);
        int mf = new_tensor(g, &g->nodes[*pos], "mask", dt, mr, ms);
        if (mf < 0) return ST_NOMEM;
        if (m >= 0) {
            Attr w[2] = {af("self", 0.0), af("other", -INFINITY)};
            if (insert(g, pos, "where", OP_WHERE, &m, 1, mf, w, 2) < 0) return ST_NOMEM;
        } else {
            Attr f[2] = {ints("size", &one, 1), af("fill_value", 0.0)};
            if (insert(g, pos, "zeros", OP_FULL, &m, 0, mf, f, 2) < 0) return ST_NOMEM;
        }
        m = mf;
        if (memo->n < 64) {
            memo->from[memo->n] = from;
            memo->to[memo->n++] = mf;
        }
    }
    int sm[2] = {sd, m};
    if (insert(g, pos, "add", OP_ADD, sm, 2, ad, NULL, 0) < 0) return ST_NOMEM;
    /* safe: a row masked everywhere gives zeros, as torch's sdpa (_safe_softmax) does */
    Attr d[2] = {ai("dim", -1), {.key = "safe", .kind = ATTR_BOOL, .i = 1, .f = 1}};
    if (insert(g, pos, "softmax", OP_SOFTMAX, &ad, 1, pr, d, 2) < 0) return ST_NOMEM;
    Node *n = &g->nodes[*pos];
    n->op = OP_MATMUL;
    n->aten = op_canonical_name(OP_MATMUL);
    n->nin = 2;
    n->in[0] = pr;
    n->in[1] = v;
    n->nattrs = 0;
    return graph_link(g);
}

Status canon_sdpa(Graph *g, const CompileOptions *o)
{
    MaskMemo memo = {.n = 0};
    for (int i = 0; i < g->nnodes; i++) {
        if (g->nodes[i].dead || g->nodes[i].op != OP_SDPA) continue;
        if (o && compile_forced_cpu(o, &g->nodes[i])) continue; /* --cpu-op keeps it whole */
        Status st = expand_one(g, &i, &memo);
        if (st != ST_OK) return st;
    }
    return ST_OK;
}
