/* The tuner's search and its cache; see tune.h. */
#include "app/tune.h"

#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/grow.h"
#include "compiler/tune_cache.h"
#include "app/report.h"
#include "app/tune_bench.h"
#include "app/tuned.h"

enum { CONFIRM_ROUNDS = 3, MAX_VALUES = 40 };

TuneMask tune_search_knobs(KernelKind kind, const Tuning *global)
{
    TuneMask m = 0;
    for (int i = 0; i < TUNE_COUNT; i++)
        if (tuning_knob_shapes((TuneId)i, kind) && tune_info[i].use == TU_SEARCH &&
            !(global->set >> i & 1u))
            m |= TUNE_BIT(i);
    return m;
}

/* A configuration timed: its knobs and median time. */
typedef struct Cfg {
    Tuning t;
    double us;
} Cfg;

typedef struct Cfgs {
    Cfg *v;
    int n, cap;
} Cfgs;

static Status cfgs_add(Cfgs *c, const Tuning *t, double us)
{
    Cfg *v = grow_array(c->v, c->n, &c->cap, sizeof *v, 32);
    if (!v) return ST_NOMEM;
    c->v = v;
    c->v[c->n++] = (Cfg){*t, us};
    return ST_OK;
}

static bool same_knobs(const Tuning *a, const Tuning *b)
{
    if (a->set != b->set) return false;
    for (int i = 0; i < TUNE_COUNT; i++)
        if ((a->set >> i & 1u) && a->v[i] != b->v[i]) return false;
    return true;
}

static bool cfgs_has(const Cfgs *c, const Tuning *t)
{
    for (int i = 0; i < c->n; i++)
        if (same_knobs(&c->v[i].t, t)) return true;
    return false;
}

static int by_time(const void *a, const void *b)
{
    double x = ((const Cfg *)a)->us, y = ((const Cfg *)b)->us;
    return x < y ? -1 : x > y;
}

/* The search of one kernel: its state between rounds. */
typedef struct Search {
    TuneBench *b;
    TuneRow *row;
    const Options *o;
    double deadline; /* clock_us */
    Cfgs visited;    /* every configuration lowered (timed or not) */
    Cfgs timed;      /* those timed with outputs matching the defaults' */
    uint64_t *sigs;  /* what the timed or refused ones lowered to */
    int nsigs, capsigs;
    bool out_of_time;
} Search;

static bool sig_seen(Search *s, uint64_t sig)
{
    for (int i = 0; i < s->nsigs; i++)
        if (s->sigs[i] == sig) return true;
    return false;
}

static Status sig_add(Search *s, uint64_t sig)
{
    uint64_t *v = grow_array(s->sigs, s->nsigs, &s->capsigs, sizeof *v, 64);
    if (!v) return ST_NOMEM;
    s->sigs = v;
    s->sigs[s->nsigs++] = sig;
    return ST_OK;
}

/* A refusal's note (the first one kept): the knobs and why. */
static void note(TuneRow *row, const Tuning *t, const char *why)
{
    if (row->note[0]) return;
    char k[96];
    tuning_format_set(t, k, sizeof k);
    snprintf(row->note, sizeof row->note, "%s: %.150s", k[0] ? k : "the defaults", why);
}

/* Lowers and times configuration t (unless it lowers to a kernel seen already). A configuration
 * that fails is counted and noted, not an error: only running out of memory is. */
static Status try_config(Search *s, const Tuning *t)
{
    TuneRow *row = s->row;
    Status st = cfgs_add(&s->visited, t, 0);
    DiagList local = {0};
    BenchPlan bp;
    if (st == ST_OK) st = bench_lower(s->b, t, &bp, &local);
    if (st == ST_OK && sig_seen(s, bp.sig)) {
        row->same++;
    } else if (st == ST_OK) {
        double us = 0;
        bool ok = true;
        char why[200];
        st = sig_add(s, bp.sig);
        if (st == ST_OK) st = bench_run(s->b, &bp, &us, &ok, why, sizeof why, &local);
        if (st == ST_OK && !ok) {
            row->rejected++;
            note(row, t, why);
        } else if (st == ST_OK) {
            row->tried++;
            st = cfgs_add(&s->timed, t, us);
        }
    }
    if (st != ST_OK && st != ST_NOMEM && st != ST_CANCELLED) {
        row->failed++;
        note(row, t, local.count ? local.items[0].msg : status_name(st));
        st = ST_OK;
    }
    bench_plan_free(&bp);
    diag_free(&local);
    return st;
}

