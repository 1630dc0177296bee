#include "runner.h"

#include <stdio.h>
#include <string.h>

#include "compile.h"

const char *runner_dtype(const Options *o, const Binding *b)
{
    if (strcmp(o->dtype, "auto") != 0) return o->dtype;
    return b->stored_bf16 ? "bf16" : "fp16";
}

Status runner_open(Runner *r, const Options *o, Model *m, bool no_reuse, DiagList *d)
{
    return runner_open_with(r, o, m, no_reuse, NULL, d);
}

Status runner_open_with(Runner *r, const Options *o, Model *m, bool no_reuse, Backend *with,
                        DiagList *d)
{
    memset(r, 0, sizeof *r);
    Options oo = *o;
    bool cpu = strcmp(o->backend, "cpu") == 0; /* the reference computes in float32 */
    snprintf(r->dtype, sizeof r->dtype, "%s", cpu ? "fp32" : runner_dtype(o, &m->b));
    oo.dtype = r->dtype;
    CompileOptions co;
    compile_options_from(&oo, &co);
    co.no_reuse = no_reuse;
    VkBackendOptions vo = vk_backend_options_default();
    vo.device = o->device;
    Status st = ST_OK;
    /* the device comes first: --tier auto is its best tier, and a CPU device (lavapipe) gets
     * the direct conv */
    if (!cpu) {
        st = with ? vk_backend_create_shared(with, &r->be, d) : vk_backend_create(&vo, &r->be, d);
        if (st == ST_OK && strcmp(o->tier, "auto") == 0) co.tier = vk_backend_best_tier(r->be);
        if (st == ST_OK) co.cpu_device = vk_backend_cpu_device(r->be);
    }
    if (st == ST_OK) st = pipeline_run(o->model, &co, &r->pipe, d);
    if (st == ST_OK) st = bind_apply_recipes(r->pipe.g, &m->b, d);
    if (st == ST_OK && cpu) st = cpu_backend_create(r->pipe.g, &r->be);
    if (st == ST_OK) st = exec_open(&r->x, r->pipe.plan, r->pipe.g, &m->b, r->be, d);
    return st;
}

Status runner_check_validation(Runner *r, DiagList *d)
{
    int n = r->be ? vk_backend_validation_errors(r->be) : 0;
    if (n == 0) return ST_OK;
    return diag_add(d, DIAG_ERROR, ST_INTERNAL, r->pipe.plan ? r->pipe.plan->source : NULL, NULL,
                    NULL, "%d Vulkan validation error%s; the first: %s", n, n == 1 ? "" : "s",
                    vk_backend_validation_message(r->be, 0));
}

void runner_close(Runner *r)
{
    exec_close(&r->x);
    if (r->be) r->be->ops->destroy(r->be);
    pipeline_free(&r->pipe);
    memset(r, 0, sizeof *r);
}
