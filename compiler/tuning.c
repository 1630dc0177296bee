/* The tuning table (tuning.def) and its parsing; see tuning.h. */
#include "compiler/tuning.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/lower/kernels.h" /* the defaults' constants: KC_CONV_TARGET, ATTN_MAX_G, ... */

const TuneInfo tune_info[TUNE_COUNT] = {
#define X(id, nm, ev, ps, l, h, k, d, fm, u, w)                                                    \
    [TUNE_##id] = {.name = nm,                                                                     \
                   .env = ev,                                                                      \
                   .pos = ps,                                                                      \
                   .lo = l,                                                                        \
                   .hi = h,                                                                        \
                   .kind = k,                                                                      \
                   .dflt = d,                                                                      \
                   .family = fm,                                                                   \
                   .use = u,                                                                       \
                   .why = w},
#include "compiler/tuning.def"
#undef X
};

int64_t tuning_get(const Tuning *t, TuneId id)
{
    return t->set >> id & 1u ? t->v[id] : tune_info[id].dflt;
}

int tuning_find(const char *name)
{
    for (int i = 0; i < TUNE_COUNT; i++)
        if (strcmp(tune_info[i].name, name) == 0) return i;
    return -1;
}

int tuning_env_parts(TuneId id)
{
    int n = 0;
    for (int j = 0; j < TUNE_COUNT; j++)
        n += strcmp(tune_info[j].env, tune_info[id].env) == 0;
    return n;
}

const char *tuning_range(TuneId id, char *buf, size_t n)
{
    const TuneInfo *k = &tune_info[id];
    static const char *const kinds[] = {
        [TK_INT] = "", [TK_POW2] = "a power of two in ", [TK_MUL32] = "a multiple of 32 in "};
    snprintf(buf, n, "%s%" PRId64 "..%" PRId64 "%s", kinds[k->kind], k->lo, k->hi,
             k->dflt == TUNE_AUTO ? ", or auto" : "");
    return buf;
}

/* Parses text as knob id's value into *v (TUNE_AUTO for "auto"); false when it is not one. */
static bool parse_value(TuneId id, const char *text, int64_t *v)
{
    const TuneInfo *k = &tune_info[id];
    if (strcmp(text, "auto") == 0) {
        *v = TUNE_AUTO;
        return k->dflt == TUNE_AUTO;
    }
    char *end = NULL;
    long long x = *text ? strtoll(text, &end, 0) : 0;
    if (!*text || !end || *end || x < k->lo || x > k->hi) return false;
    if (k->kind == TK_POW2 && (x & (x - 1)) != 0) return false;
    if (k->kind == TK_MUL32 && x % 32 != 0) return false;
    *v = (int64_t)x;
    return true;
}

static void put(Tuning *t, TuneId id, int64_t v, bool from_env)
{
    TuneMask bit = TUNE_BIT(id);
    t->v[id] = v;
    t->set = v == TUNE_AUTO ? t->set & ~bit : t->set | bit;
    t->env = from_env && v != TUNE_AUTO ? t->env | bit : t->env & ~bit;
}

Status tuning_set(Tuning *t, const char *assign, DiagList *d)
{
    const char *eq = strchr(assign, '=');
    char name[64];
    size_t len = eq ? (size_t)(eq - assign) : strlen(assign);
    snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), assign);
    int id = len < sizeof name ? tuning_find(name) : -1;
    if (id < 0)
        return diag_error(d, NULL, NULL, NULL,
                          "--tune: unknown knob '%s' (npu-explore tuning lists them)", name);
    char r[64];
    int64_t v;
    if (!eq || !parse_value((TuneId)id, eq + 1, &v))
        return diag_error(d, NULL, NULL, NULL, "--tune %s: '%s' is not %s", name, eq ? eq + 1 : "",
                          tuning_range((TuneId)id, r, sizeof r));
    put(t, (TuneId)id, v, false);
    return ST_OK;
}

Status tuning_from_env(Tuning *t, DiagList *d)
{
    for (int i = 0; i < TUNE_COUNT; i++) {
        const TuneInfo *k = &tune_info[i];
        const char *e = getenv(k->env);
        if (!e || !*e) continue;
        /* this knob's part of the tuple: the text between commas pos and pos + 1 */
        const char *s = e;
        for (int p = 0; p < k->pos && s; p++) {
            s = strchr(s, ',');
            if (s) s++;
        }
        int nparts = tuning_env_parts((TuneId)i);
        int commas = 0;
        for (const char *c = e; *c; c++)
            commas += *c == ',';
        char part[64], r[64];
        size_t len = s ? strcspn(s, ",") : 0;
        snprintf(part, sizeof part, "%.*s", (int)(len < sizeof part ? len : sizeof part - 1),
                 s ? s : "");
        int64_t v;
        if (commas != nparts - 1 || len >= sizeof part || !parse_value((TuneId)i, part, &v))
            return diag_error(d, NULL, NULL, NULL, "%s='%s': %s%s must be %s (docs/tuning.md)",
                              k->env, e, nparts > 1 ? "every part must be given; " : "", k->name,
                              tuning_range((TuneId)i, r, sizeof r));
        put(t, (TuneId)i, v, true);
    }
    return ST_OK;
}

