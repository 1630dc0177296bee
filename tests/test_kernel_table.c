/* The kernel table (shaders/kernels.def) against what is built from it: every row's modules are
 * embedded (runtime/vulkan/vk_shaders.h) and nothing else is; every row is registered (its kind has
 * a family function: compiler/lower/kernels.c) but the device tests' modules, and every kind that
 * has a family has a row but the generated kernels'; every op's and fusion pattern's kind has a
 * family; keys and stems are unique, so kernel_pick and kernel_row find each row; every row's
 * source is embedded and every whole shader (.comp) is some row's. The push blocks (shaders/abi.h):
 * the C structs push their fields in the documented word order, each is as large as the shader's
 * push_constant block in the SPIR-V of every module of its family (every module but the device
 * tests'), and a value outside int32 is refused with a message naming it. The compiler's kernel
 * fingerprints (compiler/shader_fp.h) are hash64 of exactly the embedded modules. No device: the
 * tables only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/hash.h"
#include "compiler/fusion.h"
#include "compiler/lower/kernel_table.h"
#include "compiler/lower/kernels.h"
#include "compiler/ops.h"
#include "compiler/shader_fp.h"
#include "compiler/shader_src.h"
#include "runtime/vulkan/vk_shaders.h"
#include "tests/testutil.h"

/* The i-th storage variant of a row ("f32"), or NULL past the last; buf holds it. */
static const char *variant(const KernelRow *r, int i, char *buf, size_t n)
{
    const char *v = r->variants;
    for (int k = 0;; k++) {
        while (*v == ' ')
            v++;
        if (!*v) return NULL;
        size_t len = strcspn(v, " ");
        if (k == i) {
            snprintf(buf, n, "%.*s", (int)len, v);
            return buf;
        }
        v += len;
    }
}

/* The module a row builds for variant var ("conv2d_b.f16", or the stem for "none"). */
static void module_name(const KernelRow *r, const char *var, char *buf, size_t n)
{
    if (strcmp(var, "none") == 0)
        snprintf(buf, n, "%s", r->stem);
    else
        snprintf(buf, n, "%s.%s", r->stem, var);
}

static void test_rows_are_embedded(void **state)
{
    (void)state;
    int modules = 0;
    for (int i = 0; i < kernel_row_count; i++) {
        const KernelRow *r = &kernel_rows[i];
        char var[16], name[128];
        assert_non_null(variant(r, 0, var, sizeof var)); /* at least one variant */
        for (int v = 0; variant(r, v, var, sizeof var); v++, modules++) {
            module_name(r, var, name, sizeof name);
            if (!vk_spv_find(name)) fail_msg("row %s: module %s is not embedded", r->stem, name);
        }
    }
    /* the embedded table holds those modules and nothing else */
    assert_int_equal(modules, (int)vk_spv_count);
    for (size_t m = 0; m < vk_spv_count; m++) {
        const char *name = vk_spv_table[m].name, *dot = strchr(name, '.');
        char stem[128];
        snprintf(stem, sizeof stem, "%.*s", (int)(dot ? dot - name : (long)strlen(name)), name);
        const KernelRow *r = kernel_row(stem);
        if (!r) fail_msg("module %s is embedded but no row of the table builds it", name);
        bool listed = false;
        char var[16], want[128];
        for (int v = 0; variant(r, v, var, sizeof var) && !listed; v++) {
            module_name(r, var, want, sizeof want);
            listed = strcmp(want, name) == 0;
        }
        if (!listed) fail_msg("module %s is not a variant its row lists", name);
    }
}

/* The modules only the device tests (test_vk_core.c: fill, axpy) and the runtime (vk_warm.c's
 * spin, a pipelined step's feed in vk_backend.c) dispatch. */
static bool runtime_module(const char *stem)
{
    return strcmp(stem, "fill") == 0 || strcmp(stem, "axpy") == 0 || strcmp(stem, "spin") == 0 ||
           strcmp(stem, "feed") == 0;
}

