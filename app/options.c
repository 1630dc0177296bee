#include "app/options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/pass.h"

void opt_defaults(Options *o)
{
    memset(o, 0, sizeof *o);
    o->backend = "vulkan";
    o->device = -1;
    o->dtype = "auto";
    o->tier = "auto";
    o->tol_rel = -1;
    o->tol_abs = -1;
    o->iters = 20;
    o->format = "table";
    o->mode = "first";
    o->max_new = 0; /* generate: the reference's token count, else 16 */
    o->color = "kind";
    o->beam = 4;
    o->budget_s = 600;
    o->kernel = -1;
}

/* Every option opt_parse accepts, for --help; opt_parse refuses an option missing here, so the
 * help cannot fall behind the parser. */
static const struct {
    const char *name, *value, *help;
} option_help[] = {
    {"--weights", "FILE",
     "safetensors or *.safetensors.index.json (default: weights.safetensors beside)"},
    {"--inputs", "FILE", "one tensor per graph input (default: <stem>_io / reference.safetensors)"},
    {"--reference", "FILE", "expected outputs (default: the --inputs file when it holds them)"},
    {"--io-prefix", "NAME", "inputs and references named NAME.<tensor> (one file, many cases)"},
    {"--random-weights", "SEED", "deterministic generated weights (architecture-only IRs)"},
    {"--seed", "N", "seed of generated inputs"},
    {"--backend", "vulkan|cpu",
     "where NPU partitions run (default vulkan; cpu: all on the reference)"},
    {"--device", "N", "Vulkan physical device index (default: first discrete GPU, else the first)"},
    {"--dtype", "auto|fp16|bf16|fp32",
     "compute dtype (auto: bf16 when a weight is bf16, else fp16)"},
    {"--tier", "auto|portable|nv-coopmat", "kernel tier (auto: the device's best)"},
    {"--no-fuse", "PATTERN|ID|all", "switch fusions off (repeatable; fuse-elementwise: the pass)"},
    {"--cpu-op", "ATEN", "force an op onto the CPU reference (repeatable)"},
    {"--disable", "PASS",
     "switch a pass off (repeatable; an unknown name lists the passes that can be)"},
    {"--tune", "NAME=V", "set a tuning knob (repeatable; `npu-explore tuning` lists them)"},
    {"--tuned", "auto|none|FILE",
     "per-kernel knobs from a tuning cache (auto: the device's, in "
     "$XDG_CACHE_HOME/npu-explore/tuned.tsv)"},
    {"--break", "ID[,ID]", "corrupt fused kernels on purpose (bisect demonstrations and tests)"},
    {"--dump-after", "PASS|all", "print the graph after a pass, to stderr"},
    {"--tol-rel", "X", "relative tolerance (default: the dtype's)"},
    {"--tol-abs", "X", "absolute tolerance (default: the dtype's)"},
    {"--kernel-cache", "DIR|none",
     "generated kernels' SPIR-V cache ($XDG_CACHE_HOME/npu-explore/kernels)"},
    {"--json", "", "machine-readable output (JSON lines)"},
    {"--check", "", "run: compare the outputs with the reference"},
    {"-o", "FILE", "output file (compile, run, dot; profile: the report)"},
    {"--iters", "N", "profile: timed runs (default 20); tune: per configuration (default 10)"},
    {"--time-only", "",
     "profile: device times only (no CPU reference and no errors: large models in seconds)"},
    {"--format", "table|json|csv|trace",
     "profile: report format (trace: Chrome trace-event JSON for Perfetto)"},
    {"--save", "FILE", "profile: also write the JSON lines to FILE"},
    {"--baseline", "FILE", "profile: per-kernel deltas against a saved profile"},
    {"--mode", "first|minimal", "bisect: the first culprit, or every one"},
    {"--after", "PASS", "dot: the graph after this pass"},
    {"--color", "kind|partition|time|error",
     "dot: node colours (time, error: a heat map of --profile)"},
    {"--profile", "FILE", "dot: a profile saved by profile --save, for --color time|error"},
    {"--expand", "", "dot: draw fusion members even on large graphs"},
    {"-x", "SCRIPT|-", "--batch: commands from SCRIPT or stdin"},
    {"--source", "K|ID", "describe: a kernel's source and SPIR-V disassembly"},
    {"--beam", "N", "tune: configurations kept per round of the search (default 4)"},
    {"--budget-s", "S", "tune: seconds of search in all (default 600)"},
    {"--kernel", "K", "tune: only kernel K's instance (its index in profile's table)"},
    {"--prompt-ids", "1,2,3", "generate: the prompt's token ids"},
    {"--max-new", "N", "generate: tokens to generate"},
    {"--prefill-runs", "N", "generate: extra timed prefill runs"},
    {"--host-argmax", "", "generate: the next token from read-back logits"},
    {"--step-sync", "", "generate: wait for each decode step before queuing the next"},
    {"-v", "", "more output (also --verbose)"},
    {"--verbose", "", "more output"},
};
#define NOPT ((int)(sizeof option_help / sizeof option_help[0]))

