/* safetensors: read-only memory-mapped reading of single files and sharded
 * `*.safetensors.index.json` sets, and atomic writing. The file is untrusted data: every header
 * field, offset and length is validated against the file before use, and errors name the file
 * and the tensor. Used by weight/input binding (bind.c) and `run -o`. */
#ifndef NPU_SAFETENSORS_H
#define NPU_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>
#include "../common/diag.h"
#include "../common/fileio.h"
#include "../common/strmap.h"
#include "../compiler/dtype.h"
#include "../compiler/graph.h"
#include "htensor.h"

typedef struct StTensor {
    const char *name;
    DType dtype;
    int rank;
    int64_t shape[NPU_MAX_RANK];
    const void *data; /* into the read-only map */
    size_t nbytes;
    int shard;
} StTensor;

typedef struct SafeTensors {
    FileMap *maps;
    int nmaps;
    StTensor *tensors;
    int count, cap;
    StrMap by_name;
    char **names; /* owned copies of tensor names */
} SafeTensors;

/* Opens a .safetensors file or a sharded index (shards resolved inside the index's folder). */
Status st_open(SafeTensors *s, const char *path, DiagList *d);
const StTensor *st_find(const SafeTensors *s, const char *name);
int st_count(const SafeTensors *s);
const StTensor *st_at(const SafeTensors *s, int i);
/* Safe on a zeroed or partially opened struct. */
void st_close(SafeTensors *s);
/* Converts a stored tensor into a new HTensor of dtype dt. */
Status st_to_htensor(const StTensor *t, DType dt, HTensor *out);
/* Writes tensors atomically, header keys in the given order. */
Status st_write(const char *path, int n, const char *const *names, const HTensor *const *ts,
                DiagList *d);

#endif
