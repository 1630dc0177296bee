/* .npubin invariants shared by the writer (refuses to write a plan it could not read back) and
 * the reader (runs them after decoding): every index in range, every count within limits. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "compiler/npubin.h"
#include "compiler/ops.h"
#include "compiler/codegen/spv_tools.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- invariants shared by the writer and the reader ---- */

typedef struct Check {
    const Plan *p;
    const char *file;
    Status st;
    DiagList *d;
} Check;

static Status fail(Check *c, const char *fmt, ...) NPU_PRINTF(2, 3);
static Status fail(Check *c, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return diag_add(c->d, DIAG_ERROR, c->st, c->file, NULL, NULL, "%s", msg);
}

/* Is t a tensor id (or -1 when allowed)? */
static bool tensor_ok(const Check *c, int t, bool none_ok)
{
    return (t >= 0 && t < c->p->ntensors) || (none_ok && t == -1);
}

static bool count_ok(int n)
{
    return n >= 0 && n <= NPUBIN_MAX_COUNT;
}

static Status check_ids(Check *c, const char *what, const int *ids, int n, bool none_ok)
{
    if (!count_ok(n)) return fail(c, "%s: count %d out of range", what, n);
    if (n && !ids) return fail(c, "%s: %d ids but no array", what, n);
    for (int i = 0; i < n; i++)
        if (!tensor_ok(c, ids[i], none_ok))
            return fail(c, "%s[%d] = %d is not a tensor id (0..%d%s)", what, i, ids[i],
                        c->p->ntensors - 1, none_ok ? " or -1" : "");
    return ST_OK;
}

static Status check_strs(Check *c, const char *what, const char *const *s, int n)
{
    if (!count_ok(n)) return fail(c, "%s: count %d out of range", what, n);
    if (n && !s) return fail(c, "%s: %d names but no array", what, n);
    for (int i = 0; i < n; i++)
        if (!s[i]) return fail(c, "%s[%d] is missing", what, i);
    return ST_OK;
}

/* Elements of t's physical shape, saturated at 2^62 (the shape is not trusted yet). */
static uint64_t phys_elems(const PlanTensor *t)
{
    uint64_t n = 1;
    for (int k = 0; k < t->rank && k < NPU_MAX_RANK; k++) {
        uint64_t d = t->pshape[k] > 0 ? (uint64_t)t->pshape[k] : 0;
        n = d && n > (1ull << 62) / d ? 1ull << 62 : n * d;
    }
    return n;
}

static Status check_tensor(Check *c, int i)
{
    const PlanTensor *t = &c->p->tensors[i];
    char w[64];
    snprintf(w, sizeof w, "tensors[%d]", i);
    if (!t->name) return fail(c, "%s: no name", w);
    if ((int)t->kind < 0 || (int)t->kind >= (PT_SCRATCH + 1))
        return fail(c, "%s ('%s'): kind %d out of range", w, t->name, (int)t->kind);
    if (t->dtype < 0 || t->dtype >= DT_COUNT || t->storage < 0 || t->storage >= DT_COUNT)
        return fail(c, "%s ('%s'): dtype %d / storage %d out of range", w, t->name, t->dtype,
                    t->storage);
    if (t->rank < 0 || t->rank > NPU_MAX_RANK)
        return fail(c, "%s ('%s'): rank %d exceeds %d", w, t->name, t->rank, NPU_MAX_RANK);
    for (int k = 0; k < t->rank; k++)
        if (t->shape[k] < 0 || t->pshape[k] < 0)
            return fail(c, "%s ('%s'): negative dimension %d", w, t->name, k);
    if (t->padded != 0 && t->padded != 1)
        return fail(c, "%s ('%s'): padded is %d, not 0 or 1", w, t->name, t->padded);
    if (!tensor_ok(c, t->alias_of, true) || t->alias_of == i)
        return fail(c, "%s ('%s'): alias_of = %d is not another tensor's id", w, t->name,
                    t->alias_of);
    if (t->view_off < 0 || (t->view_off && t->alias_of < 0) ||
        (t->view_off &&
         (uint64_t)t->view_off + phys_elems(t) > phys_elems(&c->p->tensors[t->alias_of])))
        return fail(c, "%s ('%s'): view offset %lld does not lie inside its base", w, t->name,
                    (long long)t->view_off);
    if (t->bytes < 0) return fail(c, "%s ('%s'): negative size", w, t->name);
    if (t->offset < -1 || (t->offset >= 0 && t->offset > c->p->arena_bytes - t->bytes))
        return fail(c, "%s ('%s'): %lld bytes at offset %lld lie outside the %lld-byte arena", w,
                    t->name, (long long)t->bytes, (long long)t->offset,
                    (long long)c->p->arena_bytes);
    return ST_OK;
}

