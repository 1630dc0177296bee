#include "common/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for more bytes and the NUL; false once an allocation failed. */
static bool reserve(StrBuf *b, size_t more)
{
    if (b->failed) return false;
    if (b->s && b->n + more < b->cap) return true;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + more + 1)
        cap *= 2;
    char *p = realloc(b->s, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->s = p;
    b->cap = cap;
    return true;
}

void sb_add(StrBuf *b, const char *s, size_t n)
{
    if (!reserve(b, n)) return;
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}

void sb_puts(StrBuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

void sb_printf(StrBuf *b, const char *fmt, ...)
{
    /* formats into the room left; when it does not fit, grows and formats again */
    while (!b->failed) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->failed = true;
        } else if (b->s && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        } else {
            reserve(b, (size_t)k);
        }
    }
}

char *sb_take(StrBuf *b)
{
    if (!b->s) reserve(b, 0);
    char *s = b->failed ? NULL : b->s;
    if (b->failed) free(b->s);
    if (s && b->n == 0) s[0] = 0;
    *b = (StrBuf){0};
    return s;
}
