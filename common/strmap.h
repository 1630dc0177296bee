/* String -> pointer hash map (open addressing, linear probing). Keys are not copied: they must
 * outlive the map (usually they live in the same arena). Used for name lookups everywhere. */
#ifndef NPU_STRMAP_H
#define NPU_STRMAP_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct StrMap {
    const char **keys;
    void **vals;
    uint32_t *hashes; /* of each key (hash64_str's low bits): most probes skip the strcmp */
    size_t cap, count;
} StrMap;

void strmap_init(StrMap *m);
/* Returns false on allocation failure. Replaces an existing value. */
bool strmap_put(StrMap *m, const char *key, void *val);
void *strmap_get(const StrMap *m, const char *key);
bool strmap_has(const StrMap *m, const char *key);
/* A copy sharing the keys (and values) of src. */
bool strmap_copy(StrMap *dst, const StrMap *src);
void strmap_free(StrMap *m);

#endif
