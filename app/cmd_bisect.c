/* `npu-explore bisect`: find the fusion instance whose enabling breaks the outputs (LLVM's
 * opt-bisect for fusions). The oracle is the CPU reference of the imported graph and the
 * dtype's tolerance. All fusions off must pass and all on must fail (else there is nothing to
 * bisect); both are run twice, and a verdict that changes between runs stops the search (a
 * flaky oracle cannot be bisected). `first`: binary search for the shortest failing prefix of
 * the ordered instances. `minimal`: delta debugging for a smallest failing set, repeated on
 * what is left until the rest passes, so independent culprits are all found. Each culprit is
 * then run alone, compiled with no memory reuse, to name its kernel and the first tensor that
 * diverges from the reference. An argmax output is judged tie-aware (compare.h cmp_output), its
 * "worst rel_l2" being the fraction of its rows beyond tolerance (cmp_error). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/profile.h"
#include "commands.h"
#include "report.h"
#include "runner.h"

typedef struct Bisect {
    Options o;
    Model m;
    RefRun ref; /* CPU reference of the imported graph */
    Tolerance tol;
    int n;                 /* fusion instances */
    char **ids, **pattern; /* [n] */
    char **nodes;          /* [n] member names, joined */
    int steps;
    bool json;
    FILE *out;
} Bisect;

/* Runs with exactly the instances in `on` (a 0/1 mask) enabled; *ok and *worst from the
 * outputs. `repeat` runs the same compiled plan twice and reports a changed verdict as flaky. */
