/* One lowered instance timed alone; see tune_bench.h. */
#include "app/tune_bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "compiler/lower/lower.h"
#include "compiler/tune_cache.h"
#include "runtime/isolate.h"

static const HTensor *named_get(const NamedVals *nv, const char *name)
{
    for (int i = 0; i < nv->n; i++)
        if (strcmp(nv->names[i], name) == 0) return &nv->v[i];
    return NULL;
}

/* Keeps v (owned from now on) under name. */
static Status named_put(NamedVals *nv, const char *name, HTensor *v)
{
    if (nv->n == nv->cap) {
        int cap = nv->cap ? 2 * nv->cap : 8;
        char **nn = realloc(nv->names, sizeof *nn * (size_t)cap);
        if (nn) nv->names = nn;
        HTensor *vv = nn ? realloc(nv->v, sizeof *vv * (size_t)cap) : NULL;
        if (vv) nv->v = vv;
        if (!nn || !vv) return ST_NOMEM;
        nv->cap = cap;
    }
    size_t len = strlen(name) + 1;
    char *c = malloc(len);
    if (!c) return ST_NOMEM;
    memcpy(c, name, len);
    nv->names[nv->n] = c;
    nv->v[nv->n++] = *v;
    *v = (HTensor){0};
    return ST_OK;
}

static void named_free(NamedVals *nv)
{
    for (int i = 0; i < nv->n; i++) {
        free(nv->names[i]);
        htensor_free(&nv->v[i]);
    }
    free(nv->names);
    free(nv->v);
    memset(nv, 0, sizeof *nv);
}

void bench_init(TuneBench *b, const Graph *g, const CompileOptions *co, Exec *x, Backend *with,
                int node, const char *key, int iters, Tolerance tol)
{
    memset(b, 0, sizeof *b);
    b->g = g;
    b->co = *co;
    b->co.ir_text = NULL; /* the instance's plans embed no IR */
    b->co.ir_len = 0;
    b->co.tuned = NULL;
    b->x = x;
    b->with = with;
    b->node = node;
    b->key = key;
    b->iters = iters;
    b->tol = tol;
}

/* What the kernels run: modules, constants, grids and the bound tensors' layouts. */
static uint64_t signature(const Plan *p, const int *ks, int nk)
{
    uint64_t h = HASH64_INIT;
    for (int i = 0; i < nk; i++) {
        const PlanKernel *k = &p->kernels[ks[i]];
        h = hash64_update(h, k->shader, strlen(k->shader) + 1);
        h = hash64_update(h, &k->nin, sizeof k->nin);
        h = hash64_update(h, &k->nargs, sizeof k->nargs);
        h = hash64_update(h, k->push, sizeof *k->push * (size_t)k->npush);
        h = hash64_update(h, &k->npush, sizeof k->npush);
        h = hash64_update(h, k->spec, sizeof *k->spec * (size_t)k->nspec);
        h = hash64_update(h, &k->nspec, sizeof k->nspec);
        h = hash64_update(h, k->groups, sizeof k->groups);
        for (int a = 0; a < k->nargs; a++) {
            const PlanTensor *t = k->args[a] >= 0 ? &p->tensors[k->args[a]] : NULL;
            int64_t lay[NPU_MAX_RANK + 4] = {0};
            if (t) {
                lay[0] = t->storage;
                lay[1] = t->rank;
                lay[2] = t->view_off;
                lay[3] = t->alias_of >= 0;
                memcpy(lay + 4, t->pshape, sizeof t->pshape);
            }
            h = hash64_update(h, lay, sizeof lay);
        }
    }
    return h;
}

Status bench_lower(TuneBench *b, const Tuning *cfg, BenchPlan *bp, DiagList *d)
{
    memset(bp, 0, sizeof *bp);
    CompileOptions co = b->co;
    TuneCache one = {0};
    Tuning entry = {0};
    for (int i = 0; cfg && i < TUNE_COUNT; i++) {
        if (!(cfg->set >> i & 1u)) continue;
        Tuning *to = tune_info[i].use == TU_SEARCH ? &entry : &co.tuning;
        to->v[i] = cfg->v[i];
        to->set |= TUNE_BIT(i);
    }
    Status st = ST_OK;
    if (entry.set) {
        st = tune_cache_put(&one, "bench", b->key, &entry, -1, -1, d);
        co.tuned = &one;
        co.tuned_device = "bench";
    }
    if (st == ST_OK) st = plan_build_node(b->g, &co, b->node, &bp->p, d);
    tune_cache_free(&one);
    for (int k = 0; st == ST_OK && k < bp->p->nkernels; k++) {
        const PlanKernel *kn = &bp->p->kernels[k];
        if (!kn->tune_key || strcmp(kn->tune_key, b->key) != 0) continue;
        if (bp->nk == BENCH_MAX_KERNELS)
            st = diag_error(d, b->g->path, b->g->nodes[b->node].name, NULL,
                            "more than %d kernels in one instance", BENCH_MAX_KERNELS);
        else
            bp->ks[bp->nk++] = k;
    }
    if (st == ST_OK && bp->nk == 0)
        st = diag_error(d, b->g->path, b->g->nodes[b->node].name, NULL,
                        "no kernel with the tuning key '%s' at this node", b->key);
    if (st == ST_OK) bp->sig = signature(bp->p, bp->ks, bp->nk);
    if (st != ST_OK) bench_plan_free(bp);
    return st;
}

