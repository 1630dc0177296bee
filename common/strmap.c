#include "common/strmap.h"

#include <stdlib.h>
#include <string.h>
#include "common/hash.h"

void strmap_init(StrMap *m)
{
    memset(m, 0, sizeof *m);
}

static size_t slot(const StrMap *m, const char *key)
{
    size_t mask = m->cap - 1;
    size_t i = (size_t)hash64(key, strlen(key)) & mask;
    while (m->keys[i] && strcmp(m->keys[i], key) != 0)
        i = (i + 1) & mask;
    return i;
}

static bool grow(StrMap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    const char **keys = calloc(cap, sizeof *keys);
    void **vals = calloc(cap, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return false;
    }
    StrMap n = {keys, vals, cap, 0};
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i]) continue;
        size_t j = slot(&n, m->keys[i]);
        n.keys[j] = m->keys[i];
        n.vals[j] = m->vals[i];
        n.count++;
    }
    free(m->keys);
    free(m->vals);
    *m = n;
    return true;
}

bool strmap_put(StrMap *m, const char *key, void *val)
{
    if ((m->count + 1) * 2 > m->cap && !grow(m)) return false;
    size_t i = slot(m, key);
    if (!m->keys[i]) {
        m->keys[i] = key;
        m->count++;
    }
    m->vals[i] = val;
    return true;
}

void *strmap_get(const StrMap *m, const char *key)
{
    if (!m->cap || !key) return NULL;
    size_t i = slot(m, key);
    return m->keys[i] ? m->vals[i] : NULL;
}

bool strmap_has(const StrMap *m, const char *key)
{
    if (!m->cap || !key) return false;
    return m->keys[slot(m, key)] != NULL;
}

bool strmap_copy(StrMap *dst, const StrMap *src)
{
    strmap_init(dst);
    if (!src->cap) return true;
    dst->keys = malloc(sizeof *dst->keys * src->cap);
    dst->vals = malloc(sizeof *dst->vals * src->cap);
    if (!dst->keys || !dst->vals) {
        strmap_free(dst);
        return false;
    }
    memcpy(dst->keys, src->keys, sizeof *dst->keys * src->cap);
    memcpy(dst->vals, src->vals, sizeof *dst->vals * src->cap);
    dst->cap = src->cap;
    dst->count = src->count;
    return true;
}

void strmap_free(StrMap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}
