/* 64-bit FNV-1a hashing for checksums and cache keys. */
#ifndef NPU_HASH_H
#define NPU_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t hash64(const void *data, size_t n);
uint64_t hash64_update(uint64_t h, const void *data, size_t n);
/* hash64 of a NUL-terminated string (its bytes before the NUL), in one pass. */
uint64_t hash64_str(const char *s);
#define HASH64_INIT 0xcbf29ce484222325ULL

#endif
