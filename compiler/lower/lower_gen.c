/* elementwise: the generated kernels (codegen.h). The group's DAG is built (codegen_build.c),
 * rendered to GLSL (codegen_glsl.c) and compiled to SPIR-V (codegen_spv.c, cached); the module
 * joins the plan under the name gen_HASH, which becomes the kernel's shader, so the runtime finds
 * it in the plan (and a .npubin carries it): HASH is of the GLSL source. Shapes are constants in
 * the source: no push words. Spec 0 = workgroup size; one invocation per logical output element
 * (per four for a bool output: bytes are written as whole uints). The source names no tensor, so a
 * model's layers share modules; describe --source adds which tensors a kernel binds
 * (app/kernel_source.c). */
#include "compiler/lower/kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "compiler/codegen/codegen_build.h"
#include "compiler/pass.h"

#define GEN_WG 256

Status lower_generated(const KernelCtx *c, PlanKernel *k)
{
    CgKernel ck;
    memset(&ck, 0, sizeof ck);
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
    snprintf(name, sizeof name, "gen_%012llx",
             (unsigned long long)(hash64(src, strlen(src)) >> 16));
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
