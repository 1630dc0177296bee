#include "compiler/plan.h"
#include "compiler/lower/kernel_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

Plan *plan_new(void)
{
    Plan *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    arena_init(&p->arena, 64 * 1024);
    return p;
}

void plan_free(Plan *p)
{
    if (!p) return;
    arena_free(&p->arena);
    free(p);
}

/* The CPU reference's element type for a declared dtype (runtime/htensor.c htensor_ref_dtype). */
static DType host_dtype(DType declared)
{
    if (declared == DT_BOOL) return DT_BOOL;
    return dtype_is_float(declared) ? DT_F32 : DT_I64;
}

PlanTransfer plan_transfer(const Plan *p, int part, int j)
{
    const PlanPart *pp = &p->parts[part];
    const PlanTensor *t = &p->tensors[pp->in[j]];
    PlanTransfer x = {.tensor = pp->in[j],
                      .to_cpu = pp->target == KT_CPU,
                      .relayout = t->padded,
                      .depad_kernel = -1};
    int b = plan_base(p, x.tensor);
    for (int k = 0; k < p->nkernels && x.to_cpu; k++) {
        const PlanKernel *kn = &p->kernels[k];
        if (kn->nargs > kn->nin && kn->args[kn->nargs - 1] == b &&
            kernel_kind_of(kn->shader) == KK_depad)
            x.depad_kernel = k;
    }
    DType h = host_dtype(t->dtype);
    x.from = x.to_cpu ? t->storage : h;
    x.to = x.to_cpu ? h : t->storage;
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= t->pshape[i];
    x.device_bytes = n * (int64_t)dtype_size(t->storage);
    return x;
}

const char *plan_transfer_text(const Plan *p, const PlanTransfer *x, char *buf, size_t n)
{
    (void)p;
    char cast[32] = "no cast";
    if (x->from != x->to)
        snprintf(cast, sizeof cast, "%s->%s", dtype_short(x->from), dtype_short(x->to));
    char dep[48] = "";
    if (x->depad_kernel >= 0)
        snprintf(dep, sizeof dep, " (depadded by kernel %d)", x->depad_kernel);
    snprintf(buf, n, "%s%s%s", cast, x->relayout ? (x->to_cpu ? " depad" : " pad") : "", dep);
    return buf;
}

int plan_ntransfers(const Plan *p)
{
    int n = 0;
    for (int i = 0; i < p->nparts; i++)
        n += p->parts[i].nin;
    return n;
}

const char *plan_tier_name(int tier)
{
    switch (tier) {
    case TIER_PORTABLE:
        return "portable";
    case TIER_NV_COOPMAT:
        return "nv-coopmat";
    }
    return NULL;
}

int plan_tier_parse(const char *name)
{
    for (int t = 0; t < TIER_COUNT; t++)
        if (name && strcmp(name, plan_tier_name(t)) == 0) return t;
    return -1;
}

static int streq(const char *a, const char *b)
{
    if (!a || !b) return a == b;
    return strcmp(a, b) == 0;
}

static int ints_eq(const int *a, const int *b, int n)
{
    return n == 0 || memcmp(a, b, sizeof(int) * (size_t)n) == 0;
}

