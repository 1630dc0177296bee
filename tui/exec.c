/* Runs session commands for the TUI: every action becomes one command line of the session's
 * table, logged as its --batch twin with its output. Interactive runs execute the commands
 * marked `job` (run, check, profile, bisect) on a worker thread while the main thread draws the
 * whole frame every 80 ms from what the job leaves alone: the plan, and its results so far
 * through the session's live copies (a profile's rows as each number arrives, "..." for those
 * still to come; a bisect's steps with "step k of ~N"), never the session's kept results, which
 * the job may replace. Keys typed meanwhile act at once when they only touch the UI (move,
 * scroll, focus, zoom, search, help; tui_key_ui), Esc cancels (the session's cancel flag: the
 * command stops at its next step with ST_CANCELLED, logged as "cancelled"), a resize lays the
 * frame out again, and the rest are dropped, never replayed after the job. A headless script
 * cancels with an Esc right after the key that started the work (typed ahead: the flag is set
 * before the work starts, so the result does not depend on timing). Also builds the kernels
 * table and the bisect pane from the session's kept results (never from printed text). */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "app/report.h"
#include "tui/internal.h"
#include "common/clock.h"

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

/* The next key of an interactive run. */
int tui_next_key(Tui *t)
{
    (void)t;
    return tui_term_key(-1);
}

/* Appends text (any length: one row per line) to the log. */
static void log_text(Tui *t, int attr, const char *text)
{
    tui_lines_text(&t->log, attr, text);
    /* keep the log bounded, in whole lines */
    if (t->log.n > TUI_LOG_MAX) {
        int drop = t->log.n - TUI_LOG_MAX * 3 / 4;
        for (int i = 0; i < drop; i++)
            free(t->log.v[i].text);
        memmove(t->log.v, t->log.v + drop, sizeof *t->log.v * (size_t)(t->log.n - drop));
        t->log.n -= drop;
    }
    t->pane[P_LOG].sel = t->log.n - 1;
}

void tui_verdict(Tui *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->verdict, sizeof t->verdict, fmt, ap);
    va_end(ap);
    t->verdict_gen = t->s.gen;
}

void tui_logf(Tui *t, int attr, const char *fmt, ...)
{
    va_list ap, aq;
    va_start(ap, fmt);
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf) {
        vsnprintf(buf, (size_t)n + 1, fmt, aq);
        log_text(t, attr, buf);
    }
    va_end(aq);
    free(buf);
}

/* A key typed while a job runs: Esc closes an open overlay or cancels the job, a resize lays
 * the frame out again, keys that act on the UI alone act now (tui_key_ui), the rest are dropped
 * (never replayed after the job). */
static void busy_key(Tui *t, int k, const char *line)
{
    if (k == TK_NONE) return;
    if (k == TK_RESIZE) {
        int w, h;
        tui_term_size(&w, &h);
        tui_grid_resize(&t->grid, w, h);
        return;
    }
    bool cancelling = atomic_load(&t->s.cancel);
    if (k == TK_ESC && !t->help && !t->searching && !t->src) {
        atomic_store(&t->s.cancel, true);
        snprintf(t->status, sizeof t->status, "cancelling '%s' at its next step...", line);
    } else if (k == 'q' && !t->help && !t->searching && !cancelling) {
        snprintf(t->status, sizeof t->status, "a job is running: Esc cancels it, then q quits");
    } else if (!tui_key_ui(t, k) && !cancelling) {
        snprintf(t->status, sizeof t->status, "busy: key ignored (Esc cancels)");
    } else if (cancelling) {
        snprintf(t->status, sizeof t->status, "cancelling '%s' at its next step...", line);
    }
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
    const Command *c = session_command(line);
    bool job = c && c->job; /* quick commands run at once: typed-ahead keys then act in order */
    if (t->headless && job && t->keys_at) { /* Esc typed ahead of the work cancels it */
        const char *q = t->keys_at;
        int w = 0, h = 0;
        if (tui_script_key(&q, &w, &h) == TK_ESC) {
            t->keys_at = q;
            atomic_store(&t->s.cancel, true);
        }
    }
    pthread_t th;
    double t0 = clock_us();
    if (job) session_progress(&t->s, "started", 0, 0); /* the busy line's elapsed time */
    t->prof_kept = t->s.prof.have; /* read now: the worker may replace the profile */
    if (t->headless || !job || pthread_create(&th, NULL, worker, &j) != 0) {
        worker(&j);
    } else {
        /* the whole frame is drawn while the worker runs, the views reading only what the
         * job leaves alone (the plan; its results so far through the session's live copies,
         * tui_prof_sync) */
        t->busy = c;
        t->busy_line = line;
        while (!atomic_load(&j.done)) {
            tui_render(t);
            tui_term_flush(&t->grid, t->no_color);
            busy_key(t, tui_term_key(80), line);
        }
        pthread_join(th, NULL);
        t->busy = NULL;
        t->busy_line = NULL;
    }
    if (job) session_progress(&t->s, NULL, 0, 0);
    double ms = (clock_us() - t0) * 1e-3;
    fclose(mem);
    t->s.out = old;
    t->s.json = oldj;
    if (t->stable)
        tui_logf(t, TA_BOLD, "> %s", line);
    else
        tui_logf(t, TA_BOLD, "> %s   (%.0f ms)", line, ms);
    /* navigation output repeats the passes pane: only the command is logged */
    if (!json && buf && *buf && strncmp(line, "pass ", 5) != 0) log_text(t, 0, buf);
    for (int i = 0; i < j.d.count; i++) {
        char m[1024];
        diag_format(&j.d.items[i], m, sizeof m);
        tui_logf(t, TA_COLOR(TC_RED), "%s", m);
    }
    if (j.st == ST_CANCELLED) {
        tui_logf(t, TA_BOLD | TA_COLOR(TC_YELLOW), "cancelled: %s", line);
        snprintf(t->status, sizeof t->status, "cancelled: %s", line);
    } else if (j.st != ST_OK)
        snprintf(t->status, sizeof t->status, "%s: %s", line,
                 j.d.count ? j.d.items[0].msg : status_name(j.st));
    diag_free(&j.d);
    atomic_store(&t->s.cancel, false);
    if (out)
        *out = buf;
    else
        free(buf);
    return j.st;
}

