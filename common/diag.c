#include "common/diag.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

static char *dup_or_null(const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

static bool same(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static Status vadd(DiagList *d, DiagLevel lvl, Status st, const char *file, const char *node,
                   const char *tensor, const char *fmt, va_list ap)
{
    if (!d) return st;
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    /* a warning or note already in the list is not repeated (a model compiled several times:
     * profile's two runners, bisect's steps) */
    for (int i = 0; lvl != DIAG_ERROR && i < d->count; i++) {
        const Diag *o = &d->items[i];
        if (o->level == lvl && same(o->file, file) && same(o->node, node) &&
            same(o->tensor, tensor) && same(o->msg, msg))
            return st;
    }
    Diag *p = grow_array(d->items, d->count, &d->cap, sizeof *p, 8);
    if (!p) return st;
    d->items = p;
    Diag *g = &d->items[d->count++];
    g->level = lvl;
    g->file = dup_or_null(file);
    g->node = dup_or_null(node);
    g->tensor = dup_or_null(tensor);
    g->msg = dup_or_null(msg);
    if (lvl == DIAG_ERROR) d->errors++;
    return st;
}

Status diag_error(DiagList *d, const char *file, const char *node, const char *tensor,
                  const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    Status st = vadd(d, DIAG_ERROR, ST_BAD_INPUT, file, node, tensor, fmt, ap);
    va_end(ap);
    return st;
}

Status diag_add(DiagList *d, DiagLevel lvl, Status st, const char *file, const char *node,
                const char *tensor, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    st = vadd(d, lvl, st, file, node, tensor, fmt, ap);
    va_end(ap);
    return st;
}

void diag_format(const Diag *g, char *buf, size_t n)
{
    static const char *lv[] = {"error", "warning", "note"};
    size_t k = 0;
    k += (size_t)snprintf(buf + k, n - k, "%s: ", lv[g->level]);
    if (k < n && g->file) k += (size_t)snprintf(buf + k, n - k, "%s: ", g->file);
    if (k < n && g->node) k += (size_t)snprintf(buf + k, n - k, "node '%s': ", g->node);
    if (k < n && g->tensor) k += (size_t)snprintf(buf + k, n - k, "tensor '%s': ", g->tensor);
    if (k < n) snprintf(buf + k, n - k, "%s", g->msg ? g->msg : "");
}

void diag_print(const DiagList *d, FILE *f)
{
    char buf[2048];
    for (int i = 0; i < d->count; i++) {
        diag_format(&d->items[i], buf, sizeof buf);
        fprintf(f, "%s\n", buf);
    }
}

void diag_truncate(DiagList *d, int count)
{
    for (int i = count < 0 ? 0 : count; i < d->count; i++) {
        Diag *g = &d->items[i];
        d->errors -= g->level == DIAG_ERROR;
        free(g->file);
        free(g->node);
        free(g->tensor);
        free(g->msg);
    }
    if (count < d->count) d->count = count < 0 ? 0 : count;
}

void diag_clear(DiagList *d)
{
    diag_truncate(d, 0);
    d->errors = 0;
}

void diag_free(DiagList *d)
{
    diag_clear(d);
    free(d->items);
    d->items = NULL;
    d->cap = 0;
}
