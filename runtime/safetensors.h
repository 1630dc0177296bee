/* safetensors: reads model weights from .safetensors files (one file, or shards listed by a
 * "*.safetensors.index.json") through read-only memory maps, and writes such files. A SafeTensors
 * owns its maps, tensor table and names; StTensor.data points into the maps and lives until
 * st_close. The files are untrusted input: every header is validated and every problem becomes a
 * diagnostic naming the file and the tensor. Called by the runtime session when it loads weights,
 * and by the I/O code that writes inputs, outputs and references. */
#ifndef NPU_SAFETENSORS_H
#define NPU_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>
#include "common/diag.h"
#include "common/fileio.h"
#include "common/strmap.h"
#include "compiler/dtype.h"
#include "compiler/graph.h"
#include "runtime/htensor.h"

/* Header lengths above this are rejected before anything is parsed (the reference loader uses the
 * same 100 MB limit). */
#define ST_MAX_HEADER (100u * 1000u * 1000u)

typedef struct StTensor {
    const char *name; /* owned by the SafeTensors */
    DType dtype;      /* F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL */
    int rank;
    int64_t shape[NPU_MAX_RANK];
    const void *data; /* points into the read-only memory map; may be unaligned */
    size_t nbytes;
    int shard; /* index of the file it lives in (st_shard_path) */
} StTensor;

typedef struct StShard {
    char *path; /* as opened (the index's folder joined with the shard name) */
    FileMap map;
} StShard;

typedef struct SafeTensors {
    char *path; /* as given to st_open */
    StShard *shards;
    int nshards;
    StTensor *tensors; /* in file order, shard after shard */
    int count, cap;
    StrMap by_name; /* name -> (index + 1), keys are the tensors' names */
    char **meta;    /* "__metadata__" pairs: meta[2i] key, meta[2i+1] value */
    int nmeta;
} SafeTensors;

/* Opens a .safetensors file, or the shards of a sharded "*.json" index ({"weight_map": {name:
 * shard}}, shards relative to the index's folder and never outside it). On failure the struct is
 * left closed (zeroed) and the reasons are in d. */
Status st_open(SafeTensors *s, const char *path, DiagList *d);
/* The tensor called `name`, or NULL; the pointer lives until st_close. */
const StTensor *st_find(const SafeTensors *s, const char *name);
int st_count(const SafeTensors *s);
/* The i-th tensor in file order (NULL when out of range). */
const StTensor *st_at(const SafeTensors *s, int i);
/* Path of shard i as opened (the file itself when not sharded); NULL when out of range. */
const char *st_shard_path(const SafeTensors *s, int i);
/* A "__metadata__" value (the first one found across shards), or NULL. */
const char *st_meta(const SafeTensors *s, const char *key);
/* Unmaps and frees everything; safe on a zeroed or partially opened struct, and twice. */
void st_close(SafeTensors *s);

/* Converts a stored tensor into a newly allocated HTensor of dtype `dt` (caller frees it with
 * htensor_free). Floats to ints truncate as torch does; bools come out as 0/1. */
Status st_to_htensor(const StTensor *t, DType dt, HTensor *out);

/* Writes tensors (name + HTensor, any dtype) as a safetensors file, atomically. Header keys come
 * in the given order, data is packed in the same order. */
Status st_write(const char *path, int n, const char *const *names, const HTensor *const *ts,
                DiagList *d);
/* st_write with "__metadata__": `meta` is NULL or {key0, value0, key1, value1, ..., NULL}. */
Status st_write_meta(const char *path, int n, const char *const *names, const HTensor *const *ts,
                     const char *const *meta, DiagList *d);

#endif
