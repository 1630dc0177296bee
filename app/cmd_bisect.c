/* `npu-explore bisect`: find the fusion instance whose enabling breaks the outputs (LLVM's
 * opt-bisect for fusions). The oracle is the CPU reference of the imported graph and the
 * dtype's tolerance. All fusions off must pass and all on must fail (else there is nothing to
 * bisect); both are run twice, and a verdict that changes between runs stops the search (a
 * flaky oracle cannot be bisected). `first`: binary search for the shortest failing prefix of
 * the ordered instances. `minimal`: delta debugging for a smallest failing set, repeated on
 * what is left until the rest passes, so independent culprits are all found. Each culprit is
 * then run alone, compiled with no memory reuse, to name its kernel and the first tensor that
 * diverges from the reference. An argmax output is judged tie-aware (compare.h cmp_output), its
 * "worst rel_l2" being the fraction of its rows beyond tolerance (cmp_error). bisect_run
 * returns the steps and culprits as a BisectResult (app/results.h); the CLI prints each step as
 * it is judged (a progress callback) and the end from the same data. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/attrib.h"
#include "app/commands.h"
#include "app/report.h"
#include "app/results.h"
#include "common/grow.h"

typedef struct Bisect {
    Options o;
    Model *m;   /* borrowed: the CLI's loaded model or the session's */
    RefRun ref; /* CPU reference of the imported graph */
    Tolerance tol;
    int n;                 /* fusion instances */
    char **ids, **pattern; /* [n] */
    char **nodes;          /* [n] member names, joined */
    int *kernel;           /* [n] first kernel computing its members in the all-on plan, -1 */
    bool *own;             /* [n] that kernel is its own (else a fold runs its ops inside it) */
    char **shader;         /* [n] its shader */
    Pipeline all_on;       /* the plan bisected: every instance on (culprits name its kernels) */
    const Progress *pg;
    BisectResult *res;
} Bisect;

/* Runs with exactly the instances in `on` (a 0/1 mask) enabled; *ok and *worst from the
 * outputs. `repeat` runs the same compiled plan twice and reports a changed verdict as flaky. */
static Status evaluate(Bisect *b, const char *on, bool repeat, bool *ok, double *worst, bool *flaky,
                       DiagList *d)
{
    if (cancel_requested(b->o.cancel))
        return diag_add(d, DIAG_ERROR, ST_CANCELLED, NULL, NULL, NULL,
                        "bisect cancelled after %d steps", b->res->nsteps);
    Options o = b->o;
    o.n_no_fuse = 0;
    for (int i = 0; i < b->o.n_no_fuse; i++)
        o.no_fuse[o.n_no_fuse++] = b->o.no_fuse[i];
    for (int i = 0; i < b->n; i++)
        if (!on[i] && o.n_no_fuse < OPT_MAX_LIST) o.no_fuse[o.n_no_fuse++] = b->ids[i];
    Runner r;
    Status st = runner_open(&r, &o, b->m, false, d);
    bool verdict[2] = {true, true};
    double w[2] = {0, 0};
    for (int run = 0; run < (repeat ? 2 : 1) && st == ST_OK; run++) {
        st = exec_run(&r.x, false, d);
        for (int i = 0; st == ST_OK && i < r.pipe.plan->noutputs; i++) {
            HTensor got = {0};
            st = exec_read(&r.x, r.pipe.plan->outputs[i], &got, d);
            CmpStats s;
            int t = b->m->g->outputs[i];
            ArgmaxSrc am;
            bool is_am = cmp_argmax_source(b->m->g, t, b->ref.vals, b->ref.ntensors, &am);
            if (st == ST_OK && cmp_output(&got, &b->ref.vals[t], is_am ? &am : NULL, &b->tol, &s)) {
                double e = cmp_error(&s);
                if (e > w[run]) w[run] = e;
                verdict[run] &= cmp_ok(&s, &b->tol);
            }
            htensor_free(&got);
        }
    }
    runner_close(&r);
    *ok = verdict[0];
    *worst = w[0];
    *flaky = repeat && verdict[0] != verdict[1];
    return st;
}

