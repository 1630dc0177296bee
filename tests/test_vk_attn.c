/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * decode_attention on Vulkan against the CPU reference: graphs that reproduce the node sequence
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
 * workgroups per head group (lower_attention.c attn_params), the plan for a CPU device hardly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "vk_check.h"

enum { MASK_INPUT, MASK_TAIL, MASK_HOLES, MASK_PER_HEAD };
typedef struct {
    int B, Hq, Hkv, D, T;
    int valid; /* MASK_TAIL/HOLES: -inf at t >= valid */
    int mode;  /* MASK_INPUT: a random graph input [1,1,1,T]; MASK_PER_HEAD: one [B,Hq,1,T];
                * MASK_TAIL: a constant, 0 before valid; MASK_HOLES: also -inf on [T/4, T/2)
                * and at t % 5 == 2 */
} Case;

static bool masked(const Case *c, int t)
{
    if (t >= c->valid) return true;
    return c->mode == MASK_HOLES && ((t >= c->T / 4 && t < c->T / 2) || t % 5 == 2);
}

#define PUT(...) (k += snprintf(b + k, cap - (size_t)k, __VA_ARGS__))

/* "{"name":N,"shape":[a,b,...]}" */
static int tensor(char *b, size_t cap, const char *name, int rank, const int *s)
{
    int k = 0;
    PUT("{\"name\":\"%s\",\"shape\":[", name);
    for (int i = 0; i < rank; i++) PUT(i ? ",%d" : "%d", s[i]);
    PUT("]}");
    return k;
}

static int node(char *b, size_t cap, const char *name, const char *op, int nin,
                const char *const *in, const int *const *ins, const int *inr, const char *out,
                int orank, const int *os, const char *attrs)
{
    int k = 0;
    PUT(",{\"name\":\"%s\",\"op_type\":\"%s\",\"inputs\":[", name, op);
    for (int i = 0; i < nin; i++) {
        if (i) PUT(",");
        k += tensor(b + k, cap - (size_t)k, in[i], inr[i], ins[i]);
    }
    PUT("],\"outputs\":[");
    k += tensor(b + k, cap - (size_t)k, out, orank, os);
    PUT("],\"attrs\":{%s}}", attrs);
    return k;
}

#define NODE1(nm, op, in, ir, is, out, orank, os, attrs)                                         \
    do {                                                                                         \
        const char *in_[] = {in};                                                                \
        const int *is_[] = {is};                                                                 \
        int ir_[] = {ir};                                                                        \
        k += node(b + k, cap - (size_t)k, nm, op, 1, in_, is_, ir_, out, orank, os, attrs);      \
    } while (0)

