#include "compiler/describe.h"

#include "common/jsonw.h"
#include "compiler/npubin.h"
#include "compiler/schedule.h"

#include <stdlib.h>
#include <string.h>

static void human_bytes(char *buf, size_t n, int64_t b)
{
    if (b >= (1LL << 30))
        snprintf(buf, n, "%.2f GiB", (double)b / (1LL << 30));
    else if (b >= (1LL << 20))
        snprintf(buf, n, "%.2f MiB", (double)b / (1LL << 20));
    else if (b >= 1024)
        snprintf(buf, n, "%.1f KiB", (double)b / 1024);
    else
        snprintf(buf, n, "%lld B", (long long)b);
}

static int64_t numel(const PlanTensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= t->shape[i];
    return n;
}

static const char *target_name(KernelTarget t)
{
    return t == KT_NPU ? "npu" : "cpu";
}

/* Counts of distinct strings: tiny n, linear scan. */
typedef struct Count {
    const char *name;
    int n;
} Count;

static int bump(Count *c, int nc, const char *name)
{
    for (int i = 0; i < nc; i++)
        if (strcmp(c[i].name, name) == 0) {
            c[i].n++;
            return nc;
        }
    c[nc].name = name;
    c[nc].n = 1;
    return nc + 1;
}

/* A plan read from a file: were its built-in NPU kernels lowered for this build's shaders
 * (npubin.h)? */
static void describe_verified(FILE *f, const Plan *p)
{
    if (p->file_version == 0) return; /* compiled by this build */
    int nb = 0, nstale = 0;
    for (int k = 0; k < p->nkernels; k++) {
        nb += plan_kernel_builtin(p, &p->kernels[k]);
        nstale += npubin_kernel_stale(p, k);
    }
    if (p->file_version < 4)
        fprintf(f,
                "verified no: format v%d predates kernel fingerprints (%d built-in NPU kernels "
                "unchecked)\n",
                p->file_version, nb);
    else if (nstale)
        fprintf(f,
                "verified NO: %d of %d built-in NPU kernels were compiled against another build's "
                "shaders (STALE below): recompile the file\n",
                nstale, nb);
    else
        fprintf(f, "verified %d built-in NPU kernels: fingerprints match this build's shaders\n",
                nb);
}

