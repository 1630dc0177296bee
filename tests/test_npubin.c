/* .npubin: real plans round-trip exactly (buffer and file); truncated, bit-flipped, corrupted
 * (with and without a valid checksum), newer-version and foreign files are refused with
 * ST_BAD_INPUT and a message naming the file, without crashes or leaks; kernel fingerprints
 * (format 4) round-trip, a kernel lowered for another build's shader is refused at load naming
 * it, and a file from before them loads with a warning. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <msgpack.h>

#include "common/fileio.h"
#include "common/hash.h"
#include "compiler/npubin.h"
#include "compiler/shader_fp.h"
#include "tests/npubin_util.h"
#include "tests/testutil.h"

static const char *const models[] = {
    "tests/models/mlp/model.json", "tests/models/convnet/model.json",
    "tests/models/qwen2_tiny/decode.json",
    "tests/models/qwen2_tiny/prefill.json", /* linear_glu: interleaved concat recipes */
};
#define NMODELS ((int)(sizeof models / sizeof models[0]))
#define PATH "plan.npubin"

/* fn applied to p's file image, as this version writes it. */
static unsigned char *mutated(const Plan *p, NuMutate fn, size_t *len)
{
    return nu_mutated(p, fn, PLAN_FORMAT_VERSION, len);
}

/* Fills what lower leaves empty so every field of the format carries data. */
static void enrich(Plan *p)
{
    assert_true(p->nkernels > 0 && p->nparts > 0);
    for (int i = 0; i < p->nkernels; i++) {
        PlanKernel *k = &p->kernels[i];
        k->npush = 1 + i % PLAN_MAX_PUSH;
        for (int w = 0; w < k->npush; w++)
            k->push[w] = (uint32_t)(0x9e3779b9u * (unsigned)(w + i));
        k->nspec = i % (PLAN_MAX_SPEC + 1);
        for (int w = 0; w < k->nspec; w++)
            k->spec[w] = 0xffffffffu - (uint32_t)w;
    }
    p->tier = TIER_NV_COOPMAT;
    static const char json[] = "{\"nodes\": [], \"note\": \"embedded IR\"}";
    p->ir_json = arena_strdup(&p->arena, json);
    p->ir_json_len = sizeof json - 1;
    p->tuning = arena_strdup(&p->arena, "cm.tile=128 attn.splits=1"); /* the optional keys */
    p->tuning_env = arena_strdup(&p->arena, "NPU_ATTN_SPLITS");
    /* lower gives these fixtures NPU kernels only, in one partition: move the last kernel onto
     * the CPU in a partition of its own, with a transfer (lower allocates nkernels+1 parts) */
    if (p->nkernels >= 2 && p->nparts == 1) {
        PlanKernel *k = &p->kernels[p->nkernels - 1];
        k->target = KT_CPU;
        k->part = 1;
        p->parts[0].nkernels--;
        p->parts[1] = (PlanPart){.target = KT_CPU, .first_kernel = p->nkernels - 1, .nkernels = 1};
        p->parts[1].in = arena_alloc(&p->arena, sizeof(int));
        p->parts[1].in[0] = k->args[0];
        p->parts[1].nin = 1;
        p->nparts = 2;
    }
    PlanPart *pp = &p->parts[p->nparts - 1];
    pp->out = arena_alloc(&p->arena, 2 * sizeof(int));
    pp->out[0] = p->ntensors - 1;
    pp->out[1] = 0;
    pp->nout = 2;
    p->model_name = NULL; /* nil strings round-trip too */
    /* a fold recipe (lower leaves room for one more recipe): the file is format v3, so a header
     * that says v2 or v1 is refused too */
    static const char *const fold_nodes[] = {"index", "unsqueeze"};
    PlanRecipe *r = &p->recipes[p->nrecipes++];
    *r = (PlanRecipe){.kind = RECIPE_FOLD, .nodes = (const char **)fold_nodes, .nnodes = 2};
    r->out_w = p->ntensors - 1;
    r->out_b = r->conv_w = r->conv_b = r->gamma = r->beta = r->mean = r->var = -1;
}

/* Decoding must fail with ST_BAD_INPUT, no plan, and a first message that names the file and
 * contains `want` (NULL: anything). */
static void expect_bad(const unsigned char *buf, size_t len, const char *want)
{
    DiagList d = {0};
    Plan *p = (Plan *)1;
    Status st = npubin_decode(PATH, buf, len, &p, &d);
    if (st != ST_BAD_INPUT || (want && (d.count < 1 || !strstr(d.items[0].msg, want)))) {
        fprintf(stderr, "expected failure with \"%s\", got status %d\n", want ? want : "", (int)st);
        diag_print(&d, stderr);
    }
    assert_int_equal(st, ST_BAD_INPUT);
    assert_null(p);
    assert_true(d.count >= 1 && d.errors >= 1);
    assert_non_null(d.items[0].file);
    assert_string_equal(d.items[0].file, PATH);
    if (want) assert_non_null(strstr(d.items[0].msg, want));
    diag_free(&d);
}

