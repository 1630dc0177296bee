#include "app/cli.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app/commands.h"
#include "app/options.h"
#include "compiler/ops.h"
#include "compiler/tuning.h"
#include "runtime/cpu/cpu_kernels.h"

/* One row per subcommand: its name, its arguments for --help, what it does, its function. The
 * dispatch and the usage text both come from here, so --help cannot miss a command. */
typedef struct Subcommand {
    const char *name, *args, *what;
    int (*fn)(int argc, char **argv);
} Subcommand;

static const Subcommand subcommands[] = {
    {"--batch", "MODEL [options] [-x SCRIPT | -]",
     "scripted session (the explorer's commands: echo help | npu-explore --batch MODEL -x -);\n"
     "without a script: describe, check, profile",
     cmd_batch},
    {"compile", "MODEL.json -o FILE.npubin [options]", "compile to a program file", cmd_compile},
    {"describe", "FILE.npubin | MODEL.json [--json] [--source K|ID]",
     "the compiled program (--source: a kernel's source and SPIR-V disassembly)", cmd_describe},
    {"run", "MODEL [options] [--check] [-o OUT.safetensors]",
     "run on Vulkan (or --backend cpu); --check compares with the reference", cmd_run},
    {"profile",
     "MODEL [options] [--iters N] [--time-only] [--format table|json|csv|trace] [--save F] "
     "[--baseline F] [-o "
     "FILE]",
     "per kernel: GPU time, CPU reference time, speedup, error (-o: the report to FILE)",
     cmd_profile},
    {"tune", "MODEL [options] [--beam N] [--budget-s S] [--kernel K] [--iters N] [--json]",
     "search each kernel's tuning knobs on the device (beam search, each kernel timed alone,\n"
     "results checked against the defaults'); the winners go to the tuning cache (--tuned)",
     cmd_tune},
    {"bisect", "MODEL [options] [--mode first|minimal]",
     "the fusion whose enabling breaks the outputs (exit 0 culprit found or nothing to find,\n"
     "1 nothing consistent)",
     cmd_bisect},
    {"dot",
     "MODEL.json [--after PASS] [--color kind|partition|time|error] [--profile SAVED.jsonl] "
     "[--expand] -o FILE.dot|svg|png",
     "draw the graph with Graphviz", cmd_dot},
    {"generate",
     "DIR [--weights W] [--prompt-ids 1,2,3] [--max-new N] [--host-argmax] [--step-sync]",
     "greedy decoding with an LLM folder (prefill.json, decode.json, generation.json), or a model "
     "with its own KV caches (DIR/model.json with model state), token by token",
     cmd_generate},
    {"ops", "[--markdown] | --coverage MODEL.json...",
     "the op table: name, NPU support, CPU support; --coverage: per model, the ops on the NPU,\n"
     "on the CPU only, without a kernel, or unsupported (node names)",
     cmd_ops},
    {"tuning", "[--markdown]",
     "the tuning knobs (--tune NAME=V): name, range, default, environment override, why",
     cmd_tuning},
};
#define NSUB ((int)(sizeof subcommands / sizeof subcommands[0]))

static void usage(FILE *f)
{
    fprintf(f, "usage: npu-explore [MODEL.json | FILE.npubin] [options]\n"
               "           the explorer (a terminal; without one: the --batch report)\n");
    for (int i = 0; i < NSUB; i++) {
        fprintf(f, "       npu-explore %s %s\n", subcommands[i].name, subcommands[i].args);
        for (const char *w = subcommands[i].what; *w;) { /* each line indented */
            int n = (int)strcspn(w, "\n");
            fprintf(f, "           %.*s\n", n, w);
            w += n + (w[n] == '\n');
        }
    }
    fprintf(f, "       npu-explore --help | --version\n"
               "options (docs/CLI.md):\n");
    opt_help(f);
    fprintf(
        f,
        "explorer, headless (no terminal needed; golden screens and scripted tests):\n"
        "  --tui-script FILE   keys from FILE: a character is its key, <Left> <Right> <Up> <Down>\n"
        "                      <PgUp> <PgDn> <Home> <End> <Enter> <Tab> <BTab> <Esc> <Space> <BS>\n"
        "                      <F1> <lt> <C-u> name keys, <Dump> writes the screen, <Size WxH> "
        "resizes\n"
        "  --tui-keys KEYS     the same keys inline (e.g. --tui-keys '3<Dump>j+')\n"
        "  --tui-size WxH      screen size of a headless run (default 80x24; below 40x12 the\n"
        "                      screen says it is too small)\n"
        "  --tui-dump FILE     where <Dump> and the final screen go (default stdout)\n"
        "  --tui-stable        times shown as '-', so screens compare exactly\n"
        "  An <Esc> right after the key that starts a profile or bisect cancels it.\n"
        "exit codes: 0 success, 1 numeric mismatch, 2 bad input or usage, 3 no Vulkan device\n");
}

/* The arguments of a table command (ops, tuning): 1 with --markdown, 0 without, -1 (said on
 * stderr) for anything else. */
static int markdown_arg(const char *cmd, int argc, char **argv)
{
    int md = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--markdown") != 0) {
            fprintf(stderr, "error: %s: unknown option '%s'\n", cmd, argv[i]);
            return -1;
        }
        md = 1;
    }
    return md;
}