void describe_text(FILE *f, const Plan *p)
{
    char b1[32], b2[32];
    fprintf(f, "program  %s   compute=%s   target=%s (channel tile %d)   npubin v%d\n",
            p->model_name, dtype_short(p->compute), plan_tier_name(p->tier), p->channel_tile,
            plan_format_version(p));
    fprintf(f, "source   %s\n", p->source ? p->source : "-");
    if (p->tuning) /* only a plan built with non-default tuning knobs */
        fprintf(f, "tuning   %s%s%s%s\n", p->tuning,
                p->tuning_env ? "   (from the environment: " : "",
                p->tuning_env ? p->tuning_env : "", p->tuning_env ? ")" : "");
    int ntuned = 0; /* kernels a tuning-cache entry shaped (each marked in the table) */
    for (int k = 0; k < p->nkernels; k++)
        ntuned += p->kernels[k].tuned != NULL;
    if (ntuned)
        fprintf(
            f, "tuned    %d kernel%s with their own knobs from a tuning cache (npu-explore tune)\n",
            ntuned, ntuned == 1 ? "" : "s");
    fprintf(f, "inputs   %d ", p->ninputs);
    for (int i = 0; i < p->ninputs && i < 6; i++) {
        const PlanTensor *t = &p->tensors[p->inputs[i]];
        fprintf(f, " %s %s", t->name, dtype_short(t->dtype));
        jw_i64s(f, t->shape, t->rank);
        /* pack-inputs left it in its host form: uploaded as is, a pack kernel casts it */
        if (dtype_is_float(t->dtype) && t->storage == DT_F32 && p->compute != DT_F32)
            fprintf(f, " (uploaded as f32)");
    }
    fprintf(f, p->ninputs > 6 ? " ...\n" : "\n");
    fprintf(f, "outputs  %d ", p->noutputs);
    for (int i = 0; i < p->noutputs && i < 6; i++) {
        const PlanTensor *t = &p->tensors[p->outputs[i]];
        fprintf(f, " %s %s", t->name, dtype_short(t->dtype));
        jw_i64s(f, t->shape, t->rank);
    }
    fprintf(f, p->noutputs > 6 ? " ...\n" : "\n");
    if (p->nstates > 0) { /* model state: where each run leaves it for the next */
        int inplace = 0;
        for (int i = 0; i < p->nstates; i++)
            inplace += plan_base(p, p->state_out[i]) == p->state_in[i];
        fprintf(f, "state    %d tensors, %d updated in place:", p->nstates, inplace);
        for (int i = 0; i < p->nstates && i < 4; i++)
            fprintf(f, " %s -> %s", p->tensors[p->state_in[i]].name,
                    p->tensors[p->state_out[i]].name);
        fprintf(f, p->nstates > 4 ? " ...\n" : "\n");
    }
    int64_t wbytes = 0;
    int nwdev = 0, nrec[RECIPE_KINDS] = {0}, ninter = 0, nfnodes = 0;
    for (int i = 0; i < p->nweights; i++) {
        const PlanTensor *t = &p->tensors[p->weights[i]];
        if (!plan_on_device(p, p->weights[i])) continue; /* read by the CPU or a recipe only */
        wbytes += numel(t) * (int64_t)dtype_size(t->storage);
        nwdev++;
    }
    for (int i = 0; i < p->nrecipes; i++) {
        nrec[p->recipes[i].kind]++;
        ninter += p->recipes[i].block > 0;
        nfnodes += p->recipes[i].nnodes;
    }
    human_bytes(b1, sizeof b1, wbytes);
    fprintf(f, "weights  %d tensors, %d on the device: %s  (recipes: %d bn_fold", p->nweights,
            nwdev, b1, nrec[RECIPE_BN_FOLD]);
    if (nrec[RECIPE_CONCAT] > ninter) fprintf(f, ", %d concat", nrec[RECIPE_CONCAT] - ninter);
    if (ninter) fprintf(f, ", %d interleave", ninter);
    if (nrec[RECIPE_FOLD]) fprintf(f, ", %d fold", nrec[RECIPE_FOLD]);
    fprintf(f, ")\n");
    if (nrec[RECIPE_FOLD]) { /* fold-constants: computed once, at load, on the CPU reference */
        fprintf(f, "folded   %d constants computed at load by %d node runs:", nrec[RECIPE_FOLD],
                nfnodes);
        for (int i = 0, shown = 0; i < p->nrecipes && shown < 3; i++) {
            const PlanRecipe *r = &p->recipes[i];
            if (r->kind != RECIPE_FOLD) continue;
            const PlanTensor *t = &p->tensors[r->out_w];
            fprintf(f, "%s %s %s", shown++ ? ";" : "", t->name, dtype_short(t->dtype));
            jw_i64s(f, t->shape, t->rank);
            fprintf(f, " <- %s", r->nnodes ? r->nodes[0] : "?");
            if (r->nnodes > 1) fprintf(f, " .. %s", r->nodes[r->nnodes - 1]);
        }
        fprintf(f, nrec[RECIPE_FOLD] > 3 ? "; ...\n" : "\n");
    }
    int nbuf = 0, npad = 0, nalias = 0;
    for (int i = 0; i < p->ntensors; i++) {
        const PlanTensor *t = &p->tensors[i];
        if (t->offset >= 0 && t->alias_of < 0) nbuf++;
        npad += t->padded;
        nalias += t->alias_of >= 0;
    }
    human_bytes(b1, sizeof b1, p->arena_bytes);
    human_bytes(b2, sizeof b2, p->naive_bytes);
    fprintf(f,
            "buffers  %d in one arena of %s (one buffer per tensor: %s)  padded: %d  views: %d\n",
            nbuf, b1, b2, npad, nalias);
    Count shaders[128], pats[64];
    int ns = 0, np = 0, nnpu = 0, ncpu = 0;
    for (int k = 0; k < p->nkernels; k++) {
        if (ns < 127) ns = bump(shaders, ns, p->kernels[k].shader);
        p->kernels[k].target == KT_NPU ? nnpu++ : ncpu++;
    }
    int on = 0;
    for (int i = 0; i < p->nfusions; i++) {
        if (!p->fusions[i].enabled) continue;
        on++;
        if (np < 63) np = bump(pats, np, p->fusions[i].pattern);
    }
    fprintf(f, "kernels  %d (%d npu, %d cpu) in %d levels, %d barriers, %d partitions\n",
            p->nkernels, nnpu, ncpu, p->nlevels, plan_barriers_total(p), p->nparts);
    describe_verified(f, p);
    fprintf(f, "  fused: %d of %d instances on", on, p->nfusions);
    for (int i = 0; i < np; i++)
        fprintf(f, "  %s x%d", pats[i].name, pats[i].n);
    fprintf(f, "\n  by shader:");
    for (int i = 0; i < ns; i++)
        fprintf(f, "  %s x%d", shaders[i].name, shaders[i].n);
    fprintf(f, "\n");
    if (p->nmodules) {
        int ngen = 0;
        for (int k = 0; k < p->nkernels; k++)
            ngen += strncmp(p->kernels[k].shader, "gen_", 4) == 0;
        fprintf(f, "  generated: %d kernels in %d modules (describe --source K shows one)\n", ngen,
                p->nmodules);
    }
    for (int i = 0; i < p->nparts; i++) {
        const PlanPart *pp = &p->parts[i];
        fprintf(f, "  partition p%d %s: kernels %d..%d", i, target_name(pp->target),
                pp->first_kernel, pp->first_kernel + pp->nkernels - 1);
        fprintf(f, "\n");
        for (int j = 0; j < pp->nin; j++) {
            PlanTransfer x = plan_transfer(p, i, j);
            const PlanTensor *t = &p->tensors[x.tensor];
            char what[96];
            fprintf(f, "    transfer %s %s %s ", x.to_cpu ? "npu->cpu" : "cpu->npu", t->name,
                    plan_transfer_text(p, &x, what, sizeof what));
            jw_i64s(f, x.relayout && x.to_cpu ? t->pshape : t->shape, t->rank);
            if (x.relayout) {
                fprintf(f, "->");
                jw_i64s(f, x.to_cpu ? t->shape : t->pshape, t->rank);
            }
            human_bytes(b1, sizeof b1, x.device_bytes);
            fprintf(f, " %s\n", b1);
        }
    }
    fprintf(f, "%-5s %-4s %-16s %-6s %-44s %-14s %s\n", "#", "on", "shader", "level",
            "inputs -> outputs", "grid", "fusion");
    for (int k = 0; k < p->nkernels; k++) {
        const PlanKernel *kn = &p->kernels[k];
        char io[512];
        size_t n = 0;
        for (int a = 0; a < kn->nargs && n < sizeof io; a++) {
            /* an output bound in two slots (decode attention without a split binds it in the
             * scratch's) is named once */
            bool again = false;
            for (int b = kn->nin; a > kn->nin && b < a; b++)
                again |= kn->args[b] == kn->args[a];
            if (again) continue;
            const char *nm = kn->args[a] >= 0 ? p->tensors[kn->args[a]].name : "?";
            n += (size_t)snprintf(io + n, sizeof io - n, "%s%s%s",
                                  a == kn->nin ? " -> " : (a ? "," : ""), nm, "");
        }
        char grid[48];
        snprintf(grid, sizeof grid, "%ux%ux%u", kn->groups[0], kn->groups[1], kn->groups[2]);
        fprintf(f, "%-5d %-4s %-16s %-6d %-44s %-14s %s%s%s%s\n", k, target_name(kn->target),
                kn->shader, kn->level, io, kn->target == KT_NPU ? grid : "-",
                kn->fusion >= 0 ? p->fusions[kn->fusion].id : "", kn->tuned ? "  tuned " : "",
                kn->tuned ? kn->tuned : "", npubin_kernel_stale(p, k) ? "  STALE" : "");
    }
}

