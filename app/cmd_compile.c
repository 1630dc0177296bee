/* `compile`, `describe` and the shared compile step: IR JSON through the pass pipeline into a
 * Plan, --dump-after, and reading .npubin files. */
#include <stdio.h>
#include <string.h>
#include "compiler/codegen/codegen.h"
#include "compiler/describe.h"
#include "compiler/dump.h"
#include "compiler/lower/lower.h"
#include "compiler/npubin.h"
#include "app/commands.h"
#include "app/compile.h"
#include "app/model.h"
#include "app/kernel_source.h"
#include "app/tuned.h"

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

void compile_options_from(const Options *o, CompileOptions *co)
{
    compile_defaults(co);
    for (int i = 0; i < o->n_no_fuse && i < COMPILE_MAX_LIST; i++)
        co->no_fuse[co->n_no_fuse++] = o->no_fuse[i];
    for (int i = 0; i < o->n_cpu_ops && i < COMPILE_MAX_LIST; i++)
        co->cpu_ops[co->n_cpu_ops++] = o->cpu_ops[i];
    co->break_id = o->break_id;
    co->kernel_cache = o->kernel_cache;
    for (int i = 0; i < o->n_disable && i < COMPILE_MAX_LIST; i++)
        co->disable[co->n_disable++] = o->disable[i];
    co->cancel = o->cancel;
    co->tuning = o->tune;
    /* auto without a device (compile, describe, dot) is portable; the runner resolves auto
     * against its device first (runner.c) */
    int tier = plan_tier_parse(o->tier);
    co->tier = tier >= 0 ? tier : TIER_PORTABLE;
    if (strcmp(o->dtype, "bf16") == 0)
        co->compute = DT_BF16;
    else if (strcmp(o->dtype, "fp32") == 0)
        co->compute = DT_F32;
}

Status compile_model(const Options *o, Pipeline *p, DiagList *d)
{
    CompileOptions co;
    Options oo = *o;
    Status tst = model_npubin_options(&oo, d); /* a .npubin: its plan's options */
    if (tst != ST_OK) return tst;
    oo.dtype = model_auto_dtype(&oo); /* auto: what `run` would pick */
    compile_options_from(&oo, &co);
    tst = tuned_compile_options(&oo, NULL, &co, d); /* no device: a --tuned FILE only */
    if (tst != ST_OK) return tst;
    if (o->dump_after && strcmp(o->dump_after, "all") != 0 && pass_find(o->dump_after) < 0) {
        char names[512];
        return diag_error(d, NULL, NULL, NULL, "--dump-after: unknown pass '%s' (passes: %s)",
                          o->dump_after, pass_names(names, sizeof names, false));
    }
    Status st = pipeline_run(o->model, &co, p, d);
    if (o->dump_after) {
        for (int i = 0; i < p->nsnaps; i++) {
            if (strcmp(o->dump_after, "all") != 0 && pass_find(o->dump_after) != i) continue;
            Snapshot *s = &p->snaps[i];
            fprintf(stderr, "=== after %s (%d added, %d removed, %d rewritten, %.2f ms)\n", s->pass,
                    s->added, s->removed, s->rewritten, s->ms);
            graph_dump(stderr, s->g);
        }
    }
    return st;
}

int cmd_compile(int argc, char **argv)
{
    Options o;
    DiagList d = {0};
    Status st = opt_read(&o, argc, argv, &d);
    if (st == ST_OK && !o.out)
        st = diag_error(&d, NULL, NULL, NULL, "compile needs -o FILE.npubin");
    Pipeline p = {0};
    if (st == ST_OK) st = compile_model(&o, &p, &d);
    if (st == ST_OK) st = npubin_write(p.plan, o.out, &d);
    if (st == ST_OK && !o.json) {
        printf("wrote %s: %d kernels, %d fusions, arena %lld bytes (%.1f ms)\n", o.out,
               p.plan->nkernels, p.plan->nfusions, (long long)p.plan->arena_bytes, p.total_ms);
        int ngen = 0;
        for (int k = 0; k < p.plan->nkernels; k++)
            ngen += plan_find_module(p.plan, p.plan->kernels[k].shader) != NULL;
        CgStats cs = cg_stats();
        if (ngen)
            printf("generated kernels: %d, %d modules: %d compiled by glslang (%.1f ms), %d from "
                   "memory, %d from the disk cache\n",
                   ngen, p.plan->nmodules, cs.compiled, cs.compile_ms, cs.memory_hits,
                   cs.disk_hits);
    }
    diag_print(&d, stderr);
    pipeline_free(&p);
    diag_free(&d);
    return status_exit_code(st);
}

int cmd_describe(int argc, char **argv)
{
    Options o;
    DiagList d = {0};
    Status st = opt_read(&o, argc, argv, &d);
    Pipeline p = {0};
    Plan *plan = NULL;
    if (st == ST_OK) {
        if (ends_with(o.model, ".npubin")) {
            st = npubin_read(o.model, &plan, &d);
            /* a stale file is still described (its kernels marked), with a warning */
            if (st == ST_OK) st = npubin_verify(plan, o.model, false, &d);
        } else {
            st = compile_model(&o, &p, &d);
            plan = p.plan;
        }
    }
    if (st == ST_OK && o.source) {
        int k = kernel_source_find(plan, o.source, &d);
        KernelSource ks;
        st = k < 0 ? ST_BAD_INPUT : kernel_source_get(plan, k, &ks, &d);
        if (st == ST_OK) {
            kernel_source_print(stdout, &ks);
            kernel_source_free(&ks);
        }
    } else if (st == ST_OK) {
        o.json ? describe_json(stdout, plan) : describe_text(stdout, plan);
    }
    diag_print(&d, stderr);
    if (plan != p.plan) plan_free(plan);
    pipeline_free(&p);
    diag_free(&d);
    return status_exit_code(st);
}
