/* The kernel-family registry and the helpers family functions share. */
#include "compiler/lower/kernels.h"
#include "common/hash.h"
#include "compiler/pass.h"

#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* Each kind's family function, from the table's KIND rows. */
static const KernelLowerFn family_fn[KK_COUNT] = {
#define KIND(name, fn) [KK_##name] = fn,
#define KERNEL(stem, kind, impl, flags, n, src, var, defs)
#include "shaders/kernels.def"
#undef KIND
#undef KERNEL
};

KernelLowerFn kernel_family(KernelKind kind)
{
    return kind > KK_NONE && kind < KK_COUNT ? family_fn[kind] : NULL;
}

bool kernel_has_family(const char *stem)
{
    return kernel_family(kernel_kind_of(stem)) != NULL;
}

Status kernel_lower(const KernelCtx *c, PlanKernel *k)
{
    KernelLowerFn fn = kernel_family(c->kind);
    if (!fn) return ST_OK; /* the backend's supports() refuses a stem it has no module for */
    k->npush = 0;
    k->nspec = 0;
    const KernelRow *base = kernel_pick((KernelKey){.kind = c->kind});
    if (base) k->shader = base->stem;
    return fn(c, k);
}

/* The table's row of key, or NULL after an error naming the node. */
static const KernelRow *row_of(const KernelCtx *c, KernelKey key)
{
    const KernelRow *r = kernel_pick(key);
    if (!r)
        kc_error(c, "no %s kernel (impl %d, flags 0x%x, n %d) in shaders/kernels.def",
                 kernel_kind_name(key.kind), (int)key.impl, key.flags, key.n);
    return r;
}

Status kc_pick(const KernelCtx *c, PlanKernel *k, KernelKey key)
{
    const KernelRow *r = row_of(c, key);
    if (!r) return ST_BAD_INPUT;
    k->shader = r->stem;
    return ST_OK;
}

const PlanTensor *kc_arg(const PlanKernel *k, const Plan *p, int i)
{
    return &p->tensors[k->args[i]];
}

const PlanTensor *kc_out(const PlanKernel *k, const Plan *p)
{
    return &p->tensors[k->args[k->nargs - 1]];
}

const Node *kc_member(const KernelCtx *c, OpId op)
{
    if (!c->fusion) return c->anchor->op == op ? c->anchor : NULL;
    for (int i = 0; i < c->fusion->nnodes; i++) {
        const Node *n = &c->g->nodes[c->fusion->nodes[i]];
        if (n->op == op) return n;
    }
    return NULL;
}

bool kc_is_member(const KernelCtx *c, int node)
{
    for (int i = 0; c->fusion && i < c->fusion->nnodes; i++)
        if (c->fusion->nodes[i] == node) return true;
    return false;
}

int kc_arg_of(const KernelCtx *c, const PlanKernel *k, int t)
{
    const char *name = c->g->tensors[t].name;
    for (int i = 0; i < k->nin; i++)
        if (strcmp(kc_arg(k, c->p, i)->name, name) == 0) return i;
    return -1;
}

bool kc_permuted_strides(const PlanTensor *y, const Node *tp, int r, const int64_t *shape,
                         int64_t *st)
{
    int perm[NPU_MAX_RANK];
    int64_t sy[NPU_MAX_RANK];
    if (y->rank != r || !node_perm(tp, r, perm)) return false;
    kc_strides(y, sy);
    for (int d = 0; d < r; d++) {
        if (y->shape[perm[d]] != shape[d]) return false;
        st[d] = sy[perm[d]];
    }
    return true;
}

void kc_strides(const PlanTensor *t, int64_t *strides)
{
    int64_t s = 1;
    for (int i = t->rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= t->pshape[i];
    }
}

int64_t kc_binding_offset(const Plan *p, const PlanTensor *t)
{
    int64_t off = (int64_t)plan_view_bytes(t);
    while (t->alias_of >= 0)
        t = &p->tensors[t->alias_of];
    return off + (t->offset < 0 ? 0 : t->offset);
}

int64_t kc_numel(const PlanTensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= t->shape[i];
    return n;
}

