/* safetensors: round trips of every dtype, the real mlp fixture, shards, and a table of corrupt
 * headers that must each give ST_BAD_INPUT and a diagnostic naming the file and the tensor. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/half.h"
#include "runtime/safetensors.h"
#include "tests/testutil.h"

static char *tpath(char *buf, const char *name)
{
    snprintf(buf, 256, "%s", tu_tmp_path(name));
    return buf;
}

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}
static float rndf(void)
{
    return ((float)(rnd() % 20001) - 10000.0f) / 2500.0f; /* [-4, 4] */
}

static void write_raw(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (len) assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* Writes 8-byte length (hlen_field, or the header's length when -1), the header, and `datalen`
 * nonzero bytes. */
static void write_st(const char *path, const char *header, int64_t hlen_field, size_t datalen)
{
    size_t hl = strlen(header);
    unsigned char *buf = malloc(8 + hl + datalen);
    assert_non_null(buf);
    uint64_t v = hlen_field < 0 ? hl : (uint64_t)hlen_field;
    for (int i = 0; i < 8; i++)
        buf[i] = (unsigned char)(v >> (8 * i));
    memcpy(buf + 8, header, hl);
    for (size_t i = 0; i < datalen; i++)
        buf[8 + hl + i] = (unsigned char)(rnd() | 1);
    write_raw(path, buf, 8 + hl + datalen);
    free(buf);
}

/* Checks the last diagnostic is an error that names `path`, `tensor` (if any) and `word`. */
static void expect_diag(const DiagList *d, const char *label, const char *path, const char *tensor,
                        const char *word)
{
    if (d->errors < 1) fail_msg("%s: no error reported", label);
    char buf[2048];
    diag_format(&d->items[d->count - 1], buf, sizeof buf);
    if (!strstr(buf, path)) fail_msg("%s: diag does not name the file: %s", label, buf);
    if (tensor) {
        char want[256];
        snprintf(want, sizeof want, "tensor '%s'", tensor);
        if (!strstr(buf, want))
            fail_msg("%s: diag does not name tensor %s: %s", label, tensor, buf);
    }
    if (word && !strstr(buf, word)) fail_msg("%s: diag lacks \"%s\": %s", label, word, buf);
}

static void fill_random(HTensor *t)
{
    size_t n = (size_t)t->numel;
    for (size_t i = 0; i < n; i++) {
        switch (t->dtype) {
        case DT_F32:
            ((float *)t->data)[i] = rndf();
            break;
        case DT_F64:
            ((double *)t->data)[i] = (double)rndf() / 3.0;
            break;
        case DT_F16:
            ((uint16_t *)t->data)[i] = f32_to_f16(rndf());
            break;
        case DT_BF16:
            ((uint16_t *)t->data)[i] = f32_to_bf16(rndf());
            break;
        case DT_BOOL:
            ((uint8_t *)t->data)[i] = (uint8_t)(i == 0 || rnd() % 2);
            break;
        default:
            for (size_t b = 0; b < dtype_size(t->dtype); b++)
                ((uint8_t *)t->data)[i * dtype_size(t->dtype) + b] = (uint8_t)(rnd() | (b == 0));
            break;
        }
    }
}

static void test_roundtrip_every_dtype(void **state)
{
    (void)state;
    enum { N = DT_COUNT + 2 };
    HTensor ts[N];
    const HTensor *tp[N];
    char names[N][32];
    const char *np[N];
    for (int i = 0; i < N; i++) {
        int64_t shape[3] = {3, 5, 2};
        DType dt = i < DT_COUNT ? (DType)i : DT_F32;
        int rank = i == DT_COUNT ? 0 : 3;    /* one scalar */
        if (i == DT_COUNT + 1) shape[1] = 0; /* one empty tensor */
        assert_int_equal(htensor_alloc(&ts[i], dt, rank, shape), ST_OK);
        fill_random(&ts[i]);
        snprintf(names[i], sizeof names[i], "layer.%d/%s", N - i, dtype_short(dt));
        tp[i] = &ts[i];
        np[i] = names[i];
    }
    char path[256];
    tpath(path, "all.safetensors");
    const char *meta[] = {"format", "pt", "note", "a \"quoted\" value", NULL};
    DiagList d = {0};
    assert_int_equal(st_write_meta(path, N, np, tp, meta, &d), ST_OK);

    /* header length is a multiple of 8 and the padding is spaces */
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char raw[4096];
    size_t got = fread(raw, 1, sizeof raw, f);
    fclose(f);
    assert_true(got > 8);
    uint64_t hl = 0;
    for (int i = 7; i >= 0; i--)
        hl = hl << 8 | raw[i];
    assert_int_equal(hl % 8, 0);
    assert_true(hl + 8 <= got);
    assert_true(raw[8 + hl - 1] == '}' || raw[8 + hl - 1] == ' ');

    SafeTensors s;
    assert_int_equal(st_open(&s, path, &d), ST_OK);
    assert_int_equal(d.errors, 0);
    assert_int_equal(st_count(&s), N);
    assert_null(st_at(&s, N));
    assert_string_equal(st_meta(&s, "format"), "pt");
    assert_string_equal(st_meta(&s, "note"), "a \"quoted\" value");
    assert_null(st_meta(&s, "absent"));
    for (int i = 0; i < N; i++) {
        const StTensor *t = st_at(&s, i);
        assert_string_equal(t->name, names[i]); /* header order kept */
        assert_ptr_equal(st_find(&s, names[i]), t);
        assert_int_equal(t->dtype, ts[i].dtype);
        assert_int_equal(t->rank, ts[i].rank);
        for (int r = 0; r < t->rank; r++)
            assert_int_equal(t->shape[r], ts[i].shape[r]);
        assert_int_equal(t->nbytes, (size_t)ts[i].numel * dtype_size(ts[i].dtype));
        assert_int_equal(t->shard, 0);
        if (t->nbytes) assert_memory_equal(t->data, ts[i].data, t->nbytes);
        HTensor h;
        assert_int_equal(st_to_htensor(t, t->dtype, &h), ST_OK);
        assert_int_equal(h.numel, ts[i].numel);
        if (t->nbytes) assert_memory_equal(h.data, ts[i].data, t->nbytes);
        htensor_free(&h);
    }
    assert_null(st_find(&s, "nope"));
    st_close(&s);
    st_close(&s); /* twice is fine */
    for (int i = 0; i < N; i++)
        htensor_free(&ts[i]);
    diag_free(&d);
}

static void test_half_to_f32(void **state)
{
    (void)state;
    int64_t shape[2] = {7, 9};
    HTensor h16, hb16, src;
    assert_int_equal(htensor_alloc(&src, DT_F32, 2, shape), ST_OK);
    assert_int_equal(htensor_alloc(&h16, DT_F16, 2, shape), ST_OK);
    assert_int_equal(htensor_alloc(&hb16, DT_BF16, 2, shape), ST_OK);
    float *v = src.data;
    for (int i = 0; i < 63; i++) {
        v[i] = rndf();
        ((uint16_t *)h16.data)[i] = f32_to_f16(v[i]);
        ((uint16_t *)hb16.data)[i] = f32_to_bf16(v[i]);
    }
    v[0] = 2.75f; /* exact in both, and truncates to 2 */
    ((uint16_t *)h16.data)[0] = f32_to_f16(2.75f);
    ((uint16_t *)hb16.data)[0] = f32_to_bf16(2.75f);
    char path[256];
    tpath(path, "half.safetensors");
    const char *np[] = {"h", "b"};
    const HTensor *tp[] = {&h16, &hb16};
    DiagList d = {0};
    assert_int_equal(st_write(path, 2, np, tp, &d), ST_OK);
    SafeTensors s;
    assert_int_equal(st_open(&s, path, &d), ST_OK);
    HTensor a, b, ai;
    assert_int_equal(st_to_htensor(st_find(&s, "h"), DT_F32, &a), ST_OK);
    assert_int_equal(st_to_htensor(st_find(&s, "b"), DT_F32, &b), ST_OK);
    assert_int_equal(st_to_htensor(st_find(&s, "b"), DT_I64, &ai), ST_OK);
    assert_int_equal(a.dtype, DT_F32);
    assert_int_equal(a.rank, 2);
    assert_int_equal(a.shape[1], 9);
    int nonzero = 0;
    for (int i = 0; i < 63; i++) {
        float fa = ((float *)a.data)[i], fb = ((float *)b.data)[i];
        assert_true(fa == f16_to_f32(((uint16_t *)h16.data)[i]));
        assert_true(fb == bf16_to_f32(((uint16_t *)hb16.data)[i]));
        float tol = 1e-3f * (1 + (v[i] < 0 ? -v[i] : v[i]));
        assert_true(fa - v[i] < tol && v[i] - fa < tol);
        assert_true(fb - v[i] < 8 * tol && v[i] - fb < 8 * tol);
        nonzero += fa != 0;
    }
    assert_true(nonzero > 50);
    assert_int_equal(((int64_t *)ai.data)[0], 2);
    htensor_free(&a);
    htensor_free(&b);
    htensor_free(&ai);
    st_close(&s);
    htensor_free(&src);
    htensor_free(&h16);
    htensor_free(&hb16);
    diag_free(&d);
}

static void test_unaligned_and_odd_bools(void **state)
{
    (void)state;
    /* a 1-byte tensor first leaves the F32 at an odd address; a bool stored as 7 reads as 1 */
    char path[256];
    tpath(path, "odd.safetensors");
    unsigned char buf[256];
    const char *h = "{\"m\":{\"dtype\":\"BOOL\",\"shape\":[1],\"data_offsets\":[0,1]},"
                    "\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[1,9]}}";
    size_t hl = strlen(h);
    for (int i = 0; i < 8; i++)
        buf[i] = (unsigned char)((uint64_t)hl >> (8 * i));
    memcpy(buf + 8, h, hl);
    buf[8 + hl] = 7;
    float xs[2] = {1.5f, -3.25f};
    memcpy(buf + 9 + hl, xs, 8);
    write_raw(path, buf, 8 + hl + 9);
    SafeTensors s;
    DiagList d = {0};
    assert_int_equal(st_open(&s, path, &d), ST_OK);
    HTensor x, m;
    assert_int_equal(st_to_htensor(st_find(&s, "x"), DT_F32, &x), ST_OK);
    assert_true(((float *)x.data)[0] == 1.5f && ((float *)x.data)[1] == -3.25f);
    assert_int_equal(st_to_htensor(st_find(&s, "m"), DT_BOOL, &m), ST_OK);
    assert_int_equal(((uint8_t *)m.data)[0], 1);
    htensor_free(&x);
    htensor_free(&m);
    st_close(&s);
    diag_free(&d);
}

static void test_mlp_fixture(void **state)
{
    (void)state;
    const char *path = "tests/models/mlp/weights.safetensors";
    SafeTensors s;
    DiagList d = {0};
    assert_int_equal(st_open(&s, path, &d), ST_OK);
    assert_int_equal(st_count(&s), 6);
    static const struct {
        const char *name;
        int rank;
        int64_t d0, d1;
    } want[] = {{"fc1.weight", 2, 128, 64}, {"fc1.bias", 1, 128, 0},    {"fc2.weight", 2, 128, 128},
                {"fc2.bias", 1, 128, 0},    {"fc3.weight", 2, 10, 128}, {"fc3.bias", 1, 10, 0}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const StTensor *t = st_find(&s, want[i].name);
        assert_non_null(t);
        assert_int_equal(t->dtype, DT_F16);
        assert_int_equal(t->rank, want[i].rank);
        assert_int_equal(t->shape[0], want[i].d0);
        if (t->rank == 2) assert_int_equal(t->shape[1], want[i].d1);
        HTensor h;
        assert_int_equal(st_to_htensor(t, DT_F32, &h), ST_OK);
        int nonzero = 0;
        for (int64_t k = 0; k < h.numel; k++) {
            float f = ((float *)h.data)[k];
            uint16_t raw;
            memcpy(&raw, (const unsigned char *)t->data + 2 * k, 2);
            assert_true(f == f16_to_f32(raw));
            assert_true(f > -10.0f && f < 10.0f); /* trained weights, not garbage */
            nonzero += f != 0;
        }
        assert_true(nonzero > h.numel / 2);
        htensor_free(&h);
    }
    st_close(&s);
    diag_free(&d);
}

#define E(dt, shape, offs) "{\"dtype\":\"" dt "\",\"shape\":" shape ",\"data_offsets\":" offs "}"

static void test_corrupt_headers(void **state)
{
    (void)state;
    static const struct {
        const char *label, *header;
        int64_t hlen; /* the 8-byte length field; -1 = the header's true length */
        size_t datalen;
        const char *tensor, *word;
    } bad[] = {
        {"length too big", "{}", 1000, 0, NULL, "header length"},
        {"length absurd", "{}", INT64_MAX, 8, NULL, "limit"},
        {"not json", "hello world", -1, 0, NULL, "JSON"},
        {"json cut short", "{\"a\":" E("F32", "[1]", "[0,4]"), -1, 4, NULL, "ends early"},
        {"not an object", "[1, 2]", -1, 0, NULL, "not a JSON object"},
        {"trailing text", "{}  x", -1, 0, NULL, "JSON"},
        {"nul byte", "{\"a\0\":1}", 5, 0, NULL, "NUL"},
        {"entry not object", "{\"w\": 5}", -1, 0, "w", "not an object"},
        {"dtype missing", "{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}", -1, 4, "w", "dtype"},
        {"dtype bad", "{\"w\":" E("F31", "[1]", "[0,4]") "}", -1, 4, "w", "F31"},
        {"dtype number", "{\"w\":" E("F32\",\"dtype\":7,\"x\":\"", "[1]", "[0,4]") "}", -1, 4, "w",
         "dtype"},
        {"shape not list", "{\"w\":" E("F32", "4", "[0,4]") "}", -1, 4, "w", "shape"},
        {"shape negative", "{\"w\":" E("F32", "[-1]", "[0,4]") "}", -1, 4, "w", "shape"},
        {"shape float", "{\"w\":" E("F32", "[1.0]", "[0,4]") "}", -1, 4, "w", "shape"},
        {"shape string", "{\"w\":" E("F32", "[\"1\"]", "[0,4]") "}", -1, 4, "w", "shape"},
        {"rank 9", "{\"w\":" E("U8", "[1,1,1,1,1,1,1,1,1]", "[0,1]") "}", -1, 1, "w", "rank"},
        {"numel overflow", "{\"w\":" E("F32", "[4611686018427387904,4]", "[0,0]") "}", -1, 0, "w",
         "too large"},
        {"bytes overflow", "{\"w\":" E("F64", "[2305843009213693952,2,2]", "[0,0]") "}", -1, 0, "w",
         "too large"},
        {"offsets missing", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1]}}", -1, 4, "w",
         "data_offsets"},
        {"offsets one int", "{\"w\":" E("F32", "[1]", "[4]") "}", -1, 4, "w", "data_offsets"},
        {"offsets three", "{\"w\":" E("F32", "[1]", "[0,4,8]") "}", -1, 8, "w", "data_offsets"},
        {"offsets negative", "{\"w\":" E("F32", "[0]", "[-4,-4]") "}", -1, 4, "w", "data_offsets"},
        {"offsets huge",
         "{\"w\":" E("F32", "[1]", "[18446744073709551612,18446744073709551615]") "}", -1, 4, "w",
         "past the data"},
        {"begin after end", "{\"w\":" E("F32", "[1]", "[8,4]") "}", -1, 8, "w", "begin after"},
        {"end past data", "{\"v\":" E("U8", "[1]", "[0,1]") ",\"w\":" E("F32", "[2]", "[1,9]") "}",
         -1, 8, "w", "past the data"},
        {"size mismatch", "{\"w\":" E("F32", "[2]", "[0,4]") "}", -1, 8, "w", "needs 8"},
        {"duplicate name", "{\"w\":" E("U8", "[1]", "[0,1]") ",\"w\":" E("U8", "[1]", "[0,1]") "}",
         -1, 1, "w", "twice"},
        {"escaped duplicate",
         "{\"w\":" E("U8", "[1]", "[0,1]") ",\"\\u0077\":" E("U8", "[1]", "[0,1]") "}", -1, 1, "w",
         "twice"},
        {"single quotes", "{'w':" E("U8", "[1]", "[0,1]") "}", -1, 1, NULL, "single-quoted"},
        {"nul in name", "{\"a\\u0000b\":" E("U8", "[1]", "[0,1]") "}", -1, 1, "a", "NUL"},
        {"metadata not object", "{\"__metadata__\":[1]}", -1, 0, NULL, "__metadata__"},
        {"metadata not string", "{\"__metadata__\":{\"k\":1}}", -1, 0, NULL, "not a string"},
    };
    char path[256];
    tpath(path, "bad.safetensors");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_st(path, bad[i].header, bad[i].hlen, bad[i].datalen);
        if (bad[i].hlen == 5) { /* the NUL case: strlen stops early, write it by hand */
            unsigned char b[13] = {5, 0, 0, 0, 0, 0, 0, 0, '{', '"', 'a', 0, '"'};
            write_raw(path, b, sizeof b);
        }
        SafeTensors s;
        DiagList d = {0};
        Status st = st_open(&s, path, &d);
        if (st != ST_BAD_INPUT) fail_msg("%s: status %d", bad[i].label, st);
        expect_diag(&d, bad[i].label, path, bad[i].tensor, bad[i].word);
        assert_int_equal(st_count(&s), 0); /* left closed */
        st_close(&s);
        diag_free(&d);
    }
}

