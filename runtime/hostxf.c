#include "runtime/hostxf.h"

#include <stdlib.h>
#include <string.h>
#include "common/half.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HOSTXF_F16C 1
#endif

/* f32 -> f16 for n elements, rounding to nearest even as f32_to_f16 does (NaNs stay quiet NaNs
 * with the payload's top bits, as there). An input of 150K floats (resnet's) converted one by one
 * is slower than the copy it feeds; with F16C, 8 per instruction, it keeps up with the copy into
 * the device's mapped memory (bench/NOTES.md has the numbers). */
#ifdef HOSTXF_F16C
__attribute__((target("avx,f16c"))) static void f16_run_f16c(uint16_t *d, const float *s, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(
            (__m128i *)(d + i),
            _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    for (; i < n; i++)
        d[i] = f32_to_f16(s[i]);
}
#endif

static void f16_run(uint16_t *d, const float *s, int64_t n)
{
#ifdef HOSTXF_F16C
    if (__builtin_cpu_supports("f16c")) {
        f16_run_f16c(d, s, n);
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++)
        d[i] = f32_to_f16(s[i]);
}

int hostxf_elem_size(DType s)
{
    switch (s) {
    case DT_F16:
    case DT_BF16:
        return 2;
    case DT_U8:
    case DT_BOOL:
    case DT_I8:
        return 1;
    case DT_I16:
        return 2;
    case DT_F64:
    case DT_I64:
        return 8;
    case DT_F32:
    case DT_I32:
    case DT_COUNT:
    case DT_INVALID:
        break;
    }
    return 4;
}

uint64_t hostxf_device_bytes(const PlanTensor *t)
{
    return plan_device_bytes(t);
}

/* Physical index of logical element i (only dim 1 may differ between shape and pshape). */
static int64_t phys_index(const PlanTensor *t, int64_t i)
{
    if (!t->padded) return i;
    int64_t off = 0, stride = 1;
    for (int d = t->rank - 1; d >= 0; d--) {
        int64_t c = i % t->shape[d];
        i /= t->shape[d];
        off += c * stride;
        stride *= t->pshape[d];
    }
    return off;
}

/* A tensor as dense runs of logical elements: the whole tensor when unpadded, else one run per
 * (dim 0, dim 1) row of the dims after 1 (only dim 1 is padded). */
static bool dense_runs(const PlanTensor *t, int64_t n, int64_t *run, int64_t *rows)
{
    *run = n;
    *rows = 1;
    if (!t->padded) return true;
    if (t->rank < 2) return false;
    int64_t inner = 1;
    for (int d = 0; d < t->rank; d++) {
        if (d != 1 && t->pshape[d] != t->shape[d]) return false;
        if (d >= 2) inner *= t->shape[d];
    }
    *run = inner;
    *rows = inner ? n / inner : 0;
    return true;
}

/* Physical element offset of run r: row r = (i0, c) sits at (i0 * padded C + c) * run. */
static int64_t run_offset(const PlanTensor *t, int64_t r, int64_t run)
{
    if (!t->padded || t->rank < 2) return r * run;
    return ((r / t->shape[1]) * t->pshape[1] + r % t->shape[1]) * run;
}

static int64_t logical_numel(const PlanTensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= t->shape[i];
    return n;
}

bool hostxf_is_raw(const PlanTensor *t, const HTensor *v)
{
    if (t->padded || v->numel != logical_numel(t) || !v->data) return false;
    return (v->dtype == DT_F32 && t->storage == DT_F32) ||
           (v->dtype == DT_I32 && t->storage == DT_I32);
}

Status hostxf_pack(const PlanTensor *t, const HTensor *v, void *dst, const char *file, DiagList *d)
{
    int64_t n = logical_numel(t);
    if (v->numel != n)
        return diag_error(d, file, NULL, t->name, "has %lld elements, the plan expects %lld",
                          (long long)v->numel, (long long)n);
    if (hostxf_is_raw(t, v)) {
        memcpy(dst, v->data, (size_t)n * 4);
        return ST_OK;
    }
    /* the common case, float32 values: tight loops over dense runs (inputs are packed on every
     * run; a channel-padded tensor is one run per (n, c) row, its padding left zero) */
    if (v->dtype == DT_F32 &&
        (t->storage == DT_F16 || t->storage == DT_BF16 || t->storage == DT_F32)) {
        const float *f = v->data;
        int64_t run, rows;
        if (!dense_runs(t, n, &run, &rows)) goto general;
        if (t->padded) memset(dst, 0, hostxf_device_bytes(t)); /* the padding reads zero */
        for (int64_t r = 0; r < rows; r++) {
            const float *a = f + r * run;
            int64_t o = run_offset(t, r, run);
            switch (t->storage) {
            case DT_F16:
                f16_run((uint16_t *)dst + o, a, run);
                break;
            case DT_BF16:
                for (int64_t i = 0; i < run; i++)
                    ((uint16_t *)dst)[o + i] = f32_to_bf16(a[i]);
                break;
            default:
                memcpy((float *)dst + o, a, (size_t)run * sizeof(float));
                break;
            }
        }
        return ST_OK;
    }
general:
    memset(dst, 0, hostxf_device_bytes(t));
    for (int64_t i = 0; i < n; i++) {
        int64_t j = phys_index(t, i);
        switch (t->storage) {
        case DT_F16:
            ((uint16_t *)dst)[j] = f32_to_f16((float)htensor_get_f(v, i));
            break;
        case DT_BF16:
            ((uint16_t *)dst)[j] = f32_to_bf16((float)htensor_get_f(v, i));
            break;
        case DT_I32: {
            int64_t x = htensor_get_i(v, i);
            if (x < INT32_MIN || x > INT32_MAX)
                return diag_error(d, file, NULL, t->name,
                                  "value %lld at element %lld does not fit the device's 32-bit "
                                  "integers",
                                  (long long)x, (long long)i);
            ((int32_t *)dst)[j] = (int32_t)x;
            break;
        }
        case DT_U8:
        case DT_BOOL:
            ((uint8_t *)dst)[j] = htensor_get_i(v, i) != 0;
            break;
        default:
            ((float *)dst)[j] = (float)htensor_get_f(v, i);
            break;
        }
    }
    return ST_OK;
}

Status hostxf_unpack(const PlanTensor *t, const void *src, HTensor *out)
{
    Status st = htensor_alloc(out, htensor_ref_dtype(t->dtype), t->rank, t->shape);
    if (st != ST_OK) return st;
    if (out->dtype == DT_F32 &&
        (t->storage == DT_F16 || t->storage == DT_BF16 || t->storage == DT_F32)) {
        int64_t run, rows;
        if (!dense_runs(t, out->numel, &run, &rows)) goto general;
        for (int64_t r = 0; r < rows; r++) {
            float *f = (float *)out->data + r * run;
            int64_t o = run_offset(t, r, run);
            switch (t->storage) {
            case DT_F16:
                for (int64_t i = 0; i < run; i++)
                    f[i] = f16_to_f32(((const uint16_t *)src)[o + i]);
                break;
            case DT_BF16:
                for (int64_t i = 0; i < run; i++)
                    f[i] = bf16_to_f32(((const uint16_t *)src)[o + i]);
                break;
            default:
                memcpy(f, (const float *)src + o, (size_t)run * sizeof(float));
                break;
            }
        }
        return ST_OK;
    }
general:
    for (int64_t i = 0; i < out->numel; i++) {
        int64_t j = phys_index(t, i);
        double f = 0;
        int64_t k = 0;
        bool isint = false;
        switch (t->storage) {
        case DT_F16:
            f = f16_to_f32(((const uint16_t *)src)[j]);
            break;
        case DT_BF16:
            f = bf16_to_f32(((const uint16_t *)src)[j]);
            break;
        case DT_I32:
            k = ((const int32_t *)src)[j], isint = true;
            break;
        case DT_U8:
        case DT_BOOL:
            k = ((const uint8_t *)src)[j], isint = true;
            break;
        default:
            f = ((const float *)src)[j];
            break;
        }
        switch (out->dtype) {
        case DT_I64:
            ((int64_t *)out->data)[i] = isint ? k : (int64_t)f;
            break;
        case DT_BOOL:
            ((uint8_t *)out->data)[i] = isint ? k != 0 : f != 0;
            break;
        default:
            ((float *)out->data)[i] = isint ? (float)k : (float)f;
            break;
        }
    }
    return ST_OK;
}
