/* A growing NUL-terminated string that generated text is written into: kernel sources and their
 * expanded includes, DOT graphs. A failed allocation is sticky: every later write does nothing and
 * sb_take returns NULL, so a writer checks once at the end. Any layer may use it. */
#ifndef NPU_STRBUF_H
#define NPU_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

#include "common/diag.h" /* NPU_PRINTF */

typedef struct StrBuf {
    char *s; /* NUL-terminated once anything was written */
    size_t n, cap;
    bool failed;
} StrBuf;

/* Appends the n bytes at s. */
void sb_add(StrBuf *b, const char *s, size_t n);
/* Appends the string s. */
void sb_puts(StrBuf *b, const char *s);
/* Appends printf-formatted text. */
void sb_printf(StrBuf *b, const char *fmt, ...) NPU_PRINTF(2, 3);
/* The text, malloc'd and the caller's ("" when nothing was written), or NULL when an allocation
 * failed; b is empty again after. */
char *sb_take(StrBuf *b);

#endif
