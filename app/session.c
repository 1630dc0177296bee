#include "app/session.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "app/runner.h"
#include "common/clock.h"

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

void session_options(const Session *s, Options *o)
{
    *o = s->opt;
    o->cancel = &s->cancel;
    for (int i = 0; i < s->noff && o->n_no_fuse < OPT_MAX_LIST; i++)
        o->no_fuse[o->n_no_fuse++] = s->off[i];
}

/* Drops the last run's values. */
void session_forget_run(Session *s)
{
    if (s->have_run) ref_free(&s->last);
    if (s->dev && s->pipe.g)
        for (int t = 0; t < s->pipe.g->ntensors; t++)
            htensor_free(&s->dev[t]);
    free(s->dev);
    s->dev = NULL;
    s->have_run = false;
}

Status session_compile(Session *s, DiagList *d)
{
    session_forget_run(s);
    pipeline_free(&s->pipe);
    s->gen++;
    Options o;
    session_options(s, &o);
    o.cancel = NULL; /* a half-compiled plan would leave the views nothing to show */
    Status st = runner_compile(&o, &s->model, &s->target, false, &s->pipe, d);
    if (s->cursor >= s->pipe.nsnaps) s->cursor = s->pipe.nsnaps - 1;
    return st;
}

const ProfileResult *session_profile(const Session *s)
{
    return s->prof.have && s->prof.gen == s->gen && s->pipe.plan &&
                   s->prof.nkernels == s->pipe.plan->nkernels
               ? &s->prof
               : NULL;
}

bool session_bisect_stale(const Session *s)
{
    return s->bisect.have && s->bisect.gen != s->gen;
}

void session_progress(void *sp, const char *stage, int k, int n)
{
    Session *s = sp;
    pthread_mutex_lock(&s->prog_mu);
    if (!s->prog_stage[0]) s->prog_t0 = (clock_us() * 1e-6);
    snprintf(s->prog_stage, sizeof s->prog_stage, "%s", stage ? stage : "");
    s->prog_k = k;
    s->prog_n = n;
    if (!stage) s->prog_stage[0] = 0;
    pthread_mutex_unlock(&s->prog_mu);
}

void session_progress_text(Session *s, char *buf, size_t n)
{
    pthread_mutex_lock(&s->prog_mu);
    if (!s->prog_stage[0])
        buf[0] = 0;
    else if (s->prog_n > 0)
        snprintf(buf, n, "%s %d/%d, %.1f s", s->prog_stage, s->prog_k, s->prog_n,
                 (clock_us() * 1e-6) - s->prog_t0);
    else if (s->prog_n < 0)
        snprintf(buf, n, "%s %d of ~%d, %.1f s", s->prog_stage, s->prog_k, -s->prog_n,
                 (clock_us() * 1e-6) - s->prog_t0);
    else if (s->prog_k > 0)
        snprintf(buf, n, "%s %d, %.1f s", s->prog_stage, s->prog_k,
                 (clock_us() * 1e-6) - s->prog_t0);
    else
        snprintf(buf, n, "%s, %.1f s", s->prog_stage, (clock_us() * 1e-6) - s->prog_t0);
    pthread_mutex_unlock(&s->prog_mu);
}

void session_live_rows(void *sp, const Profile *so_far)
{
    Session *s = sp;
    Profile *l = &s->live_prof;
    pthread_mutex_lock(&s->prog_mu);
    if (l->nkernels != so_far->nkernels || l->nxfers != so_far->nxfers) {
        prof_free(l);
        l->k = calloc((size_t)so_far->nkernels + 1, sizeof *l->k);
        l->x = calloc((size_t)so_far->nxfers + 1, sizeof *l->x);
    }
    if (l->k && l->x) {
        ProfKernel *k = l->k;
        ProfXfer *x = l->x;
        *l = *so_far;
        l->k = k;
        l->x = x;
        l->cancel = NULL;
        l->on_run = NULL;
        l->on_run_ctx = NULL;
        memcpy(k, so_far->k, sizeof *k * (size_t)so_far->nkernels);
        memcpy(x, so_far->x, sizeof *x * (size_t)so_far->nxfers);
    } else {
        prof_free(l); /* out of memory: no rows to show */
    }
    s->live_seq++;
    pthread_mutex_unlock(&s->prog_mu);
}

void session_live_steps(Session *s, const BisectResult *r)
{
    BisectResult *l = &s->live_bisect;
    pthread_mutex_lock(&s->prog_mu);
    if (l->cap < r->nsteps) {
        BisectStep *v = realloc(l->steps, sizeof *v * (size_t)r->nsteps);
        if (v) l->steps = v, l->cap = r->nsteps;
    }
    l->nsteps = l->cap >= r->nsteps ? r->nsteps : 0;
    if (l->nsteps) memcpy(l->steps, r->steps, sizeof *l->steps * (size_t)r->nsteps);
    s->live_seq++;
    pthread_mutex_unlock(&s->prog_mu);
}

