/* The clock warm-up. A GPU idling at its lowest clock raises it only after a spell of work, so
 * the first runs after a model's upload would run at a fraction of the speed (measurements:
 * bench/NOTES.md, bench/clocks.sh). While the host copies weights into mapped device memory the
 * GPU has nothing to do: one workgroup spinning meanwhile (shaders/spin.comp) lets the clock
 * ramp during the upload rather than during the first runs. The spin polls a flag in
 * mapped, coherent memory; vk_warm_stop sets it and waits. Any other submission, staged copy or the
 * device's end stops the spin first, so nothing ever queues behind it. */
#include <stdlib.h>

#include "common/clock.h"
#include "runtime/vulkan/vk_internal.h"

struct VkWarm {
    VkBuf *flag; /* {stop, trips} */
    VkPipe *pipe;
    VkCmd *cmd;
    double t0;
};

/* A bound in case the flag is never seen: ~2 s at 1980 MHz (a trip is 1024 dependent FMAs). */
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
    if (ctx->warm) return ST_OK;
    struct VkWarm *w = calloc(1, sizeof *w);
    if (!w) return ST_NOMEM;
    VkPipeDesc pd = {.shader = "spin", .push_size = 4, .nbindings = 1};
    uint32_t trips = WARM_MAX_TRIPS;
    /* The flag in device memory where the host maps it: NVIDIA's GPU never sees the host's write
     * to a flag in host memory (the spin ran to its bound in every process, ~2 s; one in mapped
     * device memory stops when told: bench/NOTES.md). Host memory otherwise. */
    VkBufKind kind = ctx->info.device_local_host_visible ? VKBUF_DEVICE : VKBUF_HOST;
    Status st = vk_buf_create(ctx, 8, kind, "warm-up flag", &w->flag, d);
    if (st == ST_OK) {
        volatile uint32_t *f = vk_buf_map(w->flag);
        f[0] = f[1] = 0;
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
