/* The command table: one row per user action (name, arguments, help, function). --batch runs
 * these lines; the TUI will bind its keys and `:` prompt to the same rows, and its help screen is
 * generated from this table. */
#include <stdlib.h>
#include <string.h>
#include "common/fileio.h"
#include "common/jsonw.h"
#include "compiler/describe.h"
#include "compiler/dump.h"
#include "compiler/fusion.h"
#include "compiler/npubin.h"
#include "viz/viz.h"
#include "app/heat.h"
#include "app/kernel_source.h"
#include "app/report.h"
#include "app/runner.h"
#include "app/session.h"
#include "app/tune.h"
#include "app/timeline.h"

char *session_dup(const char *s);

static Status need(int argc, int n, const char *usage, DiagList *d)
{
    if (argc < n) return diag_error(d, NULL, NULL, NULL, "usage: %s", usage);
    return ST_OK;
}

static Status c_help(Session *s, int argc, char **argv, DiagList *d)
{
    (void)argc, (void)argv, (void)d;
    for (int i = 0; i < session_command_count; i++) {
        const Command *c = &session_commands[i];
        if (s->json) {
            fprintf(s->out, "{\"schema\":\"npu-explore/command/1\",\"kind\":\"command\",\"name\":");
            jw_str(s->out, c->name);
            fprintf(s->out, ",\"args\":");
            jw_str(s->out, c->args);
            fprintf(s->out, ",\"help\":");
            jw_str(s->out, c->help);
            fprintf(s->out, "}\n");
        } else {
            char nm[64];
            snprintf(nm, sizeof nm, "%s %s", c->name, c->args);
            fprintf(s->out, "  %-34s %s\n", nm, c->help);
        }
    }
    return ST_OK;
}

static Status c_echo(Session *s, int argc, char **argv, DiagList *d)
{
    (void)d;
    if (s->json) {
        char buf[2048];
        size_t k = 0;
        for (int i = 0; i < argc && k < sizeof buf; i++)
            k += (size_t)snprintf(buf + k, sizeof buf - k, i ? " %s" : "%s", argv[i]);
        if (k >= sizeof buf) k = sizeof buf - 1;
        buf[k] = 0;
        fprintf(s->out, "{\"schema\":\"npu-explore/echo/1\",\"kind\":\"echo\",\"text\":");
        jw_str(s->out, buf);
        fprintf(s->out, "}\n");
        return ST_OK;
    }
    for (int i = 0; i < argc; i++)
        fprintf(s->out, i ? " %s" : "%s", argv[i]);
    fprintf(s->out, "\n");
    return ST_OK;
}

static Status c_set(Session *s, int argc, char **argv, DiagList *d)
{
    Status st = need(argc, 2, "set KEY VALUE (on-error stop|continue)", d);
    if (st != ST_OK) return st;
    if (strcmp(argv[0], "on-error") == 0 && strcmp(argv[1], "continue") == 0)
        s->keep_going = true;
    else if (strcmp(argv[0], "on-error") == 0 && strcmp(argv[1], "stop") == 0)
        s->keep_going = false;
    else
        return diag_error(d, NULL, NULL, NULL, "set: unknown setting '%s %s'", argv[0], argv[1]);
    return ST_OK;
}

static void pass_line(Session *s, int i)
{
    const Snapshot *sn = &s->pipe.snaps[i];
    if (s->json) {
        fprintf(s->out,
                "{\"schema\":\"npu-explore/pass/1\",\"kind\":\"pass\",\"index\":%d,\"name\":\"%s\","
                "\"added\":%d,\"removed\":%d,\"rewritten\":%d,\"ms\":%.3f,\"current\":%s}\n",
                i, sn->pass, sn->added, sn->removed, sn->rewritten, sn->ms,
                i == s->cursor ? "true" : "false");
    } else {
        fprintf(s->out, "%s %2d %-16s +%-4d -%-4d ~%-5d %8.2f ms%s\n", i == s->cursor ? ">" : " ",
                i, sn->pass, sn->added, sn->removed, sn->rewritten, sn->ms,
                sn->added + sn->removed + sn->rewritten ? "" : "   (no change)");
    }
}

