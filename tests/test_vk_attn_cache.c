/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * decode_attention_cache (compiler/fuse_merge.c, the kernel attention_cache: decode_attention.glsl
 * with ATTN_CACHE) on Vulkan against the CPU reference: graphs with the node sequence of a Qwen2
 * decode step from the projections on (qwen2_tiny/decode.json): q [B,1,Hq,D] and k, v [B,1,Hkv,D]
 * transposed to [B,H,1,D], the rope chain on q and on k (or not), k and v stored into the caches
 * [B,Hkv,T,D] by index_copy along dim 2 at the step's position, repeat_kv, the attention; outputs:
 * the attention's and both updated caches. Cases: grouped-query repeats 1, 2, 3 and 6, head dims 16
 * and 128 on the 16-byte-load path and 36 on the element path, caches of 2 to 300 positions,
 * batch 1 and 2 (cos/sin per batch), the position at 0, in the middle and last, masks that are
 * -inf past the position (a decode step) or random and finite everywhere (the rows after the
 * position are read too), with each rope or none, in f32, f16 and bf16, on every plan vk_check
 * runs (the portable plan for a GPU splits the long caches: the row at the position is in a split
 * of its own), each run twice (the split's tickets). The plan has the one kernel and one level;
 * switched off (--no-fuse decode_attention_cache) the four kernels of before and two levels, the
 * same results. Compile-only: the merge's rules and near misses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <math.h>

#include "compiler/fusion.h"
#include "compiler/pass.h"
#include "compiler/plan.h"
#include "tests/vk_check.h"

enum { MASK_STEP, MASK_RANDOM };
/* How a graph differs from the decode step (near misses). */
enum { G_STEP, G_TWO_INDICES, G_CACHE_READ, G_OTHER_COS };

typedef struct {
    int B, Hq, Hkv, D, T, pos;
    bool rope_q, rope_k;
    int mask;  /* MASK_STEP: 0 up to pos, -inf after; MASK_RANDOM: random finite everywhere */
    int shape; /* G_*: G_STEP unless a rule test says */
    int lng;   /* only under `make test-long` */
} Case;

typedef struct {
    char *b;
    size_t n, cap;
} Buf;

static void put(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(Buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(b->b + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    assert_true(w >= 0 && (size_t)w < b->cap - b->n);
    b->n += (size_t)w;
}

/* A tensor: name and shape (rank r), int64 when i64. */
static void tens(Buf *b, const char *name, int r, const int *s, bool i64)
{
    put(b, "{\"name\":\"%s\",%s\"shape\":[", name, i64 ? "\"dtype\":\"int64\"," : "");
    for (int i = 0; i < r; i++)
        put(b, i ? ",%d" : "%d", s[i]);
    put(b, "]}");
}

/* A node of one output; ins: names with their shapes (4-d unless ranks say). */
typedef struct {
    const char *name;
    int rank;
    const int *shape;
} T;

static void node(Buf *b, const char *name, const char *op, int nin, const T *in, T out,
                 const char *attrs)
{
    put(b, ",{\"name\":\"%s\",\"op_type\":\"%s\",\"inputs\":[", name, op);
    for (int i = 0; i < nin; i++) {
        if (i) put(b, ",");
        tens(b, in[i].name, in[i].rank, in[i].shape,
             strcmp(in[i].name, "pos") == 0 || strcmp(in[i].name, "pos2") == 0);
    }
    put(b, "],\"outputs\":[");
    tens(b, out.name, out.rank, out.shape, false);
    put(b, "],\"attrs\":{%s}}", attrs);
}

/* x [.., D] (shape xs) rotated by cos/sin (shape cs): the exporter's 7-op chain, nodes named
 * P_mul, P_s1, P_neg, P_s2, P_cat, P_mul2, P_add (the output). */
static void rope_chain(Buf *b, const char *p, const char *x, const int *xs, const char *cos,
                       const char *sin, const int *cs, int crank)
{
    int D = xs[3], hs[4] = {xs[0], xs[1], xs[2], D / 2};
    char n[7][32], at[160];
    static const char *const suf[] = {"mul", "s1", "neg", "s2", "cat", "mul2", "add"};
    for (int i = 0; i < 7; i++)
        snprintf(n[i], sizeof n[i], "%s_%s", p, suf[i]);
    node(b, n[0], "aten.mul.Tensor", 2, (T[]){{x, 4, xs}, {cos, crank, cs}}, (T){n[0], 4, xs}, "");
    snprintf(at, sizeof at, "\"dim\":3,\"start\":%d,\"end\":9223372036854775807", D / 2);
    node(b, n[1], "aten.slice.Tensor", 1, (T[]){{x, 4, xs}}, (T){n[1], 4, hs}, at);
    node(b, n[2], "aten.neg.default", 1, (T[]){{n[1], 4, hs}}, (T){n[2], 4, hs}, "");
    snprintf(at, sizeof at, "\"dim\":3,\"start\":0,\"end\":%d", D / 2);
    node(b, n[3], "aten.slice.Tensor", 1, (T[]){{x, 4, xs}}, (T){n[3], 4, hs}, at);
    node(b, n[4], "aten.cat.default", 2, (T[]){{n[2], 4, hs}, {n[3], 4, hs}}, (T){n[4], 4, xs},
         "\"dim\":-1");
    node(b, n[5], "aten.mul.Tensor", 2, (T[]){{n[4], 4, xs}, {sin, crank, cs}}, (T){n[5], 4, xs},
         "");
    node(b, n[6], "aten.add.Tensor", 2, (T[]){{n[0], 4, xs}, {n[5], 4, xs}}, (T){n[6], 4, xs}, "");
}

/* src [B,1,H,D] -> [B,H,1,D] named out */
static void to_heads(Buf *b, const char *src, const char *out, int B, int H, int D)
{
    int in[4] = {B, 1, H, D}, o[4] = {B, H, 1, D};
    node(b, out, "aten.transpose.int", 1, (T[]){{src, 4, in}}, (T){out, 4, o},
         "\"dim0\":1,\"dim1\":2");
}

/* The exporter's JSON for one decode step of case c (the caller frees it). */
static char *step_graph(const Case *c)
{
    Buf b = {malloc(1 << 17), 0, 1 << 17};
    assert_non_null(b.b);
    int B = c->B, Hq = c->Hq, Hkv = c->Hkv, D = c->D, T_ = c->T, rep = Hq / Hkv;
    int q4[] = {B, 1, Hq, D}, k4[] = {B, 1, Hkv, D}, cache[] = {B, Hkv, T_, D};
    int qh[] = {B, Hq, 1, D}, kh[] = {B, Hkv, 1, D}, cs[] = {B, 1, 1, D}, one[] = {1};
    int mask[] = {1, 1, 1, T_}, u5[] = {B, Hkv, 1, T_, D}, e5[] = {B, Hkv, rep, T_, D};
    int r4[] = {B, Hq, T_, D}, kt[] = {B, Hq, D, T_}, sc[] = {B, Hq, 1, T_};
    bool other_cos = c->shape == G_OTHER_COS;
    put(&b, "{\"model_name\":\"attn_cache\",\"graph_inputs\":[");
    tens(&b, "q4", 4, q4, false), put(&b, ",");
    tens(&b, "k4", 4, k4, false), put(&b, ",");
    tens(&b, "v4", 4, k4, false), put(&b, ",");
    tens(&b, "cos", 4, cs, false), put(&b, ",");
    tens(&b, "sin", 4, cs, false), put(&b, ",");
    tens(&b, "pos", 1, one, true), put(&b, ",");
    tens(&b, "kv_k", 4, cache, false), put(&b, ",");
    tens(&b, "kv_v", 4, cache, false), put(&b, ",");
    tens(&b, "mask", 4, mask, false);
    if (c->shape == G_TWO_INDICES) put(&b, ","), tens(&b, "pos2", 1, one, true);
    if (other_cos) put(&b, ","), tens(&b, "cos2", 4, cs, false);
    put(&b, "],\"graph_outputs\":[");
    tens(&b, "out", 4, qh, false), put(&b, ",");
    tens(&b, "ick", 4, cache, false), put(&b, ",");
    tens(&b, "icv", 4, cache, false);
    int kvt[] = {B, T_, Hkv, D};
    if (c->shape == G_CACHE_READ) put(&b, ","), tens(&b, "kvt", 4, kvt, false);
    put(&b, "],\"nodes\":[");
    size_t first = b.n;
    to_heads(&b, "q4", "qt", B, Hq, D);
    to_heads(&b, "k4", "kt", B, Hkv, D);
    to_heads(&b, "v4", "vt", B, Hkv, D);
    const char *q = "qt", *k = "kt";
    if (c->rope_q) rope_chain(&b, "rq", "qt", qh, "cos", "sin", cs, 4), q = "rq_add";
    if (c->rope_k)
        rope_chain(&b, "rk", "kt", kh, other_cos ? "cos2" : "cos", "sin", cs, 4), k = "rk_add";
    const char *pv = c->shape == G_TWO_INDICES ? "pos2" : "pos";
    node(&b, "ick", "aten.index_copy.default", 3,
         (T[]){{"kv_k", 4, cache}, {"pos", 1, one}, {k, 4, kh}}, (T){"ick", 4, cache}, "\"dim\":2");
    node(&b, "icv", "aten.index_copy.default", 3,
         (T[]){{"kv_v", 4, cache}, {pv, 1, one}, {"vt", 4, kh}}, (T){"icv", 4, cache}, "\"dim\":2");
    if (c->shape == G_CACHE_READ)
        node(&b, "kvt", "aten.transpose.int", 1, (T[]){{"ick", 4, cache}}, (T){"kvt", 4, kvt},
             "\"dim0\":1,\"dim1\":2");
    const char *K = "ick", *V = "icv";
    const int *kvs = cache;
    char at[160], rs[160];
    if (rep > 1) {
        snprintf(at, sizeof at, "\"size\":[%d,%d,%d,%d,%d]", B, Hkv, rep, T_, D);
        snprintf(rs, sizeof rs, "\"shape\":[%d,%d,%d,%d]", B, Hq, T_, D);
        static const char *const nm[2][3] = {{"uk", "ek", "rk4"}, {"uv", "ev", "rv4"}};
        for (int s = 0; s < 2; s++) {
            node(&b, nm[s][0], "aten.unsqueeze.default", 1, (T[]){{s ? "icv" : "ick", 4, cache}},
                 (T){nm[s][0], 5, u5}, "\"dim\":2");
            node(&b, nm[s][1], "aten.expand.default", 1, (T[]){{nm[s][0], 5, u5}},
                 (T){nm[s][1], 5, e5}, at);
            node(&b, nm[s][2], "aten.reshape.default", 1, (T[]){{nm[s][1], 5, e5}},
                 (T){nm[s][2], 4, r4}, rs);
        }
        K = "rk4", V = "rv4", kvs = r4;
    }
    node(&b, "ktr", "aten.transpose.int", 1, (T[]){{K, 4, kvs}}, (T){"ktr", 4, kt},
         "\"dim0\":2,\"dim1\":3");
    node(&b, "mm", "aten.matmul.default", 2, (T[]){{q, 4, qh}, {"ktr", 4, kt}}, (T){"mm", 4, sc},
         "");
    snprintf(at, sizeof at, "\"other\":%.9g", 1.0 / sqrt((double)D));
    node(&b, "scale", "aten.mul.Tensor", 1, (T[]){{"mm", 4, sc}}, (T){"scale", 4, sc}, at);
    node(&b, "madd", "aten.add.Tensor", 2, (T[]){{"scale", 4, sc}, {"mask", 4, mask}},
         (T){"madd", 4, sc}, "");
    node(&b, "sm", "aten.softmax.int", 1, (T[]){{"madd", 4, sc}}, (T){"sm", 4, sc},
         "\"dim\":-1,\"dtype\":\"torch.float32\"");
    node(&b, "out", "aten.matmul.default", 2, (T[]){{"sm", 4, sc}, {V, 4, kvs}}, (T){"out", 4, qh},
         "");
    put(&b, "]}");
    memmove(b.b + first, b.b + first + 1, b.n - first); /* node() writes a leading comma */
    return b.b;
}

/* The position (graph input 5, and pos2) and the mask (input 8) of case c, for the reference and
 * the device alike; the other inputs keep their random values. */
static void fill_step(HTensor *t, int input, void *ctx)
{
    const Case *c = ctx;
    if (input == 5 || (input == 9 && c->shape == G_TWO_INDICES)) {
        assert_int_equal(t->dtype, DT_I64);
        ((int64_t *)t->data)[0] = input == 5 ? c->pos : (c->pos + 1) % c->T;
    }
    if (input == 8 && c->mask == MASK_STEP) {
        float *v = t->data;
        for (int x = 0; x < c->T; x++)
            v[x] = x <= c->pos ? 0.0f : -INFINITY;
    }
}

/* The plan of json for a GPU (portable) with `no_fuse` (NULL: none): its kernels of stem s, and
 * *levels. */
static int plan_stems(const char *json, const char *no_fuse, const char *s, int *levels)
{
    Pipeline pipe;
    vc_set_no_fuse(no_fuse);
    vc_compile_json(json, &pipe);
    vc_set_no_fuse(NULL);
    int n = 0;
    for (int k = 0; k < pipe.plan->nkernels; k++)
        n += strcmp(pipe.plan->kernels[k].shader, s) == 0;
    if (levels) *levels = pipe.plan->nlevels;
    pipeline_free(&pipe);
    return n;
}

static void check_case(const Case *c)
{
    static const char *dts[] = {"fp32", "fp16", "bf16"};
    static const double tols[] = {VC_TOL_F32, VC_TOL_F16, VC_TOL_BF16};
    char *g = step_graph(c);
    /* one kernel, one level; switched off, the kernels of before in two levels */
    int lv = 0, off = 0;
    assert_int_equal(plan_stems(g, NULL, "attention_cache", &lv), 1);
    assert_int_equal(lv, 1);
    assert_int_equal(plan_stems(g, "decode_attention_cache", "decode_attention", &off), 1);
    assert_int_equal(plan_stems(g, "decode_attention_cache", "rope", NULL), c->rope_q);
    assert_int_equal(plan_stems(g, "decode_attention_cache", "rope_cache", NULL), c->rope_k);
    assert_int_equal(off, 2);
    vc_set_fill(fill_step, (void *)c);
    vc_set_runs(2);
    for (int t = 0; t < 3; t++) {
        double e = vc_check_json(g, dts[t], tols[t], "attention_cache");
        fprintf(stderr, "  B%d Hq%d Hkv%d D%d T%d pos%d rope%d%d mask%d %s: rel_l2 %.3g\n", c->B,
                c->Hq, c->Hkv, c->D, c->T, c->pos, c->rope_q, c->rope_k, c->mask, dts[t], e);
    }
    /* the plan of before gives the same results */
    vc_set_no_fuse("decode_attention_cache");
    vc_check_json(g, "bf16", VC_TOL_BF16, "decode_attention");
    vc_set_no_fuse(NULL);
    vc_set_runs(1);
    vc_set_fill(NULL, NULL);
    free(g);
}

#define L 1
#define Q 0
static const Case cases[] = {
    /* qwen2_tiny's layer: GQA 2, D 16, the step at 0, in the middle and last */
    {1, 4, 2, 16, 64, 0, true, true, MASK_STEP, G_STEP, Q},
    {1, 4, 2, 16, 64, 37, true, true, MASK_STEP, G_STEP, Q},
    {1, 4, 2, 16, 64, 63, true, true, MASK_STEP, G_STEP, L},
    /* every position valid, so rows after the step are read; batch 2, cos/sin per batch */
    {2, 3, 1, 16, 9, 4, true, true, MASK_RANDOM, G_STEP, Q},
    /* the element path (36 is no multiple of 8), no repeat, the last position */
    {1, 3, 3, 36, 17, 16, true, true, MASK_STEP, G_STEP, Q},
    /* no rope, or one side's: the rows taken as they come */
    {1, 4, 2, 16, 12, 5, false, false, MASK_RANDOM, G_STEP, Q},
    {1, 4, 2, 16, 12, 11, true, false, MASK_STEP, G_STEP, L},
    {1, 4, 2, 16, 12, 0, false, true, MASK_RANDOM, G_STEP, L},
    /* a cache of two positions (the row loaded in pos's place is the other one) */
    {1, 2, 1, 16, 2, 0, true, true, MASK_RANDOM, G_STEP, Q},
    {1, 2, 1, 16, 2, 1, true, true, MASK_RANDOM, G_STEP, L},
    /* the 1.5B's heads: GQA 6, D 128; a long cache the plan for a GPU splits, the step in a
     * split in the middle */
    {1, 12, 2, 128, 300, 170, true, true, MASK_STEP, G_STEP, Q},
    {1, 12, 2, 128, 300, 299, true, true, MASK_RANDOM, G_STEP, L},
};

static void test_step(void **state)
{
    (void)state;
    int ran = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (!tu_here(cases[i].lng)) continue;
        check_case(&cases[i]);
        ran++;
    }
    if (!ran) skip();
}

/* attn.split_rows: the splits in use follow the step's position. One loaded plan runs a step at
 * one position, then the compared step at another (fill_moving: the position and the mask of
 * each run), so a ticket left behind by one split count would break the next; on a cache the GPU
 * plan splits 16 ways (T 300: chunks of 19), with 4 positions per split (every split in use at
 * 170 and 299), 40 (5 and 8 splits), the default (1, 2 or 4) and 0 (the plan's 16 over the whole
 * cache), and the step at 0 (one split: no merge); masks of a step and random finite ones. */
typedef struct {
    Case c;
    int first, then; /* the earlier run's position, the compared run's */
} Moving;

static void fill_moving(HTensor *t, int input, void *ctx)
{
    Moving *m = ctx;
    m->c.pos = vc_filling_run() ? m->first : m->then;
    fill_step(t, input, &m->c);
}

static void test_split_rows(void **state)
{
    (void)state;
    static const char *rows[] = {"attn.split_rows=4", "attn.split_rows=40", NULL,
                                 "attn.split_rows=0"};
    /* {first, then, mask}: a random finite mask makes the positions after the step valid,
     * which the last split in use reads up to the cache's end */
    static const int moves[][3] = {
        {299, 170, MASK_STEP}, {5, 299, MASK_STEP}, {170, 0, MASK_STEP}, {5, 170, MASK_RANDOM}};
    Case base = {1, 4, 2, 16, 300, 0, true, true, MASK_STEP, G_STEP, Q};
    char *g = step_graph(&base);
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        vc_tune(rows[r]);
        for (size_t i = 0; i < sizeof moves / sizeof moves[0]; i++) {
            Moving m = {base, moves[i][0], moves[i][1]};
            m.c.mask = moves[i][2];
            vc_set_fill(fill_moving, &m);
            vc_set_runs(2);
            double e = vc_check_json(g, "fp32", VC_TOL_F32, "attention_cache");
            fprintf(stderr, "  %s: pos %d then %d, mask %d: rel_l2 %.3g\n",
                    rows[r] ? rows[r] : "default", m.first, m.then, m.c.mask, e);
        }
        vc_tune(NULL);
    }
    vc_set_runs(1);
    vc_set_fill(NULL, NULL);
    free(g);
}

/* The compiled json with `no_fuse` (NULL: none). */
static Pipeline compile_step(const char *json, const char *no_fuse)
{
    Pipeline pipe;
    vc_set_no_fuse(no_fuse);
    vc_compile_json(json, &pipe);
    vc_set_no_fuse(NULL);
    return pipe;
}

static const char *merge_miss(const Graph *g)
{
    for (int i = 0; i < g->nmisses; i++)
        if (strcmp(g->misses[i].pattern, FUSE_MERGE_ATTN) == 0) return g->misses[i].reason;
    return NULL;
}

/* The merge's record: after the other instances, over their members and the index_copy nodes,
 * the instances it runs merged and their nodes its own; switched off by its name or with any
 * instance it merges; what keeps it from applying is a near miss. */
static void test_rules(void **state)
{
    (void)state;
    Case c = {1, 4, 2, 16, 8, 3, true, true, MASK_STEP, G_STEP, Q};
    char *json = step_graph(&c);
    Pipeline p = compile_step(json, NULL);
    const Graph *g = p.g;
    int m = -1;
    for (int f = 0; f < g->nfusions; f++)
        if (strcmp(g->fusions[f].pattern, FUSE_MERGE_ATTN) == 0) m = f;
    assert_true(m >= 0);
    const Fusion *M = &g->fusions[m];
    assert_true(M->enabled);
    assert_int_equal(M->nmerges, 3); /* decode_attention, q's rope, k's rope_cache */
    assert_string_equal(g->fusions[M->merges[0]].pattern, "decode_attention");
    for (int k = 0; k < M->nmerges; k++) {
        assert_true(M->merges[k] < m); /* recorded before it: their ids never move */
        assert_int_equal(g->fusions[M->merges[k]].merged, m + 1);
    }
    int nodes = 0;
    for (int i = 0; i < g->nnodes; i++)
        nodes += g->nodes[i].fusion == m;
    assert_int_equal(nodes, M->nnodes);
    assert_int_equal(M->nxout, 2);
    assert_string_equal(g->tensors[M->xout[0]].name, "ick");
    assert_string_equal(g->tensors[M->xout[1]].name, "icv");
    /* the caches are updated in place */
    for (int t = 0; t < p.plan->ntensors; t++)
        if (strncmp(p.plan->tensors[t].name, "ic", 2) == 0)
            assert_true(p.plan->tensors[t].alias_of >= 0);
    char id[16];
    snprintf(id, sizeof id, "%s", M->id);
    pipeline_free(&p);
    /* off by its id, its name, or with a part: the parts are as before */
    const char *offs[] = {id, FUSE_MERGE_ATTN, "rope", "rope_cache", "decode_attention"};
    for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++) {
        p = compile_step(json, offs[i]);
        const Fusion *f = &p.g->fusions[m];
        assert_string_equal(f->pattern, FUSE_MERGE_ATTN);
        assert_false(f->enabled);
        for (int k = 0; k < p.g->nfusions; k++)
            assert_int_equal(p.g->fusions[k].merged, 0);
        for (int k = 0; k < p.plan->nkernels; k++)
            assert_string_not_equal(p.plan->kernels[k].shader, "attention_cache");
        pipeline_free(&p);
    }
    free(json);
    /* near misses */
    static const struct {
        Case c;
        const char *why;
    } miss[] = {
        {{1, 4, 2, 16, 1, 0, true, true, MASK_STEP, G_STEP, Q}, "a cache of one position"},
        {{1, 4, 2, 16, 8, 3, true, true, MASK_STEP, G_TWO_INDICES, Q}, "different indices"},
        {{1, 4, 2, 16, 8, 3, true, true, MASK_STEP, G_CACHE_READ, Q}, "readers besides"},
        {{1, 4, 2, 16, 8, 3, true, true, MASK_STEP, G_OTHER_COS, Q}, "different cos or sin"},
    };
    for (size_t i = 0; i < sizeof miss / sizeof miss[0]; i++) {
        json = step_graph(&miss[i].c);
        p = compile_step(json, NULL);
        const char *why = merge_miss(p.g);
        if (!why || !strstr(why, miss[i].why))
            fail_msg("case %zu: near miss '%s', want '%s'", i, why ? why : "(none)", miss[i].why);
        for (int k = 0; k < p.g->nfusions; k++)
            assert_string_not_equal(p.g->fusions[k].pattern, FUSE_MERGE_ATTN);
        pipeline_free(&p);
        free(json);
    }
}

TU_MAIN(test_rules, test_step, test_split_rows)
