/* Runs session commands for the TUI: every action becomes one command line of the session's
 * table, logged as its --batch twin with its output. Interactive runs execute on a worker thread
 * while the main thread only redraws the last frame with a spinner (the views are not rebuilt
 * while the session is busy, so nothing reads it concurrently); Esc sets the session's cancel
 * flag and the command stops at its next step with ST_CANCELLED, logged as "cancelled". A
 * headless script cancels with an Esc right after the key that started the work (typed ahead:
 * the flag is set before the work starts, so the result does not depend on timing). Also parses the profile's JSON
 * lines into the kernels table and keeps bisect's output for its pane. */
#include <json-c/json.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "internal.h"

typedef struct Job {
    Session *s;
    const char *line;
    DiagList d;
    Status st;
    atomic_int done;
} Job;

static void *worker(void *arg)
{
    Job *j = arg;
    j->st = session_exec(j->s, j->line, &j->d);
    atomic_store(&j->done, 1);
    return NULL;
}

/* The next key of an interactive run: first those typed while busy. */
int tui_next_key(Tui *t)
{
    if (t->npending) {
        int k = t->pending[0];
        memmove(t->pending, t->pending + 1, sizeof t->pending[0] * (size_t)--t->npending);
        return k;
    }
    return tui_term_key(-1);
}

void tui_logf(Tui *t, int attr, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    tui_lines_text(&t->log, attr, buf);
    /* keep the log bounded */
    if (t->log.n > 2000) {
        int drop = t->log.n - 1500;
        for (int i = 0; i < drop; i++) free(t->log.v[i].text);
        memmove(t->log.v, t->log.v + drop, sizeof *t->log.v * (size_t)(t->log.n - drop));
        t->log.n -= drop;
    }
    t->pane[P_LOG].sel = t->log.n - 1;
}

/* Runs `line` on the session, output captured (JSON lines when `json`); logs the command and
 * its output; *out (if given) receives the output text (caller frees). */
Status tui_exec(Tui *t, const char *line, bool json, char **out)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) return ST_NOMEM;
    FILE *old = t->s.out;
    bool oldj = t->s.json;
    t->s.out = mem;
    t->s.json = json;
    Job j = {.s = &t->s, .line = line};
    atomic_init(&j.done, 0);
    atomic_store(&t->s.cancel, false);
    if (t->headless && t->keys_at) { /* Esc typed ahead of the work cancels it */
        const char *q = t->keys_at;
        int w = 0, h = 0;
        if (tui_script_key(&q, &w, &h) == TK_ESC) {
            t->keys_at = q;
            atomic_store(&t->s.cancel, true);
        }
    }
    pthread_t th;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (t->headless || pthread_create(&th, NULL, worker, &j) != 0) {
        worker(&j);
    } else {
        while (!atomic_load(&j.done)) {
            tui_render_busy(t, line);
            int k = tui_term_key(80);
            if (k != TK_ESC && k != TK_NONE && k != TK_RESIZE && t->npending < 64)
                t->pending[t->npending++] = k;
            if (k == TK_ESC) {
                atomic_store(&t->s.cancel, true);
                snprintf(t->status, sizeof t->status, "cancelling '%s' at its next step...", line);
            }
        }
        pthread_join(th, NULL);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fclose(mem);
    t->s.out = old;
    t->s.json = oldj;
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    if (t->stable) tui_logf(t, TA_BOLD, "> %s", line);
    else tui_logf(t, TA_BOLD, "> %s   (%.0f ms)", line, ms);
    /* navigation output repeats the passes pane: only the command is logged */
    if (!json && buf && *buf && strncmp(line, "pass ", 5) != 0) tui_logf(t, 0, "%s", buf);
    for (int i = 0; i < j.d.count; i++) {
        char m[1024];
        diag_format(&j.d.items[i], m, sizeof m);
        tui_logf(t, TA_COLOR(TC_RED), "%s", m);
    }
    if (j.st == ST_CANCELLED) {
        tui_logf(t, TA_BOLD | TA_COLOR(TC_YELLOW), "cancelled: %s", line);
        snprintf(t->status, sizeof t->status, "cancelled: %s", line);
    } else if (j.st != ST_OK)
        snprintf(t->status, sizeof t->status, "%s: %s", line, j.d.count ? j.d.items[0].msg : status_name(j.st));
    diag_free(&j.d);
    atomic_store(&t->s.cancel, false);
    if (out) *out = buf;
    else free(buf);
    return j.st;
}