static Status c_pass_list(Session *s, int argc, char **argv, DiagList *d)
{
    (void)argc, (void)argv, (void)d;
    for (int i = 0; i < s->pipe.nsnaps; i++)
        pass_line(s, i);
    return ST_OK;
}

static Status c_pass_goto(Session *s, int argc, char **argv, DiagList *d)
{
    Status st = need(argc, 1, "pass goto NAME|N", d);
    if (st != ST_OK) return st;
    int k = pass_find(argv[0]);
    if (k < 0 || k >= s->pipe.nsnaps)
        return diag_error(d, NULL, NULL, NULL, "no pass '%s'", argv[0]);
    s->cursor = k;
    pass_line(s, k);
    return ST_OK;
}

static Status c_pass_next(Session *s, int argc, char **argv, DiagList *d)
{
    (void)argc, (void)argv, (void)d;
    if (s->cursor + 1 < s->pipe.nsnaps) s->cursor++;
    pass_line(s, s->cursor);
    return ST_OK;
}

static Status c_pass_prev(Session *s, int argc, char **argv, DiagList *d)
{
    (void)argc, (void)argv, (void)d;
    if (s->cursor > 0) s->cursor--;
    pass_line(s, s->cursor);
    return ST_OK;
}

static Status c_pass_show(Session *s, int argc, char **argv, DiagList *d)
{
    (void)argc, (void)argv, (void)d;
    const Snapshot *sn = &s->pipe.snaps[s->cursor];
    char buf[4096];
    for (int i = 0; i < sn->nchanges; i++) {
        const Change *c = &sn->changes[i];
        const char *k = c->kind == CH_ADDED ? "+" : c->kind == CH_REMOVED ? "-" : "~";
        node_line(sn->g, c->node, buf, sizeof buf);
        if (s->json) {
            fprintf(s->out,
                    "{\"schema\":\"npu-explore/change/1\",\"kind\":\"change\",\"pass\":\"%s\","
                    "\"change\":\"%s\",\"node\":",
                    sn->pass, k);
            jw_str(s->out, buf);
            fprintf(s->out, ",\"what\":");
            jw_str(s->out, c->what);
            fprintf(s->out, "}\n");
        } else {
            fprintf(s->out, "%s %s   # %s\n", k, buf, c->what);
        }
    }
    if (!sn->nchanges && !s->json) fprintf(s->out, "(%s changed nothing)\n", sn->pass);
    return ST_OK;
}

static const Graph *final_graph(Session *s)
{
    return s->pipe.g;
}

static Status c_fusion_list(Session *s, int argc, char **argv, DiagList *d)
{
    (void)argc, (void)argv, (void)d;
    const Graph *g = final_graph(s);
    for (int i = 0; i < g->nfusions; i++) {
        const Fusion *f = &g->fusions[i];
        if (s->json) {
            fprintf(s->out,
                    "{\"schema\":\"npu-explore/fusion/1\",\"kind\":\"fusion\",\"id\":\"%s\","
                    "\"pattern\":\"%s\",\"nodes\":[",
                    f->id, f->pattern);
            for (int k = 0; k < f->nnodes; k++) {
                if (k) fputc(',', s->out);
                jw_str(s->out, g->nodes[f->nodes[k]].name);
            }
            fprintf(s->out, "],\"enabled\":%s}\n", f->enabled ? "true" : "false");
        } else {
            fprintf(s->out, "%-5s %-4s %-17s [", f->id, f->enabled ? "on" : "off", f->pattern);
            for (int k = 0; k < f->nnodes; k++)
                fprintf(s->out, "%s%s", k ? ", " : "", g->nodes[f->nodes[k]].name);
            fprintf(s->out, "]\n");
        }
    }
    return ST_OK;
}