const ProfileResult *tui_profile_result(const Tui *t)
{
    return t->busy ? NULL : session_profile(&t->s);
}

bool tui_profile_kept(const Tui *t)
{
    return t->busy ? t->prof_kept : t->s.prof.have;
}

bool tui_busy_with(const Tui *t, const char *name)
{
    return t->busy && strcmp(t->busy->name, name) == 0;
}

/* t->prof from a profile of plan p (NULL: none yet, every number to come); `live`: of the
 * running profile, whose rows without an error are still to be judged. */
static void prof_rows(Tui *t, const Plan *p, const Profile *pr, bool live)
{
    free(t->prof);
    t->prof = NULL;
    t->nprof = 0;
    t->prof_live = live;
    int nx = pr ? pr->nxfers : 0;
    t->prof = calloc((size_t)(p->nkernels + nx) + 1, sizeof *t->prof);
    if (!t->prof) return;
    for (int i = 0; i < nx; i++) {
        TuiProfRow *row = &t->prof[t->nprof++];
        PlanTransfer x = plan_transfer(p, pr->x[i].part, pr->x[i].j);
        char what[96];
        plan_transfer_text(p, &x, what, sizeof what);
        row->xfer = true;
        row->index = i;
        row->first_kernel = p->parts[pr->x[i].part].first_kernel;
        snprintf(row->kernel, sizeof row->kernel, "%s", x.to_cpu ? "npu->cpu" : "cpu->npu");
        snprintf(row->target, sizeof row->target, "xfer");
        snprintf(row->output, sizeof row->output, "%s", p->tensors[x.tensor].name);
        snprintf(row->from, sizeof row->from, "%s %s", p->tensors[x.tensor].name, what);
        snprintf(row->verdict, sizeof row->verdict, "-");
        row->gpu_us = pr->x[i].med;
        row->rel_l2 = -1;
    }
    for (int k = 0; k < p->nkernels; k++) {
        const PlanKernel *kn = &p->kernels[k];
        const ProfKernel none = {.gpu_med = -1}, *pk = pr ? &pr->k[k] : &none;
        TuiProfRow *row = &t->prof[t->nprof++];
        row->index = k;
        row->pending = live && !pk->has_err;
        snprintf(row->kernel, sizeof row->kernel, "%s", kn->shader);
        snprintf(row->target, sizeof row->target, "%s", kn->target == KT_NPU ? "npu" : "cpu");
        snprintf(row->fusion, sizeof row->fusion, "%s",
                 kn->fusion >= 0 ? p->fusions[kn->fusion].id : "");
        snprintf(row->output, sizeof row->output, "%s",
                 kn->nargs > kn->nin ? p->tensors[kn->args[kn->nargs - 1]].name : "");
        report_fused_from(kn, row->from, sizeof row->from);
        snprintf(row->verdict, sizeof row->verdict, "%s",
                 row->pending   ? "..."
                 : !pk->has_err ? "-"
                 : pk->ok       ? "ok"
                                : "MISMATCH");
        row->gpu_us = pk->gpu_med;
        row->cpu_us = pk->cpu_us;
        row->rel_l2 = pk->has_err && !pk->err.argmax ? pk->err.rel_l2 : -1;
        if (pk->has_err && pk->err.argmax) {
            row->am_rows = pk->err.am_rows;
            row->am_differ = pk->err.am_differ;
            row->am_beyond = pk->err.am_beyond;
        }
        row->speedup = pk->gpu_med > 0 ? pk->cpu_us / pk->gpu_med : 0;
    }
}