/* IsoValueFn: the value a run of the whole model left in the tensor called name. */
static Status input_value(void *ctx, const char *name, const HTensor **v, DiagList *d)
{
    TuneBench *b = ctx;
    *v = named_get(&b->in, name);
    if (*v) return ST_OK;
    int t = plan_find_tensor(b->x->p, name);
    if (t < 0)
        return diag_error(d, b->g->path, NULL, name,
                          "an input of the kernel timed alone that the model's plan lacks");
    HTensor h = {0};
    Status st = exec_read(b->x, t, &h, d);
    if (st == ST_OK) st = named_put(&b->in, name, &h);
    htensor_free(&h);
    if (st == ST_OK) *v = &b->in.v[b->in.n - 1];
    return st;
}

/* Keeps iso's outputs as the reference (none yet), or compares them with it. */
static Status judge(TuneBench *b, Isolated *iso, bool *ok, char *why, size_t n, DiagList *d)
{
    bool set_ref = b->ref.n == 0;
    int seen = 0;
    Status st = ST_OK;
    for (int t = 0; st == ST_OK && *ok && t < iso->q->ntensors; t++) {
        if (!iso->out[t]) continue;
        const char *name = iso->q->tensors[t].name;
        HTensor h = {0};
        st = iso_read(iso, t, &h, d);
        const HTensor *want = set_ref ? NULL : named_get(&b->ref, name);
        if (st == ST_OK && set_ref) {
            st = named_put(&b->ref, name, &h);
        } else if (st == ST_OK && !want) {
            *ok = false;
            snprintf(why, n, "writes '%s', which the defaults do not", name);
        } else if (st == ST_OK) {
            seen++;
            CmpStats s;
            if (!cmp_tensors(&h, want, &s) || !cmp_ok(&s, &b->tol)) {
                *ok = false;
                snprintf(why, n,
                         "'%s' differs from the defaults': rel_l2 %.3g, max_abs %.3g, %lld "
                         "non-finite",
                         name, s.rel_l2, s.max_abs, (long long)s.nonfinite);
            }
        }
        htensor_free(&h);
    }
    if (st == ST_OK && *ok && !set_ref && seen != b->ref.n) {
        *ok = false;
        snprintf(why, n, "writes %d of the defaults' %d outputs", seen, b->ref.n);
    }
    return st;
}

Status bench_run(TuneBench *b, const BenchPlan *bp, double *us, bool *ok, char *why, size_t n,
                 DiagList *d)
{
    *ok = true;
    if (n) why[0] = '\0';
    Isolated iso;
    Status st = iso_open(&iso, bp->p, bp->ks, bp->nk, b->with, d);
    if (st == ST_OK) st = iso_set_inputs(&iso, input_value, b, d);
    if (st == ST_OK) st = iso_time(&iso, b->iters, us, d);
    if (st == ST_OK) st = judge(b, &iso, ok, why, n, d);
    iso_close(&iso);
    return st;
}

void bench_plan_free(BenchPlan *bp)
{
    plan_free(bp->p);
    memset(bp, 0, sizeof *bp);
}

void bench_free(TuneBench *b)
{
    named_free(&b->in);
    named_free(&b->ref);
}

Status bench_compare(const Graph *g, const CompileOptions *co, Exec *x, Backend *with, int node,
                     const char *key, const Tuning *knobs, int iters, Tolerance tol,
                     double *default_us, double *tuned_us, bool *ok, char *why, size_t n,
                     DiagList *d)
{
    TuneBench b;
    bench_init(&b, g, co, x, with, node, key, iters, tol);
    BenchPlan a = {0}, t = {0};
    Status st = bench_lower(&b, NULL, &a, d);
    if (st == ST_OK) st = bench_lower(&b, knobs, &t, d);
    if (st == ST_OK) st = bench_run(&b, &a, default_us, ok, why, n, d); /* the reference */
    if (st == ST_OK) st = bench_run(&b, &t, tuned_us, ok, why, n, d);
    bench_plan_free(&a);
    bench_plan_free(&t);
    bench_free(&b);
    return st;
}