/* Drops every switch rule equal to sel or "+sel". */
static void drop_rule(Session *s, const char *sel)
{
    for (int i = 0; i < s->noff; i++) {
        const char *r = s->off[i] + (s->off[i][0] == '+');
        if (strcmp(r, sel) != 0) continue;
        free(s->off[i]);
        memmove(&s->off[i], &s->off[i + 1], sizeof s->off[0] * (size_t)(s->noff - i - 1));
        s->noff--;
        i--;
    }
}

/* The switches are rules applied in order, the last one selecting an instance deciding
 * (compiler/pass_fuse.c): `off SEL` appends SEL; `on SEL` appends "+SEL" when an earlier rule
 * still switches off an instance SEL selects (`off all` then `on F3`); `on all` clears them. */
static Status add_switch(Session *s, const Graph *g, const char *sel, bool on, DiagList *d)
{
    drop_rule(s, sel);
    if (on && strcmp(sel, "all") == 0) {
        for (int i = 0; i < s->noff; i++)
            free(s->off[i]);
        s->noff = 0;
        return ST_OK;
    }
    bool needed = !on;
    for (int i = 0; i < g->nfusions && !needed; i++) {
        if (!fuse_selected(sel, &g->fusions[i])) continue;
        for (int k = 0; k < s->noff && !needed; k++)
            needed = s->off[k][0] != '+' && fuse_selected(s->off[k], &g->fusions[i]);
    }
    if (!needed) return ST_OK;
    if (s->noff == SESSION_MAX_OFF)
        return diag_error(d, NULL, NULL, NULL, "too many fusion switches");
    char rule[256];
    snprintf(rule, sizeof rule, "%s%s", on ? "+" : "", sel);
    s->off[s->noff] = session_dup(rule);
    if (!s->off[s->noff]) return ST_NOMEM;
    s->noff++;
    return ST_OK;
}

static Status set_fusion(Session *s, int argc, char **argv, bool on, DiagList *d)
{
    Status st = need(argc, 1, on ? "fusion on ID|PATTERN|all" : "fusion off ID|PATTERN|all", d);
    if (st != ST_OK) return st;
    const Graph *g = final_graph(s);
    for (int a = 0; a < argc; a++) {
        /* the names --no-fuse takes, exactly (fuse_selected): a prefix selects nothing */
        bool known = strcmp(argv[a], "all") == 0;
        for (int i = 0; i < g->nfusions && !known; i++)
            known = fuse_selected(argv[a], &g->fusions[i]);
        if (!known)
            return diag_error(d, NULL, NULL, NULL,
                              "no fusion instance or pattern '%s' (names are exact: `fusion list`)",
                              argv[a]);
        st = add_switch(s, g, argv[a], on, d);
        if (st != ST_OK) return st;
    }
    st = session_compile(s, d);
    if (st == ST_OK && !s->json) {
        int en = 0;
        for (int i = 0; i < s->pipe.g->nfusions; i++)
            en += s->pipe.g->fusions[i].enabled;
        fprintf(s->out, "fusions: %d of %d on, %d kernels\n", en, s->pipe.g->nfusions,
                s->pipe.plan ? s->pipe.plan->nkernels : 0);
    }
    return st;
}

static Status c_fusion_off(Session *s, int argc, char **argv, DiagList *d)
{
    return set_fusion(s, argc, argv, false, d);
}

static Status c_fusion_on(Session *s, int argc, char **argv, DiagList *d)
{
    return set_fusion(s, argc, argv, true, d);
}

static bool on_cpu(const Session *s)
{
    return strcmp(s->opt.backend, "cpu") == 0;
}

