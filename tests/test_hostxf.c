/* Host<->device transforms: channel padding (pads zero, logical values back exactly), storage
 * casts (fp16/bf16 round to nearest, i32 exact, bool), and the errors (element count, an int64
 * that does not fit the device's int32) naming the file and the tensor. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/half.h"
#include "runtime/hostxf.h"
#include "tests/testutil.h"

static PlanTensor tensor(DType dt, DType storage, int rank, const int64_t *shape, int64_t pad1)
{
    PlanTensor t;
    memset(&t, 0, sizeof t);
    t.name = "t";
    t.dtype = dt;
    t.storage = storage;
    t.rank = rank;
    for (int i = 0; i < rank; i++)
        t.shape[i] = t.pshape[i] = shape[i];
    if (pad1) {
        t.pshape[1] = pad1;
        t.padded = 1;
    }
    t.alias_of = -1;
    return t;
}

static void test_padded_roundtrip(void **state)
{
    (void)state;
    int64_t shape[4] = {2, 3, 2, 5};
    PlanTensor t = tensor(DT_F32, DT_F16, 4, shape, 32);
    assert_int_equal(hostxf_device_bytes(&t), 2 * 32 * 2 * 5 * 2);
    HTensor v;
    tu_alloc(&v, "float32", 4, shape);
    tu_rand(&v, 3, -2, 2);
    uint16_t dev[2 * 32 * 2 * 5];
    DiagList d = {0};
    assert_int_equal(hostxf_pack(&t, &v, dev, "m.json", &d), ST_OK);
    /* element [1,2,1,4] sits at physical ((1*32+2)*2+1)*5+4; channel 3..31 are zero */
    int64_t li = ((1 * 3 + 2) * 2 + 1) * 5 + 4, pi = ((1 * 32 + 2) * 2 + 1) * 5 + 4;
    assert_int_equal(dev[pi], f32_to_f16(((float *)v.data)[li]));
    for (int c = 3; c < 32; c++)
        assert_int_equal(dev[((0 * 32 + c) * 2 + 1) * 5 + 2], 0);
    /* every element at its physical place (the packer copies dense runs per (n, c) row) */
    for (int64_t n = 0, i = 0; n < 2; n++)
        for (int64_t c = 0; c < 3; c++)
            for (int64_t r = 0; r < 10; r++, i++)
                assert_int_equal(dev[(n * 32 + c) * 10 + r], f32_to_f16(((float *)v.data)[i]));
    HTensor back = {0};
    assert_int_equal(hostxf_unpack(&t, dev, &back), ST_OK);
    assert_int_equal(back.numel, v.numel);
    for (int64_t i = 0; i < v.numel; i++)
        assert_true(((float *)back.data)[i] == f16_to_f32(f32_to_f16(((float *)v.data)[i])));
    htensor_free(&v);
    htensor_free(&back);
    diag_free(&d);
}

/* bf16 storage, rank 3, pad only dim 1: pack and unpack agree with the element rule */
static void test_padded_bf16_rank3(void **state)
{
    (void)state;
    int64_t shape[3] = {3, 5, 7};
    PlanTensor t = tensor(DT_F32, DT_BF16, 3, shape, 8);
    HTensor v;
    tu_alloc(&v, "float32", 3, shape);
    tu_rand(&v, 5, -3, 3);
    uint16_t dev[3 * 8 * 7];
    DiagList d = {0};
    assert_int_equal(hostxf_pack(&t, &v, dev, "m.json", &d), ST_OK);
    for (int64_t a = 0; a < 3; a++)
        for (int64_t c = 0; c < 8; c++)
            for (int64_t k = 0; k < 7; k++)
                assert_int_equal(dev[(a * 8 + c) * 7 + k],
                                 c < 5 ? f32_to_bf16(((float *)v.data)[(a * 5 + c) * 7 + k]) : 0);
    HTensor back = {0};
    assert_int_equal(hostxf_unpack(&t, dev, &back), ST_OK);
    for (int64_t i = 0; i < v.numel; i++)
        assert_true(((float *)back.data)[i] == bf16_to_f32(f32_to_bf16(((float *)v.data)[i])));
    htensor_free(&v);
    htensor_free(&back);
    diag_free(&d);
}

