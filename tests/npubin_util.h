/* .npubin test helpers: plans compiled from the bundled models, their file images, and
 * targeted edits of a file's msgpack object tree re-wrapped behind a valid checksum (so a reader
 * check past the checksum is what a test reaches). Failures are cmocka assertions. Shared by the
 * .npubin tests; linked into every test binary. */
#ifndef NPU_TESTS_NPUBIN_UTIL_H
#define NPU_TESTS_NPUBIN_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <msgpack.h>
#include "compiler/plan.h"

/* The plan of the IR at path (f16, channel tile 32, every float input packed on the device),
 * as the compiler's passes and lowering make it. The caller frees it (plan_free). */
Plan *nu_build_plan(const char *path);
/* p encoded as a file image of *len bytes (malloc'd: the caller frees it); asserts success. */
unsigned char *nu_encode(const Plan *p, size_t *len);
/* v as n little-endian bytes at b. */
void nu_put_le(unsigned char *b, uint64_t v, int n);
/* A file image around `payload` with this format version and a correct checksum. Caller frees. */
unsigned char *nu_wrap(const void *payload, size_t n, uint32_t version, size_t *len);
/* Recomputes the checksum of the file image b[0..len). */
void nu_reseal(unsigned char *b, size_t len);

/* The value of key k in map (asserts it is there). */
msgpack_object *nu_key(msgpack_object *map, const char *k);
/* Renames key `from` of map to `to` (asserts it is there): a key a reader would miss. */
void nu_rename(msgpack_object *map, const char *from, const char *to);
/* Element i of array arr (asserts it exists). */
msgpack_object *nu_elem(msgpack_object *arr, uint32_t i);
/* root[list][i][k]: key k of record i of the array `list`. */
msgpack_object *nu_rec(msgpack_object *root, const char *list, uint32_t i, const char *k);
void nu_set_int(msgpack_object *o, int64_t v);
/* o becomes the string s[0..n) (not copied: s must outlive the object). */
void nu_set_str(msgpack_object *o, const char *s, uint32_t n);
/* o becomes an array of n integers v, allocated in z. */
void nu_set_ints(msgpack_object *o, msgpack_zone *z, uint32_t n, int64_t v);
/* Removes key `name` from map m, if it has it. */
void nu_drop_key_of(msgpack_object *m, const char *name);
/* Removes key `name` from every record of the array `array` (an older file had no such key). */
void nu_drop_key(msgpack_object *r, const char *array, const char *name);

/* An edit of a payload's object tree (new objects allocated in z). */
typedef void (*NuMutate)(msgpack_object *root, msgpack_zone *z);
/* Encodes p, applies fn to the payload's object tree and re-wraps it as format `version` with a
 * valid checksum (*len bytes; the caller frees it). */
unsigned char *nu_mutated(const Plan *p, NuMutate fn, uint32_t version, size_t *len);

#endif