/* Runs the current compile: on Vulkan (CPU partitions on the reference) or all on the CPU. */
static Status do_run(Session *s, DiagList *d)
{
    session_forget_run(s);
    if (on_cpu(s)) {
        Status st = bind_apply_recipes(s->pipe.g, &s->model.b, d);
        RefOptions ro = {.keep_all = true};
        if (st == ST_OK) st = ref_run(s->pipe.g, s->model.b.vals, &ro, &s->last, d);
        s->run_ms = s->last.total_us / 1e3;
        s->have_run = st == ST_OK;
        return st;
    }
    Options o;
    session_options(s, &o);
    Runner r;
    Status st = runner_open_plan(&r, &o, &s->model, &s->pipe, d); /* the session's own plan */
    s->dev = calloc((size_t)s->pipe.g->ntensors + 1, sizeof *s->dev);
    if (st == ST_OK && !s->dev) st = ST_NOMEM;
    if (st == ST_OK) st = exec_run(&r.x, false, d);
    for (int i = 0; st == ST_OK && i < s->pipe.g->noutputs; i++)
        st = exec_read(&r.x, r.pipe.plan->outputs[i], &s->dev[s->pipe.g->outputs[i]], d);
    s->run_ms = r.x.wall_us / 1e3;
    runner_close(&r);
    s->have_run = st == ST_OK;
    return st;
}

/* profile [N]: measures the session's plan; the result is kept (a failed or cancelled profile
 * keeps the previous one) and printed by the reporter. */
static Status c_profile(Session *s, int argc, char **argv, DiagList *d)
{
    Options o;
    session_options(s, &o);
    if (argc > 0) {
        char *end;
        long n = strtol(argv[0], &end, 10);
        if (*end || n < 1 || n > 100000)
            return diag_error(d, NULL, NULL, NULL, "profile: N must be 1..100000, got '%s'",
                              argv[0]);
        o.iters = (int)n;
    }
    o.json = s->json;
    if (!s->pipe.plan) return diag_error(d, NULL, NULL, NULL, "profile: nothing compiled");
    Progress pg = {session_progress, s, session_live_rows};
    session_live_clear(s);
    Status st = profile_measure(&o, &s->model, &s->pipe, &s->target, &pg, &s->prof, d);
    session_progress(s, NULL, 0, 0);
    session_live_clear(s);
    if (st != ST_OK) return st;
    s->prof.gen = s->gen;
    s->prof_seq++;
    return profile_report(s->out, s->pipe.plan, &s->prof, &o, d);
}

/* tune K: app/tune.h's search of kernel K's instance of the session's plan on its device; the
 * winner goes to the tuning cache and the session compiles again with it. */
static Status c_tune(Session *s, int argc, char **argv, DiagList *d)
{
    Status st = need(argc, 1, "tune K", d);
    char *end = NULL;
    long k = st == ST_OK ? strtol(argv[0], &end, 10) : -1;
    if (st == ST_OK && (*end || k < 0 || !s->pipe.plan || k >= s->pipe.plan->nkernels))
        return diag_error(d, NULL, NULL, NULL,
                          "tune: K must be a kernel of the plan (0..%d), got '%s'",
                          s->pipe.plan ? s->pipe.plan->nkernels - 1 : -1, argv[0]);
    if (st != ST_OK) return st;
    Options o;
    session_options(s, &o);
    TuneSearch ts = {.kernel = (int)k, .beam = o.beam, .budget_s = o.budget_s, .iters = o.iters};
    TuneResult r = {0};
    Progress pg = {session_progress, s, NULL};
    st = tune_measure(&o, &s->model, &ts, &pg, &r, d);
    session_progress(s, NULL, 0, 0);
    if (st == ST_OK) st = tune_store(&o, &r, d);
    if (st == ST_OK) tune_report(s->out, &r, s->json);
    /* the plan again with the winner, or without the entry the search dropped */
    bool changed =
        r.n && !r.rows[0].skipped && (r.rows[0].improved || s->pipe.plan->kernels[k].tuned);
    if (st == ST_OK && changed) st = session_compile(s, d);
    tune_result_free(&r);
    return st;
}

/* The running bisect's progress: the stage, and its steps so far for the TUI. */
typedef struct BisectWatch {
    Session *s;
    const BisectResult *r;
} BisectWatch;