static void test_truncated(void **state)
{
    (void)state;
    int64_t shape[2] = {4, 4};
    HTensor a, b;
    assert_int_equal(htensor_alloc(&a, DT_F32, 2, shape), ST_OK);
    assert_int_equal(htensor_alloc(&b, DT_I64, 2, shape), ST_OK);
    fill_random(&a);
    fill_random(&b);
    char good[256], path[256];
    tpath(good, "whole.safetensors");
    tpath(path, "cut.safetensors");
    const char *np[] = {"a", "b"};
    const HTensor *tp[] = {&a, &b};
    DiagList d = {0};
    assert_int_equal(st_write(good, 2, np, tp, &d), ST_OK);
    FILE *f = fopen(good, "rb");
    assert_non_null(f);
    unsigned char buf[1024];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    uint64_t hl = buf[0] | (uint64_t)buf[1] << 8;
    size_t cuts[] = {0, 1, 7, 8, 9, 8 + hl / 2, 8 + hl - 1, 8 + hl, 8 + hl + 64, len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        write_raw(path, buf, cuts[i]);
        SafeTensors s;
        Status st = st_open(&s, path, &d);
        if (st != ST_BAD_INPUT) fail_msg("cut at %zu: status %d", cuts[i], st);
        char label[32];
        snprintf(label, sizeof label, "cut at %zu", cuts[i]);
        /* cut inside the data: the tensor whose bytes are missing is named */
        expect_diag(&d, label, path, cuts[i] > 8 + hl ? (cuts[i] < 8 + hl + 64 ? "a" : "b") : NULL,
                    NULL);
        st_close(&s);
        diag_clear(&d);
    }
    htensor_free(&a);
    htensor_free(&b);
    diag_free(&d);
}

