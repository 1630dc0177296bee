/* common/: the arena hands out zeroed memory whether its block is fresh (calloc'd, left
 * untouched) or reused after a reset; the string map finds every key it was given, through
 * growth, replacement and copies; hash64_str is hash64 of the string; diag_truncate withdraws
 * diagnostics and their error count; grow_array doubles from its first capacity and keeps every
 * element it had; a StrBuf holds what was written to it, past its first block; cache_path
 * prefers $XDG_CACHE_HOME to $HOME/.cache. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/arena.h"
#include "common/diag.h"
#include "common/fileio.h"
#include "common/grow.h"
#include "common/hash.h"
#include "common/strbuf.h"
#include "common/strmap.h"
#include "tests/testutil.h"

static bool all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i]) return false;
    return true;
}

/* Fills what it allocates with 0xff, as a caller would, so a later allocation from the same
 * bytes shows whether it was cleared. */
static unsigned char *dirty_alloc(Arena *a, size_t n)
{
    unsigned char *p = arena_alloc(a, n);
    assert_non_null(p);
    assert_true(all_zero(p, n));
    memset(p, 0xff, n);
    return p;
}

static void test_arena_zeroed(void **state)
{
    (void)state;
    /* small blocks (malloc'd) and large ones (calloc'd, over ARENA_CLEAN_BLOCK) */
    static const size_t blocks[] = {4 * 1024, 1024 * 1024};
    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
        Arena a;
        arena_init(&a, blocks[b]);
        for (int round = 0; round < 3; round++) { /* the first block is reused after a reset */
            for (size_t n = 1; n < blocks[b] / 4; n = n * 3 + 7)
                dirty_alloc(&a, n);
            dirty_alloc(&a, blocks[b] + 100); /* a block of its own */
            dirty_alloc(&a, 40);
            arena_reset(&a);
        }
        char *s = arena_strdup(&a, "name");
        assert_string_equal(s, "name");
        assert_null(arena_strdup(&a, NULL));
        int v[3] = {1, 2, 3};
        int *c = arena_dup(&a, v, sizeof v);
        assert_memory_equal(c, v, sizeof v);
        assert_string_equal(arena_printf(&a, "%s_%d", "t", 7), "t_7");
        arena_free(&a);
    }
}

static void test_strmap(void **state)
{
    (void)state;
    enum { N = 5000 };
    static char keys[N][32];
    StrMap m;
    strmap_init(&m);
    assert_null(strmap_get(&m, "a"));
    assert_false(strmap_has(&m, "a"));
    for (int i = 0; i < N; i++) { /* long shared prefixes, as node names have */
        snprintf(keys[i], sizeof keys[i], "model_layers_%d_mlp", i);
        assert_true(strmap_put(&m, keys[i], (void *)(intptr_t)(i + 1)));
    }
    assert_int_equal(m.count, N);
    char probe[32];
    for (int i = 0; i < N; i++) { /* found by content, not by pointer */
        snprintf(probe, sizeof probe, "model_layers_%d_mlp", i);
        assert_int_equal((intptr_t)strmap_get(&m, probe), i + 1);
    }
    assert_null(strmap_get(&m, "model_layers_5000_mlp"));
    assert_null(strmap_get(&m, NULL));
    assert_true(strmap_put(&m, keys[7], (void *)(intptr_t)100)); /* replaces */
    assert_int_equal(m.count, N);
    StrMap c;
    assert_true(strmap_copy(&c, &m));
    assert_true(strmap_put(&c, "extra", (void *)(intptr_t)1));
    assert_true(strmap_put(&c, keys[8], (void *)(intptr_t)200));
    assert_int_equal((intptr_t)strmap_get(&c, keys[7]), 100);
    assert_int_equal((intptr_t)strmap_get(&c, keys[8]), 200);
    assert_int_equal((intptr_t)strmap_get(&m, keys[8]), 9); /* the copy is its own */
    assert_false(strmap_has(&m, "extra"));
    strmap_free(&c);
    strmap_free(&m);
    StrMap e, ce;
    strmap_init(&e);
    assert_true(strmap_copy(&ce, &e));
    assert_null(strmap_get(&ce, "a"));
    strmap_free(&ce);
}