/* About how many steps the bisect takes, for "step k of ~N": all off and all on, then `first`
 * one per halving of the instances (ceil(log2 n), at most one more than it takes when a culprit
 * is found), `minimal` (ddmin) about 1.5 per halving for one culprit and the check of what
 * remains. */
static int expected_steps(const Bisect *b)
{
    int halvings = 0;
    while ((1 << halvings) < b->n)
        halvings++;
    return strcmp(b->o.mode, "first") == 0 ? 2 + halvings : 3 + (3 * halvings + 1) / 2;
}

/* Appends a judged step to the result and reports it (k of about N, Progress). */
static Status record_step(Bisect *b, const char *what, const char *on, bool ok, double worst)
{
    BisectResult *r = b->res;
    BisectStep *v = grow_array(r->steps, r->nsteps, &r->cap, sizeof *v, 16);
    if (!v) return ST_NOMEM;
    r->steps = v;
    BisectStep *s = &r->steps[r->nsteps];
    memset(s, 0, sizeof *s);
    snprintf(s->what, sizeof s->what, "%s", what);
    size_t used = 0;
    for (int i = 0; i < b->n; i++) {
        if (!on[i]) continue;
        s->enabled++;
        if (used < sizeof s->list - 40) {
            int w =
                snprintf(s->list + used, sizeof s->list - used, "%s%s", used ? "," : "", b->ids[i]);
            if (w > 0) used += (size_t)w;
        } else if (used < sizeof s->list - 4) {
            strcpy(s->list + used, "...");
            used += 3;
        }
    }
    s->of = b->n;
    s->ok = ok;
    s->worst = worst;
    r->nsteps++;
    int about = expected_steps(b);
    if (b->pg && b->pg->fn)
        b->pg->fn(b->pg->ctx, "bisect step", r->nsteps, -(about > r->nsteps ? about : r->nsteps));
    return ST_OK;
}

static Status check(Bisect *b, const char *what, const char *on, bool *ok, DiagList *d)
{
    double worst;
    bool flaky;
    Status st = evaluate(b, on, false, ok, &worst, &flaky, d);
    if (st == ST_OK) st = record_step(b, what, on, *ok, worst);
    return st;
}

/* First mode: the shortest failing prefix; returns the culprit's index in *c. */
static Status bisect_first(Bisect *b, char *on, int *c, DiagList *d)
{
    int lo = 0, hi = b->n; /* prefix lo passes, prefix hi fails */
    Status st = ST_OK;
    while (hi - lo > 1 && st == ST_OK) {
        int mid = (lo + hi) / 2;
        for (int i = 0; i < b->n; i++)
            on[i] = i < mid;
        bool ok;
        st = check(b, "prefix", on, &ok, d);
        if (ok)
            lo = mid;
        else
            hi = mid;
    }
    *c = hi - 1;
    return st;
}

/* ddmin over the instances in `cand` (mask), which fail together; leaves a 1-minimal failing
 * subset in cand. */
static Status ddmin(Bisect *b, char *cand, DiagList *d)
{
    int n = b->n;
    char *test = malloc((size_t)n + 1);
    int *idx = malloc(sizeof(int) * ((size_t)n + 1));
    if (!test || !idx) {
        free(test);
        free(idx);
        return ST_NOMEM;
    }
    Status st = ST_OK;
    int parts = 2;
    for (;;) {
        int m = 0;
        for (int i = 0; i < n; i++)
            if (cand[i]) idx[m++] = i;
        if (m <= 1 || st != ST_OK) break;
        if (parts > m) parts = m;
        bool reduced = false;
        for (int pass = 0; pass < 2 && !reduced && st == ST_OK; pass++) {
            for (int p = 0; p < parts && !reduced && st == ST_OK; p++) {
                int a = m * p / parts, e = m * (p + 1) / parts;
                memset(test, 0, (size_t)n);
                for (int j = 0; j < m; j++) {
                    bool in = j >= a && j < e;
                    test[idx[j]] = pass == 0 ? in : !in; /* a subset, then its complement */
                }
                bool ok;
                st = check(b, pass == 0 ? "subset" : "complement", test, &ok, d);
                if (st == ST_OK && !ok) {
                    memcpy(cand, test, (size_t)n);
                    parts = pass == 0 ? 2 : (parts - 1 > 2 ? parts - 1 : 2);
                    reduced = true;
                }
            }
        }
        if (!reduced) {
            if (parts >= m) break;
            parts = parts * 2 < m ? parts * 2 : m;
        }
    }
    free(test);
    free(idx);
    return st;
}