/* Is plan tensor t a value fold-constants computes at load (a fold recipe's output)? */
static bool folded(const Plan *p, int t)
{
    for (int i = 0; i < p->nrecipes; i++)
        if (p->recipes[i].kind == RECIPE_FOLD && p->recipes[i].out_w == t) return true;
    return false;
}

static const char *kind_name(PlanTensorKind k)
{
    switch (k) {
    case PT_ACT:
        return "activation";
    case PT_INPUT:
        return "input";
    case PT_OUTPUT:
        return "output";
    case PT_WEIGHT:
        return "weight";
    case PT_CONST:
        return "const";
    case PT_SCRATCH:
        return "scratch";
    }
    return "?";
}

/* The space-separated words of s (a plan's record, from a file: trusted in nothing) as a JSON
 * array of strings, or (pairs) the NAME=V words as an object of NAME: V, V a number when it is
 * an integer, else a string. */
static void jwords(FILE *f, const char *s, bool pairs)
{
    fputc(pairs ? '{' : '[', f);
    for (int n = 0; *s; n++) {
        char w[256];
        size_t len = strcspn(s, " ");
        snprintf(w, sizeof w, "%.*s", (int)(len < sizeof w ? len : sizeof w - 1), s);
        char *eq = pairs ? strchr(w, '=') : NULL;
        if (eq) *eq = '\0';
        fputs(n ? "," : "", f);
        jw_str(f, w);
        if (pairs) {
            char *end = NULL;
            long long v = eq && eq[1] ? strtoll(eq + 1, &end, 10) : 0;
            fputc(':', f);
            if (end && !*end)
                fprintf(f, "%lld", v);
            else
                jw_str(f, eq ? eq + 1 : "");
        }
        s += len;
        while (*s == ' ')
            s++;
    }
    fputc(pairs ? '}' : ']', f);
}

