/* The explorer session: the loaded model, its pass snapshots, the fusion switches, the pass
 * cursor and the last run. Every user action is one row of the command table (commands.c), which
 * drives --batch scripts now and the TUI's keys, `:` prompt and help screen later. The session
 * prints results to `out` as text, or as JSON lines with a `schema` and `kind` field. */
#ifndef NPU_SESSION_H
#define NPU_SESSION_H

#include <stdbool.h>
#include <stdio.h>
#include "../compiler/pass.h"
#include "../runtime/cpu_ref.h"
#include "model.h"
#include "options.h"

#define SESSION_MAX_OFF 256

typedef struct Session {
    Options opt;
    Model model;        /* imported graph + bound weights, inputs, reference */
    Pipeline pipe;      /* snapshots of the current compile */
    int cursor;         /* pass index shown (pass goto/next/prev) */
    char *off[SESSION_MAX_OFF]; /* fusion switch rules in order: ID/PATTERN/all off, "+ID" on */
    int noff;
    RefRun last;        /* last run on the CPU backend (reference of the compiled graph) */
    HTensor *dev;       /* last run on Vulkan: [pipe.g->ntensors], graph outputs filled */
    double run_ms;      /* wall time of the last run */
    bool have_run;
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
} Command;

extern const Command session_commands[];
extern const int session_command_count;

Status session_open(Session *s, const Options *o, FILE *out, DiagList *d);
void session_close(Session *s);
/* Runs one command line (words split on blanks; '#' starts a comment). */
Status session_exec(Session *s, const char *line, DiagList *d);
/* The session's options with its fusion switches added to no_fuse. */
void session_options(const Session *s, Options *o);
/* Drops the last run's values (a recompile makes them stale). */
void session_forget_run(Session *s);
/* Recompiles with the current switches. */
Status session_compile(Session *s, DiagList *d);

#endif