static uint64_t rng_state = 0x853c49e6748fea9bULL;
static uint32_t rnd(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng_state >> 33);
}

static void test_roundtrip(void **state)
{
    (void)state;
    int recipes = 0, fusions = 0, cpu = 0, aliases = 0, weights = 0, nullkeys = 0, concat = 0,
        offsets = 0, blocks = 0;
    for (int m = 0; m < NMODELS; m++) {
        for (int rich = 0; rich < 2; rich++) {
            Plan *p = nu_build_plan(models[m]);
            if (rich) enrich(p);
            recipes += p->nrecipes;
            fusions += p->nfusions;
            weights += p->nweights;
            for (int i = 0; i < p->nkernels; i++)
                cpu += p->kernels[i].target == KT_CPU;
            for (int i = 0; i < p->nrecipes; i++) {
                concat += p->recipes[i].kind == RECIPE_CONCAT;
                blocks += p->recipes[i].block > 0;
            }
            for (int i = 0; i < p->ntensors; i++) {
                offsets += p->tensors[i].view_off > 0;
                aliases += p->tensors[i].alias_of >= 0;
                nullkeys += p->tensors[i].weight_key == NULL;
            }
            size_t len;
            unsigned char *buf = nu_encode(p, &len);
            Plan *q = NULL;
            DiagList d = {0};
            Status st = npubin_decode(PATH, buf, len, &q, &d);
            if (st != ST_OK) diag_print(&d, stderr);
            assert_int_equal(st, ST_OK);
            assert_int_equal(plan_equal(p, q), 1);
            /* the decoded plan encodes to the same bytes */
            size_t len2;
            unsigned char *buf2 = nu_encode(q, &len2);
            assert_int_equal(len, len2);
            assert_memory_equal(buf, buf2, len);
            plan_free(q);
            free(buf2);
            /* through a file */
            char path[64];
            snprintf(path, sizeof path, "/tmp/npubin_test_%ld_%d.npubin", (long)getpid(), m);
            assert_int_equal(npubin_write(p, path, &d), ST_OK);
            assert_int_equal(npubin_read(path, &q, &d), ST_OK);
            assert_int_equal(plan_equal(p, q), 1);
            plan_free(q);
            remove(path);
            /* plan_equal can see a difference: the round trip is not vacuous */
            q = NULL;
            assert_int_equal(npubin_decode(PATH, buf, len, &q, &d), ST_OK);
            q->tensors[q->ntensors - 1].bytes++;
            assert_int_equal(plan_equal(p, q), 0);
            plan_free(q);
            free(buf);
            assert_int_equal(d.count, 0);
            diag_free(&d);
            plan_free(p);
        }
    }
    /* the plans exercise every part of the format */
    assert_true(recipes > 0);
    assert_true(concat > 0);
    assert_true(blocks > 0);
    assert_true(offsets > 0);
    assert_true(fusions > 0);
    assert_true(weights > 0);
    assert_true(aliases > 0);
    assert_true(nullkeys > 0);
    assert_true(cpu > 0);
}

static void test_truncated(void **state)
{
    (void)state;
    Plan *p = nu_build_plan(models[0]);
    enrich(p);
    size_t len;
    unsigned char *buf = nu_encode(p, &len);
    for (size_t n = 0; n < len; n++) {
        unsigned char *cut = malloc(n ? n : 1); /* exactly n bytes, so ASan sees overreads */
        assert_non_null(cut);
        memcpy(cut, buf, n);
        expect_bad(cut, n, n == 0 ? "empty" : NULL);
        free(cut);
    }
    /* the payload cut at every length behind a header that agrees with it: msgpack validation */
    size_t plen = len - NPUBIN_HEADER_SIZE;
    for (size_t n = 0; n < plen; n++) {
        size_t wl;
        unsigned char *w = nu_wrap(buf + NPUBIN_HEADER_SIZE, n, PLAN_FORMAT_VERSION, &wl);
        expect_bad(w, wl, NULL);
        free(w);
    }
    /* appended bytes */
    unsigned char *longer = malloc(len + 1);
    memcpy(longer, buf, len);
    longer[len] = 0;
    expect_bad(longer, len + 1, "unexpected bytes");
    free(longer);
    free(buf);
    plan_free(p);
}

static void test_bitflips(void **state)
{
    (void)state;
    Plan *p = nu_build_plan(models[0]);
    enrich(p);
    size_t len;
    unsigned char *buf = nu_encode(p, &len);
    for (int bit = 0; bit < NPUBIN_HEADER_SIZE * 8; bit++) {
        buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        expect_bad(buf, len, NULL);
        buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
    }
    size_t plen = len - NPUBIN_HEADER_SIZE;
    for (int i = 0; i < 400; i++) {
        size_t bit = rnd() % (plen * 8);
        unsigned char *b = &buf[NPUBIN_HEADER_SIZE + bit / 8];
        *b ^= (unsigned char)(1u << (bit % 8));
        expect_bad(buf, len, "checksum mismatch");
        *b ^= (unsigned char)(1u << (bit % 8));
    }
    free(buf);
    plan_free(p);
}