uint32_t kc_lanes_for(int64_t len, uint32_t wg)
{
    uint32_t t = 1;
    while (t < wg && t < len)
        t <<= 1;
    return t;
}

int64_t kc_tune(const KernelCtx *c, TuneId id)
{
    static const Tuning defaults;
    return tuning_get(c->tuning ? c->tuning : c->opt ? &c->opt->tuning : &defaults, id);
}

/* Node n's op (by name: stable when ops.def changes) and attributes into the running hash h. */
static uint64_t hash_attrs(uint64_t h, const Node *n)
{
    const char *op = op_short_name(n->op);
    h = hash64_update(h, op, strlen(op) + 1);
    for (int i = 0; i < n->nattrs; i++) {
        const Attr *a = &n->attrs[i];
        h = hash64_update(h, a->key, strlen(a->key) + 1);
        h = hash64_update(h, &a->kind, sizeof a->kind);
        if (a->kind == ATTR_INT || a->kind == ATTR_BOOL) h = hash64_update(h, &a->i, sizeof a->i);
        if (a->kind == ATTR_FLOAT) h = hash64_update(h, &a->f, sizeof a->f);
        if (a->s) h = hash64_update(h, a->s, strlen(a->s) + 1);
        if (a->kind == ATTR_INTS && a->n > 0)
            h = hash64_update(h, a->ints, sizeof *a->ints * (size_t)a->n);
        if (a->kind == ATTR_FLOATS && a->n > 0)
            h = hash64_update(h, a->floats, sizeof *a->floats * (size_t)a->n);
    }
    return h;
}

bool kc_tune_key(const KernelCtx *c, const PlanKernel *k, char *buf, size_t n)
{
    size_t at = 0;
    int w = snprintf(buf, n, "%s:%s %s%s", kernel_kind_name(c->kind),
                     c->fusion ? c->fusion->pattern : op_short_name(c->anchor->op),
                     plan_tier_name(c->tier), c->cm_emulate ? "-emulated" : "");
    at = w > 0 ? (size_t)w : n;
    for (int a = 0; a < k->nargs && at < n; a++) {
        const PlanTensor *t = k->args[a] >= 0 ? kc_arg(k, c->p, a) : NULL;
        char shp[160];
        if (t)
            shape_str(t->pshape, t->rank, shp, sizeof shp);
        else
            snprintf(shp, sizeof shp, "?");
        w = snprintf(buf + at, n - at, "%s %s%s", a == k->nin ? " ->" : "",
                     t ? dtype_short(t->storage) : "", shp);
        at += w > 0 ? (size_t)w : n;
    }
    uint64_t h = HASH64_INIT;
    if (c->fusion)
        for (int i = 0; i < c->fusion->nnodes; i++)
            h = hash_attrs(h, &c->g->nodes[c->fusion->nodes[i]]);
    else
        h = hash_attrs(h, c->anchor);
    if (at < n) {
        w = snprintf(buf + at, n - at, " #%08x", (unsigned)(h ^ h >> 32));
        at += w > 0 ? (size_t)w : n;
    }
    return at < n;
}

KcTile kc_gemm_tile(int64_t m, int64_t n, int64_t k, int64_t batch, int64_t cm_tile, int64_t target)
{
    bool cm = cm_tile > 0;
    KcTile t = {.cm = cm, .bk = cm ? 32 : 16, .tr = 4, .tc = 4};
    /* SIMT: BM 32 (16 for 16 channels or fewer), BN 64 (32 for 32 pixels or fewer). On the H200
     * 32 x 64 (128 invocations) beat 64 x 64 on nearly every SIMT conv of three mobile CNNs, and
     * summed over their convs came within 1% of each conv at its own best of 8 tiles
     * (bench/NOTES.md, "The SIMT conv's tile"); conv.bm / conv.bn override it per kernel. */
    t.bm = m <= 16 ? 16 : 32;
    t.bn = n <= 32 ? 32 : 64;
    /* the coopmat tiles are compile-time constants (gemm_tile.glsl): 64 x 64 on 4 subgroups,
     * 128 x 128 on 8 */
    if (cm) t.bm = t.bn = cm_tile == KC_CM_TILE_LARGE ? KC_CM_TILE_LARGE : KC_CM_TILE;
    t.wg = cm ? (t.bm == KC_CM_TILE_LARGE ? 256 : 128) : t.bm * t.bn / (t.tr * t.tc);
    /* SIMT: 4 x 4 per invocation (the shared reads are vec4s: gemm_tile.glsl), and with BM >= 16
     * the workgroup (BM * BN / 16) covers a whole row of BK and of BN per staging pass */
    kc_gemm_split(&t, m, n, k, batch, target);
    return t;
}