static void test_casts(void **state)
{
    (void)state;
    int64_t shape[1] = {4};
    HTensor v;
    tu_alloc(&v, "float32", 1, shape);
    float vals[4] = {1.0f, 1.00390625f /* bf16 tie: rounds to even */, -3.14159f, 65504.0f};
    memcpy(v.data, vals, sizeof vals);
    PlanTensor b = tensor(DT_F32, DT_BF16, 1, shape, 0);
    uint16_t dev[4];
    DiagList d = {0};
    assert_int_equal(hostxf_pack(&b, &v, dev, NULL, &d), ST_OK);
    for (int i = 0; i < 4; i++)
        assert_int_equal(dev[i], f32_to_bf16(vals[i]));
    assert_int_equal(dev[1], 0x3f80); /* 1.00390625 = 0x3f808000: the tie goes to even */
    htensor_free(&v);
    /* integers stay exact in i32, above fp16's range too */
    HTensor iv;
    tu_alloc(&iv, "int64", 1, shape);
    int64_t ids[4] = {0, 65505, 151935, -7};
    memcpy(iv.data, ids, sizeof ids);
    PlanTensor it = tensor(DT_I64, DT_I32, 1, shape, 0);
    int32_t idev[4];
    assert_int_equal(hostxf_pack(&it, &iv, idev, NULL, &d), ST_OK);
    for (int i = 0; i < 4; i++)
        assert_int_equal(idev[i], ids[i]);
    HTensor back = {0};
    assert_int_equal(hostxf_unpack(&it, idev, &back), ST_OK);
    assert_int_equal(back.dtype, DT_I64);
    assert_memory_equal(back.data, ids, sizeof ids);
    htensor_free(&back);
    /* an int64 beyond int32 is refused, naming the file and the tensor */
    ((int64_t *)iv.data)[2] = (int64_t)1 << 40;
    assert_int_equal(hostxf_pack(&it, &iv, idev, "m.json", &d), ST_BAD_INPUT);
    char buf[512];
    diag_format(&d.items[d.count - 1], buf, sizeof buf);
    assert_non_null(strstr(buf, "m.json"));
    assert_non_null(strstr(buf, "'t'"));
    assert_non_null(strstr(buf, "32-bit"));
    htensor_free(&iv);
    diag_free(&d);
}

/* The dense f16 pack (the vector conversion where the CPU has F16C, 8 at a time, and the scalar
 * tail) equals f32_to_f16 bit for bit: random values over fp16's whole range and beyond, ties,
 * subnormals, the overflow edge, zeros, infinities and NaNs, at lengths that leave every tail
 * (n % 8 = 0..7), padded rows included. */
static void test_f16_vector_cast(void **state)
{
    (void)state;
    static const uint32_t special[] = {
        0x00000000u,
        0x80000000u,
        0x7f800000u,
        0xff800000u,
        0x7fc00000u,
        0xffc00001u,
        0x7f800001u /* signalling NaN: quietened */,
        0x7fbfe000u,
        0x477fe000u /* 65504 */,
        0x477fefffu,
        0x477ff000u /* 65520: the tie rounds up to inf */,
        0x33000000u /* 2^-25 */,
        0x33000001u,
        0x33800000u /* 2^-24: the smallest subnormal */,
        0x387fc000u,
        0x38800000u,
        0x3f801000u /* 1 + 2^-11: tie to even */,
        0x3f803000u,
        0x00000001u,
        0x807fffffu,
    };
    uint32_t seed = 12345;
    for (int64_t n = 1; n <= 67; n += 3) {
        int64_t shape[4] = {1, 2, 1, n};
        HTensor v;
        tu_alloc(&v, "float32", 4, shape);
        float *f = v.data;
        for (int64_t i = 0; i < v.numel; i++) {
            seed = seed * 1664525u + 1013904223u;
            uint32_t bits = (size_t)i < sizeof special / sizeof special[0] && n > 30
                                ? special[i]
                                : (seed & 0x8fffffffu) | ((seed % 40u + 100u) << 23);
            memcpy(&f[i], &bits, 4);
        }
        for (int pad = 0; pad < 2; pad++) {
            PlanTensor t = tensor(DT_F32, DT_F16, 4, shape, pad ? 5 : 0);
            uint16_t dev[5 * 67 + 2]; /* device bytes round up to whole words */
            DiagList d = {0};
            assert_int_equal(hostxf_pack(&t, &v, dev, NULL, &d), ST_OK);
            for (int64_t c = 0; c < 2; c++)
                for (int64_t i = 0; i < n; i++) {
                    uint16_t want = f32_to_f16(f[c * n + i]), got = dev[c * n + i];
                    if (got != want)
                        fail_msg("n %lld pad %d element %lld (0x%08x): got 0x%04x, want 0x%04x",
                                 (long long)n, pad, (long long)(c * n + i),
                                 ((uint32_t *)f)[c * n + i], got, want);
                }
            if (pad)
                for (int64_t i = 2 * n; i < 5 * n; i++)
                    assert_int_equal(dev[i], 0);
            diag_free(&d);
        }
        htensor_free(&v);
    }
}