static void test_rows_are_registered(void **state)
{
    (void)state;
    bool has_row[KK_COUNT] = {false};
    for (int i = 0; i < kernel_row_count; i++) {
        const KernelRow *r = &kernel_rows[i];
        KernelKind kind = r->key.kind;
        assert_true(kind > KK_NONE && kind < KK_COUNT);
        has_row[kind] = true;
        assert_ptr_equal(kernel_row(r->stem), r);
        assert_ptr_equal(kernel_pick(r->key), r); /* keys are unique */
        assert_int_equal(kernel_kind_of(r->stem), kind);
        /* registered, but the modules only the device tests (test_vk_core.c) and the runtime
         * dispatch: no lowering emits them */
        bool device_test = runtime_module(r->stem);
        if (kernel_has_family(r->stem) == device_test)
            fail_msg("row %s: %s", r->stem,
                     device_test ? "a device-test module has a family" : "no family function");
    }
    /* nothing else is registered: every kind with a family has a row (its kernels are the
     * table's), but the generated kernels, whose modules the plan carries */
    for (int k = KK_NONE + 1; k < KK_COUNT; k++) {
        const char *name = kernel_kind_name((KernelKind)k);
        assert_non_null(name);
        assert_int_equal(kernel_kind_of(name), k);
        if (kernel_family((KernelKind)k) && !has_row[k] && k != KK_elementwise)
            fail_msg("kind %s has a family but no row", name);
    }
    assert_null(kernel_family(KK_NONE));
    assert_false(kernel_has_family("no_such_stem"));
    /* what lowering asks for has a family */
    for (int op = 0; op < OP_COUNT; op++)
        if (op_info[op].kernel != KK_NONE && !kernel_family(op_info[op].kernel))
            fail_msg("op %s: kind %s has no family", op_info[op].id,
                     kernel_kind_name(op_info[op].kernel));
    for (int p = 0; p < fuse_pattern_count; p++)
        if (!kernel_family(fuse_patterns[p].kernel))
            fail_msg("fusion pattern %s: its kind has no family", fuse_patterns[p].name);
}

static void test_sources_are_embedded(void **state)
{
    (void)state;
    for (int i = 0; i < kernel_row_count; i++)
        if (!shader_src_find(kernel_rows[i].source))
            fail_msg("row %s: source %s is not embedded", kernel_rows[i].stem,
                     kernel_rows[i].source);
    for (size_t s = 0; s < shader_src_count; s++) {
        const char *name = shader_src_table[s].name;
        size_t n = strlen(name);
        if (n < 5 || strcmp(name + n - 5, ".comp") != 0) continue;
        bool used = false;
        for (int i = 0; i < kernel_row_count && !used; i++)
            used = strcmp(kernel_rows[i].source, name) == 0;
        if (!used) fail_msg("shaders/%s is a whole shader no row compiles", name);
    }
}

/* The push_constant block's size in module m's SPIR-V: the end of its last member (its offset
 * plus the member's size: 4 for a scalar, length times stride for an array); -1 when there is
 * none. */
static int spv_push_bytes(const VkSpv *m)
{
    enum {
        OP_TYPE_ARRAY = 28,
        OP_TYPE_STRUCT = 30,
        OP_TYPE_POINTER = 32,
        OP_CONSTANT = 43,
        OP_VARIABLE = 59,
        OP_DECORATE = 71,
        OP_MEMBER_DECORATE = 72,
        SC_PUSH = 9,
        DEC_ARRAY_STRIDE = 6,
        DEC_OFFSET = 35
    };
    const uint32_t *w = m->code;
    size_t n = m->size / 4;
    uint32_t var_type = 0, block = 0;
    for (size_t i = 5; i < n && w[i] >> 16; i += w[i] >> 16)
        if ((w[i] & 0xffffu) == OP_VARIABLE && w[i + 3] == SC_PUSH) var_type = w[i + 1];
    for (size_t i = 5; i < n && w[i] >> 16; i += w[i] >> 16)
        if ((w[i] & 0xffffu) == OP_TYPE_POINTER && w[i + 1] == var_type) block = w[i + 3];
    int last = -1;
    uint32_t member = 0;
    for (size_t i = 5; i < n && w[i] >> 16; i += w[i] >> 16)
        if ((w[i] & 0xffffu) == OP_MEMBER_DECORATE && w[i + 1] == block && w[i + 3] == DEC_OFFSET &&
            (int)w[i + 4] > last) {
            last = (int)w[i + 4];
            member = w[i + 2];
        }
    if (!block || last < 0) return -1;
    uint32_t type = 0, len_id = 0, len = 1, stride = 4;
    for (size_t i = 5; i < n && w[i] >> 16; i += w[i] >> 16)
        if ((w[i] & 0xffffu) == OP_TYPE_STRUCT && w[i + 1] == block) type = w[i + 2 + member];
    for (size_t i = 5; i < n && w[i] >> 16; i += w[i] >> 16) {
        if ((w[i] & 0xffffu) == OP_TYPE_ARRAY && w[i + 1] == type) len_id = w[i + 3];
        if ((w[i] & 0xffffu) == OP_DECORATE && w[i + 1] == type && w[i + 2] == DEC_ARRAY_STRIDE)
            stride = w[i + 3];
    }
    for (size_t i = 5; i < n && w[i] >> 16 && len_id; i += w[i] >> 16)
        if ((w[i] & 0xffffu) == OP_CONSTANT && w[i + 2] == len_id) len = w[i + 3];
    return last + (int)(len_id ? len * stride : 4);
}