static Status evaluate(Bisect *b, const char *on, bool repeat, bool *ok, double *worst,
                       bool *flaky, DiagList *d)
{
    if (cancel_requested(b->o.cancel))
        return diag_add(d, DIAG_ERROR, ST_CANCELLED, NULL, NULL, NULL, "bisect cancelled after %d steps", b->steps);
    Options o = b->o;
    o.n_no_fuse = 0;
    for (int i = 0; i < b->o.n_no_fuse; i++) o.no_fuse[o.n_no_fuse++] = b->o.no_fuse[i];
    for (int i = 0; i < b->n; i++)
        if (!on[i] && o.n_no_fuse < OPT_MAX_LIST) o.no_fuse[o.n_no_fuse++] = b->ids[i];
    Runner r;
    Status st = runner_open(&r, &o, &b->m, false, d);
    bool verdict[2] = {true, true};
    double w[2] = {0, 0};
    for (int run = 0; run < (repeat ? 2 : 1) && st == ST_OK; run++) {
        st = exec_run(&r.x, false, d);
        for (int i = 0; st == ST_OK && i < r.pipe.plan->noutputs; i++) {
            HTensor got = {0};
            st = exec_read(&r.x, r.pipe.plan->outputs[i], &got, d);
            CmpStats s;
            int t = b->m.g->outputs[i];
            ArgmaxSrc am;
            bool is_am = cmp_argmax_source(b->m.g, t, b->ref.vals, b->ref.ntensors, &am);
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

static void print_step(Bisect *b, const char *what, const char *on, bool ok, double worst)
{
    int k = 0;
    char list[256] = "";
    size_t used = 0;
    for (int i = 0; i < b->n; i++) {
        if (!on[i]) continue;
        k++;
        if (used < sizeof list - 40) {
            int w = snprintf(list + used, sizeof list - used, "%s%s", used ? "," : "", b->ids[i]);
            if (w > 0) used += (size_t)w;
        } else if (used < sizeof list - 4) {
            strcpy(list + used, "...");
            used += 3;
        }
    }
    b->steps++;
    if (b->json)
        fprintf(b->out, "{\"schema\":\"npu-explore/bisect/1\",\"kind\":\"step\",\"step\":%d,\"what\":\"%s\","
               "\"enabled\":%d,\"of\":%d,\"verdict\":\"%s\",\"worst_rel_l2\":%.6g}\n",
               b->steps, what, k, b->n, ok ? "ok" : "MISMATCH", worst);
    else
        fprintf(b->out, "step %-3d %-14s %3d of %d on [%s]  %-8s worst rel_l2 %.3e\n", b->steps, what, k,
               b->n, list, ok ? "ok" : "MISMATCH", worst);
    fflush(b->out);
}

static Status check(Bisect *b, const char *what, const char *on, bool *ok, DiagList *d)
{
    double worst;
    bool flaky;
    Status st = evaluate(b, on, false, ok, &worst, &flaky, d);
    if (st == ST_OK) print_step(b, what, on, *ok, worst);
    return st;
}

/* First mode: the shortest failing prefix; returns the culprit's index in *c. */
static Status bisect_first(Bisect *b, char *on, int *c, DiagList *d)
{
    int lo = 0, hi = b->n; /* prefix lo passes, prefix hi fails */
    Status st = ST_OK;
    while (hi - lo > 1 && st == ST_OK) {
        int mid = (lo + hi) / 2;
        for (int i = 0; i < b->n; i++) on[i] = i < mid;
        bool ok;
        st = check(b, "prefix", on, &ok, d);
        if (ok) lo = mid;
        else hi = mid;
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
static Status report_culprit(Bisect *b, int c, DiagList *d)
{
    Options o = b->o;
    o.n_no_fuse = 0;
    for (int i = 0; i < b->o.n_no_fuse; i++) o.no_fuse[o.n_no_fuse++] = b->o.no_fuse[i];
    for (int i = 0; i < b->n; i++)
        if (i != c && o.n_no_fuse < OPT_MAX_LIST) o.no_fuse[o.n_no_fuse++] = b->ids[i];
    Runner r;
    RefRun ref = {0};
    Profile pr = {0};
    Status st = runner_open(&r, &o, &b->m, true, d);
    RefOptions ro = {.keep_all = true};
    if (st == ST_OK) st = ref_run(r.pipe.g, b->m.b.vals, &ro, &ref, d);
    if (st == ST_OK) st = prof_init(&pr, r.pipe.plan);
    if (st == ST_OK) st = prof_errors(&r.x, &ref, &b->tol, &pr, d);
    int kern = -1, first = -1;
    const Plan *p = st == ST_OK ? r.pipe.plan : NULL;
    for (int k = 0; p && k < p->nkernels; k++) {
        if (p->kernels[k].fusion >= 0 && strcmp(p->fusions[p->kernels[k].fusion].id, b->ids[c]) == 0 && kern < 0)
            kern = k;
        if (first < 0 && pr.k[k].has_err && !pr.k[k].ok) first = k;
    }
    if (p) {
        const char *tensor = first >= 0 ? p->tensors[p->kernels[first].args[p->kernels[first].nargs - 1]].name : "-";
        double e = first >= 0 ? pr.k[first].err.rel_l2 : 0, ma = first >= 0 ? pr.k[first].err.max_abs : 0;
        char note[128] = "", amj[160] = "";
        if (first >= 0) {
            report_argmax_note(&pr.k[first].err, note, sizeof note);
            report_argmax_json(&pr.k[first].err, amj, sizeof amj);
        }
        if (b->json)
            fprintf(b->out, "{\"schema\":\"npu-explore/bisect/1\",\"kind\":\"culprit\",\"fusion\":\"%s\","
                   "\"pattern\":\"%s\",\"nodes\":\"%s\",\"kernel\":%d,\"first_diverging\":\"%s\","
                   "\"first_kernel\":%d,\"rel_l2\":%.6g,\"max_abs\":%.6g%s}\n",
                   b->ids[c], b->pattern[c], b->nodes[c], kern, tensor, first, e, ma, amj);
        else
            fprintf(b->out, "culprit: %s %s [%s], kernel %d (%s) of the plan with only it on; first "
                   "diverging tensor '%s' (kernel %d) rel_l2 %.3e max_abs %.3e%s%s\n",
                   b->ids[c], b->pattern[c], b->nodes[c], kern,
                   kern >= 0 ? p->kernels[kern].shader : "-", tensor, first, e, ma,
                   *note ? "; " : "", note);
    }
    prof_free(&pr);
    ref_free(&ref);
    runner_close(&r);
    return st;
}

/* The instances of the all-on compile, in order. */
static Status list_instances(Bisect *b, DiagList *d)
{
    Runner r;
    Status st = runner_open(&r, &b->o, &b->m, false, d);
    const Plan *p = st == ST_OK ? r.pipe.plan : NULL;
    if (p) {
        b->ids = calloc((size_t)p->nfusions + 1, sizeof(char *));
        b->pattern = calloc((size_t)p->nfusions + 1, sizeof(char *));
        b->nodes = calloc((size_t)p->nfusions + 1, sizeof(char *));
        if (!b->ids || !b->pattern || !b->nodes) st = ST_NOMEM;
        for (int f = 0; st == ST_OK && f < p->nfusions; f++) {
            if (!p->fusions[f].enabled) continue;
            char buf[1024] = "";
            size_t used = 0;
            for (int k = 0; k < p->fusions[f].nnodes && used < sizeof buf - 2; k++) {
                int w = snprintf(buf + used, sizeof buf - used, "%s%s", k ? "," : "",
                                 p->fusions[f].nodes[k]);
                if (w > 0) used += (size_t)w;
            }
            b->ids[b->n] = strdup(p->fusions[f].id);
            b->pattern[b->n] = strdup(p->fusions[f].pattern);
            b->nodes[b->n] = strdup(buf);
            if (!b->ids[b->n] || !b->pattern[b->n] || !b->nodes[b->n]) st = ST_NOMEM;
            b->n++;
        }
    }
    runner_close(&r);
    return st;
}

Status app_bisect(const Options *o, FILE *out, int *rcp, DiagList *dl)
{
    Bisect b;
    memset(&b, 0, sizeof b);
    b.o = *o;
    b.out = out;
    b.json = o->json;
    Status st = ST_OK;
    if (strcmp(b.o.mode, "first") && strcmp(b.o.mode, "minimal"))
        st = diag_error(dl, NULL, NULL, NULL, "--mode must be first or minimal, got '%s'", b.o.mode);
    if (st == ST_OK) st = model_load_graph(&b.m, b.o.model, dl);
    if (st == ST_OK) st = model_bind(&b.m, &b.o, dl);
    RefOptions ro = {.keep_all = false, .keep_argmax_inputs = true};
    if (st == ST_OK) st = ref_run(b.m.g, b.m.b.vals, &ro, &b.ref, dl);
    if (st == ST_OK)
        b.tol = report_tolerance(&b.o, strcmp(b.o.backend, "cpu") == 0 ? "fp32"
                                                                        : runner_dtype(&b.o, &b.m.b));
    if (st == ST_OK) st = list_instances(&b, dl);
    int rc = 0;
    char *on = st == ST_OK ? calloc((size_t)b.n + 1, 1) : NULL;
    if (st == ST_OK && !on) st = ST_NOMEM;
    bool ok_off = false, ok_on = true, flaky = false, fl;
    double w;
    if (st == ST_OK) st = evaluate(&b, on, true, &ok_off, &w, &fl, dl), flaky |= fl;
    if (st == ST_OK) print_step(&b, "all off", on, ok_off, w);
    if (st == ST_OK) memset(on, 1, (size_t)b.n);
    if (st == ST_OK && ok_off) st = evaluate(&b, on, true, &ok_on, &w, &fl, dl), flaky |= fl;
    if (st == ST_OK && ok_off) print_step(&b, "all on", on, ok_on, w);
    if (st == ST_OK) {
        const char *why = flaky    ? "the verdict changed between two identical runs: a flaky oracle cannot be bisected"
                          : !ok_off ? "the outputs disagree with every fusion off: the fault is not in a fusion"
                          : ok_on   ? "every fusion on agrees with the reference: nothing to bisect"
                                    : NULL;
        if (why) {
            rc = ok_on && !flaky && ok_off ? 0 : 1;
            if (b.json)
                fprintf(b.out, "{\"schema\":\"npu-explore/bisect/1\",\"kind\":\"summary\",\"result\":\"%s\","
                       "\"steps\":%d}\n", why, b.steps);
            else
                fprintf(b.out, "%s\n", why);
        } else if (strcmp(b.o.mode, "first") == 0) {
            int c;
            st = bisect_first(&b, on, &c, dl);
            if (st == ST_OK) st = report_culprit(&b, c, dl);
        } else {
            /* peel off minimal failing sets until what remains passes */
            char *rest = malloc((size_t)b.n + 1);
            if (!rest) st = ST_NOMEM;
            if (rest) memset(rest, 1, (size_t)b.n);
            for (bool failing = true; st == ST_OK && failing;) {
                memcpy(on, rest, (size_t)b.n);
                st = ddmin(&b, on, dl);
                for (int i = 0; st == ST_OK && i < b.n; i++)
                    if (on[i]) {
                        st = report_culprit(&b, i, dl);
                        rest[i] = 0;
                    }
                bool ok;
                if (st == ST_OK) st = check(&b, "remaining", rest, &ok, dl);
                failing = !ok;
            }
            free(rest);
        }
    }
    if (st == ST_CANCELLED) {
        if (b.json)
            fprintf(b.out, "{\"schema\":\"npu-explore/bisect/1\",\"kind\":\"summary\",\"result\":\"cancelled\","
                           "\"steps\":%d}\n", b.steps);
        else
            fprintf(b.out, "cancelled after %d steps\n", b.steps);
    }
    if (st != ST_OK) rc = status_exit_code(st);
    *rcp = rc;
    free(on);
    for (int i = 0; i < b.n; i++) {
        free(b.ids[i]);
        free(b.pattern[i]);
        free(b.nodes[i]);
    }
    free(b.ids);
    free(b.pattern);
    free(b.nodes);
    ref_free(&b.ref);
    model_free(&b.m);
    return st;
}

int cmd_bisect(int argc, char **argv)
{
    Options o;
    DiagList d = {0};
    opt_defaults(&o);
    int rc = 2;
    Status st = opt_parse(&o, argc, argv, 1, &d);
    if (st == ST_OK) app_bisect(&o, stdout, &rc, &d);
    else rc = status_exit_code(st);
    diag_print(&d, stderr);
    diag_free(&d);
    return rc;
}
