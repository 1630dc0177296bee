#include "runtime/htensor.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "common/half.h"

int64_t shape_numel(const int64_t *shape, int rank)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= shape[i];
    return n;
}

void shape_strides(const int64_t *shape, int rank, int64_t *strides)
{
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= shape[i];
    }
}

Status htensor_alloc(HTensor *t, DType dt, int rank, const int64_t *shape)
{
    memset(t, 0, sizeof *t);
    if (rank < 0 || rank > NPU_MAX_RANK) return ST_BAD_INPUT;
    t->dtype = dt;
    t->rank = rank;
    for (int i = 0; i < rank; i++) {
        if (shape[i] < 0) return ST_BAD_INPUT;
        t->shape[i] = shape[i];
    }
    t->numel = shape_numel(shape, rank);
    size_t bytes = (size_t)t->numel * dtype_size(dt);
    t->data = calloc(bytes ? bytes : 1, 1);
    return t->data ? ST_OK : ST_NOMEM;
}

void htensor_free(HTensor *t)
{
    if (!t) return;
    if (!t->borrowed) free(t->data);
    t->data = NULL;
}

DType htensor_ref_dtype(DType declared)
{
    if (declared == DT_BOOL) return DT_BOOL;
    if (dtype_is_int(declared)) return DT_I64;
    return DT_F32;
}

/* Loads through memcpy: stored data (a mapped safetensors file) need not be aligned. */
#define DEFINE_LOAD(T, name)                                                                       \
    static T name(const void *p, int64_t i)                                                        \
    {                                                                                              \
        T v;                                                                                       \
        memcpy(&v, (const char *)p + (size_t)i * sizeof(T), sizeof(T));                            \
        return v;                                                                                  \
    }
DEFINE_LOAD(float, ld_f32)
DEFINE_LOAD(double, ld_f64)
DEFINE_LOAD(int64_t, ld_i64)
DEFINE_LOAD(int32_t, ld_i32)
DEFINE_LOAD(int16_t, ld_i16)
DEFINE_LOAD(uint16_t, ld_u16)

double htensor_get_f(const HTensor *t, int64_t i)
{
    const void *p = t->data;
    switch (t->dtype) {
    case DT_F32:
        return ld_f32(p, i);
    case DT_F16:
        return f16_to_f32(ld_u16(p, i));
    case DT_BF16:
        return bf16_to_f32(ld_u16(p, i));
    case DT_F64:
        return ld_f64(p, i);
    case DT_I64:
    case DT_I32:
    case DT_I16:
    case DT_I8:
    case DT_U8:
    case DT_BOOL:
        return (double)htensor_get_i(t, i);
    case DT_COUNT:
    case DT_INVALID:
        break;
    }
    return 0;
}

int64_t htensor_get_i(const HTensor *t, int64_t i)
{
    const void *p = t->data;
    switch (t->dtype) {
    case DT_I64:
        return ld_i64(p, i);
    case DT_I32:
        return ld_i32(p, i);
    case DT_I16:
        return ld_i16(p, i);
    case DT_I8:
        return ((const int8_t *)p)[i];
    case DT_U8:
        return ((const uint8_t *)p)[i];
    case DT_BOOL:
        return ((const uint8_t *)p)[i] != 0;
    case DT_F32:
    case DT_F16:
    case DT_BF16:
    case DT_F64: {
        double v = htensor_get_f(t, i);
        if (!(v == v)) return 0;
        if (v >= 9.2e18) return INT64_MAX;
        if (v <= -9.2e18) return INT64_MIN;
        return (int64_t)v;
    }
    case DT_COUNT:
    case DT_INVALID:
        break;
    }
    return 0;
}

static void put(void *dst, DType dt, int64_t i, const HTensor *src, int64_t j)
{
    switch (dt) {
    case DT_F32:
        ((float *)dst)[i] = (float)htensor_get_f(src, j);
        break;
    case DT_F16:
        ((uint16_t *)dst)[i] = f32_to_f16((float)htensor_get_f(src, j));
        break;
    case DT_BF16:
        ((uint16_t *)dst)[i] = f32_to_bf16((float)htensor_get_f(src, j));
        break;
    case DT_F64:
        ((double *)dst)[i] = htensor_get_f(src, j);
        break;
    case DT_I64:
        ((int64_t *)dst)[i] = htensor_get_i(src, j);
        break;
    case DT_I32:
        ((int32_t *)dst)[i] = (int32_t)htensor_get_i(src, j);
        break;
    case DT_I16:
        ((int16_t *)dst)[i] = (int16_t)htensor_get_i(src, j);
        break;
    case DT_I8:
        ((int8_t *)dst)[i] = (int8_t)htensor_get_i(src, j);
        break;
    case DT_U8:
        ((uint8_t *)dst)[i] = (uint8_t)htensor_get_i(src, j);
        break;
    case DT_BOOL:
        ((uint8_t *)dst)[i] = htensor_get_f(src, j) != 0;
        break;
    case DT_COUNT:
    case DT_INVALID:
        break;
    }
}

void htensor_convert(void *dst, DType dt, const void *src, DType st, int64_t n)
{
    if (dt == st) {
        memcpy(dst, src, (size_t)n * dtype_size(dt));
        return;
    }
    HTensor s = {.dtype = st, .data = (void *)src};
    for (int64_t i = 0; i < n; i++)
        put(dst, dt, i, &s, i);
}

Status htensor_convert_new(HTensor *dst, const HTensor *src, DType dt)
{
    Status st = htensor_alloc(dst, dt, src->rank, src->shape);
    if (st != ST_OK) return st;
    htensor_convert(dst->data, dt, src->data, src->dtype, src->numel);
    return ST_OK;
}

bool htensor_view(HTensor *view, const HTensor *base, int rank, const int64_t *shape, int64_t off)
{
    int64_t n = shape_numel(shape, rank);
    if (off < 0 || !base->data || off + n > base->numel) return false;
    *view = *base;
    view->rank = rank;
    memcpy(view->shape, shape, sizeof(int64_t) * (size_t)rank);
    view->numel = n;
    view->data = (char *)base->data + (size_t)off * dtype_size(base->dtype);
    view->borrowed = true;
    return true;
}