void session_live_clear(Session *s)
{
    pthread_mutex_lock(&s->prog_mu);
    prof_free(&s->live_prof);
    bisect_result_free(&s->live_bisect);
    s->live_seq++;
    pthread_mutex_unlock(&s->prog_mu);
}

/* The session's target. Without a Vulkan device the explorer still opens (passes, fusions and
 * kernels can be explored): the plan is compiled for the portable tier with a warning, and
 * run, check and profile then fail naming the missing device (exit 3). */
static Status session_target(Session *s, const Options *o, DiagList *d)
{
    DiagList tmp = {0};
    Status st = runner_target(o, &s->model.b, &s->target, &tmp);
    if (st == ST_NO_DEVICE) {
        Options cpu = *o;
        cpu.backend = "cpu";
        (void)runner_target(&cpu, &s->model.b, &s->target, NULL); /* no device asked */
        snprintf(s->target.dtype, sizeof s->target.dtype, "%s", runner_dtype(o, &s->model.b));
        diag_add(d, DIAG_WARNING, ST_OK, o->model, NULL, NULL,
                 "%s: the plan is compiled for tier portable without a device; --backend cpu "
                 "runs on the CPU reference",
                 tmp.count ? tmp.items[0].msg : "no Vulkan device");
        st = ST_OK;
    } else if (st != ST_OK) {
        diag_add(d, DIAG_ERROR, st, o->model, NULL, NULL, "%s",
                 tmp.count ? tmp.items[0].msg : status_name(st));
    }
    diag_free(&tmp);
    return st;
}

Status session_open(Session *s, const Options *o, FILE *out, DiagList *d)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->prog_mu, NULL);
    s->opt = *o;
    s->opt.recompile = true;
    s->out = out;
    s->json = o->json;
    Status st = model_load_graph(&s->model, o->model, d);
    if (st == ST_OK && s->model.origin)
        diag_add(d, DIAG_NOTE, ST_OK, o->model, NULL, NULL,
                 "the session compiles the IR this file carries (compiled from %s), so passes "
                 "and fusions can be explored; `run` and `profile` of the file run its own kernels",
                 s->model.origin);
    if (st == ST_OK) st = model_npubin_options(&s->opt, d); /* the file's plan's options */
    if (st == ST_OK) st = model_bind(&s->model, o, d);
    if (st == ST_OK) st = session_target(s, &s->opt, d);
    if (st == ST_OK) s->opt.dtype = s->target.dtype;
    if (st == ST_OK) st = session_compile(s, d);
    s->cursor = s->pipe.nsnaps > 0 ? s->pipe.nsnaps - 1 : 0;
    return st;
}

void session_close(Session *s)
{
    session_forget_run(s);
    pipeline_free(&s->pipe);
    model_free(&s->model);
    profile_result_free(&s->prof);
    bisect_result_free(&s->bisect);
    session_live_clear(s);
    for (int i = 0; i < s->noff; i++)
        free(s->off[i]);
    pthread_mutex_destroy(&s->prog_mu);
    memset(s, 0, sizeof *s);
}

/* Splits line into words in place; returns the count. */
static int split(char *line, char **argv, int max)
{
    int n = 0;
    for (char *p = line; *p && n < max;) {
        while (*p && isspace((unsigned char)*p))
            p++;
        if (!*p || *p == '#') break;
        argv[n++] = p;
        while (*p && !isspace((unsigned char)*p))
            p++;
        if (*p) *p++ = 0;
    }
    return n;
}

/* The row of the longest command name matching the leading words of argv; *used its words. */
static const Command *match(char **argv, int argc, int *used)
{
    const Command *best = NULL;
    *used = 0;
    for (int i = 0; i < session_command_count; i++) {
        char nm[64];
        snprintf(nm, sizeof nm, "%s", session_commands[i].name);
        char *w[4];
        int nw = split(nm, w, 4);
        if (nw > argc || nw <= *used) continue;
        bool ok = true;
        for (int k = 0; k < nw && ok; k++)
            ok = strcmp(w[k], argv[k]) == 0;
        if (ok) {
            best = &session_commands[i];
            *used = nw;
        }
    }
    return best;
}

const Command *session_command(const char *line)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", line);
    char *argv[64];
    int used, argc = split(buf, argv, 64);
    return argc ? match(argv, argc, &used) : NULL;
}

Status session_exec(Session *s, const char *line, DiagList *d)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", line);
    char *argv[64];
    int argc = split(buf, argv, 64);
    if (argc == 0) return ST_OK;
    int used;
    const Command *best = match(argv, argc, &used);
    if (!best) return diag_error(d, NULL, NULL, NULL, "unknown command '%s' (try 'help')", argv[0]);
    return best->fn(s, argc - used, argv + used, d);
}

/* For commands.c */
char *session_dup(const char *s);
char *session_dup(const char *s)
{
    return dupstr(s);
}