/* Corruptions behind a recomputed checksum reach the msgpack and plan validation: each must be
 * accepted as a valid plan or refused, never crash, leak or trip a sanitizer. */
static void test_corrupt_resealed(void **state)
{
    (void)state;
    int refused = 0, total = 0;
    for (int m = 0; m < NMODELS; m++) {
        Plan *p = nu_build_plan(models[m]);
        enrich(p);
        size_t len;
        unsigned char *buf = nu_encode(p, &len);
        size_t plen = len - NPUBIN_HEADER_SIZE;
        unsigned char *w = malloc(len);
        int iters = m >= 2 ? 300 : 1500;
        for (int it = 0; it < iters; it++) {
            memcpy(w, buf, len);
            int nflips = 1 + (int)(rnd() % 4);
            for (int k = 0; k < nflips; k++) {
                size_t at = NPUBIN_HEADER_SIZE + rnd() % plen;
                if (rnd() % 2)
                    w[at] ^= (unsigned char)(1u << (rnd() % 8));
                else
                    w[at] = (unsigned char)rnd();
            }
            nu_reseal(w, len);
            DiagList d = {0};
            Plan *q = NULL;
            Status st = npubin_decode(PATH, w, len, &q, &d);
            assert_true(st == ST_OK || st == ST_BAD_INPUT);
            if (st == ST_OK) {
                assert_non_null(q);
                /* whatever was accepted is a plan the writer accepts too */
                unsigned char *again = nu_encode(q, &(size_t){0});
                free(again);
                plan_free(q);
            } else {
                assert_null(q);
                assert_string_equal(d.items[0].file, PATH);
                refused++;
            }
            total++;
            diag_free(&d);
        }
        free(w);
        free(buf);
        plan_free(p);
    }
    print_message("resealed corruptions: %d of %d refused\n", refused, total);
    assert_true(refused > total / 4);
}

static void test_version(void **state)
{
    (void)state;
    Plan *p = nu_build_plan(models[0]);
    size_t len;
    unsigned char *buf = nu_encode(p, &len);
    nu_put_le(buf + 8, PLAN_FORMAT_VERSION + 1, 4);
    char want[96];
    snprintf(want, sizeof want, "newer npu-explore (format v%d, this build reads v%d)",
             PLAN_FORMAT_VERSION + 1, PLAN_FORMAT_VERSION);
    expect_bad(buf, len, want);
    nu_put_le(buf + 8, 0x7fffffff, 4);
    expect_bad(buf, len, "format v2147483647");
    nu_put_le(buf + 8, 0, 4);
    expect_bad(buf, len, "version 0");
    /* a newer version is reported even when the rest of the header is not what we know */
    unsigned char head[12];
    memcpy(head, NPUBIN_MAGIC, 8);
    nu_put_le(head + 8, PLAN_FORMAT_VERSION + 1, 4);
    expect_bad(head, sizeof head, "newer");
    free(buf);
    plan_free(p);
}

static void test_foreign_files(void **state)
{
    (void)state;
    DiagList d = {0};
    Plan *p = (Plan *)1;
    char path[64];
    snprintf(path, sizeof path, "/tmp/npubin_empty_%ld.npubin", (long)getpid());
    assert_int_equal(file_write_atomic(path, "", 0, &d), ST_OK);
    assert_int_equal(npubin_read(path, &p, &d), ST_BAD_INPUT);
    assert_null(p);
    assert_string_equal(d.items[0].file, path);
    assert_non_null(strstr(d.items[0].msg, "empty file"));
    remove(path);
    diag_clear(&d);

    const char *json = models[0];
    assert_int_equal(npubin_read(json, &p, &d), ST_BAD_INPUT);
    assert_null(p);
    assert_string_equal(d.items[0].file, json);
    assert_non_null(strstr(d.items[0].msg, "not an .npubin"));
    diag_clear(&d);

    assert_int_equal(npubin_read("/nonexistent/x.npubin", &p, &d), ST_BAD_INPUT);
    assert_string_equal(d.items[0].file, "/nonexistent/x.npubin");
    diag_clear(&d);
    assert_int_equal(npubin_read("tests", &p, &d), ST_BAD_INPUT);
    diag_free(&d);
}

