/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * decode_attention (patterns decode_attention and attention) on Vulkan against the CPU reference:
 * graphs that reproduce the node sequence
 * of the Qwen2 decode step (tests/models/qwen2_tiny/decode.json, from the K/V caches through
 * repeat_kv's unsqueeze/expand/reshape, transpose, matmul, mul scale, add mask, softmax, matmul)
 * with grouped-query repeats 1, 2, 3, 4, 6 (one workgroup computes the query heads that share a
 * kv head), head dims 16 ... 256 on the 16-byte-load path and 36/50 on the element path (not a
 * multiple of 8 halves), 72 and 200 (vectors per row not a multiple of the lanes), cache lengths
 * 1, 7, 17, 64, 300, 1000, 1024, 2000, batch 2, masks: random additive ones broadcast over heads
 * or one per head, and constants that are -inf past a position (the kernel skips the tail) with
 * or without -inf holes before it (whole splits with no valid position among them), in f32, f16
 * and bf16. Every check runs the plan twice (vc_set_runs): the split kernel's tickets must be
 * back at 0 after a run. The portable plan for a GPU splits long caches over up to 16
 * workgroups per head group (lower_attention.c attn_params), the plan for a CPU device hardly.
 * Several query rows (prefill, pattern attention): Tq 2, 7, 100, 120, 128 with causal masks
 * (row r sees the positions before valid + r: an empty cache's prompt, or one after a past),
 * random additive masks per (batch, head, row) with -inf holes and a random -inf tail per row,
 * and random finite masks broadcast over heads, the splits checked in the plan (several where
 * the grid is small, none with attn.splits=1 on the same shapes). `make test` runs the cases
 * that cover each path once (about a third); `make test-long` the rest (Case.lng). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <math.h>

#include "compiler/ir_json.h"
#include "compiler/pass.h"
#include "compiler/plan.h"
#include "tests/vk_check.h"

enum { MASK_INPUT, MASK_TAIL, MASK_HOLES, MASK_PER_HEAD, MASK_CAUSAL, MASK_RANDOM_INF };
typedef struct {
    int B, Hq, Hkv, D, T;
    int valid; /* MASK_TAIL/HOLES: -inf at t >= valid; MASK_CAUSAL: at t >= valid + row */
    int mode;  /* MASK_INPUT: a random graph input [1,1,Tq,T]; MASK_PER_HEAD: one [B,Hq,Tq,T];
                * MASK_TAIL: a constant [1,1,1,T], 0 before valid; MASK_HOLES: also -inf on
                * [T/4, T/2) and at t % 5 == 2; MASK_CAUSAL: an input [1,1,Tq,T] of 0 and -inf;
                * MASK_RANDOM_INF: an input [B,Hq,Tq,T], random, -inf past a random end per row
                * and at about a quarter of the positions before it (never the last) */
    int Tq;    /* query rows */
    int lng;   /* L: only under `make test-long` (tu_long): the quick suite keeps one case per
                * code path (head-dim path, group size, mask kind, split), the rest is long */
} Case;
#define L 1 /* long */
#define Q 0 /* quick */

static int rows(const Case *c)
{
    return c->Tq;
}

static bool masked(const Case *c, int t)
{
    if (t >= c->valid) return true;
    return c->mode == MASK_HOLES && ((t >= c->T / 4 && t < c->T / 2) || t % 5 == 2);
}

#define PUT(...) (k += snprintf(b + k, cap - (size_t)k, __VA_ARGS__))

static int node(char *b, size_t cap, const char *name, const char *op, int nin,
                const char *const *in, const int *const *ins, const int *inr, const char *out,
                int orank, const int *os, const char *attrs)
{
    int k = 0;
    PUT(",{\"name\":\"%s\",\"op_type\":\"%s\",\"inputs\":[", name, op);
    for (int i = 0; i < nin; i++) {
        if (i) PUT(",");
        k += tu_tensor_json(b + k, cap - (size_t)k, in[i], inr[i], ins[i]);
    }
    PUT("],\"outputs\":[");
    k += tu_tensor_json(b + k, cap - (size_t)k, out, orank, os);
    PUT("],\"attrs\":{%s}}", attrs);
    return k;
}

#define NODE1(nm, op, in, ir, is, out, orank, os, attrs)                                           \
    do {                                                                                           \
        const char *in_[] = {in};                                                                  \
        const int *is_[] = {is};                                                                   \
        int ir_[] = {ir};                                                                          \
        k += node(b + k, cap - (size_t)k, nm, op, 1, in_, is_, ir_, out, orank, os, attrs);        \
    } while (0)

/* The exporter's JSON for one decode attention (names as in qwen2_tiny/decode.json). */
static char *attn_graph(const Case *c)
{
    size_t cap = 1 << 20;
    char *b = malloc(cap);
    assert_non_null(b);
    int k = 0, B = c->B, Hq = c->Hq, Hkv = c->Hkv, D = c->D, T = c->T, rep = Hq / Hkv;
    int Tq = rows(c);
    bool input = c->mode != MASK_TAIL && c->mode != MASK_HOLES;
    assert_true(input || Tq == 1);
    int cache[] = {B, Hkv, T, D}, q[] = {B, Hq, Tq, D}, mask[] = {1, 1, Tq, T};
    if (c->mode == MASK_PER_HEAD || c->mode == MASK_RANDOM_INF) {
        mask[0] = B;
        mask[1] = Hq;
    }
    int u5[] = {B, Hkv, 1, T, D}, e5[] = {B, Hkv, rep, T, D}, r4[] = {B, Hq, T, D};
    int kt[] = {B, Hq, D, T}, sc[] = {B, Hq, Tq, T};
    PUT("{\"model_name\":\"attn\",\"graph_inputs\":[");
    k += tu_tensor_json(b + k, cap - (size_t)k, "index_copy", 4, cache);
    PUT(",");
    k += tu_tensor_json(b + k, cap - (size_t)k, "index_copy_1", 4, cache);
    PUT(",");
    k += tu_tensor_json(b + k, cap - (size_t)k, "add_1", 4, q);
    if (input) {
        PUT(",");
        k += tu_tensor_json(b + k, cap - (size_t)k, "attention_mask", 4, mask);
    }
    PUT("],\"graph_outputs\":[");
    k += tu_tensor_json(b + k, cap - (size_t)k, "matmul_1", 4, q);
    PUT("],");
    if (!input) {
        PUT("\"constants\":{\"attention_mask\":{\"data\":[");
        for (int t = 0; t < T; t++)
            PUT("%s%s", t ? "," : "", masked(c, t) ? "-Infinity" : "0");
        PUT("]}},");
    }
    PUT("\"nodes\":[");
    int first = k; /* node() writes a leading comma: the first one is dropped at the end */
    const char *kname = "index_copy", *vname = "index_copy_1";
    int *kvs = cache;
    char at[128];
    if (rep > 1) {
        /* repeat_kv: unsqueeze(2) -> expand -> reshape (n_rep == 1 returns the cache itself) */
        snprintf(at, sizeof at, "\"size\":[%d,%d,%d,%d,%d]", B, Hkv, rep, T, D);
        char rs[128];
        snprintf(rs, sizeof rs, "\"shape\":[%d,%d,%d,%d]", B, Hq, T, D);
        NODE1("unsqueeze_5", "aten.unsqueeze.default", "index_copy", 4, cache, "unsqueeze_5", 5, u5,
              "\"dim\":2");
        NODE1("expand", "aten.expand.default", "unsqueeze_5", 5, u5, "expand", 5, e5, at);
        NODE1("reshape", "aten.reshape.default", "expand", 5, e5, "reshape", 4, r4, rs);
        NODE1("unsqueeze_6", "aten.unsqueeze.default", "index_copy_1", 4, cache, "unsqueeze_6", 5,
              u5, "\"dim\":2");
        NODE1("expand_1", "aten.expand.default", "unsqueeze_6", 5, u5, "expand_1", 5, e5, at);
        NODE1("reshape_1", "aten.reshape.default", "expand_1", 5, e5, "reshape_1", 4, r4, rs);
        kname = "reshape";
        vname = "reshape_1";
        kvs = r4;
    }
    NODE1("transpose_3", "aten.transpose.int", kname, 4, kvs, "transpose_3", 4, kt,
          "\"dim0\":2,\"dim1\":3");
    {
        const char *in_[] = {"add_1", "transpose_3"};
        const int *is_[] = {q, kt};
        int ir_[] = {4, 4};
        k += node(b + k, cap - (size_t)k, "matmul", "aten.matmul.default", 2, in_, is_, ir_,
                  "matmul", 4, sc, "");
    }
    snprintf(at, sizeof at, "\"other\":%.9g", 1.0 / __builtin_sqrt((double)D));
    NODE1("mul_7", "aten.mul.Tensor", "matmul", 4, sc, "mul_7", 4, sc, at);
    {
        const char *in_[] = {"mul_7", "attention_mask"};
        const int *is_[] = {sc, mask};
        int ir_[] = {4, 4};
        k += node(b + k, cap - (size_t)k, "add_3", "aten.add.Tensor", 2, in_, is_, ir_, "add_3", 4,
                  sc, "");
    }
    NODE1("softmax", "aten.softmax.int", "add_3", 4, sc, "softmax", 4, sc,
          "\"dim\":-1,\"dtype\":\"torch.float32\"");
    {
        const char *in_[] = {"softmax", vname};
        const int *is_[] = {sc, kvs};
        int ir_[] = {4, 4};
        k += node(b + k, cap - (size_t)k, "matmul_1", "aten.matmul.default", 2, in_, is_, ir_,
                  "matmul_1", 4, q, "");
    }
    PUT("]}");
    assert_true((size_t)k < cap - 1);
    memmove(b + first, b + first + 1, (size_t)(k - first));
    return b;
}

/* The stem that must run: one kernel, split or not, one query row or several. */
static const char *expected_stem(const Case *c)
{
    (void)c;
    return "decode_attention";
}

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

/* The mask input (graph input 3) of MASK_CAUSAL and MASK_RANDOM_INF, for the reference and the
 * device alike; the other inputs keep their random values. */
static void fill_mask(HTensor *t, int input, void *ctx)
{
    const Case *c = ctx;
    if (input != 3 || (c->mode != MASK_CAUSAL && c->mode != MASK_RANDOM_INF)) return;
    assert_int_equal(t->dtype, DT_F32);
    float *v = t->data;
    int T = c->T;
    uint64_t s = 777 + (uint64_t)t->numel;
    for (int64_t i0 = 0; i0 < t->numel; i0 += T) {
        int64_t r = i0 / T % rows(c);
        int end = c->mode == MASK_CAUSAL ? c->valid + (int)r : 1 + (int)(lcg(&s) % (uint64_t)T);
        for (int x = 0; x < T; x++) {
            if (c->mode == MASK_CAUSAL) v[i0 + x] = 0.0f;
            bool hole = c->mode == MASK_RANDOM_INF && x + 1 < end && lcg(&s) % 4 == 0;
            if (x >= end || hole) v[i0 + x] = -INFINITY;
        }
    }
}

/* The portable plan for a GPU of graph json (compiled only). */
static Pipeline compile_attn(const char *json)
{
    CompileOptions o;
    vc_options(&o);
    return tu_compile_json(json, &o);
}

/* The split count of the portable plan for a GPU (push word 19 of the kernel: nsplit). */
static int plan_splits(const char *json)
{
    Pipeline pipe = compile_attn(json);
    int n = -1;
    for (int k = 0; k < pipe.plan->nkernels; k++)
        if (strcmp(pipe.plan->kernels[k].shader, "decode_attention") == 0) {
            assert_true(pipe.plan->kernels[k].npush > 19);
            n = (int)pipe.plan->kernels[k].push[19];
        }
    assert_true(n >= 1);
    pipeline_free(&pipe);
    return n;
}

/* Whether lowering gives case c flash_attn_cm on the nv-coopmat tier (the rule of
 * lower_attention.c flash_applies with the default attn.flash of 16 rows). */
static bool flash_case(const Case *c)
{
    return rows(c) >= 16 && c->D % 16 == 0 && c->D <= 128;
}

/* Checks that the attention kernel in the plan of json for the nv-coopmat tier in `dtype` (its
 * emulation with emu) is `want`. */
static void check_tier_stem(const char *json, DType dtype, bool emu, const char *want)
{
    CompileOptions o;
    vc_options(&o);
    o.compute = dtype;
    o.tier = TIER_NV_COOPMAT;
    o.cm_emulate = emu;
    Pipeline pipe = tu_compile_json(json, &o);
    int found = 0;
    for (int k = 0; k < pipe.plan->nkernels; k++) {
        const char *s = pipe.plan->kernels[k].shader;
        if (strstr(s, "attention") || strstr(s, "flash_attn")) {
            assert_string_equal(s, want);
            found++;
        }
    }
    assert_int_equal(found, 1);
    pipeline_free(&pipe);
}

static void check_case(const Case *c)
{
    static const char *dts[] = {"fp32", "fp16", "bf16"};
    static const double tols[] = {VC_TOL_F32, VC_TOL_F16, VC_TOL_BF16};
    char *g = attn_graph(c);
    /* the tier's kernel: flash_attn_cm where it applies in f16/bf16 (the checks below run its
     * emulation, and the real kernel where the device has the tier), decode_attention in f32 */
    for (int t = 0; t < 3; t++)
        for (int emu = 0; emu < 2; emu++) {
            DType dt = t == 0 ? DT_F32 : t == 1 ? DT_F16 : DT_BF16;
            const char *want = t > 0 && flash_case(c) ? (emu ? "flash_attn_cmx" : "flash_attn_cm")
                                                      : "decode_attention";
            check_tier_stem(g, dt, emu, want);
        }
    vc_set_fill(fill_mask, (void *)c);
    for (int t = 0; t < 3; t++) {
        double e = vc_check_json(g, dts[t], tols[t], expected_stem(c));
        fprintf(stderr, "  B%d Hq%d Hkv%d D%d T%d Tq%d valid%d mask%d %s: rel_l2 %.3g\n", c->B,
                c->Hq, c->Hkv, c->D, c->T, rows(c), c->valid, c->mode, dts[t], e);
    }
    vc_set_fill(NULL, NULL);
    free(g);
}

/* Whether case c runs in this suite (quick or long); skip_if_none skips the cmocka test when
 * none of the n cases does. */
static bool runs_here(const Case *c)
{
    return (c->lng != 0) == tu_long();
}

static void skip_if_none(const Case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (runs_here(&cases[i])) return;
    skip();
}

/* Checks the cases, each with the split count the plan for a GPU gives (at least `min_split`),
 * then, when it splits, again with attn.splits=1 (one workgroup per row, no merge). */
static void check_cases_split(const Case *cases, size_t n, int min_split)
{
    skip_if_none(cases, n);
    vc_set_runs(2);
    for (size_t i = 0; i < n; i++) {
        if (!runs_here(&cases[i])) continue;
        char *g = attn_graph(&cases[i]);
        int ns = plan_splits(g);
        fprintf(stderr, "  %d splits\n", ns);
        assert_true(ns >= min_split);
        check_case(&cases[i]);
        if (ns > 1) {
            vc_tune("attn.splits=1");
            assert_int_equal(plan_splits(g), 1);
            check_case(&cases[i]);
            vc_tune(NULL);
        }
        free(g);
    }
    vc_set_runs(1);
}

static void check_cases(const Case *cases, size_t n)
{
    skip_if_none(cases, n);
    vc_set_runs(2);
    for (size_t i = 0; i < n; i++)
        if (runs_here(&cases[i])) check_case(&cases[i]);
    vc_set_runs(1);
}
#define CHECK(cases) check_cases(cases, sizeof cases / sizeof cases[0])

/* repeats 1, 2, 4, 6 over short and long caches (the Qwen2.5-1.5B shape: Hq 12, Hkv 2, D 128) */
static void test_attn_gqa_shapes(void **state)
{
    (void)state;
    static const Case cases[] = {
        {1, 2, 2, 16, 1, 0, 0, 1, Q},     {1, 2, 2, 64, 17, 0, 0, 1, L},
        {1, 4, 2, 64, 64, 0, 0, 1, Q},    {1, 4, 2, 16, 300, 0, 0, 1, L},
        {1, 12, 2, 128, 7, 0, 0, 1, L},   {1, 12, 2, 128, 300, 0, 0, 1, Q},
        {1, 4, 2, 128, 1, 0, 0, 1, L},    {1, 12, 2, 64, 64, 0, 0, 1, L},
        {1, 2, 2, 128, 1024, 0, 0, 1, L}, {1, 12, 2, 128, 1024, 0, 0, 1, L},
        {1, 12, 2, 128, 128, 0, 0, 1, L}, {1, 4, 1, 64, 2000, 0, 0, 1, Q},
        {1, 12, 4, 64, 1000, 0, 0, 1, L}, {1, 8, 2, 128, 7, 0, 0, 1, L},
    };
    CHECK(cases);
}

/* head dims that are not powers of two: 36 and 50 take the element path in f16/bf16 (50 also in
 * f32), 72 and 200 leave lanes of a team without a vector, 256 the largest */
static void test_attn_odd_head_dims(void **state)
{
    (void)state;
    static const Case cases[] = {
        {1, 4, 2, 256, 17, 0, 0, 1, Q},   {1, 4, 2, 200, 64, 0, 0, 1, L},
        {1, 6, 2, 48, 33, 0, 0, 1, L},    {1, 4, 2, 72, 64, 0, 0, 1, Q},
        {1, 12, 2, 50, 300, 0, 0, 1, L},  {1, 6, 2, 36, 1000, 0, 0, 1, Q},
        {1, 2, 1, 50, 7, 0, 0, 1, L},     {1, 12, 2, 72, 1024, 0, 0, 1, L},
        {1, 4, 2, 256, 1000, 0, 0, 1, L},
    };
    CHECK(cases);
}

static void test_attn_batch(void **state)
{
    (void)state;
    static const Case cases[] = {
        {2, 4, 2, 64, 17, 0, 0, 1, Q},
        {2, 12, 2, 16, 300, 0, 0, 1, L},
        {2, 12, 2, 128, 1000, 0, 0, 1, L},
    };
    CHECK(cases);
}

/* -inf past the current position, as the exported decode graph's mask is: the masked tail
 * (whole splits, or part of one) is skipped and must not change the result */
static void test_attn_inf_mask(void **state)
{
    (void)state;
    static const Case cases[] = {
        {1, 4, 2, 64, 300, 130, 1, 1, Q},   {1, 12, 2, 128, 64, 1, 1, 1, L},
        {1, 4, 2, 16, 17, 17, 1, 1, L},     {1, 2, 2, 16, 300, 129, 1, 1, L},
        {1, 12, 2, 64, 300, 300, 1, 1, L},  {2, 4, 2, 128, 17, 5, 1, 1, Q},
        {1, 12, 2, 128, 1024, 65, 1, 1, L}, {1, 4, 1, 64, 2000, 1, 1, 1, Q},
        {1, 4, 1, 64, 2000, 1999, 1, 1, L}, {2, 4, 2, 32, 1024, 300, 1, 1, L},
        {1, 4, 1, 32, 1024, 1024, 1, 1, L}, {1, 4, 2, 200, 300, 150, 1, 1, L},
    };
    CHECK(cases);
}

/* -inf holes before the tail: [T/4, T/2) holds whole splits with no valid position (splits of
 * 64 at T 1024), and every fifth position */
static void test_attn_mask_holes(void **state)
{
    (void)state;
    static const Case cases[] = {
        {1, 12, 2, 128, 1024, 700, 2, 1, Q}, {1, 4, 4, 64, 300, 250, 2, 1, L},
        {2, 12, 2, 72, 1000, 1000, 2, 1, L}, {1, 2, 1, 128, 7, 7, 2, 1, Q},
        {1, 6, 2, 50, 1024, 1000, 2, 1, L},
    };
    CHECK(cases);
}

/* a mask per (batch, query head): the heads of one workgroup see different masks */
static void test_attn_mask_per_head(void **state)
{
    (void)state;
    static const Case cases[] = {
        {2, 12, 2, 128, 1024, 0, 3, 1, L},
        {1, 4, 2, 50, 64, 0, 3, 1, Q},
        {1, 6, 1, 64, 7, 0, 3, 1, L},
    };
    CHECK(cases);
}

/* several query rows under causal masks: an empty cache's prompt (valid 1: row r sees 0..r, the
 * Qwen2.5-1.5B prefill's shape over a short cache), prompts after a past, GQA repeats 1, 2, 3, 6,
 * head dims on both load paths (72: lanes without a vector; 50: the element path) */
static void test_attn_rows_causal(void **state)
{
    (void)state;
    static const Case cases[] = {
        {1, 12, 2, 128, 300, 1, MASK_CAUSAL, 128, Q}, {1, 4, 4, 64, 37, 31, MASK_CAUSAL, 7, L},
        {2, 6, 2, 72, 301, 202, MASK_CAUSAL, 100, L}, {1, 4, 2, 50, 19, 1, MASK_CAUSAL, 7, Q},
        {1, 2, 2, 16, 5, 4, MASK_CAUSAL, 2, Q},
    };
    CHECK(cases);
}

/* random additive masks: per (batch, head, row) with -inf holes and a random tail, or finite and
 * broadcast over heads, or finite per head */
static void test_attn_rows_random(void **state)
{
    (void)state;
    static const Case cases[] = {
        {1, 4, 2, 64, 300, 0, MASK_RANDOM_INF, 7, Q},
        {2, 4, 4, 50, 77, 0, MASK_RANDOM_INF, 2, L},
        {1, 12, 2, 128, 129, 0, MASK_RANDOM_INF, 128, L},
        {1, 4, 2, 64, 300, 0, MASK_INPUT, 7, L},
        {1, 6, 2, 64, 100, 0, MASK_PER_HEAD, 2, Q},
        {1, 8, 2, 16, 33, 0, MASK_RANDOM_INF, 1, Q},
    };
    CHECK(cases);
}

/* flash_attn_cm's own edges (its emulation on lavapipe): query blocks cut by Tq (17, 33, 50),
 * head dims 16, 32, 80, 128, caches not a multiple of the 16-key tile (72: the mask read as
 * vectors, 45 and 19 one element at a time), GQA 1, 3 and 6, batch 2,
 * masks causal, random with -inf holes, finite per head and a graph input broadcast over
 * heads */
static void test_attn_flash(void **state)
{
    (void)state;
    static const Case cases[] = {
        {1, 4, 2, 32, 45, 29, MASK_CAUSAL, 17, Q},   {2, 6, 2, 80, 72, 0, MASK_RANDOM_INF, 33, Q},
        {1, 3, 1, 16, 19, 0, MASK_PER_HEAD, 16, Q},  {1, 6, 1, 128, 50, 0, MASK_INPUT, 50, L},
        {1, 2, 2, 64, 1000, 60, MASK_CAUSAL, 64, L},
    };
    CHECK(cases);
}

/* the cache split over several workgroups per (batch, group, row), merged by the last ticket of
 * each row: few rows over a long cache (up to 16 splits, causal rows whose later splits see
 * nothing valid), and 120 rows of one head (2 splits: the grid is still under the GPU target);
 * every case again unsplit (attn.splits=1) */
static void test_attn_rows_splits(void **state)
{
    (void)state;
    static const Case cases[] = {
        {1, 2, 1, 128, 1000, 900, MASK_CAUSAL, 7, L},
        {1, 4, 2, 16, 1000, 1, MASK_CAUSAL, 2, Q},
        {1, 4, 2, 64, 1000, 0, MASK_RANDOM_INF, 7, L},
        {1, 1, 1, 64, 300, 0, MASK_RANDOM_INF, 120, Q},
        {2, 6, 3, 64, 517, 400, MASK_CAUSAL, 7, L},
    };
    check_cases_split(cases, sizeof cases / sizeof cases[0], 2);
}

/* what the kernel cannot take is a near miss of the pattern of its row count, and the chain
 * compiles to its own kernels: a head dim above 256 */
static void test_attn_near_misses(void **state)
{
    (void)state;
    if (tu_long()) skip(); /* compiles only: the quick suite's */
    static const Case cases[] = {
        {1, 4, 2, 264, 17, 0, MASK_INPUT, 1, Q},
        {1, 4, 2, 264, 17, 0, MASK_CAUSAL, 7, Q},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *json = attn_graph(&cases[i]);
        Pipeline p = compile_attn(json);
        int why = 0;
        for (int m = 0; m < p.g->nmisses; m++)
            why += strcmp(p.g->misses[m].pattern, i ? "attention" : "decode_attention") == 0 &&
                   strstr(p.g->misses[m].reason, "head dim above 256") != NULL;
        assert_int_equal(why, 1);
        assert_int_equal(p.g->nmisses, 1);
        for (int k = 0; k < p.plan->nkernels; k++)
            assert_string_not_equal(p.plan->kernels[k].shader, "decode_attention");
        pipeline_free(&p);
        free(json);
    }
}

TU_MAIN(test_attn_gqa_shapes, test_attn_odd_head_dims, test_attn_batch, test_attn_inf_mask,
        test_attn_mask_holes, test_attn_mask_per_head, test_attn_rows_causal, test_attn_rows_random,
        test_attn_rows_splits, test_attn_flash, test_attn_near_misses)