/* Is the search to stop (cancelled: ST_CANCELLED; out of time: s->out_of_time)? */
static Status stop_point(Search *s, DiagList *d)
{
    if (cancel_requested(s->o->cancel))
        return diag_add(d, DIAG_ERROR, ST_CANCELLED, NULL, NULL, NULL, "tune cancelled");
    if (clock_us() > s->deadline) s->out_of_time = true;
    return ST_OK;
}

/* One round: every configuration of the beam (the `beam` fastest so far) extended by one knob
 * value. *better: the fastest improved by TUNE_MARGIN (less is noise: another round would
 * chase it). */
static Status round_once(Search *s, TuneMask knobs, int beam, bool *better, DiagList *d)
{
    qsort(s->timed.v, (size_t)s->timed.n, sizeof *s->timed.v, by_time);
    double before = s->timed.v[0].us;
    int nb = s->timed.n < beam ? s->timed.n : beam;
    Cfg *b = malloc(sizeof *b * (size_t)nb);
    if (!b) return ST_NOMEM;
    memcpy(b, s->timed.v, sizeof *b * (size_t)nb);
    Status st = ST_OK;
    for (int c = 0; st == ST_OK && c < nb && !s->out_of_time; c++) {
        for (int i = 0; st == ST_OK && i < TUNE_COUNT && !s->out_of_time; i++) {
            if (!(knobs >> i & 1u)) continue;
            int64_t v[MAX_VALUES];
            int nv = tuning_candidates((TuneId)i, v, MAX_VALUES);
            for (int j = 0; st == ST_OK && j < nv && !s->out_of_time; j++) {
                Tuning t = b[c].t;
                if (tuning_get(&t, (TuneId)i) == v[j]) continue; /* no change */
                t.v[i] = v[j];
                t.set |= TUNE_BIT(i);
                if (cfgs_has(&s->visited, &t)) continue;
                st = stop_point(s, d);
                if (st == ST_OK && !s->out_of_time) st = try_config(s, &t);
            }
        }
    }
    free(b);
    double after = before;
    for (int i = 0; i < s->timed.n; i++)
        if (s->timed.v[i].us < after) after = s->timed.v[i].us;
    *better = after < before * (1 - TUNE_MARGIN);
    return st;
}