/* Writes two shards: s1 holds a (F32 [2,3]) and b (I32 [4]), s2 holds c (BF16 [5]). */
static void write_two_shards(HTensor *t)
{
    int64_t sa[2] = {2, 3}, sb[1] = {4}, sc[1] = {5};
    assert_int_equal(htensor_alloc(&t[0], DT_F32, 2, sa), ST_OK);
    assert_int_equal(htensor_alloc(&t[1], DT_I32, 1, sb), ST_OK);
    assert_int_equal(htensor_alloc(&t[2], DT_BF16, 1, sc), ST_OK);
    for (int i = 0; i < 3; i++)
        fill_random(&t[i]);
    char p[256];
    DiagList d = {0};
    const char *n1[] = {"a", "b"}, *n2[] = {"c"};
    const HTensor *t1[] = {&t[0], &t[1]}, *t2[] = {&t[2]};
    assert_int_equal(st_write(tpath(p, "m-00001-of-00002.safetensors"), 2, n1, t1, &d), ST_OK);
    assert_int_equal(st_write(tpath(p, "m-00002-of-00002.safetensors"), 1, n2, t2, &d), ST_OK);
    diag_free(&d);
}

static void test_sharded(void **state)
{
    (void)state;
    HTensor t[3];
    write_two_shards(t);
    char idx[256];
    tpath(idx, "m.safetensors.index.json");
    const char *text = "{\"metadata\": {\"total_size\": 46}, \"weight_map\": {"
                       "\"a\": \"m-00001-of-00002.safetensors\","
                       "\"c\": \"./m-00002-of-00002.safetensors\","
                       "\"b\": \"m-00001-of-00002.safetensors\"}}\n";
    write_raw(idx, text, strlen(text));
    SafeTensors s;
    DiagList d = {0};
    assert_int_equal(st_open(&s, idx, &d), ST_OK);
    assert_int_equal(st_count(&s), 3);
    const char *names[] = {"a", "b", "c"};
    const int shard[] = {0, 0, 1};
    for (int i = 0; i < 3; i++) {
        const StTensor *x = st_find(&s, names[i]);
        assert_non_null(x);
        assert_int_equal(x->shard, shard[i]);
        assert_int_equal(x->dtype, t[i].dtype);
        assert_memory_equal(x->data, t[i].data, x->nbytes);
    }
    assert_non_null(strstr(st_shard_path(&s, 1), "m-00002-of-00002.safetensors"));
    assert_null(st_shard_path(&s, 2));
    st_close(&s);
    for (int i = 0; i < 3; i++)
        htensor_free(&t[i]);
    diag_free(&d);
}