static void bisect_watch(void *ctx, const char *stage, int k, int n)
{
    BisectWatch *w = ctx;
    session_progress(w->s, stage, k, n);
    session_live_steps(w->s, w->r);
}

/* bisect [first|minimal]: over the session's switches; the result is kept as profile's is. */
static Status c_bisect(Session *s, int argc, char **argv, DiagList *d)
{
    Options o;
    session_options(s, &o);
    if (argc > 0) o.mode = argv[0];
    o.json = s->json;
    BisectResult r = {0};
    BisectWatch w = {s, &r};
    Progress pg = {bisect_watch, &w, NULL};
    session_live_clear(s);
    Status st = bisect_run(&o, &s->model, &pg, &r, d);
    session_progress(s, NULL, 0, 0);
    session_live_clear(s);
    char line[1024];
    for (int i = 0; i < r.nsteps; i++) {
        bisect_step_text(&r, i, s->json, line, sizeof line);
        fprintf(s->out, "%s\n", line);
    }
    if (st == ST_OK || st == ST_CANCELLED) bisect_report_end(s->out, &r, s->json);
    if (st != ST_OK) {
        bisect_result_free(&r);
        return st;
    }
    r.gen = s->gen;
    bisect_result_free(&s->bisect);
    s->bisect = r;
    s->bisect_seq++;
    if (r.rc == 1)
        return diag_add(d, DIAG_ERROR, ST_MISMATCH, o.model, NULL, NULL,
                        "bisect found nothing consistent");
    return ST_OK;
}

static Status c_run(Session *s, int argc, char **argv, DiagList *d)
{
    (void)argc, (void)argv;
    Status st = do_run(s, d);
    if (st != ST_OK) return st;
    if (s->json)
        fprintf(s->out,
                "{\"schema\":\"npu-explore/run/1\",\"kind\":\"run\",\"backend\":\"%s\","
                "\"dtype\":\"%s\",\"ms\":%.3f}\n",
                s->opt.backend, s->target.dtype, s->run_ms);
    else
        fprintf(s->out, "ran %s on %s (%s) in %.2f ms\n", s->model.g->model_name,
                on_cpu(s) ? "the CPU reference" : "Vulkan", s->target.dtype, s->run_ms);
    return ST_OK;
}

static Status c_check(Session *s, int argc, char **argv, DiagList *d)
{
    (void)argc, (void)argv;
    Status st = s->have_run ? ST_OK : do_run(s, d);
    if (st != ST_OK) return st;
    bool added = false;
    st = on_cpu(s) ? model_argmax_reference(&s->model, d)
                   : model_cpu_reference(&s->model, &added, d);
    if (st != ST_OK) return st;
    if (s->model.b.nref == 0)
        return diag_error(d, s->model.path, NULL, NULL, "no reference outputs to check against");
    if (added && !s->json)
        fprintf(s->out, "reference: the CPU reference (fp32) for outputs the files lack\n");
    Tolerance tol = report_tolerance(&s->opt, s->target.dtype);
    int rc = report_check(s->out, s->pipe.g, &s->model.b, on_cpu(s) ? s->last.vals : s->dev, &tol,
                          s->opt.backend, s->json);
    return rc == 0 ? ST_OK : rc == 1 ? ST_MISMATCH : ST_BAD_INPUT;
}

/* describe: the session's plan. Under --json one line, as every session command's output is
 * (the plan document of `describe --json`, its newlines between tokens dropped, "kind":"plan"). */
static Status c_describe(Session *s, int argc, char **argv, DiagList *d)
{
    (void)argc, (void)argv;
    if (!s->pipe.plan) return diag_error(d, NULL, NULL, NULL, "describe: nothing compiled");
    if (!s->json) {
        describe_text(s->out, s->pipe.plan);
        return ST_OK;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) return ST_NOMEM;
    describe_json(mem, s->pipe.plan);
    fclose(mem);
    const char *p = buf ? buf : "";
    if (*p == '{') fputs("{\"kind\":\"plan\",", s->out), p++;
    for (; *p; p++) /* raw newlines only separate tokens: a string's are escaped */
        if (*p != '\n') fputc(*p, s->out);
    fputc('\n', s->out);
    free(buf);
    return ST_OK;
}