static void test_hash64_str(void **state)
{
    (void)state;
    static const char *s[] = {"", "a", "model_layers_0_self_attn_q_proj_weight", "\xff\x01"};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        assert_true(hash64_str(s[i]) == hash64(s[i], strlen(s[i])));
    assert_true(hash64_str("") == HASH64_INIT);
}

static void test_diag_truncate(void **state)
{
    (void)state;
    DiagList d = {0};
    diag_error(&d, "f", NULL, NULL, "first");
    diag_add(&d, DIAG_WARNING, ST_OK, "f", NULL, NULL, "a warning");
    diag_error(&d, "f", "n", "t", "second");
    diag_add(&d, DIAG_NOTE, ST_OK, "f", NULL, NULL, "a note");
    assert_int_equal(d.count, 4);
    assert_int_equal(d.errors, 2);
    diag_truncate(&d, 5); /* past the end: nothing */
    assert_int_equal(d.count, 4);
    diag_truncate(&d, 2);
    assert_int_equal(d.count, 2);
    assert_int_equal(d.errors, 1);
    diag_add(&d, DIAG_WARNING, ST_OK, "f", NULL, NULL, "a warning"); /* given already */
    assert_int_equal(d.count, 2);
    diag_truncate(&d, 1); /* a warning withdrawn may be given again */
    diag_add(&d, DIAG_WARNING, ST_OK, "f", NULL, NULL, "a warning");
    assert_int_equal(d.count, 2);
    diag_truncate(&d, 0);
    assert_int_equal(d.count, 0);
    assert_int_equal(d.errors, 0);
    diag_free(&d);
}

static void test_grow_array(void **state)
{
    (void)state;
    int *v = NULL, cap = 0;
    for (int n = 0; n < 100; n++) {
        int before = cap;
        int *w = grow_array(v, n, &cap, sizeof *w, 8);
        assert_non_null(w);
        if (n < before) { /* room left: the same array */
            assert_ptr_equal(w, v);
            assert_int_equal(cap, before);
        } else { /* full: the first capacity, then twice the last */
            assert_int_equal(cap, before ? 2 * before : 8);
        }
        v = w;
        v[n] = n * 3;
    }
    for (int n = 0; n < 100; n++)
        assert_int_equal(v[n], n * 3);
    free(v);
}

static void test_strbuf(void **state)
{
    (void)state;
    StrBuf b = {0};
    char *s = sb_take(&b); /* nothing written: an empty string */
    assert_string_equal(s, "");
    free(s);
    char want[24000] = "";
    size_t n = 0;
    for (int i = 0; i < 1000; i++) { /* past the first 4096 bytes, each kind of write */
        if (i % 3 == 0) {
            sb_printf(&b, "%d,", i);
            n += (size_t)snprintf(want + n, sizeof want - n, "%d,", i);
        } else if (i % 3 == 1) {
            sb_puts(&b, "ab;");
            n += (size_t)snprintf(want + n, sizeof want - n, "ab;");
        } else {
            sb_add(&b, "xyz", 2);
            n += (size_t)snprintf(want + n, sizeof want - n, "xy");
        }
    }
    for (int i = 0; i < 400; i++) { /* formatted text alone across the next growths */
        sb_printf(&b, "%0*d|", i % 37 + 1, i);
        n += (size_t)snprintf(want + n, sizeof want - n, "%0*d|", i % 37 + 1, i);
    }
    assert_int_equal(b.n, n);
    s = sb_take(&b);
    assert_string_equal(s, want);
    assert_null(b.s);
    free(s);
}

static void test_cache_path(void **state)
{
    (void)state;
    char buf[64];
    setenv("XDG_CACHE_HOME", "/x", 1);
    setenv("HOME", "/h", 1);
    assert_string_equal(cache_path(buf, sizeof buf, "kernels"), "/x/npu-explore/kernels");
    assert_null(cache_path(buf, 12, "kernels")); /* does not fit */
    setenv("XDG_CACHE_HOME", "", 1);
    assert_string_equal(cache_path(buf, sizeof buf, "tuned.tsv"),
                        "/h/.cache/npu-explore/tuned.tsv");
    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    assert_null(cache_path(buf, sizeof buf, "tuned.tsv"));
}

TU_MAIN(test_arena_zeroed, test_strmap, test_hash64_str, test_diag_truncate, test_grow_array,
        test_strbuf, test_cache_path)