/* The C struct a row's kernel pushes (compiler/lower/kernels.h), by its key; 0 for the device
 * tests' modules, which lowering never emits. */
static size_t push_struct_bytes(const KernelRow *r)
{
    switch (r->key.kind) {
    case KK_conv2d:
        if (r->key.impl == KI_GEMV || r->key.impl == KI_MV) return sizeof(MatmulConvPush);
        return r->key.impl == KI_DW ? sizeof(DwPush) : sizeof(ConvPush);
    case KK_matmul:
        if (r->key.impl == KI_CM || r->key.impl == KI_CMX || (r->key.flags & KF_RED))
            return sizeof(MatmulCmPush);
        return sizeof(MatmulPush);
    case KK_decode_attention:
        return r->key.impl == KI_BASE ? sizeof(AttnPush) : sizeof(FlashPush);
    case KK_attention_cache:
        return sizeof(AttnCachePush);
    case KK_pool2d:
        return sizeof(PoolPush);
    case KK_cat:
        return sizeof(CatPush);
    case KK_unary:
        return sizeof(UnaryPush);
    case KK_binary:
    case KK_add_relu:
    case KK_silu_mul:
        return sizeof(BinaryPush);
    case KK_where:
        return sizeof(WherePush);
    case KK_copy:
    case KK_transpose:
    case KK_expand:
    case KK_slice:
    case KK_depad:
    case KK_pack:
    case KK_cast:
        return sizeof(GatherPush);
    case KK_pad:
        return sizeof(WindowPush);
    case KK_embedding:
        return sizeof(EmbeddingPush);
    case KK_index_copy:
        return sizeof(IndexCopyPush);
    case KK_reduce:
        return sizeof(ReducePush);
    case KK_argmax:
        return sizeof(ArgmaxPush);
    case KK_softmax:
    case KK_masked_softmax:
        return sizeof(SoftmaxPush);
    case KK_rmsnorm:
        return sizeof(NormRowPush);
    case KK_layernorm:
        return r->key.impl == KI_STRIDED ? sizeof(LnTPush) : sizeof(NormRowPush);
    case KK_batchnorm:
        return sizeof(BatchnormPush);
    case KK_rope:
        return sizeof(RopePush);
    case KK_rope_cache:
        return sizeof(RopeCachePush);
    case KK_corrupt:
        return sizeof(CorruptPush);
    case KK_NONE:
    case KK_elementwise:
    case KK_fill:
    case KK_axpy:
    case KK_spin:
    case KK_feed:
    case KK_COUNT:
        break;
    }
    return 0;
}

/* Every row's modules, in every storage variant, declare the push block of the struct its
 * family fills; only the device tests' modules and the runtime's own (runtime_module) have none
 * of the compiler's. */
static void test_push_blocks_match_the_shaders(void **state)
{
    (void)state;
    int checked = 0;
    for (int i = 0; i < kernel_row_count; i++) {
        const KernelRow *r = &kernel_rows[i];
        size_t bytes = push_struct_bytes(r);
        bool device_test = runtime_module(r->stem);
        if (!bytes) {
            if (!device_test) fail_msg("row %s: no push struct", r->stem);
            continue;
        }
        char var[16], name[128];
        for (int v = 0; variant(r, v, var, sizeof var); v++) {
            module_name(r, var, name, sizeof name);
            int got = spv_push_bytes(vk_spv_find(name));
            if (got != (int)bytes)
                fail_msg("%s: push block of %d bytes, the C struct %zu", name, got, bytes);
            checked++;
        }
    }
    assert_int_equal(checked, (int)vk_spv_count - 8); /* all but fill's, axpy's 3 + 3, spin, feed */
}

/* A context whose errors name a node of a file (kc_error). */
typedef struct Ctx {
    Graph g;
    Node n;
    DiagList d;
    KernelCtx c;
    PlanKernel k;
} Ctx;

