/* Options shared by every subcommand (docs/CLI.md "Common options"), parsed once into a struct.
 * Unknown options are usage errors (exit 2). */
#ifndef NPU_OPTIONS_H
#define NPU_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include "common/diag.h"
#include "compiler/tuning.h"

#define OPT_MAX_LIST 512

typedef struct Options {
    const char *model;     /* positional MODEL */
    const char *weights;   /* --weights */
    const char *inputs;    /* --inputs */
    const char *reference; /* --reference */
    const char *io_prefix; /* --io-prefix: inputs and references named "PREFIX.<tensor>" */
    bool random_weights;   /* --random-weights SEED */
    uint64_t weights_seed;
    uint64_t inputs_seed; /* --seed (random inputs) */
    const char *backend;  /* --backend vulkan|cpu */
    int device;           /* --device N, -1 = auto */
    const char *dtype;    /* --dtype auto|fp16|bf16|fp32 */
    const char *tier;     /* --tier auto|portable|nv-coopmat (kernel tier, docs/kernels.md) */
    const char *no_fuse[OPT_MAX_LIST];
    int n_no_fuse;
    const char *cpu_ops[OPT_MAX_LIST]; /* --cpu-op ATEN: force these ops onto the CPU */
    int n_cpu_ops;
    const char *break_id;    /* --break ID */
    const char *dump_after;  /* --dump-after PASS|all */
    double tol_rel, tol_abs; /* < 0: dtype default */
    bool json;
    bool check;               /* run --check */
    const char *out;          /* -o FILE */
    int iters;                /* profile --iters */
    bool time_only;           /* profile --time-only: no CPU reference, no errors */
    const char *format;       /* profile --format */
    const char *after;        /* dot --after */
    const char *color;        /* dot --color */
    const char *mode;         /* bisect --mode */
    const char *script;       /* --batch -x SCRIPT */
    const char *source;       /* describe --source K */
    const char *kernel_cache; /* --kernel-cache DIR|none: generated kernels' SPIR-V cache */
    const char *disable[OPT_MAX_LIST]; /* --disable PASS: passes switched off (can_disable) */
    int n_disable;
    const char *save, *baseline; /* profile --save/--baseline */
    const char *profile;         /* dot --profile: a saved profile (JSON lines) to colour by */
    const char *prompt_ids;      /* generate --prompt-ids */
    int max_new;                 /* generate --max-new */
    bool host_argmax;            /* generate --host-argmax: the next token from read-back logits */
    bool
        step_sync; /* generate --step-sync: each decode step waited for before the next is queued */
    int prefill_runs; /* generate --prefill-runs: extra warm prefill runs, timed (0: none) */
    bool expand;      /* dot --expand: draw fusion members even on large graphs */
    int verbose;
    const atomic_bool *cancel; /* set by the TUI's Esc (the session's flag); NULL in the CLI */
    Tuning tune;               /* the NPU_* environment (bench/'s override), then --tune NAME=V */
    const char *tuned;         /* --tuned auto|none|FILE: the tuning cache (app/tuned.h); NULL:
                                * $NPU_TUNED, else auto */
    int beam;                  /* tune --beam: configurations kept per round */
    double budget_s;           /* tune --budget-s: seconds of search in all */
    int kernel;                /* tune --kernel K: that kernel's instance only (-1: every one) */
    bool recompile;            /* the session: a .npubin's IR is compiled again (with the session's
                                * switches) where the CLI runs the file's own plan */
} Options;

#include <stdio.h>

void opt_defaults(Options *o);
/* The options with their values and one line each, for --help. */
void opt_help(FILE *f);
/* Parses argv (after the subcommand). `positional` is how many positional arguments the command
 * takes (0 or 1). Errors name the option. */
Status opt_parse(Options *o, int argc, char **argv, int positional, DiagList *d);
/* A command's options: the defaults, then argv (after the subcommand; one positional argument, the
 * model). */
Status opt_read(Options *o, int argc, char **argv, DiagList *d);

#endif
