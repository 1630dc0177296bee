#include "common/arena.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ArenaBlock {
    ArenaBlock *next;
    size_t size, used;
    size_t dirty; /* data[dirty..size) is known to be zero */
    _Alignas(16) unsigned char data[];
};

/* A block this large is calloc'd: the allocator hands it out zeroed (fresh pages it need not
 * touch), so an allocation from it is cleared only where the block was used before; the pages
 * of a large array that is never filled to its capacity are never touched. */
#define ARENA_CLEAN_BLOCK (128 * 1024)

void arena_init(Arena *a, size_t block_size)
{
    a->head = NULL;
    a->block_size = block_size ? block_size : 64 * 1024;
    a->used_total = 0;
    a->failed = 0;
}

void *arena_alloc(Arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (n == 0) n = 16;
    ArenaBlock *b = a->head;
    if (!b || b->size - b->used < n) {
        size_t sz = n > a->block_size ? n : a->block_size;
        bool clean = sz >= ARENA_CLEAN_BLOCK;
        b = clean ? calloc(1, sizeof *b + sz) : malloc(sizeof *b + sz);
        if (!b) {
            a->failed = 1;
            return NULL;
        }
        b->size = sz;
        b->used = 0;
        b->dirty = clean ? 0 : sz;
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    if (b->used < b->dirty) memset(p, 0, (b->dirty - b->used < n) ? b->dirty - b->used : n);
    b->used += n;
    if (b->dirty < b->used) b->dirty = b->used;
    a->used_total += n;
    return p;
}

void *arena_dup(Arena *a, const void *p, size_t n)
{
    void *q = arena_alloc(a, n);
    if (q && n) memcpy(q, p, n);
    return q;
}

char *arena_strdup(Arena *a, const char *s)
{
    if (!s) return NULL;
    return arena_dup(a, s, strlen(s) + 1);
}

char *arena_printf(Arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return NULL;
    char *p = arena_alloc(a, (size_t)n + 1);
    if (!p) return NULL;
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

void arena_reset(Arena *a)
{
    ArenaBlock *b = a->head;
    a->failed = 0;
    if (!b) return;
    while (b->next) {
        ArenaBlock *n = b->next;
        b->next = n->next;
        free(n);
    }
    b->used = 0;
    a->used_total = 0;
    a->failed = 0;
}

void arena_free(Arena *a)
{
    ArenaBlock *b = a->head;
    while (b) {
        ArenaBlock *n = b->next;
        free(b);
        b = n;
    }
    a->head = NULL;
    a->used_total = 0;
}