/* Runs the culprit alone with no memory reuse and names the first diverging kernel output. */
static Status add_culprit(Bisect *b, int c, DiagList *d)
{
    BisectResult *res = b->res;
    BisectCulprit *v = realloc(res->culprits, sizeof *v * (size_t)(res->nculprits + 1));
    if (!v) return ST_NOMEM;
    res->culprits = v;
    BisectCulprit *cu = &v[res->nculprits];
    memset(cu, 0, sizeof *cu);
    snprintf(cu->id, sizeof cu->id, "%s", b->ids[c]);
    snprintf(cu->pattern, sizeof cu->pattern, "%s", b->pattern[c]);
    snprintf(cu->nodes, sizeof cu->nodes, "%s", b->nodes[c]);
    cu->kernel = b->kernel[c];
    cu->own = b->own[c];
    snprintf(cu->shader, sizeof cu->shader, "%s", b->shader[c]);
    const Plan *ap = b->all_on.plan;
    int hf = cu->kernel >= 0 && !cu->own ? ap->kernels[cu->kernel].fusion : -1;
    snprintf(cu->host, sizeof cu->host, "%s", hf >= 0 ? ap->fusions[hf].id : "");
    cu->alone_kernel = cu->tensor_kernel = -1;
    snprintf(cu->tensor, sizeof cu->tensor, "-");
    Options o = b->o;
    o.n_no_fuse = 0;
    for (int i = 0; i < b->o.n_no_fuse; i++)
        o.no_fuse[o.n_no_fuse++] = b->o.no_fuse[i];
    for (int i = 0; i < b->n; i++)
        if (i != c && o.n_no_fuse < OPT_MAX_LIST) o.no_fuse[o.n_no_fuse++] = b->ids[i];
    Runner r;
    RefRun ref = {0};
    Profile pr = {0};
    Status st = runner_open(&r, &o, b->m, true, d);
    RefOptions ro = {.keep_all = true};
    if (st == ST_OK) st = ref_run(r.pipe.g, b->m->b.vals, &ro, &ref, d);
    if (st == ST_OK) st = prof_init(&pr, r.pipe.plan);
    if (st == ST_OK) st = prof_errors(&r.x, &ref, &b->tol, &pr, d);
    const Plan *p = st == ST_OK ? r.pipe.plan : NULL;
    for (int k = 0; p && k < p->nkernels && cu->alone_kernel < 0; k++)
        if (pr.k[k].has_err && !pr.k[k].ok) cu->alone_kernel = k;
    if (p && cu->alone_kernel >= 0) {
        const PlanKernel *kn = &p->kernels[cu->alone_kernel];
        const CmpStats *e = &pr.k[cu->alone_kernel].err;
        snprintf(cu->tensor, sizeof cu->tensor, "%s", p->tensors[kn->args[kn->nargs - 1]].name);
        cu->tensor_kernel = attrib_tensor_kernel(ap, cu->tensor, &cu->tensor_inside);
        cu->rel_l2 = e->rel_l2;
        cu->max_abs = e->max_abs;
        report_argmax_note(e, cu->note, sizeof cu->note);
        report_argmax_json(e, cu->json_note, sizeof cu->json_note);
    }
    if (st == ST_OK) res->nculprits++;
    prof_free(&pr);
    ref_free(&ref);
    runner_close(&r);
    return st;
}

/* The instances of the all-on compile (the plan being bisected, kept in b->all_on), in order,
 * with the first kernel computing each one's members there. */