void describe_json(FILE *f, const Plan *p)
{
    fprintf(f, "{\"schema\":\"npu-explore/plan/1\",\"format_version\":%d,\"model\":",
            plan_format_version(p));
    jw_str(f, p->model_name);
    fprintf(f, ",\"source\":");
    jw_str(f, p->source);
    fprintf(f,
            ",\"compute\":\"%s\",\"tier\":\"%s\",\"channel_tile\":%d,\"arena_bytes\":%lld,"
            "\"naive_bytes\":%lld,\"levels\":%d,\"barriers\":%d,",
            dtype_short(p->compute), plan_tier_name(p->tier), p->channel_tile,
            (long long)p->arena_bytes, (long long)p->naive_bytes, p->nlevels,
            plan_barriers_total(p));
    /* verified: every built-in NPU kernel lowered for this build's shaders (a compiled plan;
     * a file whose fingerprints match); false for a file before them or with stale kernels */
    int nstale = 0;
    for (int k = 0; k < p->nkernels; k++)
        nstale += npubin_kernel_stale(p, k);
    fprintf(f, "\"kernels_verified\":%s,\"stale_kernels\":[",
            (p->file_version == 0 || p->file_version >= 4) && !nstale ? "true" : "false");
    for (int k = 0, n = 0; k < p->nkernels; k++)
        if (npubin_kernel_stale(p, k)) fprintf(f, n++ ? ",%d" : "%d", k);
    fprintf(f, "],");
    if (p->tuning) { /* only a plan built with non-default tuning knobs */
        fprintf(f, "\"tuning\":");
        jwords(f, p->tuning, true);
        fprintf(f, ",\"tuning_env\":");
        jwords(f, p->tuning_env ? p->tuning_env : "", false);
        fputc(',', f);
    }
    fprintf(f, "\n\"tensors\":[");
    for (int i = 0; i < p->ntensors; i++) {
        const PlanTensor *t = &p->tensors[i];
        fprintf(f, "%s\n {\"id\":%d,\"name\":", i ? "," : "", i);
        jw_str(f, t->name);
        fprintf(f, ",\"kind\":\"%s\",\"dtype\":\"%s\",\"storage\":\"%s\",\"shape\":",
                kind_name(t->kind), dtype_name(t->dtype), dtype_name(t->storage));
        jw_i64s(f, t->shape, t->rank);
        if (t->padded) {
            fprintf(f, ",\"padded_shape\":");
            jw_i64s(f, t->pshape, t->rank);
        }
        if (t->alias_of >= 0) fprintf(f, ",\"alias_of\":%d", t->alias_of);
        if (t->view_off) fprintf(f, ",\"view_offset\":%lld", (long long)t->view_off);
        if (t->offset >= 0)
            fprintf(f, ",\"offset\":%lld,\"bytes\":%lld", (long long)t->offset,
                    (long long)t->bytes);
        if (t->weight_key) {
            fprintf(f, ",\"weight_key\":");
            jw_str(f, t->weight_key);
        }
        if (folded(p, i)) fprintf(f, ",\"folded\":true");
        fputc('}', f);
    }
    const struct {
        const char *key;
        const int *v;
        int n;
    } ids[] = {{"inputs", p->inputs, p->ninputs},
               {"outputs", p->outputs, p->noutputs},
               {"weights", p->weights, p->nweights},
               {"state_in", p->state_in, p->nstates},
               {"state_out", p->state_out, p->nstates}};
    fprintf(f, "],\n");
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        fprintf(f, "%s\"%s\":", i ? "," : "", ids[i].key);
        jw_ints(f, ids[i].v, ids[i].n);
    }
    fprintf(f, ",\n\"recipes\":[");
    for (int i = 0; i < p->nrecipes; i++) {
        const PlanRecipe *r = &p->recipes[i];
        if (r->kind == RECIPE_FOLD) {
            fprintf(f, "%s{\"kind\":\"fold\",\"out\":%d,\"nodes\":[", i ? "," : "", r->out_w);
            for (int k = 0; k < r->nnodes; k++) {
                if (k) fputc(',', f);
                jw_str(f, r->nodes[k]);
            }
            fprintf(f, "]}");
            continue;
        }
        if (r->kind == RECIPE_CONCAT) {
            fprintf(f, "%s{\"kind\":\"concat\",\"out\":%d,\"src\":", i ? "," : "", r->out_w);
            jw_ints(f, r->src, r->nsrc);
            if (r->block) fprintf(f, ",\"block\":%d", r->block);
            fprintf(f, "}");
            continue;
        }
        fprintf(f,
                "%s{\"kind\":\"bn_fold\",\"out_w\":%d,\"out_b\":%d,\"conv_w\":%d,\"conv_b\":%d,"
                "\"gamma\":%d,\"beta\":%d,\"mean\":%d,\"var\":%d,\"eps\":%.9g}",
                i ? "," : "", r->out_w, r->out_b, r->conv_w, r->conv_b, r->gamma, r->beta, r->mean,
                r->var, r->eps);
    }
    fprintf(f, "],\n\"fusions\":[");
    for (int i = 0; i < p->nfusions; i++) {
        const PlanFusion *fu = &p->fusions[i];
        fprintf(f, "%s{\"id\":", i ? "," : "");
        jw_str(f, fu->id);
        fprintf(f, ",\"pattern\":");
        jw_str(f, fu->pattern);
        fprintf(f, ",\"enabled\":%s,\"kernel\":%d,\"nodes\":[", fu->enabled ? "true" : "false",
                fu->kernel);
        for (int k = 0; k < fu->nnodes; k++) {
            if (k) fputc(',', f);
            jw_str(f, fu->nodes[k]);
        }
        fprintf(f, "]}");
    }
    fprintf(f, "],\n\"partitions\":[");
    for (int i = 0; i < p->nparts; i++) {
        const PlanPart *pp = &p->parts[i];
        fprintf(f, "%s{\"target\":\"%s\",\"first_kernel\":%d,\"kernels\":%d,\"transfers_in\":[",
                i ? "," : "", target_name(pp->target), pp->first_kernel, pp->nkernels);
        for (int j = 0; j < pp->nin; j++)
            fprintf(f, j ? ",%d" : "%d", pp->in[j]);
        fprintf(f, "],\"transfers\":[");
        for (int j = 0; j < pp->nin; j++) {
            PlanTransfer x = plan_transfer(p, i, j);
            fprintf(f,
                    "%s{\"tensor\":%d,\"direction\":\"%s\",\"from\":\"%s\",\"to\":\"%s\","
                    "\"layout\":\"%s\",\"bytes\":%lld}",
                    j ? "," : "", x.tensor, x.to_cpu ? "npu->cpu" : "cpu->npu", dtype_short(x.from),
                    dtype_short(x.to), x.relayout ? (x.to_cpu ? "depad" : "pad") : "same",
                    (long long)x.device_bytes);
        }
        fprintf(f, "]}");
    }
    fprintf(f, "],\n\"kernels\":[");
    for (int k = 0; k < p->nkernels; k++) {
        const PlanKernel *kn = &p->kernels[k];
        fprintf(f, "%s\n {\"index\":%d,\"target\":\"%s\",\"shader\":", k ? "," : "", k,
                target_name(kn->target));
        jw_str(f, kn->shader);
        fprintf(f, ",\"level\":%d,\"partition\":%d,\"inputs\":[", kn->level, kn->part);
        for (int a = 0; a < kn->nin; a++)
            fprintf(f, a ? ",%d" : "%d", kn->args[a]);
        fprintf(f, "],\"outputs\":[");
        for (int a = kn->nin; a < kn->nargs; a++)
            fprintf(f, a > kn->nin ? ",%d" : "%d", kn->args[a]);
        fprintf(f, "],\"groups\":[%u,%u,%u],\"push\":[", kn->groups[0], kn->groups[1],
                kn->groups[2]);
        for (int a = 0; a < kn->npush; a++)
            fprintf(f, a ? ",%u" : "%u", kn->push[a]);
        fprintf(f, "],\"fusion\":");
        if (kn->fusion >= 0)
            jw_str(f, p->fusions[kn->fusion].id);
        else
            fprintf(f, "null");
        fprintf(f, ",\"provenance\":[");
        for (int a = 0; a < kn->nprov; a++) {
            if (a) fputc(',', f);
            jw_str(f, kn->prov[a]);
        }
        fputc(']', f);
        if (kn->tune_key) { /* a kernel of a kind tune searches, compiled here (not in a file) */
            fprintf(f, ",\"tune_key\":");
            jw_str(f, kn->tune_key);
        }
        if (kn->tuned) { /* only a kernel a tuning-cache entry shaped */
            fprintf(f, ",\"tuned\":");
            jwords(f, kn->tuned, true);
        }
        if (kn->fingerprint) /* a built-in NPU kernel: its module's (a string: JSON's numbers
                              * are doubles) */
            fprintf(f, ",\"fingerprint\":\"%016llx\"", (unsigned long long)kn->fingerprint);
        if (npubin_kernel_stale(p, k)) fprintf(f, ",\"stale\":true");
        fputc('}', f);
    }
    fprintf(f, "],\n\"modules\":[");
    for (int i = 0; i < p->nmodules; i++) {
        fprintf(f, i ? ",\n{\"name\":" : "\n{\"name\":");
        jw_str(f, p->modules[i].name);
        fprintf(f, ",\"spirv_words\":%lld,\"source\":", (long long)p->modules[i].nwords);
        jw_str(f, p->modules[i].source);
        fprintf(f, "}");
    }
    fprintf(f, "]}\n");
}
