/* Allocation failure injection: this binary is linked with --wrap=malloc,calloc,realloc (see the
 * Makefile), so the Nth allocation made by our code can be made to fail. For every N up to the
 * number of allocations that importing and compiling a model takes, the failure must come back
 * as an error status (never a crash), and under AddressSanitizer nothing may leak on the way
 * out. Allocations inside libraries (json-c, libc's strdup) are not counted: they are theirs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/npubin.h"
#include "compiler/pass.h"
#include "tests/testutil.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);

static long count, fail_at; /* fail_at 0: never */

static int should_fail(void)
{
    return ++count == fail_at;
}

void *__wrap_malloc(size_t n)
{
    return should_fail() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
    return should_fail() ? NULL : __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
    return should_fail() ? NULL : __real_realloc(p, n);
}

/* Compiles `path` and writes its plan; returns the status. */
static Status compile_once(const char *path, const char *out)
{
    CompileOptions o;
    compile_defaults(&o);
    Pipeline p;
    memset(&p, 0, sizeof p);
    DiagList d = {0};
    Status st = pipeline_run(path, &o, &p, &d);
    if (st == ST_OK) st = npubin_write(p.plan, out, &d);
    pipeline_free(&p);
    diag_free(&d);
    return st;
}

/* The file as a hex string (malloc'd). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    int c;
    while (s && (c = fgetc(f)) != EOF) {
        if (n + 3 >= cap) {
            char *t = realloc(s, cap *= 2);
            if (!t) {
                free(s);
                s = NULL;
                break;
            }
            s = t;
        }
        n += (size_t)snprintf(s + n, cap - n, "%02x", c);
    }
    fclose(f);
    if (s) s[n] = 0;
    return s;
}

static void sweep(const char *path)
{
    char out[] = "/tmp/npu-nomem-XXXXXX";
    int fd = mkstemp(out);
    assert_true(fd >= 0);
    fail_at = 0, count = 0;
    assert_int_equal(compile_once(path, out), ST_OK);
    long total = count;
    assert_true(total > 10);
    char *clean = slurp(out);
    assert_non_null(clean);
    int failed = 0;
    for (long n = 1; n <= total; n++) {
        fail_at = n, count = 0;
        Status st = compile_once(path, out);
        failed += st != ST_OK;
        if (st == ST_OK) { /* a failure it could absorb must not change the program */
            fail_at = 0;
            char *again = slurp(out);
            assert_non_null(again);
            if (strcmp(again, clean) != 0)
                fail_msg("allocation %ld failed silently: the plan differs", n);
            free(again);
        }
    }
    free(clean);
    fail_at = 0;
    /* most injected failures must surface as errors (a few allocations are optional caches) */
    fprintf(stderr, "%s: %ld allocations, %d injected failures reported as errors\n", path, total,
            failed);
    assert_true(failed > total / 2);
    remove(out);
}

static void test_nomem_mlp(void **state)
{
    (void)state;
    sweep("tests/models/mlp/model.json");
}

static void test_nomem_convnet(void **state)
{
    (void)state;
    sweep("tests/models/convnet/model.json");
}

TU_MAIN(test_nomem_mlp, test_nomem_convnet)