/* source K|ID: a kernel's source and SPIR-V disassembly (app/kernel_source.h). */
static Status c_source(Session *s, int argc, char **argv, DiagList *d)
{
    Status st = need(argc, 1, "source K|ID (a kernel index or a fusion id)", d);
    if (st != ST_OK) return st;
    if (!s->pipe.plan) return diag_error(d, NULL, NULL, NULL, "source: nothing compiled");
    int k = kernel_source_find(s->pipe.plan, argv[0], d);
    if (k < 0) return ST_BAD_INPUT;
    KernelSource ks;
    st = kernel_source_get(s->pipe.plan, k, &ks, d);
    if (st != ST_OK) return st;
    if (s->json) {
        fprintf(s->out,
                "{\"schema\":\"npu-explore/source/1\",\"kind\":\"source\",\"kernel\":%d,"
                "\"title\":",
                k);
        jw_str(s->out, ks.title);
        fprintf(s->out, ",\"source\":");
        jw_str(s->out, ks.source);
        fprintf(s->out, ",\"spirv_words\":%d,\"disassembly\":", ks.nwords);
        jw_str(s->out, ks.disasm);
        fprintf(s->out, "}\n");
    } else {
        kernel_source_print(s->out, &ks);
    }
    kernel_source_free(&ks);
    return ST_OK;
}

/* dump: the graph after the current pass (JSON: its text as one line's "text"). */
static Status c_dump(Session *s, int argc, char **argv, DiagList *d)
{
    (void)argc, (void)argv;
    const Snapshot *sn = &s->pipe.snaps[s->cursor];
    if (!s->json) {
        graph_dump(s->out, sn->g);
        return ST_OK;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) return diag_error(d, NULL, NULL, NULL, "dump: out of memory");
    graph_dump(mem, sn->g);
    fclose(mem);
    fprintf(s->out,
            "{\"schema\":\"npu-explore/graph/1\",\"kind\":\"graph\",\"pass\":\"%s\",\"text\":",
            sn->pass);
    jw_str(s->out, buf);
    fprintf(s->out, "}\n");
    free(buf);
    return ST_OK;
}

static Status c_dot(Session *s, int argc, char **argv, DiagList *d)
{
    Status st = need(argc, 1, "dot FILE [--after PASS] [--color kind|partition|time|error]", d);
    if (st != ST_OK) return st;
    int at = s->cursor, color = VIZ_COLOR_KIND;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--after") == 0 && (at = pass_find(argv[i + 1])) < 0)
            return diag_error(d, NULL, NULL, NULL, "dot: unknown pass '%s'", argv[i + 1]);
        if (strcmp(argv[i], "--color") == 0 && (color = heat_color_parse(argv[i + 1])) < 0)
            return diag_error(d, NULL, NULL, NULL,
                              "dot: --color must be kind, partition, time or error");
    }
    VizOptions vo = {.color = (VizColor)color};
    /* time, error: the heat map of the session's profile of this plan (the explorer's c) */
    VizKernelData *kd = NULL;
    VizHeat hm = {0};
    const Graph *g = s->pipe.snaps[at].g;
    if (color == VIZ_COLOR_TIME || color == VIZ_COLOR_ERROR) {
        const ProfileResult *r = session_profile(s);
        if (!r)
            return diag_error(d, NULL, NULL, NULL, "dot --color %s: %s", argv[argc - 1],
                              s->prof.have
                                  ? "the profile measured an earlier plan: profile this one first"
                                  : "profile first");
        st = heat_from_result(s->pipe.plan, r, &kd, d);
        if (st == ST_OK) st = viz_heat(g, vo.color, kd, s->pipe.plan->nkernels, &hm, d);
        vo.heat = &hm;
    }
    if (st == ST_OK) st = viz_write(g, &vo, argv[0], d);
    if (st == ST_OK && !s->json) fprintf(s->out, "wrote %s\n", argv[0]);
    viz_heat_free(&hm);
    free(kd);
    return st;
}