static Status list_instances(Bisect *b, DiagList *d)
{
    RunTarget t;
    Status st = runner_target(&b->o, &b->m->b, &t, d);
    if (st == ST_OK) st = runner_compile(&b->o, b->m, &t, false, &b->all_on, d);
    const Plan *p = st == ST_OK ? b->all_on.plan : NULL;
    if (p) {
        size_t n = (size_t)p->nfusions + 1;
        b->ids = calloc(n, sizeof(char *));
        b->pattern = calloc(n, sizeof(char *));
        b->nodes = calloc(n, sizeof(char *));
        b->shader = calloc(n, sizeof(char *));
        b->kernel = calloc(n, sizeof(int));
        b->own = calloc(n, sizeof(bool));
        if (!b->ids || !b->pattern || !b->nodes || !b->shader || !b->kernel || !b->own)
            st = ST_NOMEM;
        for (int f = 0; st == ST_OK && f < p->nfusions; f++) {
            if (!p->fusions[f].enabled) continue;
            char buf[1024] = "";
            size_t used = 0;
            for (int k = 0; k < p->fusions[f].nnodes && used < sizeof buf - 2; k++) {
                int w = snprintf(buf + used, sizeof buf - used, "%s%s", k ? "," : "",
                                 p->fusions[f].nodes[k]);
                if (w > 0) used += (size_t)w;
            }
            int kern = attrib_fusion_kernel(p, f, &b->own[b->n]);
            b->kernel[b->n] = kern;
            b->ids[b->n] = strdup(p->fusions[f].id);
            b->pattern[b->n] = strdup(p->fusions[f].pattern);
            b->nodes[b->n] = strdup(buf);
            b->shader[b->n] = strdup(kern >= 0 ? p->kernels[kern].shader : "-");
            if (!b->ids[b->n] || !b->pattern[b->n] || !b->nodes[b->n] || !b->shader[b->n])
                st = ST_NOMEM;
            b->n++;
        }
    }
    return st;
}

static void free_instances(Bisect *b)
{
    for (int i = 0; i < b->n; i++) {
        free(b->ids[i]);
        free(b->pattern[i]);
        free(b->nodes[i]);
        free(b->shader[i]);
    }
    free(b->ids);
    free(b->pattern);
    free(b->nodes);
    free(b->shader);
    free(b->kernel);
    free(b->own);
    pipeline_free(&b->all_on);
}

/* The search once all off passes and all on fails. */
static Status search(Bisect *b, char *on, DiagList *d)
{
    if (strcmp(b->o.mode, "first") == 0) {
        int c;
        Status st = bisect_first(b, on, &c, d);
        return st == ST_OK ? add_culprit(b, c, d) : st;
    }
    /* minimal: peel off minimal failing sets until what remains passes */
    char *rest = malloc((size_t)b->n + 1);
    if (!rest) return ST_NOMEM;
    memset(rest, 1, (size_t)b->n);
    Status st = ST_OK;
    for (bool failing = true; st == ST_OK && failing;) {
        memcpy(on, rest, (size_t)b->n);
        st = ddmin(b, on, d);
        for (int i = 0; st == ST_OK && i < b->n; i++)
            if (on[i]) {
                st = add_culprit(b, i, d);
                rest[i] = 0;
            }
        bool ok;
        if (st == ST_OK) st = check(b, "remaining", rest, &ok, d);
        failing = !ok;
    }
    free(rest);
    return st;
}