static void ctx_init(Ctx *x, const char *stem)
{
    memset(x, 0, sizeof *x);
    x->g.path = "m.json";
    x->n.name = "node_7";
    x->c = (KernelCtx){.g = &x->g, .anchor = &x->n, .d = &x->d};
    x->k.shader = stem;
}

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static void test_push_blocks_word_order(void **state)
{
    (void)state;
    Ctx x;
    ctx_init(&x, "conv2d");
    ConvPush pc = {.n = 1, .ph = -2, .rsrc = 3, .act = ACT_CLAMP, .act_lim = 0x4600u};
    assert_int_equal(kc_push_block(&x.c, &x.k, &pc, sizeof pc), ST_OK);
    assert_int_equal(x.k.npush, CONV2D_PUSH_WORDS);
    assert_int_equal(x.k.push[0], 1);
    assert_int_equal(x.k.push[12], (uint32_t)-2); /* ph */
    assert_int_equal(x.k.push[19], 3);            /* rsrc */
    assert_int_equal(x.k.push[20], ACT_CLAMP);
    assert_int_equal(x.k.push[25], 0x4600u); /* act_lim, last */

    ctx_init(&x, "matmul_cm");
    MatmulCmPush cp = {
        .mm = {.M = 5, .bdim = {1, 2, 3, 4}, .sb = {0, 0, 0, 9}, .alpha = 0.5f, .post = ACT_RELU},
        .mtiles = 6,
        .kchunk = 7};
    assert_int_equal(kc_push_block(&x.c, &x.k, &cp, sizeof cp), ST_OK);
    assert_int_equal(x.k.npush, MATMUL_CM_PUSH_WORDS);
    assert_int_equal(x.k.push[0], 5);
    assert_int_equal(x.k.push[6], 1); /* bdim[0] */
    assert_int_equal(x.k.push[9], 4);
    assert_int_equal(x.k.push[17], 9); /* sb[3] */
    assert_int_equal(x.k.push[21], bits_of(0.5f));
    assert_int_equal(x.k.push[23], ACT_RELU); /* post */
    assert_int_equal(x.k.push[24], 6);        /* mtiles */
    assert_int_equal(x.k.push[27], 7);        /* kchunk */

    ctx_init(&x, "conv2d_gemv_b");
    MatmulConvPush vp = {
        .mm = {.N = 3, .sa = {0, 0, 0, 32}, .act = ACT_CLAMP}, .y_bs = 64, .act_lim = 0x4600u};
    assert_int_equal(kc_push_block(&x.c, &x.k, &vp, sizeof vp), ST_OK);
    assert_int_equal(x.k.npush, MATMUL_CONV_PUSH_WORDS);
    assert_int_equal(x.k.push[1], 3);
    assert_int_equal(x.k.push[13], 32); /* sa[3] */
    assert_int_equal(x.k.push[20], ACT_CLAMP);
    assert_int_equal(x.k.push[24], 64);      /* y_bs */
    assert_int_equal(x.k.push[25], 0x4600u); /* act_lim, last */

    ctx_init(&x, "decode_attention");
    AttnPush pa = {.T = 64, .scale = 0.25f, .o_sh = 3, .ngroups = 8, .o_st = 11};
    assert_int_equal(kc_push_block(&x.c, &x.k, &pa, sizeof pa), ST_OK);
    assert_int_equal(x.k.npush, ATTN_PUSH_WORDS);
    assert_int_equal(x.k.push[0], 64);
    assert_int_equal(x.k.push[5], bits_of(0.25f));
    assert_int_equal(x.k.push[18], 3);  /* o_sh */
    assert_int_equal(x.k.push[21], 8);  /* ngroups */
    assert_int_equal(x.k.push[25], 11); /* o_st, last */

    ctx_init(&x, "pool2d");
    PoolPush pp = {.code = POOL_AVG, .divisor = -1, .total = 99};
    assert_int_equal(kc_push_block(&x.c, &x.k, &pp, sizeof pp), ST_OK);
    assert_int_equal(x.k.npush, POOL2D_PUSH_WORDS);
    assert_int_equal(x.k.push[16], POOL_AVG);
    assert_int_equal(x.k.push[18], (uint32_t)-1);
    assert_int_equal(x.k.push[19], 99);

    ctx_init(&x, "binary");
    BinaryPush pb = {
        .code = BN_MUL | BF_DENSE, .scalar = 2.0f, .shape = {[5] = 7}, .so = {[5] = 1}};
    assert_int_equal(kc_push_block(&x.c, &x.k, &pb, sizeof pb), ST_OK);
    assert_int_equal(x.k.npush, BINARY_PUSH_WORDS);
    assert_int_equal(x.k.push[1], BN_MUL | BF_DENSE);
    assert_int_equal(x.k.push[3], bits_of(2.0f));
    assert_int_equal(x.k.push[4 + KERNEL_DIMS - 1], 7);   /* shape[5] */
    assert_int_equal(x.k.push[BINARY_PUSH_WORDS - 1], 1); /* so[5], last */

    ctx_init(&x, "softmax");
    SoftmaxPush ps = {.code = SM_LOG | SM_SAFE, .yls = 3, .ms = {[0] = 4}, .ys = {[4] = 5}};
    assert_int_equal(kc_push_block(&x.c, &x.k, &ps, sizeof ps), ST_OK);
    assert_int_equal(x.k.npush, SOFTMAX_PUSH_WORDS);
    assert_int_equal(x.k.push[2], SM_LOG | SM_SAFE);
    assert_int_equal(x.k.push[5], 3);                      /* yls */
    assert_int_equal(x.k.push[6 + 2 * ROW_OUTER], 4);      /* ms[0] */
    assert_int_equal(x.k.push[SOFTMAX_PUSH_WORDS - 1], 5); /* ys[4], last */

    ctx_init(&x, "rope_cache");
    RopeCachePush pr = {.rope = {.total = 9, .sl = 1}, .mode = 1, .m = 6};
    assert_int_equal(kc_push_block(&x.c, &x.k, &pr, sizeof pr), ST_OK);
    assert_int_equal(x.k.npush, ROPE_CACHE_PUSH_WORDS);
    assert_int_equal(x.k.push[0], 9);
    assert_int_equal(x.k.push[ROPE_PUSH_WORDS - 1], 1); /* sl, rope's last */
    assert_int_equal(x.k.push[ROPE_PUSH_WORDS], 1);     /* mode */
    assert_int_equal(x.k.push[ROPE_CACHE_PUSH_WORDS - 1], 6);

    /* past PLAN_MAX_PUSH words: an error naming the node */
    assert_int_not_equal(kc_push_block(&x.c, &x.k, &pp, sizeof pp), ST_OK);
    assert_true(x.d.errors > 0);
    diag_free(&x.d);
}