/* The session's profile of its plan as Chrome trace-event JSON (profile --format trace; the
 * explorer's timeline as a file Perfetto opens). */
static Status c_trace(Session *s, int argc, char **argv, DiagList *d)
{
    Status st = need(argc, 1, "trace FILE.json", d);
    if (st != ST_OK) return st;
    const ProfileResult *r = session_profile(s);
    if (!r)
        return diag_error(d, argv[0], NULL, NULL, "trace: %s",
                          s->prof.have
                              ? "the profile measured an earlier plan: profile this one first"
                              : "profile first");
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) return diag_add(d, DIAG_ERROR, ST_NOMEM, argv[0], NULL, NULL, "out of memory");
    st = timeline_write_trace(mem, s->pipe.plan, r, d);
    fclose(mem);
    if (st == ST_OK) st = file_write_atomic(argv[0], buf, len, d);
    free(buf);
    if (st == ST_OK && !s->json)
        fprintf(s->out, "wrote %s (open it in ui.perfetto.dev or chrome://tracing)\n", argv[0]);
    return st;
}

static Status c_save(Session *s, int argc, char **argv, DiagList *d)
{
    Status st = need(argc, 1, "save FILE.npubin", d);
    if (st == ST_OK) st = npubin_write(s->pipe.plan, argv[0], d);
    if (st == ST_OK && !s->json) fprintf(s->out, "wrote %s\n", argv[0]);
    return st;
}

const Command session_commands[] = {
    {"help", "", "list the commands", c_help, false},
    {"pass list", "", "every pass with its changes and time; > marks the current one", c_pass_list,
     false},
    {"pass goto", "NAME|N", "make a pass current", c_pass_goto, false},
    {"pass next", "", "the next pass", c_pass_next, false},
    {"pass prev", "", "the previous pass", c_pass_prev, false},
    {"pass show", "", "what the current pass changed (+ added, - removed, ~ rewritten)",
     c_pass_show, false},
    {"dump", "", "the graph after the current pass", c_dump, false},
    {"fusion list", "", "every fusion instance with its state", c_fusion_list, false},
    {"fusion off", "ID|PATTERN|all", "switch fusions off and recompile", c_fusion_off, false},
    {"fusion on", "ID|PATTERN|all", "switch fusions back on and recompile", c_fusion_on, false},
    {"run", "", "run the compiled program (Vulkan; --backend cpu: the CPU reference)", c_run, true},
    {"check", "", "compare the outputs with the reference", c_check, true},
    {"profile", "[N]", "per-kernel GPU time, CPU reference time and error (N timed runs)",
     c_profile, true},
    {"bisect", "[first|minimal]", "find the fusion that breaks the outputs", c_bisect, true},
    {"tune", "K",
     "search kernel K's tuning knobs on the device (each configuration timed alone); the winner "
     "is cached and the plan compiled again with it",
     c_tune, true},
    {"describe", "", "the compiled program", c_describe, false},
    {"source", "K|ID", "a kernel's source (generated or hand-written) and SPIR-V disassembly",
     c_source, false},
    {"dot", "FILE [--after PASS] [--color kind|partition|time|error]",
     "draw the graph (.dot, .svg, .png; time, error: the heat map of the profile)", c_dot, false},
    {"save", "FILE.npubin", "write the compiled program", c_save, false},
    {"trace", "FILE.json",
     "the profile as Chrome trace-event JSON (Perfetto; the explorer's t timeline)", c_trace,
     false},
    {"set", "KEY VALUE", "on-error stop|continue", c_set, false},
    {"echo", "TEXT", "print text", c_echo, false},
};
const int session_command_count = (int)(sizeof session_commands / sizeof session_commands[0]);