static double num(json_object *o, const char *k)
{
    json_object *v;
    return json_object_object_get_ex(o, k, &v) ? json_object_get_double(v) : 0;
}

static void str(json_object *o, const char *k, char *dst, size_t n)
{
    json_object *v;
    snprintf(dst, n, "%s", json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : "");
}

/* A new zeroed row of t->prof (capacity *cap), or NULL when out of memory. */
static TuiProfRow *prof_add(Tui *t, int *cap)
{
    if (t->nprof == *cap) {
        int c = *cap ? 2 * *cap : 64;
        TuiProfRow *r = realloc(t->prof, sizeof *r * (size_t)c);
        if (!r) return NULL;
        t->prof = r;
        *cap = c;
    }
    TuiProfRow *r = &t->prof[t->nprof++];
    memset(r, 0, sizeof *r);
    return r;
}

void tui_profile(Tui *t)
{
    char *out = NULL;
    Status st = tui_exec(t, "profile 5", true, &out);
    free(t->prof);
    t->prof = NULL;
    t->nprof = 0;
    int cap = 0;
    for (char *p = out; st == ST_OK && p && *p;) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = 0;
        json_object *o = json_tokener_parse(p), *kind;
        if (o && json_object_object_get_ex(o, "kind", &kind)) {
            const char *k = json_object_get_string(kind);
            if (strcmp(k, "kernel") == 0) {
                TuiProfRow *r = prof_add(t, &cap);
                if (!r) break;
                r->index = (int)num(o, "index");
                str(o, "kernel", r->kernel, sizeof r->kernel);
                str(o, "target", r->target, sizeof r->target);
                str(o, "fusion", r->fusion, sizeof r->fusion);
                str(o, "output", r->output, sizeof r->output);
                str(o, "fused_from", r->from, sizeof r->from);
                str(o, "verdict", r->verdict, sizeof r->verdict);
                r->gpu_us = num(o, "gpu_us");
                r->cpu_us = num(o, "cpu_us");
                r->rel_l2 = num(o, "rel_l2");
                r->am_rows = (long long)num(o, "argmax_rows");
                r->am_differ = (long long)num(o, "argmax_differ");
                r->am_beyond = (long long)num(o, "argmax_beyond");
                if (r->am_rows > 0) r->rel_l2 = -1; /* the indices' rel_l2 means nothing */
                r->speedup = r->gpu_us > 0 ? r->cpu_us / r->gpu_us : 0;
            } else if (strcmp(k, "transfer") == 0) {
                TuiProfRow *r = prof_add(t, &cap);
                if (!r) break;
                const Plan *pl = t->s.pipe.plan;
                int part = (int)num(o, "partition");
                r->xfer = true;
                r->index = (int)num(o, "index");
                r->first_kernel = pl && part >= 0 && part < pl->nparts ? pl->parts[part].first_kernel : 0;
                char tensor[96], from[16], to[16], layout[16];
                str(o, "direction", r->kernel, sizeof r->kernel);
                str(o, "tensor", tensor, sizeof tensor);
                str(o, "from", from, sizeof from);
                str(o, "to", to, sizeof to);
                str(o, "layout", layout, sizeof layout);
                snprintf(r->output, sizeof r->output, "%s", tensor);
                snprintf(r->from, sizeof r->from, "%s %s->%s%s%s", tensor, from, to,
                         strcmp(layout, "same") ? " " : "", strcmp(layout, "same") ? layout : "");
                snprintf(r->target, sizeof r->target, "xfer");
                snprintf(r->verdict, sizeof r->verdict, "-");
                r->gpu_us = num(o, "us");
                r->cpu_us = 0;
                r->rel_l2 = -1;
            } else if (strcmp(k, "summary") == 0) {
                char dev[64];
                str(o, "device", dev, sizeof dev);
                int n = snprintf(t->prof_summary, sizeof t->prof_summary,
                                 "%s: gpu sum %.1f us, wall %.1f us, cpu ref %.1f us", dev,
                                 num(o, "gpu_sum_us"), num(o, "wall_us"), num(o, "cpu_ref_us"));
                if (num(o, "transfers") > 0 && n > 0 && (size_t)n < sizeof t->prof_summary)
                    snprintf(t->prof_summary + n, sizeof t->prof_summary - (size_t)n,
                             ", cpu partitions %.1f us, %d transfers %.1f us",
                             num(o, "cpu_partition_us"), (int)num(o, "transfers"),
                             num(o, "transfer_us"));
            }
        }
        json_object_put(o);
        p = nl ? nl + 1 : p + strlen(p);
    }
    free(out);
    int bad = 0, nk = 0;
    for (int i = 0; i < t->nprof; i++) {
        bad += strcmp(t->prof[i].verdict, "MISMATCH") == 0;
        nk += !t->prof[i].xfer;
    }
    if (st == ST_OK) {
        tui_logf(t, 0, "%d kernels profiled, %d mismatching; %s", nk, bad, t->prof_summary);
        snprintf(t->verdict, sizeof t->verdict, "profile: %d/%d ok", nk - bad, nk);
        t->main_pane = t->focus = P_KERNELS;
    } else if (st == ST_CANCELLED) {
        snprintf(t->verdict, sizeof t->verdict, "profile: cancelled");
    }
}