Status bisect_run(const Options *o, Model *m, const Progress *pg, BisectResult *out, DiagList *dl)
{
    Bisect b;
    memset(&b, 0, sizeof b);
    b.o = *o;
    b.m = m;
    b.pg = pg;
    b.res = out;
    bisect_result_free(out);
    Status st = ST_OK;
    if (strcmp(b.o.mode, "first") && strcmp(b.o.mode, "minimal"))
        st =
            diag_error(dl, NULL, NULL, NULL, "--mode must be first or minimal, got '%s'", b.o.mode);
    RefOptions ro = {.keep_all = false, .keep_argmax_inputs = true};
    if (pg && pg->fn) pg->fn(pg->ctx, "CPU reference", 0, 0);
    if (st == ST_OK) st = ref_run(m->g, m->b.vals, &ro, &b.ref, dl);
    if (st == ST_OK)
        b.tol = report_tolerance(&b.o, strcmp(b.o.backend, "cpu") == 0 ? "fp32"
                                                                       : runner_dtype(&b.o, &m->b));
    if (st == ST_OK) st = list_instances(&b, dl);
    char *on = st == ST_OK ? calloc((size_t)b.n + 1, 1) : NULL;
    if (st == ST_OK && !on) st = ST_NOMEM;
    bool ok_off = false, ok_on = true, flaky = false, fl;
    double w;
    if (st == ST_OK) st = evaluate(&b, on, true, &ok_off, &w, &fl, dl), flaky |= fl;
    if (st == ST_OK) st = record_step(&b, "all off", on, ok_off, w);
    if (st == ST_OK) memset(on, 1, (size_t)b.n);
    if (st == ST_OK && ok_off) st = evaluate(&b, on, true, &ok_on, &w, &fl, dl), flaky |= fl;
    if (st == ST_OK && ok_off) st = record_step(&b, "all on", on, ok_on, w);
    if (st == ST_OK) {
        out->outcome = flaky     ? BISECT_FLAKY
                       : !ok_off ? BISECT_NOT_FUSION
                       : ok_on   ? BISECT_NOTHING
                                 : BISECT_CULPRIT;
        if (out->outcome == BISECT_CULPRIT) st = search(&b, on, dl);
    }
    /* docs/CLI.md: 0 when a culprit was found or the outputs agree, 1 nothing consistent */
    out->rc = st != ST_OK ? status_exit_code(st)
                          : out->outcome == BISECT_FLAKY || out->outcome == BISECT_NOT_FUSION;
    out->have = st == ST_OK;
    free(on);
    free_instances(&b);
    ref_free(&b.ref);
    return st;
}

void bisect_result_free(BisectResult *r)
{
    free(r->steps);
    free(r->culprits);
    memset(r, 0, sizeof *r);
}

void bisect_step_text(const BisectResult *r, int i, bool json, char *buf, size_t n)
{
    const BisectStep *s = &r->steps[i];
    if (json)
        snprintf(
            buf, n,
            "{\"schema\":\"npu-explore/bisect/1\",\"kind\":\"step\",\"step\":%d,\"what\":\"%s\","
            "\"enabled\":%d,\"of\":%d,\"verdict\":\"%s\",\"worst_rel_l2\":%.6g}",
            i + 1, s->what, s->enabled, s->of, s->ok ? "ok" : "MISMATCH", s->worst);
    else
        snprintf(buf, n, "step %-3d %-14s %3d of %d on [%s]  %-8s worst rel_l2 %.3e", i + 1,
                 s->what, s->enabled, s->of, s->list, s->ok ? "ok" : "MISMATCH", s->worst);
}

static const char *why_text(BisectOutcome o)
{
    switch (o) {
    case BISECT_CULPRIT:
        return "culprit found";
    case BISECT_NOTHING:
        return "every fusion on agrees with the reference: nothing to bisect";
    case BISECT_NOT_FUSION:
        return "the outputs disagree with every fusion off: the fault is not in a fusion";
    case BISECT_FLAKY:
        return "the verdict changed between two identical runs: a flaky oracle cannot be bisected";
    }
    return "";
}

