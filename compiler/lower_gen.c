/* elementwise: the generated kernels (codegen.h). The group's DAG is built (codegen_build.c),
 * rendered to GLSL (codegen_glsl.c) and compiled to SPIR-V (codegen_spv.c, cached); the module
 * joins the plan under the name gen_HASH, which becomes the kernel's shader, so the runtime finds
 * it in the plan (and a .npubin carries it): HASH is of the GLSL source. Shapes are constants in the source: no push words.
 * Spec 0 = workgroup size; one invocation per logical output element (per four for a bool
 * output: bytes are written as whole uints). */
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hash.h"
#include "codegen_build.h"
#include "pass.h"

#define GEN_WG 256

/* "F12 elementwise: to, mul, cat" (members in order, shortened past 160 characters). */
static void title_of(const KernelCtx *c, char *buf, size_t n)
{
    size_t at = 0;
    if (c->fusion)
        at = (size_t)snprintf(buf, n, "%s %s:", c->fusion->id, c->fusion->pattern);
    else
        at = (size_t)snprintf(buf, n, "%s:", c->anchor->name);
    int nn = c->fusion ? c->fusion->nnodes : 1;
    for (int i = 0; i < nn && at < n; i++) {
        const Node *m = c->fusion ? &c->g->nodes[c->fusion->nodes[i]] : c->anchor;
        if (at > 160) {
            snprintf(buf + at, n - at, " ...");
            return;
        }
        at += (size_t)snprintf(buf + at, n - at, "%s %s", i ? "," : "", m->name);
    }
}

Status lower_generated(const KernelCtx *c, PlanKernel *k)
{
    CgKernel ck;
    memset(&ck, 0, sizeof ck);
    char title[256];
    title_of(c, title, sizeof title);
    ck.title = title;
    Status st = cg_build(c, k, &ck);
    char *src = st == ST_OK ? cg_render_glsl(&ck) : NULL;
    int64_t n = kc_numel(kc_out(k, c->p)), invocations = ck.pack_bytes ? (n + 3) / 4 : n;
    cg_free(&ck.g);
    if (st != ST_OK) return st;
    if (!src) return ST_NOMEM;
    uint32_t *words = NULL;
    size_t nw = 0;
    uint64_t key = 0;
    const char *cache = c->opt && c->opt->kernel_cache ? c->opt->kernel_cache : "";
    st = cg_compile(src, cache, c->anchor->name, &words, &nw, &key, c->d);
    /* the module's name hashes the generated source alone (stable when a shared include
     * changes); the caches key on the expanded text (codegen_spv.c) */
    char name[32];
    snprintf(name, sizeof name, "gen_%012llx", (unsigned long long)(hash64(src, strlen(src)) >> 16));
    if (st == ST_OK) st = plan_add_module(c->grow, name, src, words, (int64_t)nw);
    free(src);
    free(words);
    if (st != ST_OK) return st;
    k->shader = arena_strdup(&c->grow->arena, name);
    if (!k->shader) return ST_NOMEM;
    st = kc_spec(c, k, GEN_WG);
    kc_grid(k, invocations, GEN_WG);
    return st;
}