int cmd_ops(int argc, char **argv)
{
    if (argc > 0 && strcmp(argv[0], "--coverage") == 0) return cmd_ops_coverage(argc - 1, argv + 1);
    int md = markdown_arg("ops", argc, argv);
    if (md < 0) return 2;
    if (md) {
        printf(
            "# Operations\n\nGenerated by `npu-explore ops --markdown` from `compiler/ops.def`; "
            "do not edit.\n\n| op | ATen names | inputs | NPU kernel | CPU reference | meaning |\n"
            "|---|---|---|---|---|---|\n");
    } else {
        printf("%-20s %-6s %-4s %-11s %s\n", "op", "inputs", "cpu", "npu-shader", "ATen names");
    }
    for (int op = 0; op < OP_COUNT; op++) {
        const OpInfo *o = &op_info[op];
        char names[1024];
        snprintf(names, sizeof names, "%s", o->names);
        for (char *p = names; *p; p++)
            if (*p == '|') *p = md ? ';' : ' ';
        const char *sh = o->kernel != KK_NONE ? kernel_kind_name(o->kernel) : "-";
        int cpu = cpu_kernel_table[op] != NULL;
        if (md) {
            printf("| `%s` | %s | %d..%d | %s | %s | %s |\n", op_short_name((OpId)op), names,
                   o->min_in, o->max_in, sh, cpu ? "yes" : "no", o->doc);
        } else {
            char ar[16];
            snprintf(ar, sizeof ar, "%d..%d", o->min_in, o->max_in);
            printf("%-20s %-6s %-4s %-11s %s\n", op_short_name((OpId)op), ar, cpu ? "yes" : "no",
                   sh, names);
        }
    }
    return 0;
}

int cmd_tuning(int argc, char **argv)
{
    int md = markdown_arg("tuning", argc, argv);
    if (md < 0) return 2;
    if (md)
        printf(
            "# Tuning knobs\n\nGenerated by `npu-explore tuning --markdown` from "
            "`compiler/tuning.def`; do not edit.\n\n"
            "A knob changes how lowering shapes kernels (grid targets, tiles, workgroups), never "
            "what they compute, except the `*.ablate` knobs (bench only: parts of a kernel left "
            "out, wrong results by design). Set one with `--tune NAME=V` (repeatable; `auto` "
            "restores lowering's own choice). bench/ scripts may set the environment variable "
            "instead (read once by the CLI, before `--tune`; a tuple variable such as "
            "`NPU_GEMV=WG,R,U,G` sets every knob of its row group). A plan records the knobs "
            "that differ from the defaults and the variables that set them: `describe` shows "
            "them and the `.npubin` keeps them. An invalid name or value is refused with "
            "exit 2.\n\n"
            "`npu-explore tune MODEL` searches the knobs of each kernel's kind (the `tune` "
            "column: the kernel kind whose lowering reads the knob) per kernel on its device "
            "and caches the winners per device and kernel shape; compiles for that device then "
            "give those kernels their own values (`--tuned`, docs/CLI.md). The bench-only "
            "knobs are never searched nor cached.\n\n"
            "| knob | values | default | environment | tune | why |\n|---|---|---|---|---|---|\n");
    else
        printf("%-16s %-37s %-8s %-20s %-16s %s\n", "knob", "values", "default", "environment",
               "tune", "why");
    for (int i = 0; i < TUNE_COUNT; i++) {
        const TuneInfo *k = &tune_info[i];
        char r[64], dv[32], env[48];
        tuning_range((TuneId)i, r, sizeof r);
        if (k->dflt == TUNE_AUTO)
            snprintf(dv, sizeof dv, "auto");
        else
            snprintf(dv, sizeof dv, "%lld", (long long)k->dflt);
        if (tuning_env_parts((TuneId)i) > 1)
            snprintf(env, sizeof env, "%s[%d]", k->env, k->pos);
        else
            snprintf(env, sizeof env, "%s", k->env);
        const char *fam = k->use == TU_SEARCH ? kernel_kind_name(k->family) : "bench only";
        if (md)
            printf("| `%s` | %s | %s | `%s` | %s | %s |\n", k->name, r, dv, env, fam, k->why);
        else
            printf("%-16s %-37s %-8s %-20s %-16s %s\n", k->name, r, dv, env, fam, k->why);
    }
    return 0;
}

int cli_main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("npu-explore %s\n", NPU_VERSION);
        return 0;
    }
    for (int i = 0; i < NSUB; i++)
        if (strcmp(cmd, subcommands[i].name) == 0) return subcommands[i].fn(argc - 2, argv + 2);
    /* the explorer (tui/, linked in; probed by tools/run_explorer.sh) */
    if (strcmp(cmd, "--has-tui") == 0) return 0;
    size_t n = strlen(cmd);
    if (cmd[0] != '-' && (access(cmd, F_OK) == 0 || (n > 5 && strcmp(cmd + n - 5, ".json") == 0) ||
                          (n > 7 && strcmp(cmd + n - 7, ".npubin") == 0)))
        return CLI_EXPLORER;
    fprintf(stderr, "error: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
