/* Arena allocator: the compilation lifetime (graph, names, snapshots, plan) and pass scratch.
 * Everything allocated from an arena is freed by arena_free/arena_reset in one call. Allocation
 * failure returns NULL (never aborts); callers report ST_NOMEM. */
#ifndef NPU_ARENA_H
#define NPU_ARENA_H

#include <stddef.h>

typedef struct ArenaBlock ArenaBlock;
typedef struct Arena {
    ArenaBlock *head;
    size_t block_size;
    size_t used_total;
    int failed; /* an allocation returned NULL since init/reset: builders check it once at the end
                 */
} Arena;

void arena_init(Arena *a, size_t block_size);
void *arena_alloc(Arena *a, size_t n); /* zeroed, 16-byte aligned */
void *arena_dup(Arena *a, const void *p, size_t n);
char *arena_strdup(Arena *a, const char *s); /* NULL in, NULL out */
char *arena_printf(Arena *a, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void arena_reset(Arena *a); /* keep the first block, drop the rest */
void arena_free(Arena *a);

#endif