/* Hand-made payloads: the structural pre-scan bounds what msgpack-c allocates. */
static void test_hostile_payloads(void **state)
{
    (void)state;
    static const struct {
        const char *bytes;
        size_t n;
        const char *want;
    } cases[] = {
        {"", 0, "ends inside"},
        {"\xdd\xff\xff\xff\xff\xc0\xc0", 7, "declares 4294967295 items"},
        {"\xdf\xff\xff\xff\xff\xc0\xc0", 7, "declares"},
        {"\xdb\xff\xff\xff\xf0", 5, "runs past the end"},
        {"\xc6\x00\x00\x00\x09xx", 7, "runs past the end"},
        {"\xc1", 1, "not a msgpack type"},
        {"\x80\xc0", 2, "stray bytes"},
        {"\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\xc0", 19,
         "deeper"},
        {"\x90", 1, "not a map"},
        {"\x80", 1, "missing"},
        {"\x81\x01\x02", 3, "not a string"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len;
        unsigned char *w = nu_wrap(cases[i].bytes, cases[i].n, PLAN_FORMAT_VERSION, &len);
        expect_bad(w, len, cases[i].want);
        free(w);
    }
}

/* ---- targeted corruptions of a valid plan, applied to the msgpack object tree ---- */

static int64_t ntensors(msgpack_object *r)
{
    return nu_key(r, "tensors")->via.array.size;
}

static void m_missing(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_rename(r, "kernels", "kernelz");
}
static void m_dup(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_rename(r, "weights", "channel_tile");
}
static void m_type(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_str(nu_key(r, "channel_tile"), "32", 2);
}
static void m_big(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_int(nu_key(r, "channel_tile"), (int64_t)1 << 40);
}
static void m_tile0(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_int(nu_key(r, "channel_tile"), 0);
}
static void m_arg(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_int(nu_elem(nu_rec(r, "kernels", 0, "args"), 0), ntensors(r));
}
static void m_arg_neg(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_int(nu_elem(nu_rec(r, "kernels", 0, "args"), 0), -2);
}
static void m_nin(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_int(nu_rec(r, "kernels", 0, "nin"), nu_rec(r, "kernels", 0, "args")->via.array.size + 1);
}
static void m_rank(msgpack_object *r, msgpack_zone *z)
{
    nu_set_ints(nu_rec(r, "tensors", 0, "shape"), z, NPU_MAX_RANK + 1, 1);
    nu_set_ints(nu_rec(r, "tensors", 0, "pshape"), z, NPU_MAX_RANK + 1, 1);
}
static void m_pshape(msgpack_object *r, msgpack_zone *z)
{
    nu_set_ints(nu_rec(r, "tensors", 0, "pshape"), z, NPU_MAX_RANK, 1);
}
static void m_negdim(msgpack_object *r, msgpack_zone *z)
{
    nu_set_ints(nu_rec(r, "tensors", 0, "shape"), z, 1, -3);
    nu_set_ints(nu_rec(r, "tensors", 0, "pshape"), z, 1, 4);
}
static void m_push(msgpack_object *r, msgpack_zone *z)
{
    nu_set_ints(nu_rec(r, "kernels", 0, "push"), z, PLAN_MAX_PUSH + 1, 7);
}
static void m_spec(msgpack_object *r, msgpack_zone *z)
{
    nu_set_ints(nu_rec(r, "kernels", 0, "spec"), z, PLAN_MAX_SPEC + 1, 7);
}
static void m_push_neg(msgpack_object *r, msgpack_zone *z)
{
    nu_set_ints(nu_rec(r, "kernels", 0, "push"), z, 2, -1);
}
static void m_groups(msgpack_object *r, msgpack_zone *z)
{
    nu_set_ints(nu_rec(r, "kernels", 0, "groups"), z, 2, 1);
}
static void m_dtype(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_str(nu_rec(r, "tensors", 0, "dtype"), "F99", 3);
}
static void m_op(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_str(nu_rec(r, "kernels", 0, "op"), "NOPE", 4);
}
static void m_kind_int(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_int(nu_rec(r, "tensors", 0, "kind"), 0);
}
static void m_alias(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_int(nu_rec(r, "tensors", 0, "alias_of"), ntensors(r));
}
static void m_alias_self(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_int(nu_rec(r, "tensors", 1, "alias_of"), 1);
}
static void m_offset(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    msgpack_object *t = nu_key(r, "tensors");
    for (uint32_t i = 0; i < t->via.array.size; i++)
        nu_set_int(nu_key(nu_elem(t, i), "offset"), INT64_MAX);
}
static void m_nul(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_str(nu_rec(r, "tensors", 0, "name"), "a\0b", 3);
}
static void m_nilname(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_rec(r, "tensors", 0, "name")->type = MSGPACK_OBJECT_NIL;
}
static void m_notmap(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_int(nu_elem(nu_key(r, "tensors"), 0), 5);
}
static void m_input(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_int(nu_elem(nu_key(r, "inputs"), 0), -2);
}
static void m_weight(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_int(nu_elem(nu_key(r, "weights"), 0), -1);
}
static void m_fusion(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_int(nu_rec(r, "kernels", 0, "fusion"), nu_key(r, "fusions")->via.array.size);
}
static void m_part(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_int(nu_rec(r, "parts", 0, "first_kernel"), nu_key(r, "kernels")->via.array.size + 1);
}
static void m_kpart(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_int(nu_rec(r, "kernels", 0, "part"), nu_key(r, "parts")->via.array.size);
}
static void m_level(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_int(nu_rec(r, "kernels", 0, "level"), nu_key(r, "nlevels")->via.i64 + 1);
}
static void m_fkernel(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_int(nu_rec(r, "fusions", 0, "kernel"), -5);
}
static void m_compute(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_str(nu_key(r, "compute"), "I64", 3);
}
static void m_tier(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_str(nu_key(r, "tier"), "nv-tensor", 9);
}
/* A plan written before the kernel tiers: no "tier" nu_key (renamed to an unknown one). */
static void m_notier(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_rename(r, "tier", "tiez");
}
static void m_irjson(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_str(nu_key(r, "ir_json"), "{}", 2);
}
static void m_tiny(msgpack_object *r, msgpack_zone *z)
{
    msgpack_object *t = nu_key(r, "tensors");
    t->via.array.size = 1000;
    t->via.array.ptr = msgpack_zone_malloc(z, sizeof(msgpack_object) * 1000);
    for (int i = 0; i < 1000; i++) {
        t->via.array.ptr[i].type = MSGPACK_OBJECT_MAP;
        t->via.array.ptr[i].via.map.size = 0;
    }
}
static void m_partout(msgpack_object *r, msgpack_zone *z)
{
    nu_set_ints(nu_rec(r, "parts", 0, "out"), z, 3, -1);
}

/* The first tensor that views its base at an offset (qwen2_tiny decode: a linear_concat part). */
static msgpack_object *offset_view(msgpack_object *r)
{
    msgpack_object *t = nu_key(r, "tensors");
    for (uint32_t i = 0; i < t->via.array.size; i++)
        if (nu_key(nu_elem(t, i), "view_offset")->via.i64 > 0) return nu_elem(t, i);
    fail_msg("no tensor with a view offset");
    return NULL;
}
static void m_viewoff(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_int(nu_key(offset_view(r), "view_offset"), (int64_t)1 << 40);
}
static void m_viewoff_base(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_int(nu_key(offset_view(r), "alias_of"), -1); /* an offset without a base */
}
static msgpack_object *concat_recipe(msgpack_object *r)
{
    msgpack_object *t = nu_key(r, "recipes");
    assert_true(t->via.array.size > 0);
    return nu_elem(t, 0);
}
static void m_src(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_int(nu_elem(nu_key(concat_recipe(r), "src"), 0), -1);
}
static void m_nsrc(msgpack_object *r, msgpack_zone *z)
{
    nu_set_ints(nu_key(concat_recipe(r), "src"), z, RECIPE_MAX_SRC + 1, 0);
}

static void m_version1(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_drop_key(r, "tensors", "view_offset");
    nu_drop_key(r, "recipes", "src");
}

/* Adds keys this version does not know (a later version's additions): they are ignored. */
static void m_unknown(msgpack_object *r, msgpack_zone *z)
{
    uint32_t n = r->via.map.size;
    msgpack_object_kv *kv = msgpack_zone_malloc(z, sizeof *kv * (n + 2));
    memcpy(kv, r->via.map.ptr, sizeof *kv * n);
    nu_set_str(&kv[n].key, "spirv", 5);
    nu_set_ints(&kv[n].val, z, 3, 42);
    nu_set_str(&kv[n + 1].key, "zz_future", 9);
    kv[n + 1].val.type = MSGPACK_OBJECT_MAP;
    kv[n + 1].val.via.map.size = 1;
    kv[n + 1].val.via.map.ptr = msgpack_zone_malloc(z, sizeof *kv);
    nu_set_int(&kv[n + 1].val.via.map.ptr[0].key, 1); /* non-string keys below are not ours */
    nu_set_str(&kv[n + 1].val.via.map.ptr[0].val, "x", 1);
    r->via.map.ptr = kv;
    r->via.map.size = n + 2;
}

static void test_invalid_fields(void **state)
{
    (void)state;
    static const struct {
        NuMutate fn;
        const char *want;
    } cases[] = {
        {m_missing, "key 'kernels': missing"},
        {m_dup, "key 'channel_tile': appears twice"},
        {m_type, "key 'channel_tile': expected an integer, found a string"},
        {m_big, "out of range"},
        {m_tile0, "channel_tile 0"},
        {m_arg, "args[0] = "},
        {m_arg_neg, "args[0] = -2 is not a tensor id"},
        {m_nin, "inputs but"},
        {m_rank, "tensors[0]: key 'shape': 9 elements (at most 8)"},
        {m_pshape, "key 'pshape'"},
        {m_negdim, "negative dimension"},
        {m_push, "key 'push': 33 elements (at most 32)"},
        {m_spec, "key 'spec': 17 elements (at most 16)"},
        {m_push_neg, "key 'push': -1 out of range"},
        {m_groups, "expected 3"},
        {m_dtype, "unknown name 'F99'"},
        {m_op, "unknown name 'NOPE'"},
        {m_kind_int, "key 'kind': expected a name, found an integer"},
        {m_alias, "alias_of"},
        {m_alias_self, "alias_of = 1"},
        {m_offset, "outside the"},
        {m_nul, "NUL byte"},
        {m_nilname, "key 'name': expected a string, found nil"},
        {m_notmap, "element 0 is an integer, not a map"},
        {m_input, "inputs[0] = -2"},
        {m_weight, "weights[0] = -1"},
        {m_fusion, "fusion"},
        {m_part, "parts[0]: kernels"},
        {m_kpart, "part "},
        {m_level, "level"},
        {m_fkernel, "kernel -5"},
        {m_compute, "compute dtype"},
        {m_tier, "key 'tier': unknown name 'nv-tensor'"},
        {m_irjson, "key 'ir_json': expected binary data or nil"},
        {m_tiny, "element 0 has 0 keys, fewer than the 12"},
        {m_viewoff, "view offset"},
        {m_viewoff_base, "view offset"},
        {m_src, "recipes[0].src[0] = -1"},
        {m_nsrc, "src': 9 sources"},
        {m_partout, "parts[0].out[0] = -1"},
    };
    Plan *p = nu_build_plan(models[2]); /* qwen2_tiny decode: views at offsets, concat recipes */
    enrich(p);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len;
        unsigned char *w = mutated(p, cases[i].fn, &len);
        expect_bad(w, len, cases[i].want);
        free(w);
    }
    /* unknown keys are ignored */
    size_t len;
    unsigned char *w = mutated(p, m_unknown, &len);
    Plan *q = NULL;
    DiagList d = {0};
    assert_int_equal(npubin_decode(PATH, w, len, &q, &d), ST_OK);
    assert_int_equal(plan_equal(p, q), 1);
    plan_free(q);
    free(w);
    /* a plan from before the tiers reads as portable */
    assert_int_equal(p->tier, TIER_NV_COOPMAT);
    w = mutated(p, m_notier, &len);
    assert_int_equal(npubin_decode(PATH, w, len, &q, &d), ST_OK);
    assert_int_equal(q->tier, TIER_PORTABLE);
    plan_free(q);
    free(w);
    diag_free(&d);
    plan_free(p);
}

