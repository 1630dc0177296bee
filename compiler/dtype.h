/* Element types as the IR, safetensors and the plan name them, and the rank limit that the
 * graph's and the plan's tensors share. */
#ifndef NPU_DTYPE_H
#define NPU_DTYPE_H

#include <stdbool.h>
#include <stddef.h>

#define NPU_MAX_RANK 8

typedef enum DType {
    DT_F32,
    DT_F16,
    DT_BF16,
    DT_F64,
    DT_I64,
    DT_I32,
    DT_I16,
    DT_I8,
    DT_U8,
    DT_BOOL,
    DT_COUNT,
    DT_INVALID = -1
} DType;

/* Parses "float32", "torch.float32", "float", "half", "bfloat16", "int64", "long", "bool"...;
 * DT_INVALID when unknown. */
DType dtype_parse(const char *s);
/* Parses safetensors dtype codes "F32", "BF16", "I64", "BOOL"... */
DType dtype_parse_st(const char *s);
const char *dtype_name(DType t);    /* "float32" */
const char *dtype_st_name(DType t); /* "F32" */
const char *dtype_short(DType t);   /* "f32", "bf16", "i64" */
/* A compute dtype as --dtype names it: "fp16", "bf16", "fp32"; NULL for any other dtype. */
const char *dtype_compute_name(DType t);
size_t dtype_size(DType t);
bool dtype_is_float(DType t);
bool dtype_is_int(DType t); /* integers and bool */

#endif
