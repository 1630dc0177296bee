/* The explorer session: the loaded model, its pass snapshots, the fusion switches, the pass
 * cursor, the last run, and the last complete profile and bisect. The session owns one plan,
 * compiled for its device and tier (app/runner.h RunTarget): the kernels pane, describe, run,
 * check, profile, bisect and source all read that plan; every recompile (a fusion switch)
 * bumps `gen`, and a result whose gen differs is stale (session_profile returns it only when
 * it belongs to the current plan). Every session action is one row of the command table
 * (session_cmds.c), which --batch scripts, the TUI's `:` prompt and its help run; the TUI's
 * keys are its own actions table (tui/keys.c) over these rows. The session prints results to
 * `out` as text, or as JSON lines with a `schema` and `kind` field. */
#ifndef NPU_SESSION_H
#define NPU_SESSION_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include "compiler/pass.h"
#include "runtime/cpu/cpu_ref.h"
#include "app/model.h"
#include "app/options.h"
#include "app/results.h"

#define SESSION_MAX_OFF 256

typedef struct Session {
    Options opt;
    Model model;      /* imported graph + bound weights, inputs, reference */
    RunTarget target; /* what the plan is compiled for: the device's tier, dtype */
    Pipeline pipe;    /* snapshots of the current compile; pipe.plan is the session's plan */
    unsigned gen;     /* bumped by every compile: results carry the gen they measured */
    int cursor;       /* pass index shown (pass goto/next/prev) */
    char *off[SESSION_MAX_OFF]; /* fusion switch rules in order: ID/PATTERN/all off, "+ID" on */
    int noff;
    RefRun last;   /* last run on the CPU backend (reference of the compiled graph) */
    HTensor *dev;  /* last run on Vulkan: [pipe.g->ntensors], graph outputs filled */
    double run_ms; /* wall time of the last run */
    bool have_run;
    ProfileResult prof;            /* the last complete profile (prof.gen: of which plan) */
    BisectResult bisect;           /* the last complete bisect */
    unsigned prof_seq, bisect_seq; /* bumped when a new result is kept */
    pthread_mutex_t prog_mu;       /* guards the progress below (written by a worker thread) */
    char prog_stage[64];           /* the running job's stage, "" when none */
    int prog_k, prog_n;            /* n < 0: about -n (Progress) */
    double prog_t0;                /* when the job started (CLOCK_MONOTONIC seconds) */
    /* the running job's results so far (prog_mu; the TUI draws them while it runs): */
    Profile live_prof;        /* the profile's rows (own arrays; nkernels 0: none) */
    BisectResult live_bisect; /* the bisect's steps */
    unsigned live_seq;        /* bumped by every change of the two */
    FILE *out;
    bool json;
    bool keep_going;    /* set on-error continue */
    atomic_bool cancel; /* set from another thread (the TUI's Esc): long commands stop with
                         * ST_CANCELLED at their next step; the caller clears it */
} Session;

typedef struct Command {
    const char *name; /* "pass list", "fusion off" */
    const char *args; /* "ID|PATTERN|all" */
    const char *help;
    Status (*fn)(Session *s, int argc, char **argv, DiagList *d);
    bool job; /* long work (runs the model): the TUI runs it on a worker thread with
               * progress and Esc to cancel; the others run at once */
} Command;

extern const Command session_commands[];
extern const int session_command_count;

Status session_open(Session *s, const Options *o, FILE *out, DiagList *d);
void session_close(Session *s);
/* The command row a line would run, or NULL. */
const Command *session_command(const char *line);
/* Runs one command line (words split on blanks; '#' starts a comment). */
Status session_exec(Session *s, const char *line, DiagList *d);
/* The session's options with its fusion switches added to no_fuse. */
void session_options(const Session *s, Options *o);
/* Drops the last run's values (a recompile makes them stale). */
void session_forget_run(Session *s);
/* Recompiles with the current switches (the plan for the session's target; gen bumped). */
Status session_compile(Session *s, DiagList *d);
/* The last profile when it measured the current plan, else NULL (none, or stale). */
const ProfileResult *session_profile(const Session *s);
/* Is the kept bisect of an earlier plan? */
bool session_bisect_stale(const Session *s);
/* Progress of the running job (a Progress callback, any thread): stage, k of n. */
void session_progress(void *s, const char *stage, int k, int n);
/* The running job's progress as text ("timed runs 3/5, 2.1 s", "bisect step 3 of ~7, 1.2 s"),
 * "" when none. */
void session_progress_text(Session *s, char *buf, size_t n);
/* Keep a copy of the running profile's rows so far (a Progress.rows callback, any thread). */
void session_live_rows(void *s, const Profile *so_far);
/* Keep a copy of the running bisect's steps so far (any thread). */
void session_live_steps(Session *s, const BisectResult *r);
/* Drop the running job's results so far. */
void session_live_clear(Session *s);

#endif
