/* The clock warm-up. A GPU idling at its lowest clock raises it only after a spell of work, so
 * the first runs after a model's upload would run at a fraction of the speed (measurements:
 * bench/NOTES.md, bench/clocks.sh). While the host copies weights into mapped device memory the
 * GPU has nothing to do: one workgroup spinning meanwhile (shaders/spin.comp) lets the clock
 * ramp during the upload rather than during the first runs. The spin polls a flag in
 * mapped, coherent memory; vk_warm_stop sets it and waits. Its bound (~2 s) is a watchdog that
 * vk_warm_keep re-arms: a bound on the whole spin ended it ~2 s into a 6-8 s upload of
 * Qwen2.5-1.5B, and the GPU's clock fell back in the idle seconds after (steps at 6.2 ms for the
 * first ~27 tokens in some processes: bench/NOTES.md "The warm-up's bound"). Any other submission,
 * staged copy or the device's end stops the spin first, so nothing ever queues behind it. */
#include <stdlib.h>

#include "common/clock.h"
#include "runtime/vulkan/vk_internal.h"

struct VkWarm {
    VkBuf *flag; /* {stop, trips, alive} */
    VkPipe *pipe;
    VkCmd *cmd;
    double t0;
};

/* The watchdog, in case the flag is never seen or the host stops re-arming it: ~2 s at 1980 MHz
 * (a trip is 1024 dependent FMAs). */
enum { WARM_MAX_TRIPS = 1u << 20 };

static void warm_free(struct VkWarm *w)
{
    if (!w) return;
    vk_cmd_destroy(w->cmd);
    vk_pipe_destroy(w->pipe);
    vk_buf_destroy(w->flag);
    free(w);
}

Status vk_warm_start(VkCtx *ctx, DiagList *d)
{
    return vk_warm_start_bound(ctx, WARM_MAX_TRIPS, d);
}

Status vk_warm_start_bound(VkCtx *ctx, uint32_t trips, DiagList *d)
{
    if (ctx->warm) return ST_OK;
    struct VkWarm *w = calloc(1, sizeof *w);
    if (!w) return ST_NOMEM;
    VkPipeDesc pd = {.shader = "spin", .push_size = 4, .nbindings = 1};
    /* The flag in device memory where the host maps it: NVIDIA's GPU never sees the host's write
     * to a flag in host memory (the spin ran to its bound in every process, ~2 s; one in mapped
     * device memory stops when told: bench/NOTES.md). Host memory otherwise. */
    VkBufKind kind = ctx->info.device_local_host_visible ? VKBUF_DEVICE : VKBUF_HOST;
    Status st = vk_buf_create(ctx, 16, kind, "warm-up flag", &w->flag, d);
    if (st == ST_OK) {
        volatile uint32_t *f = vk_buf_map(w->flag);
        f[0] = f[1] = f[2] = 0;
    }
    if (st == ST_OK) st = vk_pipe_create(ctx, &pd, &w->pipe, d);
    if (st == ST_OK) st = vk_cmd_create(ctx, 0, &w->cmd, d);
    if (st == ST_OK) st = vk_cmd_begin(w->cmd, d);
    VkBinding b = {w->flag, 0, 0};
    if (st == ST_OK) st = vk_cmd_dispatch(w->cmd, w->pipe, &b, 1, &trips, 4, 1, 1, 1, d);
    if (st == ST_OK) st = vk_cmd_end(w->cmd, d);
    if (st == ST_OK) st = vk_cmd_submit(w->cmd, d);
    if (st != ST_OK) {
        warm_free(w);
        return st;
    }
    w->t0 = clock_us();
    ctx->warm = w;
    return ST_OK;
}

void vk_warm_keep(VkCtx *ctx)
{
    if (!ctx->warm) return;
    volatile uint32_t *f = vk_buf_map(ctx->warm->flag);
    f[2]++;
}

uint32_t vk_warm_trips(const VkCtx *ctx)
{
    if (!ctx->warm) return 0;
    volatile uint32_t *f = vk_buf_map(ctx->warm->flag);
    return f[1];
}

uint32_t vk_warm_stop(VkCtx *ctx, double *us)
{
    struct VkWarm *w = ctx->warm;
    if (us) *us = 0;
    if (!w) return 0;
    ctx->warm = NULL;
    volatile uint32_t *f = vk_buf_map(w->flag);
    f[0] = 1;
    DiagList quiet = {0};
    (void)vk_cmd_wait(w->cmd, &quiet); /* a failed wait: the trips read 0, nothing else to do */
    diag_free(&quiet);
    uint32_t trips = f[1];
    if (us) *us = clock_us() - w->t0;
    warm_free(w);
    return trips;
}

bool vk_warm_running(const VkCtx *ctx)
{
    return ctx->warm != NULL;
}