/* While a profile runs: its rows so far (the session's live copy); while a bisect runs: its
 * steps so far. */
static void live_sync(Tui *t)
{
    Session *s = &t->s;
    bool prof = tui_busy_with(t, "profile"), bis = tui_busy_with(t, "bisect");
    if ((!prof && !bis) || !s->pipe.plan) return;
    pthread_mutex_lock(&s->prog_mu);
    if (s->live_seq != t->live_seq || (prof && !t->prof_live) || (bis && !t->bisect_live)) {
        t->live_seq = s->live_seq;
        const Profile *pr = &s->live_prof;
        if (prof)
            prof_rows(t, s->pipe.plan, pr->nkernels == s->pipe.plan->nkernels ? pr : NULL, true);
        if (bis) {
            t->bisect_live = true;
            tui_lines_reset(&t->bisect);
            char line[1024];
            for (int i = 0; i < s->live_bisect.nsteps; i++) {
                bisect_step_text(&s->live_bisect, i, false, line, sizeof line);
                tui_lines_add(&t->bisect,
                              s->live_bisect.steps[i].ok ? TA_COLOR(TC_GREEN) : TA_COLOR(TC_YELLOW),
                              -1, "%s", line);
            }
        }
    }
    pthread_mutex_unlock(&s->prog_mu);
    if (bis) { /* the busy line's progress, as the pane's last row (rebuilt every frame) */
        char prog[160];
        session_progress_text(s, prog, sizeof prog);
        if (t->bisect.n && t->bisect.v[t->bisect.n - 1].id == -2)
            free(t->bisect.v[--t->bisect.n].text);
        tui_lines_add(&t->bisect, TA_BOLD, -2, "running: %s (Esc cancels)",
                      prog[0] ? prog : "starting");
    }
    if (prof) {
        char prog[160];
        session_progress_text(s, prog, sizeof prog);
        snprintf(t->prof_summary, sizeof t->prof_summary,
                 "measuring (%s): the rows fill in as each number arrives",
                 prog[0] ? prog : "starting");
    }
}

void tui_prof_sync(Tui *t)
{
    const Session *s = &t->s;
    if (t->busy) {
        live_sync(t);
        return;
    }
    if (!t->prof_live && t->prof_gen == s->gen && t->prof_seq == s->prof_seq) return;
    t->prof_gen = s->gen;
    t->prof_seq = s->prof_seq;
    free(t->prof);
    t->prof = NULL;
    t->nprof = 0;
    t->prof_live = false;
    t->prof_summary[0] = 0;
    const ProfileResult *r = session_profile(s);
    if (!r) return; /* none, or of an earlier plan: never shown against this one */
    const Profile *pr = &r->pr;
    prof_rows(t, s->pipe.plan, pr, false);
    int n = snprintf(t->prof_summary, sizeof t->prof_summary,
                     "%s: gpu sum %.1f us, wall %.1f us, cpu ref %.1f us", r->device,
                     pr->gpu_sum_us, pr->wall_med_us, pr->cpu_ref_us);
    if (pr->nxfers > 0 && n > 0 && (size_t)n < sizeof t->prof_summary)
        snprintf(t->prof_summary + n, sizeof t->prof_summary - (size_t)n,
                 ", cpu partitions %.1f us, %d transfers %.1f us", pr->cpu_part_us, pr->nxfers,
                 pr->xfer_sum_us);
}