void bisect_report_end(FILE *f, const BisectResult *r, bool json)
{
    if (!r->have) {
        if (json)
            fprintf(f,
                    "{\"schema\":\"npu-explore/bisect/"
                    "1\",\"kind\":\"summary\",\"result\":\"cancelled\","
                    "\"steps\":%d}\n",
                    r->nsteps);
        else
            fprintf(f, "cancelled after %d steps\n", r->nsteps);
        return;
    }
    if (r->outcome != BISECT_CULPRIT) {
        if (json)
            fprintf(f,
                    "{\"schema\":\"npu-explore/bisect/1\",\"kind\":\"summary\",\"result\":\"%s\","
                    "\"steps\":%d}\n",
                    why_text(r->outcome), r->nsteps);
        else
            fprintf(f, "%s\n", why_text(r->outcome));
        return;
    }
    for (int i = 0; i < r->nculprits; i++) {
        const BisectCulprit *c = &r->culprits[i];
        if (json) {
            fprintf(f,
                    "{\"schema\":\"npu-explore/bisect/1\",\"kind\":\"culprit\",\"fusion\":\"%s\","
                    "\"pattern\":\"%s\",\"nodes\":\"%s\",\"kernel\":%d,\"own_kernel\":%s,"
                    "\"host_fusion\":\"%s\",\"first_diverging\":\"%s\",\"tensor_kernel\":%d,"
                    "\"first_kernel\":%d,\"rel_l2\":%.6g,\"max_abs\":%.6g%s}\n",
                    c->id, c->pattern, c->nodes, c->kernel, c->own ? "true" : "false", c->host,
                    c->tensor, c->tensor_kernel, c->alone_kernel, c->rel_l2, c->max_abs,
                    c->json_note);
            continue;
        }
        /* kernels of the plan bisected (the one describe and the explorer show), never of the
         * plan with only the culprit on */
        char where[160], tk[64] = "";
        if (c->kernel < 0)
            snprintf(where, sizeof where, ", no kernel computes it");
        else if (c->own)
            snprintf(where, sizeof where, ", kernel %d (%s)", c->kernel, c->shader);
        else
            snprintf(where, sizeof where,
                     ": no kernel of its own, its ops run inside kernel %d (%s%s%s)", c->kernel,
                     c->shader, c->host[0] ? ", " : "", c->host);
        if (c->tensor_kernel >= 0)
            snprintf(tk, sizeof tk, " (%s kernel %d)",
                     c->tensor_inside ? "computed inside" : "the output of", c->tensor_kernel);
        fprintf(f,
                "culprit: %s %s [%s]%s; with only it on, the first diverging tensor is '%s'%s "
                "rel_l2 %.3e max_abs %.3e%s%s\n",
                c->id, c->pattern, c->nodes, where, c->tensor, tk, c->rel_l2, c->max_abs,
                *c->note ? "; " : "", c->note);
    }
}

const char *bisect_summary(const BisectResult *r, char *buf, size_t n)
{
    if (!r->have)
        snprintf(buf, n, "stopped");
    else if (r->outcome == BISECT_CULPRIT && r->nculprits == 1)
        snprintf(buf, n, "culprit %s", r->culprits[0].id);
    else if (r->outcome == BISECT_CULPRIT)
        snprintf(buf, n, "%d culprits, %s first", r->nculprits, r->culprits[0].id);
    else if (r->outcome == BISECT_NOTHING)
        snprintf(buf, n, "no culprit (all agree)");
    else if (r->outcome == BISECT_NOT_FUSION)
        snprintf(buf, n, "not in a fusion");
    else
        snprintf(buf, n, "flaky oracle");
    return buf;
}

/* The CLI's live output: each step printed as it is judged. */
typedef struct StepPrinter {
    FILE *f;
    bool json;
    const BisectResult *r;
} StepPrinter;

static void print_step(void *ctx, const char *stage, int k, int n)
{
    (void)n;
    StepPrinter *sp = ctx;
    if (strcmp(stage, "bisect step") != 0 || k < 1) return;
    char line[1024];
    bisect_step_text(sp->r, k - 1, sp->json, line, sizeof line);
    fprintf(sp->f, "%s\n", line);
    fflush(sp->f);
}

Status app_bisect(const Options *o, FILE *out, int *rcp, DiagList *dl)
{
    Model m = {0};
    BisectResult r = {0};
    StepPrinter sp = {out, o->json, &r};
    Progress pg = {print_step, &sp, NULL};
    Status st = model_load_graph(&m, o->model, dl);
    if (st == ST_OK) st = model_bind(&m, o, dl);
    if (st == ST_OK) st = bisect_run(o, &m, &pg, &r, dl);
    if (st == ST_OK || st == ST_CANCELLED) bisect_report_end(out, &r, o->json);
    *rcp = st == ST_OK ? r.rc : status_exit_code(st);
    bisect_result_free(&r);
    model_free(&m);
    return st;
}

int cmd_bisect(int argc, char **argv)
{
    Options o;
    DiagList d = {0};
    int rc = 2;
    Status st = opt_read(&o, argc, argv, &d);
    if (st == ST_OK)
        app_bisect(&o, stdout, &rc, &d);
    else
        rc = status_exit_code(st);
    diag_print(&d, stderr);
    diag_free(&d);
    return rc;
}