/* The exporter's JSON for one decode attention (names as in qwen2_tiny/decode.json). */
static char *attn_graph(const Case *c)
{
    size_t cap = 1 << 20;
    char *b = malloc(cap);
    assert_non_null(b);
    int k = 0, B = c->B, Hq = c->Hq, Hkv = c->Hkv, D = c->D, T = c->T, rep = Hq / Hkv;
    bool input = c->mode == MASK_INPUT || c->mode == MASK_PER_HEAD;
    int cache[] = {B, Hkv, T, D}, q[] = {B, Hq, 1, D}, mask[] = {1, 1, 1, T};
    if (c->mode == MASK_PER_HEAD) {
        mask[0] = B;
        mask[1] = Hq;
    }
    int u5[] = {B, Hkv, 1, T, D}, e5[] = {B, Hkv, rep, T, D}, r4[] = {B, Hq, T, D};
    int kt[] = {B, Hq, D, T}, sc[] = {B, Hq, 1, T};
    PUT("{\"model_name\":\"attn\",\"graph_inputs\":[");
    k += tensor(b + k, cap - (size_t)k, "index_copy", 4, cache);
    PUT(",");
    k += tensor(b + k, cap - (size_t)k, "index_copy_1", 4, cache);
    PUT(",");
    k += tensor(b + k, cap - (size_t)k, "add_1", 4, q);
    if (input) {
        PUT(",");
        k += tensor(b + k, cap - (size_t)k, "attention_mask", 4, mask);
    }
    PUT("],\"graph_outputs\":[");
    k += tensor(b + k, cap - (size_t)k, "matmul_1", 4, q);
    PUT("],");
    if (!input) {
        PUT("\"constants\":{\"attention_mask\":{\"data\":[");
        for (int t = 0; t < T; t++) PUT("%s%s", t ? "," : "", masked(c, t) ? "-Infinity" : "0");
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
        NODE1("unsqueeze_5", "aten.unsqueeze.default", "index_copy", 4, cache, "unsqueeze_5", 5,
              u5, "\"dim\":2");
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
        k += node(b + k, cap - (size_t)k, "add_3", "aten.add.Tensor", 2, in_, is_, ir_, "add_3",
                  4, sc, "");
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

/* The stem that must run: one kernel, split or not. */
static const char *expected_stem(const Case *c)
{
    (void)c;
    return "decode_attention";
}

static void check_case(const Case *c)
{
    static const char *dts[] = {"fp32", "fp16", "bf16"};
    static const double tols[] = {VC_TOL_F32, VC_TOL_F16, VC_TOL_BF16};
    char *g = attn_graph(c);
    for (int t = 0; t < 3; t++) {
        double e = vc_check_json(g, dts[t], tols[t], expected_stem(c));
        fprintf(stderr, "  B%d Hq%d Hkv%d D%d T%d valid%d mask%d %s: rel_l2 %.3g\n", c->B, c->Hq,
                c->Hkv, c->D, c->T, c->valid, c->mode, dts[t], e);
    }
    free(g);
}

static void check_cases(const Case *cases, size_t n)
{
    vc_set_runs(2);
    for (size_t i = 0; i < n; i++) check_case(&cases[i]);
    vc_set_runs(1);
}
#define CHECK(cases) check_cases(cases, sizeof cases / sizeof cases[0])

/* repeats 1, 2, 4, 6 over short and long caches (the Qwen2.5-1.5B shape: Hq 12, Hkv 2, D 128) */
static void test_attn_gqa_shapes(void **state)
{
    (void)state;
    static const Case cases[] = {
        {1, 2, 2, 16, 1, 0, 0},     {1, 2, 2, 64, 17, 0, 0},    {1, 4, 2, 64, 64, 0, 0},
        {1, 4, 2, 16, 300, 0, 0},   {1, 12, 2, 128, 7, 0, 0},   {1, 12, 2, 128, 300, 0, 0},
        {1, 4, 2, 128, 1, 0, 0},    {1, 12, 2, 64, 64, 0, 0},   {1, 2, 2, 128, 1024, 0, 0},
        {1, 12, 2, 128, 1024, 0, 0}, {1, 12, 2, 128, 128, 0, 0}, {1, 4, 1, 64, 2000, 0, 0},
        {1, 12, 4, 64, 1000, 0, 0}, {1, 8, 2, 128, 7, 0, 0},
    };
    CHECK(cases);
}

/* head dims that are not powers of two: 36 and 50 take the element path in f16/bf16 (50 also in
 * f32), 72 and 200 leave lanes of a team without a vector, 256 the largest */
static void test_attn_odd_head_dims(void **state)
{
    (void)state;
    static const Case cases[] = {
        {1, 4, 2, 256, 17, 0, 0},  {1, 4, 2, 200, 64, 0, 0},    {1, 6, 2, 48, 33, 0, 0},
        {1, 4, 2, 72, 64, 0, 0},   {1, 12, 2, 50, 300, 0, 0},   {1, 6, 2, 36, 1000, 0, 0},
        {1, 2, 1, 50, 7, 0, 0},    {1, 12, 2, 72, 1024, 0, 0},  {1, 4, 2, 256, 1000, 0, 0},
    };
    CHECK(cases);
}

static void test_attn_batch(void **state)
{
    (void)state;
    static const Case cases[] = {
        {2, 4, 2, 64, 17, 0, 0}, {2, 12, 2, 16, 300, 0, 0}, {2, 12, 2, 128, 1000, 0, 0},
    };
    CHECK(cases);
}

/* -inf past the current position, as the exported decode graph's mask is: the masked tail
 * (whole splits, or part of one) is skipped and must not change the result */
static void test_attn_inf_mask(void **state)
{
    (void)state;
    static const Case cases[] = {
        {1, 4, 2, 64, 300, 130, 1},   {1, 12, 2, 128, 64, 1, 1},   {1, 4, 2, 16, 17, 17, 1},
        {1, 2, 2, 16, 300, 129, 1},   {1, 12, 2, 64, 300, 300, 1}, {2, 4, 2, 128, 17, 5, 1},
        {1, 12, 2, 128, 1024, 65, 1}, {1, 4, 1, 64, 2000, 1, 1},   {1, 4, 1, 64, 2000, 1999, 1},
        {2, 4, 2, 32, 1024, 300, 1},  {1, 4, 1, 32, 1024, 1024, 1}, {1, 4, 2, 200, 300, 150, 1},
    };
    CHECK(cases);
}

/* -inf holes before the tail: [T/4, T/2) holds whole splits with no valid position (splits of
 * 64 at T 1024), and every fifth position */
static void test_attn_mask_holes(void **state)
{
    (void)state;
    static const Case cases[] = {
        {1, 12, 2, 128, 1024, 700, 2}, {1, 4, 4, 64, 300, 250, 2}, {2, 12, 2, 72, 1000, 1000, 2},
        {1, 2, 1, 128, 7, 7, 2},       {1, 6, 2, 50, 1024, 1000, 2},
    };
    CHECK(cases);
}

/* a mask per (batch, query head): the heads of one workgroup see different masks */
static void test_attn_mask_per_head(void **state)
{
    (void)state;
    static const Case cases[] = {
        {2, 12, 2, 128, 1024, 0, 3}, {1, 4, 2, 50, 64, 0, 3}, {1, 6, 1, 64, 7, 0, 3},
    };
    CHECK(cases);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attn_gqa_shapes),
        cmocka_unit_test(test_attn_odd_head_dims),
        cmocka_unit_test(test_attn_batch),
        cmocka_unit_test(test_attn_inf_mask),
        cmocka_unit_test(test_attn_mask_holes),
        cmocka_unit_test(test_attn_mask_per_head),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