static void test_count_mismatch(void **state)
{
    (void)state;
    int64_t s5[1] = {5}, s4[1] = {4};
    HTensor v;
    tu_alloc(&v, "float32", 1, s5);
    PlanTensor t = tensor(DT_F32, DT_F32, 1, s4, 0);
    float dev[5];
    DiagList d = {0};
    assert_int_equal(hostxf_pack(&t, &v, dev, "m.json", &d), ST_BAD_INPUT);
    assert_int_equal(d.errors, 1);
    htensor_free(&v);
    diag_free(&d);
}

/* Bools live on the device as 0/1 in the compute dtype (compiler/lower/lower.c): packed and
 * unpacked exactly through f32, f16 and bf16 storage, any nonzero byte a one. */
static void test_bool_in_float_storage(void **state)
{
    (void)state;
    int64_t shape[2] = {3, 7};
    DType st[3] = {DT_F32, DT_F16, DT_BF16};
    for (int s = 0; s < 3; s++) {
        PlanTensor t = tensor(DT_BOOL, st[s], 2, shape, 0);
        HTensor v, back = {0};
        tu_alloc(&v, "bool", 2, shape);
        for (int64_t i = 0; i < v.numel; i++)
            ((uint8_t *)v.data)[i] = (uint8_t)(i % 3 == 0 ? 0 : i);
        unsigned char dev[21 * 4];
        DiagList d = {0};
        assert_int_equal(hostxf_pack(&t, &v, dev, "f", &d), ST_OK);
        for (int64_t i = 0; i < v.numel; i++) {
            float f = st[s] == DT_F32   ? ((float *)dev)[i]
                      : st[s] == DT_F16 ? f16_to_f32(((uint16_t *)dev)[i])
                                        : bf16_to_f32(((uint16_t *)dev)[i]);
            assert_true(f == (i % 3 == 0 ? 0.0f : 1.0f));
        }
        assert_int_equal(hostxf_unpack(&t, dev, &back), ST_OK);
        assert_int_equal(back.dtype, DT_BOOL);
        for (int64_t i = 0; i < v.numel; i++)
            assert_int_equal(((uint8_t *)back.data)[i], i % 3 == 0 ? 0 : 1);
        htensor_free(&v);
        htensor_free(&back);
        diag_free(&d);
    }
}

/* An input in its host form (pack-inputs: f32 storage, dense) is the raw path: its device bytes
 * are the host's, bit for bit (NaN payloads, -0, subnormals); a cast, padding or another count
 * is not */
static void test_host_form_raw(void **state)
{
    (void)state;
    int64_t shape[4] = {1, 3, 5, 7};
    PlanTensor t = tensor(DT_F32, DT_F32, 4, shape, 0);
    HTensor v;
    tu_alloc(&v, "float32", 4, shape);
    tu_rand(&v, 11, -3, 3);
    uint32_t *bits = v.data;
    bits[0] = 0x7fc12345u; /* a NaN with a payload */
    bits[1] = 0x80000000u; /* -0 */
    bits[2] = 0x00000007u; /* a subnormal */
    assert_true(hostxf_is_raw(&t, &v));
    uint32_t dev[105];
    memset(dev, 0xab, sizeof dev);
    DiagList d = {0};
    assert_int_equal(hostxf_pack(&t, &v, dev, "m.json", &d), ST_OK);
    assert_memory_equal(dev, v.data, sizeof dev);
    PlanTensor h = tensor(DT_F32, DT_F16, 4, shape, 0), pad = tensor(DT_F32, DT_F32, 4, shape, 32);
    assert_false(hostxf_is_raw(&h, &v));
    assert_false(hostxf_is_raw(&pad, &v));
    int64_t other[4] = {1, 3, 5, 6};
    PlanTensor small = tensor(DT_F32, DT_F32, 4, other, 0);
    assert_false(hostxf_is_raw(&small, &v));
    assert_int_equal(hostxf_pack(&small, &v, dev, "m.json", &d), ST_BAD_INPUT);
    htensor_free(&v);
    diag_free(&d);
}

TU_MAIN(test_padded_roundtrip, test_padded_bf16_rank3, test_casts, test_f16_vector_cast,
        test_count_mismatch, test_bool_in_float_storage, test_host_form_raw)
