#include "common/strmap.h"

#include <stdlib.h>
#include <string.h>
#include "common/hash.h"

void strmap_init(StrMap *m)
{
    memset(m, 0, sizeof *m);
}

/* The slot of `key` (hash h): where it is, or the empty slot where it would go. */
static size_t slot(const StrMap *m, const char *key, uint64_t h)
{
    size_t mask = m->cap - 1;
    size_t i = (size_t)h & mask;
    while (m->keys[i] && (m->hashes[i] != (uint32_t)h || strcmp(m->keys[i], key) != 0))
        i = (i + 1) & mask;
    return i;
}

static bool alloc_arrays(StrMap *m, size_t cap, bool zero)
{
    m->keys = zero ? calloc(cap, sizeof *m->keys) : malloc(cap * sizeof *m->keys);
    m->vals = zero ? calloc(cap, sizeof *m->vals) : malloc(cap * sizeof *m->vals);
    m->hashes = zero ? calloc(cap, sizeof *m->hashes) : malloc(cap * sizeof *m->hashes);
    m->cap = cap;
    m->count = 0;
    if (m->keys && m->vals && m->hashes) return true;
    strmap_free(m);
    return false;
}

static bool grow(StrMap *m)
{
    StrMap n;
    if (!alloc_arrays(&n, m->cap ? m->cap * 2 : 64, true)) return false;
    size_t mask = n.cap - 1;
    for (size_t i = 0; i < m->cap; i++) { /* keys are distinct: each goes to the first free slot */
        if (!m->keys[i]) continue;
        size_t j = m->hashes[i] & mask;
        while (n.keys[j])
            j = (j + 1) & mask;
        n.keys[j] = m->keys[i];
        n.vals[j] = m->vals[i];
        n.hashes[j] = m->hashes[i];
        n.count++;
    }
    strmap_free(m);
    *m = n;
    return true;
}

bool strmap_put(StrMap *m, const char *key, void *val)
{
    if ((m->count + 1) * 2 > m->cap && !grow(m)) return false;
    uint64_t h = hash64_str(key);
    size_t i = slot(m, key, h);
    if (!m->keys[i]) {
        m->keys[i] = key;
        m->hashes[i] = (uint32_t)h;
        m->count++;
    }
    m->vals[i] = val;
    return true;
}

void *strmap_get(const StrMap *m, const char *key)
{
    if (!m->cap || !key) return NULL;
    size_t i = slot(m, key, hash64_str(key));
    return m->keys[i] ? m->vals[i] : NULL;
}

bool strmap_has(const StrMap *m, const char *key)
{
    if (!m->cap || !key) return false;
    return m->keys[slot(m, key, hash64_str(key))] != NULL;
}

bool strmap_copy(StrMap *dst, const StrMap *src)
{
    strmap_init(dst);
    if (!src->cap) return true;
    if (!alloc_arrays(dst, src->cap, false)) return false;
    memcpy(dst->keys, src->keys, sizeof *dst->keys * src->cap);
    memcpy(dst->vals, src->vals, sizeof *dst->vals * src->cap);
    memcpy(dst->hashes, src->hashes, sizeof *dst->hashes * src->cap);
    dst->count = src->count;
    return true;
}

void strmap_free(StrMap *m)
{
    free(m->keys);
    free(m->vals);
    free(m->hashes);
    memset(m, 0, sizeof *m);
}
