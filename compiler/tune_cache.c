/* The tuning cache file and its lookups; see tune_cache.h. */
#include "compiler/tune_cache.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/grow.h"

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c) memcpy(c, s, n);
    return c;
}

static int find(const TuneCache *c, const char *device, const char *key)
{
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->e[i].device, device) == 0 && strcmp(c->e[i].key, key) == 0) return i;
    return -1;
}

const TuneEntry *tune_cache_find(const TuneCache *c, const char *device, const char *key)
{
    int i = c && device && key ? find(c, device, key) : -1;
    return i >= 0 ? &c->e[i] : NULL;
}

/* A field of a line: no tab, no newline, not empty. */
static bool field_ok(const char *s)
{
    return s && *s && !strpbrk(s, "\t\n\r");
}

Status tune_cache_put(TuneCache *c, const char *device, const char *key, const Tuning *knobs,
                      double default_us, double tuned_us, DiagList *d)
{
    if (!field_ok(device) || !field_ok(key))
        return diag_error(d, NULL, NULL, NULL,
                          "tuning cache: an empty device or key, or one holding a tab or newline");
    for (int i = 0; i < TUNE_COUNT; i++)
        if ((knobs->set >> i & 1u) && tune_info[i].use != TU_SEARCH)
            return diag_error(d, NULL, NULL, NULL,
                              "tuning cache: %s is a bench-only knob (it changes results)",
                              tune_info[i].name);
    int i = find(c, device, key);
    if (i < 0) {
        TuneEntry *v = grow_array(c->e, c->n, &c->cap, sizeof *v, 16);
        if (!v) return ST_NOMEM;
        c->e = v;
        TuneEntry *e = &c->e[c->n];
        e->device = dup_str(device);
        e->key = dup_str(key);
        if (!e->device || !e->key) {
            free(e->device);
            free(e->key);
            return ST_NOMEM;
        }
        i = c->n++;
    }
    c->e[i].knobs = *knobs;
    c->e[i].knobs.env = 0;
    c->e[i].default_us = default_us;
    c->e[i].tuned_us = tuned_us;
    return ST_OK;
}

void tune_cache_drop(TuneCache *c, const char *device, const char *key)
{
    int i = find(c, device, key);
    if (i < 0) return;
    free(c->e[i].device);
    free(c->e[i].key);
    memmove(c->e + i, c->e + i + 1, sizeof *c->e * (size_t)(c->n - i - 1));
    c->n--;
}

int tune_cache_devices(const TuneCache *c, const char **dev, int max)
{
    int n = 0;
    for (int i = 0; i < c->n; i++) {
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = strcmp(c->e[j].device, c->e[i].device) == 0;
        if (seen) continue;
        if (n < max) dev[n] = c->e[i].device;
        n++;
    }
    return n;
}

int tune_cache_count(const TuneCache *c, const char *device)
{
    int n = 0;
    for (int i = 0; i < c->n; i++)
        n += strcmp(c->e[i].device, device) == 0;
    return n;
}

void tune_cache_free(TuneCache *c)
{
    for (int i = 0; i < c->n; i++) {
        free(c->e[i].device);
        free(c->e[i].key);
    }
    free(c->e);
    memset(c, 0, sizeof *c);
}

/* A time field: microseconds >= 0, or "-" (not measured: -1). */
static bool parse_us(const char *s, double *us)
{
    if (strcmp(s, "-") == 0) {
        *us = -1;
        return true;
    }
    char *end = NULL;
    errno = 0;
    *us = strtod(s, &end);
    return *s && end && !*end && !errno && isfinite(*us) && *us >= 0;
}