static void test_words_out_of_range_are_refused(void **state)
{
    (void)state;
    Ctx x;
    ctx_init(&x, "conv2d");
    KcWords w = {0};
    assert_int_equal(kc_word(&w, 7), 7);
    assert_int_equal(kc_word(&w, INT32_MIN), INT32_MIN);
    assert_int_equal(kc_words_ok(&x.c, &x.k, &w), ST_OK);
    kc_word(&w, (int64_t)INT32_MAX + 1);
    kc_word(&w, -5000000000LL); /* the first is the one reported */
    assert_int_equal(kc_words_ok(&x.c, &x.k, &w), ST_BAD_INPUT);
    assert_int_equal(x.d.count, 1);
    char msg[512];
    diag_format(&x.d.items[0], msg, sizeof msg);
    assert_non_null(strstr(msg, "m.json"));
    assert_non_null(strstr(msg, "node_7"));
    assert_non_null(strstr(msg, "value 2147483648 does not fit the conv2d kernel's 32-bit"));
    diag_free(&x.d);

    /* an array field: every element kept as a word, the first out of range remembered */
    ctx_init(&x, "copy");
    GatherPush pg = {0};
    KcWords wa = {0};
    int64_t shape[KERNEL_DIMS] = {1, 2, 3, -4, 5, 6}, big[KERNEL_DIMS] = {0, 0, 1LL << 33};
    KC_WORDS(&wa, pg.oshape, shape);
    KC_WORDS(&wa, pg.istride, shape);
    assert_int_equal(kc_words_ok(&x.c, &x.k, &wa), ST_OK);
    assert_int_equal(pg.oshape[5], 6);
    assert_int_equal(pg.istride[3], -4);
    KC_WORDS(&wa, pg.ishape, big);
    assert_int_equal(kc_words_ok(&x.c, &x.k, &wa), ST_BAD_INPUT);
    diag_format(&x.d.items[0], msg, sizeof msg);
    assert_non_null(strstr(msg, "value 8589934592 does not fit the copy kernel's 32-bit"));
    diag_free(&x.d);
}

/* The compiler's fingerprint table is the runtime's embedded modules: the same names in the same
 * order, each hash64 of the very words the runtime gives Vulkan. */
static void test_fingerprints_are_the_modules(void **state)
{
    (void)state;
    assert_int_equal(shader_fp_count, vk_spv_count);
    assert_true(shader_fp_count > 100);
    for (size_t i = 0; i < vk_spv_count; i++) {
        assert_string_equal(shader_fp_table[i].name, vk_spv_table[i].name);
        assert_true(shader_fp_table[i].fp == hash64(vk_spv_table[i].code, vk_spv_table[i].size));
    }
}

TU_MAIN(test_rows_are_embedded, test_rows_are_registered, test_sources_are_embedded,
        test_push_blocks_match_the_shaders, test_push_blocks_word_order,
        test_words_out_of_range_are_refused, test_fingerprints_are_the_modules)