static void test_bad_indexes(void **state)
{
    (void)state;
    HTensor t[3];
    write_two_shards(t);
    static const struct {
        const char *label, *text, *tensor, *word;
    } bad[] = {
        {"missing shard",
         "{\"weight_map\":{\"a\":\"m-00001-of-00002.safetensors\",\"z\":\"gone.safetensors\"}}",
         "z", "gone.safetensors"},
        {"dotdot", "{\"weight_map\":{\"a\":\"../x.safetensors\"}}", "a", "inside"},
        {"dotdot inside", "{\"weight_map\":{\"a\":\"sub/../../x.safetensors\"}}", "a", "inside"},
        {"absolute", "{\"weight_map\":{\"a\":\"/etc/passwd\"}}", "a", "/etc/passwd"},
        {"empty name", "{\"weight_map\":{\"a\":\"\"}}", "a", "inside"},
        {"not a string", "{\"weight_map\":{\"a\":3}}", "a", "shard"},
        {"no weight_map", "{\"metadata\":{}}", NULL, "weight_map"},
        {"empty weight_map", "{\"weight_map\":{}}", NULL, "empty"},
        {"not json", "weight_map", NULL, "JSON"},
        {"tensor not in shard", "{\"weight_map\":{\"q\":\"m-00002-of-00002.safetensors\"}}", "q",
         "not found"},
        {"wrong shard",
         "{\"weight_map\":{\"c\":\"m-00001-of-00002.safetensors\","
         "\"b\":\"m-00002-of-00002.safetensors\"}}",
         "c", "index says"},
        {"shard is the index", "{\"weight_map\":{\"a\":\"bad.index.json\"}}", NULL, "header"},
    };
    char idx[256];
    tpath(idx, "bad.index.json");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_raw(idx, bad[i].text, strlen(bad[i].text));
        SafeTensors s;
        DiagList d = {0};
        Status st = st_open(&s, idx, &d);
        if (st != ST_BAD_INPUT) fail_msg("%s: status %d", bad[i].label, st);
        /* the shard-is-the-index case is reported against the shard, which is the same file */
        expect_diag(&d, bad[i].label, idx, bad[i].tensor, bad[i].word);
        st_close(&s);
        diag_free(&d);
    }

    /* the same tensor in two shards */
    char p[256];
    const char *nm[] = {"a"};
    const HTensor *tp[] = {&t[0]};
    DiagList d = {0};
    assert_int_equal(st_write(tpath(p, "dup.safetensors"), 1, nm, tp, &d), ST_OK);
    const char *text = "{\"weight_map\":{\"a\":\"m-00001-of-00002.safetensors\","
                       "\"x\":\"dup.safetensors\"}}";
    write_raw(idx, text, strlen(text));
    SafeTensors s;
    assert_int_equal(st_open(&s, idx, &d), ST_BAD_INPUT);
    expect_diag(&d, "twice across shards", "dup.safetensors", "a", "also stored");
    st_close(&s);
    for (int i = 0; i < 3; i++)
        htensor_free(&t[i]);
    diag_free(&d);
}