void opt_help(FILE *f)
{
    for (int i = 0; i < NOPT; i++) {
        char nv[64];
        snprintf(nv, sizeof nv, "%s %s", option_help[i].name, option_help[i].value);
        fprintf(f, "  %-36s %s\n", nv, option_help[i].help);
    }
}

static bool documented(const char *a)
{
    for (int i = 0; i < NOPT; i++)
        if (strcmp(a, option_help[i].name) == 0) return true;
    return false;
}

static Status num(const char *opt, const char *s, double *out, DiagList *d)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end)
        return diag_error(d, NULL, NULL, NULL, "option %s needs a number, got '%s'", opt, s);
    *out = v;
    return ST_OK;
}

Status opt_read(Options *o, int argc, char **argv, DiagList *d)
{
    opt_defaults(o);
    return opt_parse(o, argc, argv, 1, d);
}

Status opt_parse(Options *o, int argc, char **argv, int positional, DiagList *d)
{
    int npos = 0;
    /* the only place the NPU_* tuning variables are read; --tune overrides them */
    Status ts = tuning_from_env(&o->tune, d);
    if (ts != ST_OK) return ts;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED()                                                                                     \
    do {                                                                                           \
        if (!v) return diag_error(d, NULL, NULL, NULL, "option %s needs a value", a);              \
        i++;                                                                                       \
    } while (0)
        double x;
        bool positional_arg = a[0] != '-' || strcmp(a, "-") == 0;
        if (!positional_arg && !documented(a))
            return diag_error(d, NULL, NULL, NULL,
                              "unknown option '%s' (npu-explore --help lists them)", a);
        if (positional_arg) {
            if (npos >= positional)
                return diag_error(d, NULL, NULL, NULL, "unexpected argument '%s'", a);
            if (npos == 0) o->model = a;
            npos++;
        } else if (strcmp(a, "--tune") == 0) {
            NEED();
            if (tuning_set(&o->tune, v, d) != ST_OK) return ST_BAD_INPUT;
        } else if (strcmp(a, "--tuned") == 0) {
            NEED();
            if (!*v) return diag_error(d, NULL, NULL, NULL, "--tuned needs auto, none or a FILE");
            o->tuned = v;
        } else if (strcmp(a, "--beam") == 0) {
            NEED();
            if (num(a, v, &x, d) != ST_OK || x < 1 || x > 64 || x != (int)x)
                return diag_error(d, NULL, NULL, NULL, "--beam must be 1..64");
            o->beam = (int)x;
        } else if (strcmp(a, "--budget-s") == 0) {
            NEED();
            if (num(a, v, &x, d) != ST_OK || !(x > 0))
                return diag_error(d, NULL, NULL, NULL,
                                  "--budget-s must be a number of seconds > 0");
            o->budget_s = x;
        } else if (strcmp(a, "--kernel") == 0) {
            NEED();
            if (num(a, v, &x, d) != ST_OK || x < 0 || x > 1e9 || x != (int)x)
                return diag_error(d, NULL, NULL, NULL, "--kernel must be a kernel index >= 0");
            o->kernel = (int)x;
        } else if (strcmp(a, "--weights") == 0) {
            NEED();
            o->weights = v;
        } else if (strcmp(a, "--inputs") == 0) {
            NEED();
            o->inputs = v;
        } else if (strcmp(a, "--reference") == 0) {
            NEED();
            o->reference = v;
        } else if (strcmp(a, "--io-prefix") == 0) {
            NEED();
            o->io_prefix = v;
        } else if (strcmp(a, "--random-weights") == 0) {
            NEED();
            if (num(a, v, &x, d) != ST_OK || x < 0)
                return diag_error(d, NULL, NULL, NULL, "--random-weights needs a seed >= 0");
            o->random_weights = true;
            o->weights_seed = (uint64_t)x;
        } else if (strcmp(a, "--seed") == 0) {
            NEED();
            if (num(a, v, &x, d) != ST_OK) return ST_BAD_INPUT;
            o->inputs_seed = (uint64_t)x;
        } else if (strcmp(a, "--backend") == 0) {
            NEED();
            if (strcmp(v, "vulkan") && strcmp(v, "cpu"))
                return diag_error(d, NULL, NULL, NULL, "--backend must be vulkan or cpu, got '%s'",
                                  v);
            o->backend = v;
        } else if (strcmp(a, "--device") == 0) {
            NEED();
            if (num(a, v, &x, d) != ST_OK || x < 0) return ST_BAD_INPUT;
            o->device = (int)x;
        } else if (strcmp(a, "--dtype") == 0) {
            NEED();
            if (strcmp(v, "auto") && strcmp(v, "fp16") && strcmp(v, "bf16") && strcmp(v, "fp32"))
                return diag_error(d, NULL, NULL, NULL,
                                  "--dtype must be auto, fp16, bf16 or fp32, got '%s'", v);
            o->dtype = v;
        } else if (strcmp(a, "--tier") == 0) {
            NEED();
            if (strcmp(v, "auto") && strcmp(v, "portable") && strcmp(v, "nv-coopmat"))
                return diag_error(d, NULL, NULL, NULL,
                                  "--tier must be auto, portable or nv-coopmat, got '%s'", v);
            o->tier = v;
        } else if (strcmp(a, "--no-fuse") == 0) {
            NEED();
            if (o->n_no_fuse == OPT_MAX_LIST)
                return diag_error(d, NULL, NULL, NULL, "too many --no-fuse");
            o->no_fuse[o->n_no_fuse++] = v;
        } else if (strcmp(a, "--cpu-op") == 0) {
            NEED();
            if (o->n_cpu_ops == OPT_MAX_LIST)
                return diag_error(d, NULL, NULL, NULL, "too many --cpu-op");
            o->cpu_ops[o->n_cpu_ops++] = v;
        } else if (strcmp(a, "--break") == 0) {
            NEED();
            o->break_id = v;
        } else if (strcmp(a, "--dump-after") == 0) {
            NEED();
            o->dump_after = v;
        } else if (strcmp(a, "--tol-rel") == 0) {
            NEED();
            if (num(a, v, &o->tol_rel, d) != ST_OK) return ST_BAD_INPUT;
        } else if (strcmp(a, "--tol-abs") == 0) {
            NEED();
            if (num(a, v, &o->tol_abs, d) != ST_OK) return ST_BAD_INPUT;
        } else if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--expand") == 0) {
            o->expand = true;
        } else if (strcmp(a, "--check") == 0) {
            o->check = true;
        } else if (strcmp(a, "--time-only") == 0) {
            o->time_only = true;
        } else if (strcmp(a, "-o") == 0) {
            NEED();
            o->out = v;
        } else if (strcmp(a, "--iters") == 0) {
            NEED();
            if (num(a, v, &x, d) != ST_OK || x < 1 || x > 100000)
                return diag_error(d, NULL, NULL, NULL, "--iters must be 1..100000");
            o->iters = (int)x;
        } else if (strcmp(a, "--format") == 0) {
            NEED();
            if (strcmp(v, "table") && strcmp(v, "json") && strcmp(v, "csv") && strcmp(v, "trace"))
                return diag_error(d, NULL, NULL, NULL,
                                  "--format must be table, json, csv or trace");
            o->format = v;
        } else if (strcmp(a, "--after") == 0) {
            NEED();
            o->after = v;
        } else if (strcmp(a, "--color") == 0) {
            NEED();
            o->color = v;
        } else if (strcmp(a, "--mode") == 0) {
            NEED();
            if (strcmp(v, "first") && strcmp(v, "minimal"))
                return diag_error(d, NULL, NULL, NULL, "--mode must be first or minimal");
            o->mode = v;
        } else if (strcmp(a, "-x") == 0) {
            NEED();
            o->script = v;
        } else if (strcmp(a, "--source") == 0) {
            NEED();
            o->source = v;
        } else if (strcmp(a, "--kernel-cache") == 0) {
            NEED();
            o->kernel_cache = v;
        } else if (strcmp(a, "--disable") == 0) {
            NEED();
            int k = pass_find(v);
            if (k < 0 || !pass_table[k].can_disable) {
                char names[512];
                return diag_error(d, NULL, NULL, NULL,
                                  "--disable: '%s' is not a pass that can be switched off (%s)", v,
                                  pass_names(names, sizeof names, true));
            }
            if (o->n_disable == OPT_MAX_LIST)
                return diag_error(d, NULL, NULL, NULL, "too many --disable");
            o->disable[o->n_disable++] = pass_table[k].name;
        } else if (strcmp(a, "--save") == 0) {
            NEED();
            o->save = v;
        } else if (strcmp(a, "--baseline") == 0) {
            NEED();
            o->baseline = v;
        } else if (strcmp(a, "--profile") == 0) {
            NEED();
            o->profile = v;
        } else if (strcmp(a, "--prompt-ids") == 0) {
            NEED();
            o->prompt_ids = v;
        } else if (strcmp(a, "--prefill-runs") == 0) {
            NEED();
            if (num(a, v, &x, d) != ST_OK || x < 0 || x > 10000) return ST_BAD_INPUT;
            o->prefill_runs = (int)x;
        } else if (strcmp(a, "--host-argmax") == 0) {
            o->host_argmax = true;
        } else if (strcmp(a, "--step-sync") == 0) {
            o->step_sync = true;
        } else if (strcmp(a, "--max-new") == 0) {
            NEED();
            if (num(a, v, &x, d) != ST_OK || x < 1 || x > 100000) return ST_BAD_INPUT;
            o->max_new = (int)x;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            o->verbose++;
        } else {
            return diag_error(d, NULL, NULL, NULL, "unknown option '%s'", a);
        }
#undef NEED
    }
    if (positional > 0 && npos == 0)
        return diag_error(d, NULL, NULL, NULL, "missing MODEL argument");
    return ST_OK;
}
