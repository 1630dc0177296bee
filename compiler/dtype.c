#include "compiler/dtype.h"

#include <string.h>

static const struct {
    const char *name, *st, *shortn;
    size_t size;
    int is_float;
} info[DT_COUNT] = {
    [DT_F32] = {"float32", "F32", "f32", 4, 1},     [DT_F16] = {"float16", "F16", "f16", 2, 1},
    [DT_BF16] = {"bfloat16", "BF16", "bf16", 2, 1}, [DT_F64] = {"float64", "F64", "f64", 8, 1},
    [DT_I64] = {"int64", "I64", "i64", 8, 0},       [DT_I32] = {"int32", "I32", "i32", 4, 0},
    [DT_I16] = {"int16", "I16", "i16", 2, 0},       [DT_I8] = {"int8", "I8", "i8", 1, 0},
    [DT_U8] = {"uint8", "U8", "u8", 1, 0},          [DT_BOOL] = {"bool", "BOOL", "bool", 1, 0},
};

DType dtype_parse(const char *s)
{
    if (!s) return DT_INVALID;
    if (strncmp(s, "torch.", 6) == 0) s += 6;
    static const struct {
        const char *alias;
        DType t;
    } aliases[] = {{"float", DT_F32}, {"half", DT_F16}, {"double", DT_F64},
                   {"long", DT_I64},  {"int", DT_I32},  {"short", DT_I16},
                   {"fp32", DT_F32},  {"fp16", DT_F16}, {"bf16", DT_BF16}};
    for (int t = 0; t < DT_COUNT; t++)
        if (strcmp(s, info[t].name) == 0) return (DType)t;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(s, aliases[i].alias) == 0) return aliases[i].t;
    return DT_INVALID;
}

DType dtype_parse_st(const char *s)
{
    if (!s) return DT_INVALID;
    for (int t = 0; t < DT_COUNT; t++)
        if (strcmp(s, info[t].st) == 0) return (DType)t;
    return DT_INVALID;
}

const char *dtype_name(DType t)
{
    return t >= 0 && t < DT_COUNT ? info[t].name : "invalid";
}
const char *dtype_st_name(DType t)
{
    return t >= 0 && t < DT_COUNT ? info[t].st : "?";
}
const char *dtype_short(DType t)
{
    return t >= 0 && t < DT_COUNT ? info[t].shortn : "?";
}
const char *dtype_compute_name(DType t)
{
    return t == DT_F16 ? "fp16" : t == DT_BF16 ? "bf16" : t == DT_F32 ? "fp32" : NULL;
}
size_t dtype_size(DType t)
{
    return t >= 0 && t < DT_COUNT ? info[t].size : 0;
}
bool dtype_is_float(DType t)
{
    return t >= 0 && t < DT_COUNT && info[t].is_float;
}
bool dtype_is_int(DType t)
{
    return t >= 0 && t < DT_COUNT && !info[t].is_float;
}