/* Median of n values (sorted in place). */
static double median(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The winner against the defaults again, alternating (drift and warm-up hit both alike);
 * *stable false when its outputs no longer match (noted). */
static Status confirm(Search *s, const Tuning *best, bool *stable, DiagList *d)
{
    BenchPlan a, w;
    Status st = bench_lower(s->b, NULL, &a, d);
    if (st == ST_OK) st = bench_lower(s->b, best, &w, d);
    double da[CONFIRM_ROUNDS], dw[CONFIRM_ROUNDS];
    bool ok = true;
    char why[200];
    for (int r = 0; st == ST_OK && r < CONFIRM_ROUNDS; r++) {
        st = bench_run(s->b, &a, &da[r], &ok, why, sizeof why, d);
        if (st == ST_OK) st = bench_run(s->b, &w, &dw[r], &ok, why, sizeof why, d);
        if (st == ST_OK && !ok) { /* it matched once: results that vary from run to run */
            note(s->row, best, why);
            break;
        }
    }
    *stable = ok;
    if (st == ST_OK && ok) {
        s->row->default_us = median(da, CONFIRM_ROUNDS);
        s->row->best_us = median(dw, CONFIRM_ROUNDS);
    }
    bench_plan_free(&a);
    bench_plan_free(&w);
    return st;
}

/* The beam search of row's kernel with bench b. */
static Status search_kernel(TuneBench *b, const TuneSearch *ts, const Options *o, double deadline,
                            TuneRow *row, DiagList *d)
{
    Search s = {.b = b, .row = row, .o = o, .deadline = deadline};
    Tuning none = {0};
    Status st = try_config(&s, &none); /* the defaults: their outputs are the reference */
    if (st == ST_OK && s.timed.n == 0)
        st = diag_error(d, NULL, NULL, NULL, "tune: kernel %d (%s) does not run alone: %s",
                        row->kernel, row->stem, row->note);
    row->default_us = row->best_us = st == ST_OK ? s.timed.v[0].us : -1;
    bool better = true;
    while (st == ST_OK && better && !s.out_of_time)
        st = round_once(&s, row->knobs, ts->beam, &better, d);
    if (st == ST_OK) {
        qsort(s.timed.v, (size_t)s.timed.n, sizeof *s.timed.v, by_time);
        const Tuning *best = &s.timed.v[0].t;
        bool stable = true;
        if (best->set) st = confirm(&s, best, &stable, d);
        row->improved = st == ST_OK && best->set && stable &&
                        row->best_us < row->default_us * (1 - TUNE_MARGIN);
        if (row->improved) row->best = *best;
        if (!row->improved) row->best_us = row->default_us;
    }
    free(s.visited.v);
    free(s.timed.v);
    free(s.sigs);
    return st;
}

static void progress(const Progress *pg, const char *stage, int k, int n)
{
    if (pg && pg->fn) pg->fn(pg->ctx, stage, k, n);
}

/* One distinct tuning key of a plan: its first instance's anchor and how many instances. */
typedef struct Unit {
    int node;
    const char *key;
    int count;
} Unit;

/* The units of plan p in kernel order into *out (caller frees); their count. */
static int units_of(const Plan *p, Unit **out)
{
    int maxnode = 0, n = 0;
    for (int k = 0; k < p->nkernels; k++)
        if (p->kernels[k].node > maxnode) maxnode = p->kernels[k].node;
    Unit *u = malloc(sizeof *u * ((size_t)p->nkernels + 1));
    const char **node_key = calloc((size_t)maxnode + 1, sizeof *node_key);
    for (int k = 0; u && node_key && k < p->nkernels; k++) {
        const PlanKernel *kn = &p->kernels[k];
        if (!kn->tune_key || kn->node < 0) continue;
        /* the first kernel of an instance (a K split's reduce shares its node and key) */
        if (node_key[kn->node] && strcmp(node_key[kn->node], kn->tune_key) == 0) continue;
        node_key[kn->node] = kn->tune_key;
        int i = 0;
        while (i < n && strcmp(u[i].key, kn->tune_key) != 0)
            i++;
        if (i == n) u[n++] = (Unit){kn->node, kn->tune_key, 0};
        u[i].count++;
    }
    free(node_key);
    *out = u;
    return u ? n : -1;
}

/* The units' indices, the most GPU time first: the sum over the kernels of each unit (its
 * instances and their K-split reduces, which share node and key) in the last timed run of r;
 * kernel order where the backend has no per-kernel times or on ties. NULL: out of memory. */
static int *units_by_time(Runner *r, const Plan *p, const Unit *u, int nu)
{
    double *us = malloc(sizeof *us * ((size_t)p->nkernels + 1));
    double *cost = calloc((size_t)nu + 1, sizeof *cost);
    int *order = NULL;
    if (us && cost) {
        if (r->x.be->ops->kernel_us && r->x.be->ops->kernel_us(r->x.be, us, p->nkernels))
            for (int k = 0; k < p->nkernels; k++)
                for (int i = 0; p->kernels[k].tune_key && us[k] > 0 && i < nu; i++)
                    if (strcmp(u[i].key, p->kernels[k].tune_key) == 0) cost[i] += us[k];
        order = tune_order(cost, nu);
    }
    free(us);
    free(cost);
    return order;
}

int *tune_order(const double *cost, int n)
{
    int *order = malloc(sizeof *order * ((size_t)n + 1));
    for (int i = 0; order && i < n; i++) { /* insertion: stable, so ties keep index order */
        int j = i;
        for (; j > 0 && cost[order[j - 1]] < cost[i]; j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    return order;
}

/* The kernel kinds `tune` searches knobs of, "conv2d, matmul, decode_attention". */
static const char *searchable_kinds(char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int k = KK_NONE + 1; k < KK_COUNT && at < n; k++) {
        if (!tuning_kind_searchable((KernelKind)k)) continue;
        int w = snprintf(buf + at, n - at, "%s%s", at ? ", " : "", kernel_kind_name((KernelKind)k));
        at += w > 0 ? (size_t)w : n;
    }
    return buf;
}

/* The first kernel of plan p at node with key, or -1. */
static int first_kernel(const Plan *p, int node, const char *key)
{
    for (int k = 0; k < p->nkernels; k++)
        if (p->kernels[k].node == node && p->kernels[k].tune_key &&
            strcmp(p->kernels[k].tune_key, key) == 0)
            return k;
    return -1;
}

/* --kernel K: the key of kernel K of the plan shown, or NULL after an error. */
static const char *selected_key(const Plan *shown, int k, DiagList *d)
{
    char kinds[128];
    if (k >= shown->nkernels) {
        diag_error(d, shown->source, NULL, NULL, "--kernel %d: the plan has %d kernels (0..%d)", k,
                   shown->nkernels, shown->nkernels - 1);
        return NULL;
    }
    const PlanKernel *kn = &shown->kernels[k];
    if (!kn->tune_key)
        diag_error(d, shown->source, kn->nprov ? kn->prov[0] : NULL, NULL,
                   "--kernel %d (%s): its kind has no knob tune searches (those of %s have)", k,
                   kn->target == KT_CPU ? "a CPU kernel" : kn->shader,
                   searchable_kinds(kinds, sizeof kinds));
    return kn->tune_key;
}

/* Searches unit u (row) with the base run r of plan `base` (compiled with co). */
static Status tune_unit(const Options *o, const TuneSearch *ts, const Pipeline *base,
                        const CompileOptions *co, Runner *r, const Unit *u, double deadline,
                        TuneRow *row, DiagList *d)
{
    int k = first_kernel(base->plan, u->node, u->key);
    const KernelRow *kr = k >= 0 ? kernel_row(base->plan->kernels[k].shader) : NULL;
    row->knobs = ts->knobs ? ts->knobs : tune_search_knobs(kr ? kr->key.kind : KK_NONE, &o->tune);
    TuneBench b;
    bench_init(&b, base->g, co, &r->x, r->be, u->node, u->key, ts->iters,
               report_tolerance(o, r->dtype));
    DiagList local = {0};
    Status st = search_kernel(&b, ts, o, deadline, row, &local);
    bench_free(&b);
    if (st != ST_OK && st != ST_NOMEM && st != ST_CANCELLED) { /* this kernel only */
        row->skipped = true;
        snprintf(row->note, sizeof row->note, "%s",
                 local.count ? local.items[local.count - 1].msg : status_name(st));
        st = ST_OK;
    }
    for (int i = 0; st != ST_OK && i < local.count; i++)
        diag_add(d, local.items[i].level, st, local.items[i].file, local.items[i].node,
                 local.items[i].tensor, "%s", local.items[i].msg);
    diag_free(&local);
    return st;
}

Status tune_measure(const Options *o, Model *m, const TuneSearch *ts, const Progress *pg,
                    TuneResult *out, DiagList *d)
{
    if (strcmp(o->backend, "cpu") == 0)
        return diag_error(d, NULL, NULL, NULL,
                          "tune times kernels on a Vulkan device; --backend cpu runs none");
    double t0 = clock_us();
    Options oo = *o;
    oo.recompile = true; /* a .npubin: its IR, lowered again with each configuration */
    Options base = oo;
    base.tuned = "none"; /* the search starts from the defaults */
    RunTarget t;
    Pipeline shown = {0}, bp = {0};
    Runner r = {0};
    TuneResult res = {0};
    Unit *u = NULL;
    CompileOptions co;
    progress(pg, "compiling", 0, 0);
    Status st = runner_target(&oo, &m->b, &t, d);
    if (st == ST_OK) st = runner_compile(&oo, m, &t, false, &shown, d);
    if (st == ST_OK) st = runner_compile(&base, m, &t, true, &bp, d);
    if (st == ST_OK) st = runner_options(&base, &t, true, &co, d);
    progress(pg, "a run of the model (the kernels' inputs)", 0, 0);
    if (st == ST_OK) st = runner_open_plan(&r, &base, m, &bp, d);
    if (st == ST_OK) st = exec_run(&r.x, false, d);
    /* each kernel's time: the order a search of every kernel takes */
    if (st == ST_OK && ts->kernel < 0) st = exec_run(&r.x, true, d);
    const char *only = NULL;
    if (st == ST_OK && ts->kernel >= 0 && !(only = selected_key(shown.plan, ts->kernel, d)))
        st = ST_BAD_INPUT;
    int nu = st == ST_OK ? units_of(bp.plan, &u) : 0;
    if (nu < 0) st = ST_NOMEM;
    res.rows = st == ST_OK ? calloc((size_t)nu + 1, sizeof *res.rows) : NULL;
    if (st == ST_OK && !res.rows) st = ST_NOMEM;
    double deadline = t0 + ts->budget_s * 1e6;
    /* the rows in kernel order; searched in the order of the time their kernels take in the
     * model (units_by_time), so a budget that runs out leaves the cheapest unsearched */
    int *order = st == ST_OK ? units_by_time(&r, bp.plan, u, nu) : NULL;
    if (st == ST_OK && !order) st = ST_NOMEM;
    int *row_of = st == ST_OK ? calloc((size_t)nu + 1, sizeof *row_of) : NULL;
    if (st == ST_OK && !row_of) st = ST_NOMEM;
    for (int i = 0; st == ST_OK && i < nu; i++) {
        row_of[i] = -1;
        if (only && strcmp(u[i].key, only) != 0) continue;
        row_of[i] = res.n;
        TuneRow *row = &res.rows[res.n++];
        int k = first_kernel(shown.plan, u[i].node, u[i].key);
        row->kernel = k;
        row->count = u[i].count;
        snprintf(row->stem, sizeof row->stem, "%s", k >= 0 ? shown.plan->kernels[k].shader : "?");
        snprintf(row->key, sizeof row->key, "%s", u[i].key);
        row->default_us = row->best_us = -1;
    }
    for (int j = 0, done = 0; st == ST_OK && j < nu; j++) {
        int i = order[j];
        if (row_of[i] < 0) continue;
        TuneRow *row = &res.rows[row_of[i]];
        progress(pg, "tuning kernels", ++done, res.n);
        double now = clock_us();
        if (now > deadline) {
            row->skipped = true;
            snprintf(row->note, sizeof row->note, "not searched: the budget (--budget-s) ran out");
            continue;
        }
        /* an equal share of what is left to each kernel still to search */
        double share = now + (deadline - now) / (res.n - done + 1);
        st = tune_unit(o, ts, &bp, &co, &r, &u[i], share, row, d);
    }
    free(order);
    free(row_of);
    if (st == ST_OK) {
        snprintf(res.device, sizeof res.device, "%s", t.device);
        snprintf(res.dtype, sizeof res.dtype, "%s", r.dtype);
        snprintf(res.model, sizeof res.model, "%s", bp.plan->model_name ? bp.plan->model_name : "");
        res.tier = t.tier;
        res.beam = ts->beam;
        res.iters = ts->iters;
        res.seconds = (clock_us() - t0) * 1e-6;
        tune_result_free(out);
        *out = res;
    } else {
        tune_result_free(&res);
    }
    free(u);
    runner_close(&r);
    pipeline_free(&bp);
    pipeline_free(&shown);
    return st;
}

Status tune_store(const Options *o, TuneResult *r, DiagList *d)
{
    TuneCache *c = NULL;
    bool foreign = false;
    r->cache[0] = '\0';
    r->cached = 0;
    Status st = tuned_cache(o, &c, &foreign, d);
    if (st != ST_OK || !c) return st;
    char path[4096];
    tuned_path(o, path, sizeof path);
    if (foreign)
        return diag_error(d, path, NULL, NULL,
                          "is not an npu-explore tuning cache: not overwritten (--tuned names "
                          "another file)");
    for (int i = 0; st == ST_OK && i < r->n; i++) {
        const TuneRow *w = &r->rows[i];
        if (w->skipped) continue;
        if (w->improved)
            st = tune_cache_put(c, r->device, w->key, &w->best, w->default_us, w->best_us, d);
        else
            tune_cache_drop(c, r->device, w->key);
    }
    if (st == ST_OK) st = tuned_save(o, d);
    if (st == ST_OK) {
        snprintf(r->cache, sizeof r->cache, "%s", path);
        r->cached = tune_cache_count(c, r->device);
    }
    return st;
}

void tune_result_free(TuneResult *r)
{
    free(r->rows);
    memset(r, 0, sizeof *r);
}