void kc_gemm_split(KcTile *t, int64_t m, int64_t n, int64_t k, int64_t batch, int64_t target)
{
    t->mtiles = (m + t->bm - 1) / t->bm;
    t->ntiles = (n + t->bn - 1) / t->bn;
    t->tiles = batch * t->mtiles * t->ntiles;
    int64_t steps = (k + t->bk - 1) / t->bk, split = 1;
    if (t->tiles < target) {
        split = (target + t->tiles - 1) / t->tiles;
        if (split > steps / KC_MIN_STEPS) split = steps / KC_MIN_STEPS;
        if (split < 1) split = 1;
    }
    int64_t per = (steps + split - 1) / split; /* steps per split; the last split may be short */
    t->kchunk = per * t->bk;
    t->nsplit = (steps + per - 1) / per;
}

void kc_gemm_split_waves(KcTile *t, int64_t m, int64_t n, int64_t k, int64_t batch, int64_t slots)
{
    kc_gemm_split(t, m, n, k, batch, 1); /* the tile counts, unsplit */
    int64_t steps = (k + t->bk - 1) / t->bk;
    if (t->tiles >= slots || slots < 1) return;
    int64_t best = 0;
    for (int64_t s = 1; s == 1 || s <= steps / KC_MIN_STEPS; s++) {
        int64_t per = (steps + s - 1) / s, ns = (steps + per - 1) / per;
        int64_t cost = (t->tiles * ns + slots - 1) / slots * (per + KC_SPLIT_TAIL_STEPS);
        if (ns == s && (best == 0 || cost < best)) {
            best = cost;
            t->kchunk = per * t->bk;
            t->nsplit = ns;
        }
    }
}

int kc_scratch(const KernelCtx *c, const PlanKernel *k, const char *suffix, int rank,
               const int64_t *shape, DType storage)
{
    Plan *p = c->grow;
    if (!p || p->ntensors >= c->max_tensors || rank < 1 || rank > NPU_MAX_RANK) {
        kc_error(c, "kernel %s: no room for a scratch tensor in the plan", k->shader);
        return -1;
    }
    char name[256];
    snprintf(name, sizeof name, "%s%s", kc_out(k, p)->name, suffix);
    PlanTensor *t = &p->tensors[p->ntensors];
    memset(t, 0, sizeof *t);
    t->name = arena_strdup(&p->arena, name);
    t->kind = PT_ACT;
    t->dtype = t->storage = storage;
    t->rank = rank;
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        t->shape[i] = t->pshape[i] = shape[i];
        n *= shape[i];
    }
    t->alias_of = -1;
    t->offset = -1;
    t->bytes = n * (int64_t)dtype_size(storage);
    t->weight_key = NULL;
    if (!t->name) {
        kc_error(c, "out of memory");
        return -1;
    }
    return p->ntensors++;
}

Status kc_set_args(const KernelCtx *c, PlanKernel *k, const int *args, int nin, int nargs)
{
    int *a = c->grow ? arena_alloc(&c->grow->arena, sizeof(int) * (size_t)(nargs + 1)) : NULL;
    if (!a || nin < 0 || nin > nargs) return kc_error(c, "kernel %s: cannot rebind", k->shader);
    memcpy(a, args, sizeof(int) * (size_t)nargs);
    k->args = a;
    k->nin = nin;
    k->nargs = nargs;
    return ST_OK;
}

