#include "plan.h"

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

const char *plan_tier_name(int tier)
{
    switch (tier) {
    case TIER_PORTABLE: return "portable";
    case TIER_NV_COOPMAT: return "nv-coopmat";
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
        a->noutputs != b->noutputs || a->nweights != b->nweights ||
        a->arena_bytes != b->arena_bytes || a->naive_bytes != b->naive_bytes ||
        a->nlevels != b->nlevels || a->ir_json_len != b->ir_json_len)
        return 0;
    if (a->ir_json_len && memcmp(a->ir_json, b->ir_json, a->ir_json_len) != 0) return 0;
    if (!ints_eq(a->inputs, b->inputs, a->ninputs) || !ints_eq(a->outputs, b->outputs, a->noutputs) ||
        !ints_eq(a->weights, b->weights, a->nweights))
        return 0;
    for (int i = 0; i < a->ntensors; i++) {
        const PlanTensor *x = &a->tensors[i], *y = &b->tensors[i];
        if (!streq(x->name, y->name) || x->kind != y->kind || x->dtype != y->dtype ||
            x->storage != y->storage || x->rank != y->rank || x->padded != y->padded ||
            x->alias_of != y->alias_of || x->offset != y->offset || x->bytes != y->bytes ||
            !streq(x->weight_key, y->weight_key) ||
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
            x->beta != y->beta || x->mean != y->mean || x->var != y->var || x->eps != y->eps)
            return 0;
    }
    return 1;
}

int plan_base(const Plan *p, int t)
{
    for (int i = 0; i < 8 && t >= 0 && p->tensors[t].alias_of >= 0; i++) t = p->tensors[t].alias_of;
    return t;
}