static Status check_kernel(Check *c, int i)
{
    const Plan *p = c->p;
    const PlanKernel *k = &p->kernels[i];
    char w[96];
    snprintf(w, sizeof w, "kernels[%d]", i);
    if (!k->shader) return fail(c, "%s: no shader", w);
    snprintf(w, sizeof w, "kernels[%d] ('%.40s')", i, k->shader);
    if ((int)k->target < 0 || (int)k->target >= (KT_CPU + 1))
        return fail(c, "%s: target %d out of range", w, (int)k->target);
    if (k->op < 0 || k->op >= OP_COUNT) return fail(c, "%s: op %d out of range", w, k->op);
    if (k->node < -1) return fail(c, "%s: node %d out of range", w, k->node);
    if (k->fusion < -1 || k->fusion >= p->nfusions)
        return fail(c, "%s: fusion %d is not a fusion index (0..%d or -1)", w, k->fusion,
                    p->nfusions - 1);
    if (k->nin < 0 || k->nin > k->nargs)
        return fail(c, "%s: %d inputs but %d arguments", w, k->nin, k->nargs);
    char what[128];
    snprintf(what, sizeof what, "%s: args", w);
    Status st = check_ids(c, what, k->args, k->nargs, true);
    if (st != ST_OK) return st;
    if (k->npush < 0 || k->npush > PLAN_MAX_PUSH)
        return fail(c, "%s: %d push-constant words (at most %d)", w, k->npush, PLAN_MAX_PUSH);
    if (k->nspec < 0 || k->nspec > PLAN_MAX_SPEC)
        return fail(c, "%s: %d specialisation constants (at most %d)", w, k->nspec, PLAN_MAX_SPEC);
    snprintf(what, sizeof what, "%s: prov", w);
    st = check_strs(c, what, k->prov, k->nprov);
    if (st != ST_OK) return st;
    if (k->part < 0 || k->part >= p->nparts)
        return fail(c, "%s: part %d is not a partition index (0..%d)", w, k->part, p->nparts - 1);
    if (k->level < 0 || k->level > p->nlevels)
        return fail(c, "%s: level %d out of range (0..%d)", w, k->level, p->nlevels);
    return ST_OK;
}

static Status check_part(Check *c, int i)
{
    const Plan *p = c->p;
    const PlanPart *pp = &p->parts[i];
    if ((int)pp->target < 0 || (int)pp->target >= (KT_CPU + 1))
        return fail(c, "parts[%d]: target %d out of range", i, (int)pp->target);
    if (pp->first_kernel < 0 || pp->nkernels < 0 || pp->first_kernel > p->nkernels ||
        pp->nkernels > p->nkernels - pp->first_kernel)
        return fail(c, "parts[%d]: kernels %d..%d+%d outside 0..%d", i, pp->first_kernel,
                    pp->first_kernel, pp->nkernels, p->nkernels);
    char what[64];
    snprintf(what, sizeof what, "parts[%d].in", i);
    Status st = check_ids(c, what, pp->in, pp->nin, false);
    if (st != ST_OK) return st;
    snprintf(what, sizeof what, "parts[%d].out", i);
    return check_ids(c, what, pp->out, pp->nout, false);
}

static Status check_fusion(Check *c, int i)
{
    const PlanFusion *f = &c->p->fusions[i];
    if (!f->id || !f->pattern) return fail(c, "fusions[%d]: no id or pattern", i);
    if (f->enabled != 0 && f->enabled != 1)
        return fail(c, "fusions[%d] ('%s'): enabled is %d, not 0 or 1", i, f->id, f->enabled);
    if (f->kernel < -1 || f->kernel >= c->p->nkernels)
        return fail(c, "fusions[%d] ('%s'): kernel %d is not a kernel index (0..%d or -1)", i,
                    f->id, f->kernel, c->p->nkernels - 1);
    char what[64];
    snprintf(what, sizeof what, "fusions[%d].nodes", i);
    return check_strs(c, what, f->nodes, f->nnodes);
}

static Status check_recipe(Check *c, int i)
{
    const PlanRecipe *r = &c->p->recipes[i];
    if ((int)r->kind < 0 || (int)r->kind >= RECIPE_KINDS)
        return fail(c, "recipes[%d]: kind %d out of range", i, (int)r->kind);
    int ids[] = {r->out_w, r->out_b, r->conv_w, r->conv_b, r->gamma, r->beta, r->mean, r->var};
    char what[64];
    snprintf(what, sizeof what, "recipes[%d] tensor ids", i);
    Status st = check_ids(c, what, ids, COUNT(ids), true);
    if (st != ST_OK) return st;
    if (r->nsrc < 0 || r->nsrc > RECIPE_MAX_SRC ||
        (r->kind == RECIPE_CONCAT && (r->nsrc < 1 || r->out_w < 0)))
        return fail(c, "recipes[%d]: %d sources", i, r->nsrc);
    snprintf(what, sizeof what, "recipes[%d].src", i);
    st = check_ids(c, what, r->src, r->nsrc, false);
    if (st != ST_OK) return st;
    if (!isfinite(r->eps)) return fail(c, "recipes[%d]: eps is not finite", i);
    if (r->kind == RECIPE_FOLD && (r->out_w < 0 || r->nnodes < 1))
        return fail(c, "recipes[%d]: a fold with %d nodes and output %d", i, r->nnodes, r->out_w);
    snprintf(what, sizeof what, "recipes[%d].nodes", i);
    return check_strs(c, what, r->nodes, r->nnodes);
}