void tui_bisect(Tui *t)
{
    char *out = NULL;
    Status st = tui_exec(t, "bisect", false, &out);
    tui_lines_reset(&t->bisect);
    tui_lines_text(&t->bisect, 0, out);
    for (int i = 0; i < t->bisect.n; i++) {
        const char *s = t->bisect.v[i].text;
        if (strncmp(s, "culprit", 7) == 0) t->bisect.v[i].attr = TA_BOLD | TA_COLOR(TC_RED);
        else if (strstr(s, "MISMATCH")) t->bisect.v[i].attr = TA_COLOR(TC_YELLOW);
        else if (strstr(s, " ok ")) t->bisect.v[i].attr = TA_COLOR(TC_GREEN);
    }
    const char *c = out ? strstr(out, "culprit: ") : NULL;
    if (c) {
        char id[32] = "";
        sscanf(c + 9, "%31s", id);
        snprintf(t->verdict, sizeof t->verdict, "bisect: culprit %s", id);
    } else {
        snprintf(t->verdict, sizeof t->verdict, "bisect: %s",
                 st == ST_OK ? "no culprit" : st == ST_CANCELLED ? "cancelled" : "failed");
    }
    free(out);
    t->main_pane = t->focus = P_BISECT;
}

void tui_verify(Tui *t)
{
    Status st = tui_exec(t, "check", false, NULL);
    snprintf(t->verdict, sizeof t->verdict, "verify: %s",
             st == ST_OK ? "ok" : st == ST_MISMATCH ? "MISMATCH" : "error");
}

void tui_toggle_fusion(Tui *t, int fi)
{
    const Graph *g = t->s.pipe.g;
    if (!g || fi < 0 || fi >= g->nfusions) return;
    char id[32], line[64];
    snprintf(id, sizeof id, "%s", g->fusions[fi].id);
    bool was_on = g->fusions[fi].enabled;
    snprintf(line, sizeof line, "fusion %s %s", was_on ? "off" : "on", id);
    if (tui_exec(t, line, false, NULL) == ST_OK) {
        if (t->nundo == TUI_MAX_UNDO) {
            memmove(t->undo_id, t->undo_id + 1, sizeof t->undo_id[0] * (TUI_MAX_UNDO - 1));
            memmove(t->undo_was_on, t->undo_was_on + 1, sizeof t->undo_was_on[0] * (TUI_MAX_UNDO - 1));
            t->nundo--;
        }
        snprintf(t->undo_id[t->nundo], sizeof t->undo_id[0], "%s", id);
        t->undo_was_on[t->nundo++] = was_on;
        free(t->prof); /* the kernels changed: the old profile no longer matches */
        t->prof = NULL;
        t->nprof = 0;
    }
}

void tui_undo(Tui *t)
{
    if (t->nundo == 0) {
        snprintf(t->status, sizeof t->status, "nothing to undo");
        return;
    }
    t->nundo--;
    char line[64];
    snprintf(line, sizeof line, "fusion %s %s", t->undo_was_on[t->nundo] ? "on" : "off",
             t->undo_id[t->nundo]);
    tui_exec(t, line, false, NULL);
    free(t->prof);
    t->prof = NULL;
    t->nprof = 0;
}