void tui_profile(Tui *t)
{
    t->main_pane = t->focus = P_KERNELS;               /* where the rows fill in */
    Status st = tui_exec(t, "profile 5", false, NULL); /* the table goes to the log */
    tui_prof_sync(t);
    int bad = 0, nk = 0;
    for (int i = 0; i < t->nprof; i++) {
        bad += strcmp(t->prof[i].verdict, "MISMATCH") == 0;
        nk += !t->prof[i].xfer;
    }
    if (st == ST_OK) {
        tui_logf(t, 0, "%d kernels profiled, %d mismatching; %s", nk, bad, t->prof_summary);
        tui_verdict(t, "profile: %d/%d ok", nk - bad, nk);
    } else if (st == ST_CANCELLED) {
        tui_verdict(t, "profile: cancelled%s", t->nprof ? " (previous kept)" : "");
    }
}

void tui_bisect_sync(Tui *t)
{
    const Session *s = &t->s;
    if (t->busy) return; /* tui_prof_sync's live_sync keeps the running bisect's lines */
    if (!t->bisect_live && t->bisect_seq == s->bisect_seq && t->bisect_gen == s->gen) return;
    t->bisect_seq = s->bisect_seq;
    t->bisect_gen = s->gen;
    t->bisect_live = false;
    tui_lines_reset(&t->bisect);
    const BisectResult *r = &s->bisect;
    if (!r->have) return;
    if (session_bisect_stale(s))
        tui_lines_add(&t->bisect, TA_BOLD | TA_COLOR(TC_YELLOW), -1,
                      "stale: the plan changed since this bisect (its kernel numbers are the "
                      "earlier plan's); b bisects this one");
    char line[1024];
    for (int i = 0; i < r->nsteps; i++) {
        bisect_step_text(r, i, false, line, sizeof line);
        tui_lines_add(&t->bisect, r->steps[i].ok ? TA_COLOR(TC_GREEN) : TA_COLOR(TC_YELLOW), -1,
                      "%s", line);
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) return;
    bisect_report_end(mem, r, false); /* the reporter's lines for the data, not parsed */
    fclose(mem);
    int first = t->bisect.n;
    tui_lines_text(&t->bisect, r->outcome == BISECT_CULPRIT ? TA_BOLD | TA_COLOR(TC_RED) : TA_BOLD,
                   buf);
    if (t->bisect.n > first && t->bisect.v[t->bisect.n - 1].text[0] == 0) {
        free(t->bisect.v[--t->bisect.n].text); /* the report's final newline */
    }
    free(buf);
}

void tui_bisect(Tui *t)
{
    t->main_pane = t->focus = P_BISECT; /* where the steps show as they are judged */
    Status st = tui_exec(t, "bisect", false, NULL);
    tui_bisect_sync(t);
    char sum[96];
    if (st == ST_OK || st == ST_MISMATCH)
        tui_verdict(t, "bisect: %s", bisect_summary(&t->s.bisect, sum, sizeof sum));
    else
        tui_verdict(t, "bisect: %s%s", st == ST_CANCELLED ? "cancelled" : "failed",
                    t->s.bisect.have ? " (previous kept)" : "");
}

void tui_verify(Tui *t)
{
    Status st = tui_exec(t, "check", false, NULL);
    tui_verdict(t, "verify: %s", st == ST_OK ? "ok" : st == ST_MISMATCH ? "MISMATCH" : "error");
}

void tui_tune(Tui *t)
{
    const Plan *p = t->s.pipe.plan;
    if (!p || t->sel_kernel < 0 || t->sel_kernel >= p->nkernels) {
        snprintf(t->status, sizeof t->status, "T tunes a kernel: select one in 4 kernels");
        return;
    }
    char line[32];
    snprintf(line, sizeof line, "tune %d", t->sel_kernel);
    Status st = tui_exec(t, line, false, NULL);
    const PlanKernel *k = st == ST_OK && t->sel_kernel < t->s.pipe.plan->nkernels
                              ? &t->s.pipe.plan->kernels[t->sel_kernel]
                              : NULL;
    if (st == ST_OK)
        tui_verdict(t, "tune: kernel %d %s (7: the table)", t->sel_kernel,
                    k && k->tuned ? k->tuned : "keeps its defaults");
    else
        tui_verdict(t, "tune: %s", st == ST_CANCELLED ? "cancelled" : "failed (7: why)");
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
            memmove(t->undo_was_on, t->undo_was_on + 1,
                    sizeof t->undo_was_on[0] * (TUI_MAX_UNDO - 1));
            t->nundo--;
        }
        snprintf(t->undo_id[t->nundo], sizeof t->undo_id[0], "%s", id);
        t->undo_was_on[t->nundo++] = was_on;
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
}