static void test_edges(void **state)
{
    (void)state;
    SafeTensors z = {0};
    st_close(&z); /* zeroed */
    st_close(NULL);

    char path[256];
    DiagList d = {0};
    SafeTensors s;
    assert_int_equal(st_open(&s, tpath(path, "does-not-exist.safetensors"), &d), ST_BAD_INPUT);
    expect_diag(&d, "missing file", path, NULL, "cannot open");
    diag_clear(&d);

    /* a zero dimension makes any other dimension harmless, and the data section may be empty */
    write_st(tpath(path, "empty.safetensors"),
             "{\"w\":" E("F32", "[4611686018427387904,4611686018427387904,0]", "[0,0]") "}    ", -1,
             0);
    assert_int_equal(st_open(&s, path, &d), ST_OK);
    assert_int_equal(st_find(&s, "w")->nbytes, 0);
    st_close(&s);
    write_st(path, "{}", -1, 0);
    assert_int_equal(st_open(&s, path, &d), ST_OK);
    assert_int_equal(st_count(&s), 0);
    st_close(&s);
    assert_int_equal(d.errors, 0);
    diag_free(&d);
}

static void test_write_rejects(void **state)
{
    (void)state;
    int64_t shape[1] = {3};
    HTensor a;
    assert_int_equal(htensor_alloc(&a, DT_F32, 1, shape), ST_OK);
    fill_random(&a);
    HTensor nodata = a;
    nodata.data = NULL;
    char path[256];
    tpath(path, "rejected.safetensors");
    static const struct {
        const char *label, *n0, *n1;
        int which; /* 0: a twice, 1: a then a tensor without data */
    } bad[] = {{"duplicate", "x", "x", 0},
               {"reserved name", "x", "__metadata__", 0},
               {"empty name", "", "y", 0},
               {"no data", "x", "y", 1}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *np[] = {bad[i].n0, bad[i].n1};
        const HTensor *tp[] = {&a, bad[i].which ? &nodata : &a};
        DiagList d = {0};
        if (st_write(path, 2, np, tp, &d) != ST_BAD_INPUT) fail_msg("%s accepted", bad[i].label);
        expect_diag(&d, bad[i].label, path, NULL, NULL);
        assert_int_equal(access(path, F_OK), -1); /* nothing written */
        diag_free(&d);
    }
    htensor_free(&a);
}

int main(void)
{
    return TU_GROUP(tu_tmp_setup, tu_tmp_teardown, test_roundtrip_every_dtype, test_half_to_f32,
                    test_unaligned_and_odd_bools, test_mlp_fixture, test_corrupt_headers,
                    test_truncated, test_sharded, test_bad_indexes, test_edges, test_write_rejects);
}