int plan_equal(const Plan *a, const Plan *b)
{
    if (!streq(a->model_name, b->model_name) || !streq(a->source, b->source) ||
        a->compute != b->compute || a->tier != b->tier || a->channel_tile != b->channel_tile ||
        a->ntensors != b->ntensors || a->nkernels != b->nkernels || a->nparts != b->nparts ||
        a->nfusions != b->nfusions || a->nrecipes != b->nrecipes || a->ninputs != b->ninputs ||
        a->noutputs != b->noutputs || a->nweights != b->nweights || a->nstates != b->nstates ||
        a->arena_bytes != b->arena_bytes || a->naive_bytes != b->naive_bytes ||
        a->nlevels != b->nlevels || a->ir_json_len != b->ir_json_len ||
        !streq(a->tuning, b->tuning) || !streq(a->tuning_env, b->tuning_env))
        return 0;
    if (a->ir_json_len && memcmp(a->ir_json, b->ir_json, a->ir_json_len) != 0) return 0;
    if (!ints_eq(a->inputs, b->inputs, a->ninputs) ||
        !ints_eq(a->outputs, b->outputs, a->noutputs) ||
        !ints_eq(a->weights, b->weights, a->nweights) ||
        !ints_eq(a->state_in, b->state_in, a->nstates) ||
        !ints_eq(a->state_out, b->state_out, a->nstates))
        return 0;
    for (int i = 0; i < a->ntensors; i++) {
        const PlanTensor *x = &a->tensors[i], *y = &b->tensors[i];
        if (!streq(x->name, y->name) || x->kind != y->kind || x->dtype != y->dtype ||
            x->storage != y->storage || x->rank != y->rank || x->padded != y->padded ||
            x->alias_of != y->alias_of || x->view_off != y->view_off || x->offset != y->offset ||
            x->bytes != y->bytes || !streq(x->weight_key, y->weight_key) ||
            memcmp(x->shape, y->shape, sizeof(int64_t) * (size_t)x->rank) != 0 ||
            memcmp(x->pshape, y->pshape, sizeof(int64_t) * (size_t)x->rank) != 0)
            return 0;
    }
    for (int i = 0; i < a->nkernels; i++) {
        const PlanKernel *x = &a->kernels[i], *y = &b->kernels[i];
        if (!streq(x->shader, y->shader) || x->target != y->target || x->op != y->op ||
            x->node != y->node || x->fusion != y->fusion || x->nargs != y->nargs ||
            x->nin != y->nin || x->npush != y->npush || x->nspec != y->nspec ||
            x->part != y->part || x->level != y->level || x->nprov != y->nprov ||
            !streq(x->tuned, y->tuned) || x->fingerprint != y->fingerprint ||
            memcmp(x->groups, y->groups, sizeof x->groups) != 0 ||
            !ints_eq(x->args, y->args, x->nargs) ||
            memcmp(x->push, y->push, sizeof(uint32_t) * (size_t)x->npush) != 0 ||
            memcmp(x->spec, y->spec, sizeof(uint32_t) * (size_t)x->nspec) != 0)
            return 0;
        for (int k = 0; k < x->nprov; k++)
            if (!streq(x->prov[k], y->prov[k])) return 0;
    }
    for (int i = 0; i < a->nparts; i++) {
        const PlanPart *x = &a->parts[i], *y = &b->parts[i];
        if (x->target != y->target || x->first_kernel != y->first_kernel ||
            x->nkernels != y->nkernels || x->nin != y->nin || x->nout != y->nout ||
            !ints_eq(x->in, y->in, x->nin) || !ints_eq(x->out, y->out, x->nout))
            return 0;
    }
    for (int i = 0; i < a->nfusions; i++) {
        const PlanFusion *x = &a->fusions[i], *y = &b->fusions[i];
        if (!streq(x->id, y->id) || !streq(x->pattern, y->pattern) || x->enabled != y->enabled ||
            x->kernel != y->kernel || x->nnodes != y->nnodes)
            return 0;
        for (int k = 0; k < x->nnodes; k++)
            if (!streq(x->nodes[k], y->nodes[k])) return 0;
    }
    for (int i = 0; i < a->nrecipes; i++) {
        const PlanRecipe *x = &a->recipes[i], *y = &b->recipes[i];
        if (x->kind != y->kind || x->out_w != y->out_w || x->out_b != y->out_b ||
            x->conv_w != y->conv_w || x->conv_b != y->conv_b || x->gamma != y->gamma ||
            x->beta != y->beta || x->mean != y->mean || x->var != y->var || x->eps != y->eps ||
            x->nsrc != y->nsrc || !ints_eq(x->src, y->src, x->nsrc) || x->block != y->block ||
            x->nnodes != y->nnodes)
            return 0;
        for (int k = 0; k < x->nnodes; k++)
            if (!streq(x->nodes[k], y->nodes[k])) return 0;
    }
    if (a->nmodules != b->nmodules) return 0;
    for (int i = 0; i < a->nmodules; i++) {
        const PlanModule *x = &a->modules[i], *y = &b->modules[i];
        if (!streq(x->name, y->name) || !streq(x->source, y->source) || x->nwords != y->nwords ||
            memcmp(x->spirv, y->spirv, sizeof(uint32_t) * (size_t)x->nwords) != 0)
            return 0;
    }
    return 1;
}