PlanKernel *kc_append(const KernelCtx *c, const PlanKernel *k, KernelKey key, const int *args,
                      int nin, int nargs)
{
    Plan *p = c->grow;
    const KernelRow *row = row_of(c, key);
    if (!row) return NULL;
    if (!p || p->nkernels >= c->max_kernels || k != &p->kernels[p->nkernels - 1] || nin < 0 ||
        nin > nargs) {
        kc_error(c, "kernel %s: no room for a second kernel in the plan", k->shader);
        return NULL;
    }
    PlanKernel *e = &p->kernels[p->nkernels];
    memset(e, 0, sizeof *e);
    e->shader = row->stem;
    e->target = k->target;
    e->op = k->op;
    e->node = k->node;
    e->fusion = k->fusion;
    e->nin = nin;
    e->nargs = nargs;
    e->args = arena_alloc(&p->arena, sizeof(int) * (size_t)(nargs + 1));
    e->nprov = k->nprov;
    e->prov = k->prov; /* arena strings of the same plan */
    if (!e->args) {
        kc_error(c, "out of memory");
        return NULL;
    }
    memcpy(e->args, args, sizeof(int) * (size_t)nargs);
    kc_grid(e, 1, 1);
    p->nkernels++;
    return e;
}

Status kc_error(const KernelCtx *c, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return diag_add(c->d, DIAG_ERROR, ST_BAD_INPUT, c->g->path, c->anchor->name, NULL, "%s", msg);
}

int32_t kc_word(KcWords *w, int64_t v)
{
    if ((v < INT32_MIN || v > INT32_MAX) && !w->bad) {
        w->bad = true;
        w->first_bad = v;
    }
    return (int32_t)v;
}

void kc_word_n(KcWords *w, void *dst, const int64_t *v, int n)
{
    for (int i = 0; i < n; i++) {
        int32_t x = kc_word(w, v[i]);
        memcpy((char *)dst + 4 * (size_t)i, &x, 4);
    }
}

Status kc_words_ok(const KernelCtx *c, const PlanKernel *k, const KcWords *w)
{
    if (!w->bad) return ST_OK;
    return kc_error(c, "value %lld does not fit the %s kernel's 32-bit parameters",
                    (long long)w->first_bad, k->shader);
}

Status kc_push_block(const KernelCtx *c, PlanKernel *k, const void *block, size_t bytes)
{
    size_t n = bytes / 4;
    if (n > (size_t)(PLAN_MAX_PUSH - k->npush))
        return kc_error(c, "kernel %s needs more than %d push-constant words", k->shader,
                        PLAN_MAX_PUSH);
    memcpy(k->push + k->npush, block, 4 * n);
    k->npush += (int)n;
    return ST_OK;
}

Status kc_spec(const KernelCtx *c, PlanKernel *k, uint32_t v)
{
    if (k->nspec >= PLAN_MAX_SPEC)
        return kc_error(c, "kernel %s needs more than %d specialization constants", k->shader,
                        PLAN_MAX_SPEC);
    k->spec[k->nspec++] = v;
    return ST_OK;
}

void kc_grid(PlanKernel *k, int64_t n, int64_t per_group)
{
    int64_t g = per_group > 0 ? (n + per_group - 1) / per_group : 1;
    if (g < 1) g = 1;
    int64_t x = g, y = 1, z = 1;
    if (x > 65535) {
        y = (x + 65534) / 65535;
        x = 65535;
        if (y > 65535) {
            z = (y + 65534) / 65535;
            y = 65535;
        }
    }
    k->groups[0] = (uint32_t)x;
    k->groups[1] = (uint32_t)y;
    k->groups[2] = (uint32_t)z;
}

KcRows kc_last_dim_rows(const PlanTensor *x, const PlanTensor *y)
{
    int64_t xs[NPU_MAX_RANK], ys[NPU_MAX_RANK];
    kc_strides(x, xs);
    kc_strides(y, ys);
    int r = x->rank;
    KcRows o = {.rows = 1, .len = r ? x->shape[r - 1] : 1, .step = r ? xs[r - 1] : 1};
    for (int d = 0; d < ROW_OUTER; d++) {
        int od = d - (ROW_OUTER - (r - 1));
        bool in = r > 0 && od >= 0;
        o.shape[d] = in ? x->shape[od] : 1;
        o.xs[d] = in ? xs[od] : 0;
        o.ys[d] = in ? ys[od] : 0;
        o.rows *= o.shape[d];
    }
    return o;
}
