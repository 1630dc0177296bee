/* safetensors: round trips of every dtype, the fixture file, sharded indexes, and a table of
 * corrupt files that must fail with the file (and tensor) named. */
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
#include "testutil.h"

static char dir[64];

static const char *tmp(const char *name)
{
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static void write_raw(const char *path, const char *hdr, size_t data_len)
{
    FILE *f = fopen(path, "wb");
    uint64_t n = strlen(hdr);
    unsigned char len[8];
    for (int i = 0; i < 8; i++) len[i] = (unsigned char)(n >> (8 * i));
    fwrite(len, 1, 8, f);
    fwrite(hdr, 1, n, f);
    for (size_t i = 0; i < data_len; i++) fputc((int)(i * 37 + 1), f);
    fclose(f);
}

static void test_roundtrip_all_dtypes(void **state)
{
    (void)state;
    DType dts[] = {DT_F32, DT_F16, DT_BF16, DT_F64, DT_I64, DT_I32, DT_I16, DT_I8, DT_U8, DT_BOOL};
    int n = (int)(sizeof dts / sizeof dts[0]);
    HTensor src[10], conv[10];
    const HTensor *ptr[10];
    const char *names[10];
    char nbuf[10][16];
    int64_t shape[3] = {3, 1, 5};
    for (int i = 0; i < n; i++) {
        tu_alloc(&src[i], dtype_is_float(dts[i]) ? "float32" : "int64", 3, shape);
        tu_rand(&src[i], (uint64_t)i + 1, dts[i] == DT_BOOL ? 0 : -100, dts[i] == DT_BOOL ? 1 : 100);
        htensor_convert_new(&conv[i], &src[i], dts[i]);
        ptr[i] = &conv[i];
        snprintf(nbuf[i], sizeof nbuf[i], "t.%s", dtype_st_name(dts[i]));
        names[i] = nbuf[i];
    }
    DiagList d = {0};
    assert_int_equal(st_write(tmp("all.safetensors"), n, names, ptr, &d), ST_OK);
    SafeTensors s;
    assert_int_equal(st_open(&s, tmp("all.safetensors"), &d), ST_OK);
    assert_int_equal(st_count(&s), n);
    for (int i = 0; i < n; i++) {
        const StTensor *t = st_find(&s, names[i]);
        assert_non_null(t);
        assert_int_equal(t->dtype, dts[i]);
        assert_int_equal(t->rank, 3);
        assert_memory_equal(t->data, conv[i].data, (size_t)conv[i].numel * dtype_size(dts[i]));
        HTensor back;
        assert_int_equal(st_to_htensor(t, DT_F32, &back), ST_OK);
        for (int64_t k = 0; k < back.numel; k++) {
            double want = htensor_get_f(&conv[i], k);
            assert_true(((float *)back.data)[k] == (float)want);
        }
        htensor_free(&back);
    }
    st_close(&s);
    for (int i = 0; i < n; i++) {
        htensor_free(&src[i]);
        htensor_free(&conv[i]);
    }
    diag_free(&d);
}

static void test_fixture(void **state)
{
    (void)state;
    SafeTensors s;
    DiagList d = {0};
    assert_int_equal(st_open(&s, "tests/models/mlp/weights.safetensors", &d), ST_OK);
    const StTensor *w = st_find(&s, "fc1.weight");
    assert_non_null(w);
    assert_int_equal(w->dtype, DT_F16);
    assert_int_equal(w->shape[0], 128);
    assert_int_equal(w->shape[1], 64);
    HTensor h;
    assert_int_equal(st_to_htensor(w, DT_F32, &h), ST_OK);
    double sum = 0;
    for (int64_t i = 0; i < h.numel; i++) sum += ((float *)h.data)[i] * ((float *)h.data)[i];
    assert_true(sum > 0); /* real weights, not zeros */
    htensor_free(&h);
    st_close(&s);
    diag_free(&d);
}

static void test_sharded(void **state)
{
    (void)state;
    HTensor a, b;
    int64_t sh[1] = {4};
    tu_alloc(&a, NULL, 1, sh);
    tu_alloc(&b, NULL, 1, sh);
    tu_rand(&a, 1, -1, 1);
    tu_rand(&b, 2, -1, 1);
    const HTensor *pa = &a, *pb = &b;
    const char *na = "a", *nb = "b";
    DiagList d = {0};
    assert_int_equal(st_write(tmp("s1.safetensors"), 1, &na, &pa, &d), ST_OK);
    assert_int_equal(st_write(tmp("s2.safetensors"), 1, &nb, &pb, &d), ST_OK);
    FILE *f = fopen(tmp("m.safetensors.index.json"), "w");
    fputs("{\"metadata\":{},\"weight_map\":{\"a\":\"s1.safetensors\",\"b\":\"s2.safetensors\"}}", f);
    fclose(f);
    SafeTensors s;
    assert_int_equal(st_open(&s, tmp("m.safetensors.index.json"), &d), ST_OK);
    assert_int_equal(st_count(&s), 2);
    assert_memory_equal(st_find(&s, "b")->data, b.data, 16);
    st_close(&s);
    static const char *bad[] = {
        "{\"weight_map\":{\"a\":\"missing.safetensors\"}}",
        "{\"weight_map\":{\"a\":\"../s1.safetensors\"}}",
        "{\"weight_map\":{\"a\":\"/etc/passwd\"}}",
        "{\"nothing\":1}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        f = fopen(tmp("bad.index.json"), "w");
        fputs(bad[i], f);
        fclose(f);
        assert_int_equal(st_open(&s, tmp("bad.index.json"), &d), ST_BAD_INPUT);
        st_close(&s);
    }
    htensor_free(&a);
    htensor_free(&b);
    diag_free(&d);
}

static void test_corrupt(void **state)
{
    (void)state;
    static const struct {
        const char *hdr;
        size_t data;
        const char *want, *tensor;
    } cases[] = {
        {"not json", 0, "not a JSON object", NULL},
        {"[1,2]", 0, "not a JSON object", NULL},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4, "outside the data section", "'x'"},
        {"{\"x\":{\"dtype\":\"F33\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "unknown dtype", "'x'"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, "needs 12", "'x'"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8, "negative", "'x'"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8, "outside", "'x'"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8, "data_offsets", "'x'"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":\"2\",\"data_offsets\":[0,8]}}", 8, "shape", "'x'"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,8]}}", 8, "huge", "'x'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_raw(tmp("c.safetensors"), cases[i].hdr, cases[i].data);
        SafeTensors s;
        DiagList d = {0};
        assert_int_equal(st_open(&s, tmp("c.safetensors"), &d), ST_BAD_INPUT);
        char buf[1024];
        diag_format(&d.items[0], buf, sizeof buf);
        if (!strstr(buf, "c.safetensors") || !strstr(buf, cases[i].want) ||
            (cases[i].tensor && !strstr(buf, cases[i].tensor)))
            fail_msg("case %zu: '%s'", i, buf);
        st_close(&s);
        diag_free(&d);
    }
    /* a header length beyond the file, and every truncation of a valid file */
    HTensor a;
    int64_t sh[1] = {3};
    tu_alloc(&a, NULL, 1, sh);
    tu_rand(&a, 5, -1, 1);
    const HTensor *pa = &a;
    const char *na = "a";
    DiagList d = {0};
    assert_int_equal(st_write(tmp("ok.safetensors"), 1, &na, &pa, &d), ST_OK);
    FILE *f = fopen(tmp("ok.safetensors"), "rb");
    unsigned char buf[4096];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    for (size_t cut = 0; cut < len; cut++) {
        f = fopen(tmp("cut.safetensors"), "wb");
        fwrite(buf, 1, cut, f);
        fclose(f);
        SafeTensors s;
        assert_int_equal(st_open(&s, tmp("cut.safetensors"), &d), ST_BAD_INPUT);
        st_close(&s);
    }
    htensor_free(&a);
    diag_free(&d);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/npu-st-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_all_dtypes),
        cmocka_unit_test(test_fixture),
        cmocka_unit_test(test_sharded),
        cmocka_unit_test(test_corrupt),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