/* A generated module: a unique gen_ name, its source, and SPIR-V that spirv-val accepts (no
 * driver ever sees words from a file unchecked). */
static Status check_module(Check *c, int i)
{
    const PlanModule *m = &c->p->modules[i];
    if (!m->name || strncmp(m->name, "gen_", 4) != 0 || !m->source)
        return fail(c, "modules[%d]: no gen_ name or no source", i);
    for (int j = 0; j < i; j++)
        if (strcmp(c->p->modules[j].name, m->name) == 0)
            return fail(c, "modules[%d] ('%.40s'): name appears twice", i, m->name);
    if (m->nwords < 5 || m->nwords > NPUBIN_MAX_COUNT || !m->spirv)
        return fail(c, "modules[%d] ('%.40s'): %lld SPIR-V words", i, m->name,
                    (long long)m->nwords);
    char why[256];
    if (!spv_validate(m->spirv, (size_t)m->nwords, why, sizeof why))
        return fail(c, "modules[%d] ('%.40s'): invalid SPIR-V: %s", i, m->name, why);
    return ST_OK;
}

Status npubin_check_plan(const Plan *p, const char *file, Status st, DiagList *d)
{
    Check c = {p, file, st, d};
    if (p->compute != DT_F32 && p->compute != DT_F16 && p->compute != DT_BF16)
        return fail(&c, "compute dtype %d is not F32, F16 or BF16", p->compute);
    if (!plan_tier_name(p->tier)) return fail(&c, "tier %d is unknown", p->tier);
    if (p->channel_tile < 1) return fail(&c, "channel_tile %d is not positive", p->channel_tile);
    if (p->arena_bytes < 0 || p->naive_bytes < 0 || p->nlevels < 0)
        return fail(&c, "negative arena_bytes, naive_bytes or nlevels");
    const struct {
        const char *what;
        int n;
        const void *ptr;
    } arrays[] = {
        {"tensors", p->ntensors, p->tensors}, {"kernels", p->nkernels, p->kernels},
        {"parts", p->nparts, p->parts},       {"fusions", p->nfusions, p->fusions},
        {"recipes", p->nrecipes, p->recipes},
    };
    for (int i = 0; i < COUNT(arrays); i++) {
        if (!count_ok(arrays[i].n))
            return fail(&c, "%s: count %d out of range", arrays[i].what, arrays[i].n);
        if (arrays[i].n && !arrays[i].ptr) return fail(&c, "%s: no array", arrays[i].what);
    }
    if (p->ir_json_len > UINT32_MAX || (p->ir_json_len && !p->ir_json))
        return fail(&c, "ir_json: bad length %llu", (unsigned long long)p->ir_json_len);
    Status s = ST_OK;
    for (int i = 0; s == ST_OK && i < p->ntensors; i++)
        s = check_tensor(&c, i);
    for (int i = 0; s == ST_OK && i < p->nkernels; i++)
        s = check_kernel(&c, i);
    for (int i = 0; s == ST_OK && i < p->nparts; i++)
        s = check_part(&c, i);
    for (int i = 0; s == ST_OK && i < p->nfusions; i++)
        s = check_fusion(&c, i);
    for (int i = 0; s == ST_OK && i < p->nrecipes; i++)
        s = check_recipe(&c, i);
    if (s == ST_OK && (!count_ok(p->nmodules) || (p->nmodules && !p->modules)))
        s = fail(&c, "modules: count %d out of range", p->nmodules);
    for (int i = 0; s == ST_OK && i < p->nmodules; i++)
        s = check_module(&c, i);
    for (int i = 0; s == ST_OK && i < p->nkernels; i++) {
        const PlanKernel *k = &p->kernels[i];
        if (k->target == KT_NPU && strncmp(k->shader, "gen_", 4) == 0 &&
            !plan_find_module(p, k->shader))
            s = fail(&c, "kernels[%d] ('%.40s'): a generated kernel whose module the plan lacks", i,
                     k->shader);
    }
    if (s == ST_OK) s = check_ids(&c, "inputs", p->inputs, p->ninputs, true);
    if (s == ST_OK) s = check_ids(&c, "outputs", p->outputs, p->noutputs, true);
    if (s == ST_OK) s = check_ids(&c, "weights", p->weights, p->nweights, false);
    if (s == ST_OK) s = check_ids(&c, "state_in", p->state_in, p->nstates, false);
    if (s == ST_OK) s = check_ids(&c, "state_out", p->state_out, p->nstates, false);
    for (int i = 0; s == ST_OK && i < p->nstates; i++) {
        bool in = false, out = false;
        for (int k = 0; k < p->ninputs; k++)
            in |= p->inputs[k] == p->state_in[i];
        for (int k = 0; k < p->noutputs; k++)
            out |= p->outputs[k] == p->state_out[i];
        if (!in || !out)
            s = fail(&c, "state %d: input %d and output %d must be a graph input and output", i,
                     p->state_in[i], p->state_out[i]);
    }
    return s;
}