/* Is knob i given a value other than its default? */
static bool changed(const Tuning *t, int i)
{
    return (t->set >> i & 1u) && t->v[i] != tune_info[i].dflt;
}

/* The knobs set in t (only those that differ from their defaults unless `all`) as
 * "name=value" words into buf. */
static void format_knobs(const Tuning *t, bool all, char *buf, size_t n)
{
    size_t at = 0;
    if (n) buf[0] = '\0';
    for (int i = 0; i < TUNE_COUNT && at < n; i++) {
        if (all ? !(t->set >> i & 1u) : !changed(t, i)) continue;
        int w =
            snprintf(buf + at, n - at, "%s%s=%" PRId64, at ? " " : "", tune_info[i].name, t->v[i]);
        at += w > 0 ? (size_t)w : 0;
    }
}

void tuning_format(const Tuning *t, char *buf, size_t n)
{
    format_knobs(t, false, buf, n);
}

void tuning_format_env(const Tuning *t, char *buf, size_t n)
{
    size_t at = 0;
    if (n) buf[0] = '\0';
    for (int i = 0; i < TUNE_COUNT && at < n; i++) {
        if (!changed(t, i) || !(t->env >> i & 1u)) continue;
        bool seen = false; /* a tuple's variable once */
        for (int j = 0; j < i; j++)
            seen |= changed(t, j) && (t->env >> j & 1u) &&
                    strcmp(tune_info[j].env, tune_info[i].env) == 0;
        if (seen) continue;
        int w = snprintf(buf + at, n - at, "%s%s", at ? " " : "", tune_info[i].env);
        at += w > 0 ? (size_t)w : 0;
    }
}

static bool pow2(int64_t x)
{
    return x > 0 && (x & (x - 1)) == 0;
}

/* Adds x to the ascending list v[0..*n) unless it is there already or outside knob k. */
static void add_candidate(const TuneInfo *k, int64_t x, int64_t *v, int *n, int max)
{
    if (x < k->lo || x > k->hi || *n >= max) return;
    if ((k->kind == TK_POW2 && !pow2(x)) || (k->kind == TK_MUL32 && x % 32 != 0)) return;
    int i = 0;
    while (i < *n && v[i] < x)
        i++;
    if (i < *n && v[i] == x) return;
    memmove(v + i + 1, v + i, sizeof *v * (size_t)(*n - i));
    v[i] = x;
    (*n)++;
}

int tuning_candidates(TuneId id, int64_t *v, int max)
{
    const TuneInfo *k = &tune_info[id];
    int n = 0;
    if (k->use == TU_BENCH) { /* an ablation's parts, one bit each (searched by tests only) */
        for (int64_t b = 1; b <= k->hi; b *= 2)
            add_candidate(k, b, v, &n, max);
        return n;
    }
    if (k->kind == TK_INT && k->hi - k->lo <= 16) {
        for (int64_t x = k->lo; x <= k->hi; x++)
            add_candidate(k, x, v, &n, max);
        return n;
    }
    add_candidate(k, k->lo, v, &n, max);
    for (int64_t p = 1; p <= k->hi; p *= 2) {
        add_candidate(k, p, v, &n, max);
        if (k->kind == TK_MUL32) add_candidate(k, 3 * p, v, &n, max);
    }
    if (k->dflt != TUNE_AUTO) add_candidate(k, k->dflt, v, &n, max);
    return n;
}

bool tuning_knob_shapes(TuneId id, KernelKind kind)
{
    /* attention_cache is decode_attention's kernel with the cache update (lower_attention.c):
     * the same parameters, read from the same knobs */
    KernelKind fam = kind == KK_attention_cache ? KK_decode_attention : kind;
    return tune_info[id].family == fam;
}

bool tuning_kind_searchable(KernelKind kind)
{
    for (int i = 0; i < TUNE_COUNT; i++)
        if (tuning_knob_shapes((TuneId)i, kind) && tune_info[i].use == TU_SEARCH) return true;
    return false;
}

Status tuning_parse_list(Tuning *t, const char *list, DiagList *d)
{
    char word[128];
    for (const char *s = list; *s;) {
        s += strspn(s, " ");
        size_t len = strcspn(s, " ");
        if (!len) break;
        if (len >= sizeof word)
            return diag_error(d, NULL, NULL, NULL, "knob assignment too long: '%.40s...'", s);
        memcpy(word, s, len);
        word[len] = '\0';
        Status st = tuning_set(t, word, d);
        if (st != ST_OK) return st;
        s += len;
    }
    return ST_OK;
}

void tuning_format_set(const Tuning *t, char *buf, size_t n)
{
    format_knobs(t, true, buf, n);
}
