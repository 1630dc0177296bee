/* Host tensors: dense row-major buffers the CPU reference computes on and the I/O files hold.
 * The CPU reference uses three element types only: DT_F32 for every floating tensor, DT_I64 for
 * every integer tensor and DT_BOOL (one byte, 0/1) for masks. htensor_* functions own `data`
 * (malloc) unless `borrowed` is set. */
#ifndef NPU_HTENSOR_H
#define NPU_HTENSOR_H

#include <stdbool.h>
#include <stdint.h>
#include "common/status.h"
#include "compiler/dtype.h"
#include "compiler/graph.h"

typedef struct HTensor {
    DType dtype;
    int rank;
    int64_t shape[NPU_MAX_RANK];
    int64_t numel;
    void *data;
    bool borrowed; /* data not owned (e.g. points into a mapped file) */
} HTensor;

/* Allocates (zeroed) a tensor of the given dtype and shape. ST_NOMEM on failure. */
Status htensor_alloc(HTensor *t, DType dt, int rank, const int64_t *shape);
void htensor_free(HTensor *t);
/* The CPU reference's dtype for a declared dtype: F32 for floats, I64 for ints, BOOL for bool. */
DType htensor_ref_dtype(DType declared);
/* Converts any dtype buffer (src of `n` elements of type `st`) to dst of type `dt`. Float->int
 * truncates toward zero as torch does. */
void htensor_convert(void *dst, DType dt, const void *src, DType st, int64_t n);
/* Copies src into a new tensor converted to dtype dt. */
Status htensor_convert_new(HTensor *dst, const HTensor *src, DType dt);
/* Reads element i as double / int64 whatever the storage type. */
double htensor_get_f(const HTensor *t, int64_t i);
int64_t htensor_get_i(const HTensor *t, int64_t i);
/* A borrowed view of base's data with its own shape, starting `off` elements in (a reshape, or
 * a part of a linear_concat output): false when it does not fit inside base. The view lives
 * only as long as base's data. */
bool htensor_view(HTensor *view, const HTensor *base, int rank, const int64_t *shape, int64_t off);
/* Row-major strides (in elements) of a shape. */
void shape_strides(const int64_t *shape, int rank, int64_t *strides);
int64_t shape_numel(const int64_t *shape, int rank);

#endif