bool plan_kernel_builtin(const Plan *p, const PlanKernel *k)
{
    return k->target == KT_NPU && !plan_find_module(p, k->shader);
}

const PlanModule *plan_find_module(const Plan *p, const char *name)
{
    for (int i = 0; name && i < p->nmodules; i++)
        if (strcmp(p->modules[i].name, name) == 0) return &p->modules[i];
    return NULL;
}

Status plan_add_module(Plan *p, const char *name, const char *source, const uint32_t *words,
                       int64_t nwords)
{
    if (plan_find_module(p, name)) return ST_OK;
    if (p->nmodules == p->cap_modules) {
        int cap = p->cap_modules ? 2 * p->cap_modules : 16;
        PlanModule *m = arena_alloc(&p->arena, sizeof *m * (size_t)cap);
        if (!m) return ST_NOMEM;
        if (p->nmodules) memcpy(m, p->modules, sizeof *m * (size_t)p->nmodules);
        p->modules = m;
        p->cap_modules = cap;
    }
    PlanModule *m = &p->modules[p->nmodules];
    m->name = arena_strdup(&p->arena, name);
    m->source = arena_strdup(&p->arena, source);
    m->spirv = arena_dup(&p->arena, words, sizeof(uint32_t) * (size_t)nwords);
    m->nwords = nwords;
    if (!m->name || !m->source || !m->spirv) return ST_NOMEM;
    p->nmodules++;
    return ST_OK;
}

void plan_spread_arena(Plan *p, int64_t align)
{
    int64_t at = 0;
    for (int t = 0; t < p->ntensors; t++) {
        PlanTensor *x = &p->tensors[t];
        if (x->alias_of >= 0 || x->offset < 0) continue;
        x->offset = at;
        at += (x->bytes + align - 1) / align * align;
    }
    for (int t = 0; t < p->ntensors; t++)
        if (p->tensors[t].alias_of >= 0 && p->tensors[t].offset >= 0)
            p->tensors[t].offset = p->tensors[plan_base(p, t)].offset;
    p->arena_bytes = at;
}

int plan_base(const Plan *p, int t)
{
    for (int i = 0; i < 8 && t >= 0 && p->tensors[t].alias_of >= 0; i++)
        t = p->tensors[t].alias_of;
    return t;
}

int plan_state_of(const Plan *p, int t)
{
    for (int i = 0; i < p->nstates; i++)
        if (p->state_in[i] == t) return i;
    return -1;
}

uint64_t plan_device_bytes(const PlanTensor *t)
{
    uint64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= (uint64_t)t->pshape[i];
    uint64_t es = dtype_size(t->storage);
    uint64_t b = n * (es ? es : 4);
    return b < 4 ? 4 : (b + 3) / 4 * 4;
}

uint64_t plan_view_bytes(const PlanTensor *t)
{
    uint64_t es = dtype_size(t->storage);
    return (uint64_t)t->view_off * (es ? es : 4);
}

bool plan_on_device(const Plan *p, int t)
{
    int b = plan_base(p, t);
    if (p->tensors[b].offset >= 0) return true;
    for (int k = 0; k < p->nkernels; k++) {
        const PlanKernel *kn = &p->kernels[k];
        if (kn->target != KT_NPU) continue;
        for (int a = 0; a < kn->nargs; a++)
            if (kn->args[a] >= 0 && plan_base(p, kn->args[a]) == b) return true;
    }
    return false;
}

int plan_format_version(const Plan *p)
{
    /* an older build would ignore the fingerprints and run the kernels unchecked: it must refuse
     * the file as newer */
    for (int k = 0; k < p->nkernels; k++)
        if (p->kernels[k].fingerprint) return 4;
    for (int i = 0; i < p->nrecipes; i++)
        if (p->recipes[i].kind == RECIPE_FOLD) return 3;
    return 2;
}

int plan_find_tensor(const Plan *p, const char *name)
{
    for (int t = 0; t < p->ntensors; t++)
        if (strcmp(p->tensors[t].name, name) == 0) return t;
    return -1;
}
