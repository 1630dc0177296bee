/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * decode_attention on Vulkan against the CPU reference: graphs that reproduce the node sequence
 * of the Qwen2 decode step (tests/models/qwen2_tiny/decode.json, from the K/V caches through
 * repeat_kv's unsqueeze/expand/reshape, transpose, matmul, mul scale, add mask, softmax, matmul)
 * with grouped-query heads Hq/Hkv in {2/2, 4/2, 12/2, 4/1}, head dims {16, 64, 128}, cache
 * lengths {1, 17, 64, 300, 1024, 2000} (not multiples of the workgroup), odd head dims
 * 48/200/256, batch 2, random additive masks and constant masks that are -inf past a position
 * (the kernel then skips the masked tail), in f32, f16 and bf16. Caches of 128 positions or more
 * take the flash-decoding path (decode_attention_split + decode_attention_combine, chunks of the
 * cache on separate workgroups; lower_attention.c attn_nsplit), including chunks that are
 * entirely masked and chunks cut by the end of the valid prefix. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "vk_check.h"

typedef struct {
    int B, Hq, Hkv, D, T;
    int valid; /* 0: the mask is a random graph input; else a constant, -inf at t >= valid */
} Case;

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
    int cache[] = {B, Hkv, T, D}, q[] = {B, Hq, 1, D}, mask[] = {1, 1, 1, T};
    int u5[] = {B, Hkv, 1, T, D}, e5[] = {B, Hkv, rep, T, D}, r4[] = {B, Hq, T, D};
    int kt[] = {B, Hq, D, T}, sc[] = {B, Hq, 1, T};
    PUT("{\"model_name\":\"attn\",\"graph_inputs\":[");
    k += tensor(b + k, cap - (size_t)k, "index_copy", 4, cache);
    PUT(",");
    k += tensor(b + k, cap - (size_t)k, "index_copy_1", 4, cache);
    PUT(",");
    k += tensor(b + k, cap - (size_t)k, "add_1", 4, q);
    if (!c->valid) {
        PUT(",");
        k += tensor(b + k, cap - (size_t)k, "attention_mask", 4, mask);
    }
    PUT("],\"graph_outputs\":[");
    k += tensor(b + k, cap - (size_t)k, "matmul_1", 4, q);
    PUT("],");
    if (c->valid) {
        PUT("\"constants\":{\"attention_mask\":{\"data\":[");
        for (int t = 0; t < T; t++) PUT("%s%s", t ? "," : "", t < c->valid ? "0" : "-Infinity");
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

/* The stem that must run: the combine exists only when the cache is split, which
 * lower_attention.c's attn_nsplit does from 2 chunks of 64 positions on while (batch, head)
 * pairs leave room for 2 splits among 256 workgroups. */
static const char *expected_stem(const Case *c)
{
    bool split = c->T / 64 >= 2 && 256 / (c->B * c->Hq) >= 2;
    return split ? "decode_attention_combine" : "decode_attention";
}

static void check_case(const Case *c)
{
    static const char *dts[] = {"fp32", "fp16", "bf16"};
    static const double tols[] = {VC_TOL_F32, VC_TOL_F16, VC_TOL_BF16};
    char *g = attn_graph(c);
    for (int t = 0; t < 3; t++) {
        double e = vc_check_json(g, dts[t], tols[t], expected_stem(c));
        fprintf(stderr, "  B%d Hq%d Hkv%d D%d T%d valid%d %s (%s): rel_l2 %.3g\n", c->B, c->Hq,
                c->Hkv, c->D, c->T, c->valid, dts[t], expected_stem(c), e);
    }
    free(g);
}

static void test_attn_gqa_shapes(void **state)
{
    (void)state;
    static const Case cases[] = {
        {1, 2, 2, 16, 1, 0},    {1, 2, 2, 64, 17, 0},  {1, 4, 2, 64, 64, 0},
        {1, 4, 2, 16, 300, 0},  {1, 12, 2, 128, 17, 0}, {1, 12, 2, 128, 300, 0},
        {1, 4, 2, 128, 1, 0},   {1, 12, 2, 64, 64, 0}, {1, 2, 2, 128, 300, 0},
        {1, 12, 2, 16, 17, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i]);
}

/* head dims that are not powers of two or exceed the workgroup (two dims per invocation) */
static void test_attn_odd_head_dims(void **state)
{
    (void)state;
    static const Case cases[] = {
        {1, 4, 2, 256, 17, 0}, {1, 4, 2, 200, 64, 0}, {1, 6, 2, 48, 33, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i]);
}

static void test_attn_batch(void **state)
{
    (void)state;
    static const Case cases[] = {{2, 4, 2, 64, 17, 0}, {2, 12, 2, 16, 300, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i]);
}

/* -inf past the current position, as the exported decode graph's mask is: the masked tail
 * (whole chunks of the workgroup, or part of one) is skipped and must not change the result */
static void test_attn_inf_mask(void **state)
{
    (void)state;
    static const Case cases[] = {
        {1, 4, 2, 64, 300, 130}, {1, 12, 2, 128, 64, 1}, {1, 4, 2, 16, 17, 17},
        {1, 2, 2, 16, 300, 129}, {1, 12, 2, 64, 300, 300}, {2, 4, 2, 128, 17, 5},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i]);
}

/* flash-decoding: long caches split over workgroups (the Qwen2.5-1.5B shape Hq 12, Hkv 2, D 128,
 * T 1024 among them), random masks, and -inf tails that leave whole chunks masked (chunks of 64
 * at T 1024 with 12 heads, of 65 at T 2000 with 4 heads) or end inside a chunk */
static void test_attn_split(void **state)
{
    (void)state;
    static const Case cases[] = {
        {1, 12, 2, 128, 1024, 0}, {1, 4, 1, 64, 2000, 0},  {1, 12, 2, 128, 1024, 65},
        {1, 4, 1, 64, 2000, 1},   {1, 4, 1, 64, 2000, 1999}, {1, 2, 2, 16, 128, 0},
        {2, 4, 2, 32, 1024, 300}, {1, 12, 2, 64, 300, 0},   {1, 4, 1, 32, 1024, 1024},
        {1, 4, 2, 256, 300, 0},   {1, 4, 2, 200, 300, 150},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attn_gqa_shapes),
        cmocka_unit_test(test_attn_odd_head_dims),
        cmocka_unit_test(test_attn_batch),
        cmocka_unit_test(test_attn_inf_mask),
        cmocka_unit_test(test_attn_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