/* An interleaved concat's block (linear_glu, qwen2_tiny prefill): written only when not 0 (a
 * plan without one is the bytes of before), read back, and refused when negative or on a
 * bn_fold recipe. */
static void m_block_neg(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_int(nu_key(concat_recipe(r), "block"), -16);
}
static void m_block_kind(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_str(nu_key(concat_recipe(r), "kind"), "bn_fold", 7);
}
static void test_recipe_block(void **state)
{
    (void)state;
    Plan *p = nu_build_plan(models[3]);
    assert_true(p->nrecipes > 0 && p->recipes[0].block == 16);
    static const struct {
        NuMutate fn;
        const char *want;
    } cases[] = {{m_block_neg, "key 'block': -16"}, {m_block_kind, "key 'block': 16"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len;
        unsigned char *w = mutated(p, cases[i].fn, &len);
        expect_bad(w, len, cases[i].want);
        free(w);
    }
    plan_free(p);
    /* no block: no key */
    p = nu_build_plan(models[2]);
    size_t len;
    unsigned char *buf = nu_encode(p, &len);
    for (size_t i = 0; i + 5 <= len; i++)
        assert_false(memcmp(buf + i, "block", 5) == 0);
    free(buf);
    plan_free(p);
}

/* A version 1 file (no view offsets, no recipe sources) still reads: as the same plan when it
 * has neither. */
static void test_version1_reads(void **state)
{
    (void)state;
    Plan *p = nu_build_plan(models[1]);   /* convnet: bn_fold recipes, no concat */
    for (int k = 0; k < p->nkernels; k++) /* as a build before the fingerprints lowered it */
        p->kernels[k].fingerprint = 0;
    size_t len;
    unsigned char *w = nu_mutated(p, m_version1, 1, &len);
    Plan *q = NULL;
    DiagList d = {0};
    Status st = npubin_decode(PATH, w, len, &q, &d);
    if (st != ST_OK) diag_print(&d, stderr);
    assert_int_equal(st, ST_OK);
    assert_int_equal(plan_equal(p, q), 1);
    assert_int_equal(q->file_version, 1);
    plan_free(q);
    free(w);
    /* the same keys missing in a version 2 file are an error */
    w = mutated(p, m_version1, &len);
    expect_bad(w, len, "fewer than the");
    free(w);
    diag_free(&d);
    plan_free(p);
}

/* The writer refuses a plan it could not read back. */
static void test_encode_refuses_invalid(void **state)
{
    (void)state;
    Plan *p = nu_build_plan(models[0]);
    p->kernels[0].args[0] = p->ntensors;
    unsigned char *buf = (unsigned char *)1;
    size_t len = 1;
    DiagList d = {0};
    assert_int_equal(npubin_encode(p, &buf, &len, &d), ST_INTERNAL);
    assert_null(buf);
    assert_int_equal(len, 0);
    assert_non_null(strstr(d.items[0].msg, "is not a tensor id"));
    diag_clear(&d);
    p->kernels[0].args[0] = 0;
    p->kernels[0].npush = PLAN_MAX_PUSH + 1;
    assert_int_equal(npubin_write(p, "/tmp/npubin_never_written.npubin", &d), ST_INTERNAL);
    assert_int_equal(file_exists("/tmp/npubin_never_written.npubin"), 0);
    diag_free(&d);
    plan_free(p);
}

/* ---- kernel fingerprints (format 4) ---- */

static bool builtin(const Plan *p, int k)
{
    return plan_kernel_builtin(p, &p->kernels[k]);
}

/* Lowering records each built-in NPU kernel's module fingerprint (none for CPU and generated
 * kernels); a plan with one is format 4; the file keeps them and verifies against this build. */
static void test_fingerprint_roundtrip(void **state)
{
    (void)state;
    for (int m = 0; m < NMODELS; m++) {
        Plan *p = nu_build_plan(models[m]);
        int nb = 0, first = -1;
        for (int k = 0; k < p->nkernels; k++) {
            char mod[128];
            uint64_t fp = shader_fp_kernel(p, &p->kernels[k], mod, sizeof mod);
            assert_true(p->kernels[k].fingerprint == fp);
            assert_true(builtin(p, k) == (fp != 0)); /* the build has every module lowered for */
            if (builtin(p, k) && first < 0) first = k;
            nb += builtin(p, k);
        }
        assert_true(nb > 0);
        assert_int_equal(plan_format_version(p), 4);
        size_t len;
        unsigned char *buf = nu_encode(p, &len);
        assert_int_equal(buf[8], 4);
        Plan *q = NULL;
        DiagList d = {0};
        assert_int_equal(npubin_decode(PATH, buf, len, &q, &d), ST_OK);
        assert_int_equal(q->file_version, 4);
        assert_int_equal(plan_equal(p, q), 1);
        assert_int_equal(npubin_verify(q, PATH, true, &d), ST_OK);
        assert_int_equal(npubin_verify(p, PATH, true, &d), ST_OK); /* compiled here */
        assert_int_equal(d.count, 0);
        for (int k = 0; k < q->nkernels; k++)
            assert_false(npubin_kernel_stale(q, k));
        q->kernels[first].fingerprint ^= 1; /* plan_equal compares them */
        assert_int_equal(plan_equal(p, q), 0);
        plan_free(q);
        free(buf);
        plan_free(p);
    }
}

/* The kernels m_fp gives another build's fingerprint, -1 after the last. */
static int stale_at[3];
static void m_fp(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    for (int i = 0; stale_at[i] >= 0; i++)
        nu_rec(r, "kernels", (uint32_t)stale_at[i], "fingerprint")->via.u64 ^= 0x5a5aull << 20;
}
/* A version 4 file's kernel without the key: lowered for no module the reader can compare. */
static void m_fp_gone(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_drop_key_of(nu_elem(nu_key(r, "kernels"), (uint32_t)stale_at[0]), "fingerprint");
}
/* A stem this build has no module for. */
static void m_fp_stem(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_set_str(nu_rec(r, "kernels", (uint32_t)stale_at[0], "shader"), "conv2d_gone", 11);
}

/* Decodes w (a well-formed file) and verifies it strictly: ST_BAD_INPUT with one error naming
 * the file and containing each of want[0..n); then, not strict, the same text as a warning. */
static void expect_stale(unsigned char *w, size_t len, const char *const *want, int n)
{
    Plan *q = NULL;
    DiagList d = {0};
    assert_int_equal(npubin_decode(PATH, w, len, &q, &d), ST_OK);
    assert_int_equal(npubin_verify(q, PATH, true, &d), ST_BAD_INPUT);
    if (d.count != 1) diag_print(&d, stderr);
    assert_int_equal(d.count, 1);
    assert_int_equal(d.errors, 1);
    assert_string_equal(d.items[0].file, PATH);
    for (int i = 0; i < n; i++) {
        if (!strstr(d.items[0].msg, want[i])) fail_msg("'%s' lacks '%s'", d.items[0].msg, want[i]);
    }
    char *msg = strdup(d.items[0].msg);
    diag_clear(&d);
    assert_int_equal(npubin_verify(q, PATH, false, &d), ST_OK);
    assert_int_equal(d.count, 1);
    assert_int_equal(d.items[0].level, DIAG_WARNING);
    assert_string_equal(d.items[0].msg, msg);
    free(msg);
    diag_free(&d);
    plan_free(q);
    free(w);
}

/* A file whose kernel was lowered for another build's module (its fingerprint differs, or this
 * build has no such module) reads, and is refused where it is loaded, naming the kernel. */
static void test_fingerprint_mismatch(void **state)
{
    (void)state;
    Plan *p = nu_build_plan(models[1]); /* convnet: conv kernels, f16 storage */
    int a = -1, b = -1;
    for (int k = 0; k < p->nkernels; k++)
        if (builtin(p, k)) {
            if (a < 0 && strncmp(p->kernels[k].shader, "conv2d", 6) == 0) a = k;
            b = k;
        }
    assert_true(a >= 0 && b > a);
    char mod[128], kern[320], theirs[96], mine[96], fix[256];
    uint64_t fp = shader_fp_kernel(p, &p->kernels[a], mod, sizeof mod);
    assert_non_null(strstr(mod, ".f16"));
    snprintf(kern, sizeof kern,
             "kernel %d '%s' (module %s) was compiled against another build's "
             "shader",
             a, p->kernels[a].shader, mod);
    snprintf(theirs, sizeof theirs, "(fingerprint %016llx vs this build's %016llx)",
             (unsigned long long)(fp ^ 0x5a5aull << 20), (unsigned long long)fp);
    snprintf(fix, sizeof fix,
             ": recompile it with 'npu-explore compile %s -o %s --dtype fp16 --tier %s'", models[1],
             PATH, plan_tier_name(p->tier));
    size_t len;
    stale_at[0] = a;
    stale_at[1] = -1;
    unsigned char *w = mutated(p, m_fp, &len);
    Plan *q = NULL;
    DiagList d = {0};
    assert_int_equal(npubin_decode(PATH, w, len, &q, &d), ST_OK);
    for (int k = 0; k < q->nkernels; k++)
        assert_int_equal(npubin_kernel_stale(q, k), k == a);
    plan_free(q);
    expect_stale(w, len, (const char *const[]){kern, theirs, fix}, 3);
    /* two: the first named, the other counted */
    stale_at[1] = b;
    stale_at[2] = -1;
    w = mutated(p, m_fp, &len);
    expect_stale(w, len, (const char *const[]){kern, "; 1 more kernel like it (describe marks"}, 2);
    /* the key gone from a version 4 file's kernel */
    w = mutated(p, m_fp_gone, &len);
    snprintf(mine, sizeof mine, "(fingerprint none vs this build's %016llx)",
             (unsigned long long)fp);
    expect_stale(w, len, (const char *const[]){kern, mine}, 2);
    /* a stem this build lacks */
    w = mutated(p, m_fp_stem, &len);
    snprintf(theirs, sizeof theirs, "(fingerprint %016llx; this build has no such module)",
             (unsigned long long)fp);
    expect_stale(w, len, (const char *const[]){"'conv2d_gone' (module conv2d_gone)", theirs}, 2);
    plan_free(p);
}

static void m_fp_none(msgpack_object *r, msgpack_zone *z)
{
    (void)z;
    nu_drop_key(r, "kernels", "fingerprint");
}
static void m_same(msgpack_object *r, msgpack_zone *z)
{
    (void)r;
    (void)z;
}

/* A file from before the fingerprints (version 3, no key) reads and loads, with one warning
 * that its kernels cannot be checked; a version 3 header's fingerprints are not its keys. */
static void test_version3_unchecked(void **state)
{
    (void)state;
    Plan *p = nu_build_plan(models[1]);
    for (int v = 0; v < 2; v++) {
        size_t len;
        unsigned char *w = nu_mutated(p, v ? m_same : m_fp_none, 3, &len);
        Plan *q = NULL;
        DiagList d = {0};
        assert_int_equal(npubin_decode(PATH, w, len, &q, &d), ST_OK);
        assert_int_equal(q->file_version, 3);
        for (int k = 0; k < q->nkernels; k++) {
            assert_true(q->kernels[k].fingerprint == 0);
            assert_false(npubin_kernel_stale(q, k));
        }
        assert_int_equal(plan_format_version(q), 2);
        assert_int_equal(npubin_verify(q, PATH, true, &d), ST_OK);
        assert_int_equal(d.count, 1);
        assert_int_equal(d.errors, 0);
        assert_int_equal(d.items[0].level, DIAG_WARNING);
        assert_string_equal(d.items[0].file, PATH);
        assert_non_null(strstr(d.items[0].msg, "written before kernel fingerprints (format v3)"));
        diag_free(&d);
        plan_free(q);
        free(w);
    }
    plan_free(p);
}

TU_MAIN(test_roundtrip, test_truncated, test_bitflips, test_corrupt_resealed, test_version,
        test_foreign_files, test_hostile_payloads, test_invalid_fields, test_encode_refuses_invalid,
        test_version1_reads, test_recipe_block, test_fingerprint_roundtrip,
        test_fingerprint_mismatch, test_version3_unchecked)
