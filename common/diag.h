/* Diagnostics: the one place errors and warnings are collected. Library code never prints or
 * exits; it appends a Diag naming the file, node and tensor involved and returns a Status. The
 * CLI prints the list, the TUI shows it. */
#ifndef NPU_DIAG_H
#define NPU_DIAG_H

#include <stdio.h>
#include "common/status.h"

typedef enum DiagLevel { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE } DiagLevel;

typedef struct Diag {
    DiagLevel level;
    char *file;   /* may be NULL */
    char *node;   /* may be NULL */
    char *tensor; /* may be NULL */
    char *msg;
} Diag;

typedef struct DiagList {
    Diag *items;
    int count, cap;
    int errors;
} DiagList;

#if defined(__GNUC__)
#define NPU_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define NPU_PRINTF(a, b)
#endif

/* Appends an error and returns ST_BAD_INPUT, so callers can write `return diag_error(...)`. */
Status diag_error(DiagList *d, const char *file, const char *node, const char *tensor,
                  const char *fmt, ...) NPU_PRINTF(5, 6);
/* Appends a diagnostic of any level; `st` is returned unchanged. */
Status diag_add(DiagList *d, DiagLevel lvl, Status st, const char *file, const char *node,
                const char *tensor, const char *fmt, ...) NPU_PRINTF(7, 8);
void diag_print(const DiagList *d, FILE *f);
/* Formats one diagnostic as "file: node 'n': tensor 't': message" into buf. */
void diag_format(const Diag *g, char *buf, size_t n);
void diag_clear(DiagList *d);
/* Drops the diagnostics after the first `count` (a step whose findings are withdrawn). */
void diag_truncate(DiagList *d, int count);
void diag_free(DiagList *d);

#endif