/* One line (tabs split in place): an entry of c, or a warning naming path:lineno. */
static Status read_line(TuneCache *c, char *line, const char *path, int lineno, DiagList *d)
{
    char *f[6];
    int nf = 0;
    for (char *s = line; nf < 6;) {
        f[nf++] = s;
        char *tab = strchr(s, '\t');
        if (!tab) break;
        *tab = '\0';
        s = tab + 1;
    }
    char why[300] = "";
    Tuning t = {0};
    double du = -1, tu = -1;
    if (nf != 5) {
        snprintf(why, sizeof why, "%d tab-separated fields, expected 5", nf);
    } else if (!*f[0] || !*f[1]) {
        snprintf(why, sizeof why, "an empty device or kernel key");
    } else if (!parse_us(f[3], &du) || !parse_us(f[4], &tu)) {
        snprintf(why, sizeof why, "the times '%.30s' '%.30s' are not microseconds", f[3], f[4]);
    } else {
        DiagList e = {0};
        if (tuning_parse_list(&t, f[2], &e) != ST_OK) { /* tuning_set's words, less "--tune" */
            const char *m = e.count ? e.items[0].msg : "bad knobs";
            if (strncmp(m, "--tune", 6) == 0) m += 6 + strspn(m + 6, ": ");
            snprintf(why, sizeof why, "knobs: %s", m);
        }
        diag_free(&e);
        for (int i = 0; !why[0] && i < TUNE_COUNT; i++)
            if ((t.set >> i & 1u) && tune_info[i].use != TU_SEARCH)
                snprintf(why, sizeof why, "%s is bench only (it changes results)",
                         tune_info[i].name);
    }
    if (why[0]) {
        diag_add(d, DIAG_WARNING, ST_OK, path, NULL, NULL, "line %d: %s; line ignored", lineno,
                 why);
        return ST_OK;
    }
    DiagList e = {0};
    Status st = tune_cache_put(c, f[0], f[1], &t, du, tu, &e);
    if (st == ST_BAD_INPUT) /* a field put refuses: ignored as any bad line */
        diag_add(d, DIAG_WARNING, ST_OK, path, NULL, NULL, "line %d: %s; line ignored", lineno,
                 e.count ? e.items[0].msg : "bad entry");
    diag_free(&e);
    return st == ST_BAD_INPUT ? ST_OK : st;
}

Status tune_cache_read(TuneCache *c, const char *path, bool *foreign, DiagList *d)
{
    if (foreign) *foreign = false;
    if (!file_exists(path)) return ST_OK;
    char *text = NULL;
    size_t len = 0;
    Status st = file_read_all(path, &text, &len, d);
    if (st != ST_OK) return st;
    size_t hl = strlen(TUNE_CACHE_HEADER);
    if (len < hl || memcmp(text, TUNE_CACHE_HEADER, hl) != 0 ||
        (text[hl] != '\n' && text[hl] != '\0') || memchr(text, '\0', len)) {
        if (foreign) *foreign = true;
        diag_add(d, DIAG_WARNING, ST_OK, path, NULL, NULL,
                 "not an npu-explore tuning cache (its first line is not '%s'); ignored",
                 TUNE_CACHE_HEADER);
        free(text);
        return ST_OK;
    }
    int lineno = 1;
    char *s = text + hl + (text[hl] == '\n');
    while (st == ST_OK && *s) {
        lineno++;
        char *nl = strchr(s, '\n');
        if (nl) *nl = '\0';
        size_t n = strlen(s);
        if (n && s[n - 1] == '\r') s[n - 1] = '\0';
        if (*s && *s != '#') st = read_line(c, s, path, lineno, d);
        s = nl ? nl + 1 : s + n;
    }
    free(text);
    return st;
}

Status tune_cache_write(const TuneCache *c, const char *path, DiagList *d)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return ST_NOMEM;
    fprintf(f,
            "%s\n# device\tkernel key\tknobs\tdefault_us\ttuned_us (written by npu-explore tune; "
            "docs/CLI.md)\n",
            TUNE_CACHE_HEADER);
    for (int i = 0; i < c->n; i++) {
        const TuneEntry *e = &c->e[i];
        char knobs[512], du[32] = "-", tu[32] = "-";
        tuning_format_set(&e->knobs, knobs, sizeof knobs);
        if (e->default_us >= 0) snprintf(du, sizeof du, "%.3f", e->default_us);
        if (e->tuned_us >= 0) snprintf(tu, sizeof tu, "%.3f", e->tuned_us);
        fprintf(f, "%s\t%s\t%s\t%s\t%s\n", e->device, e->key, knobs, du, tu);
    }
    if (fclose(f) != 0) {
        free(buf);
        return ST_NOMEM;
    }
    Status st = file_write_atomic(path, buf, len, d);
    free(buf);
    return st;
}

void tune_apply(const Tuning *global, const TuneEntry *entry, KernelKind kind, Tuning *out,
                char *rec, size_t n)
{
    *out = *global;
    Tuning took = {0};
    for (int i = 0; entry && i < TUNE_COUNT; i++) {
        TuneMask bit = TUNE_BIT(i);
        if (!(entry->knobs.set & bit) || (global->set & bit) ||
            !tuning_knob_shapes((TuneId)i, kind) || tune_info[i].use != TU_SEARCH)
            continue;
        out->v[i] = took.v[i] = entry->knobs.v[i];
        out->set |= bit;
        took.set |= bit;
    }
    tuning_format_set(&took, rec, n);
}
