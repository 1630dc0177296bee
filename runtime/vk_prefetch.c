/* Weight prefetch into the L2 (an opt-in measuring aid: NPU_PREFETCH_MB, bench/NOTES.md
 * "Session 8"). A decode step streams every weight from DRAM once, and between the weight-bound
 * GEMV levels sit levels that read almost nothing and wait on latency (the rope and cache
 * writes, the attention): DRAM idles there. At the end of such a level the recording adds
 * `prefetch` dispatches (shaders/prefetch.comp) over the weights the following levels will read,
 * so that those find them in the L2. The prefetch reads only weights, which no kernel writes: it
 * adds no barrier, but the level's closing barrier waits for it too. */
#include "vk_prefetch.h"

#include <stdlib.h>
#include <string.h>

#include "hostxf.h"

static uint64_t kernel_reads(const Plan *p, const PlanKernel *k)
{
    uint64_t s = 0;
    for (int a = 0; a < k->nin; a++)
        if (k->args[a] >= 0) s += hostxf_device_bytes(&p->tensors[k->args[a]]);
    return s;
}

static Status push(PfItem **items, int *n, int *cap, PfItem it)
{
    if (*n == *cap) {
        int c = *cap ? 2 * *cap : 16;
        PfItem *x = realloc(*items, sizeof *x * (size_t)c);
        if (!x) return ST_NOMEM;
        *items = x;
        *cap = c;
    }
    (*items)[(*n)++] = it;
    return ST_OK;
}

Status pf_plan(const Plan *p, int first, int n, const bool *level_start, uint64_t light,
               uint64_t budget, uint64_t align, PfItem **items, int *nitems)
{
    *items = NULL;
    *nitems = 0;
    if (n <= 0 || budget == 0) return ST_OK;
    /* levels as [lv[i], lv[i + 1]) over 0..n, and which are light */
    int *lv = malloc(sizeof *lv * (size_t)(n + 1));
    bool *lt = malloc(sizeof *lt * (size_t)n);
    uint64_t *done = calloc((size_t)p->ntensors, sizeof *done);
    Status st = lv && lt && done ? ST_OK : ST_NOMEM;
    int nl = 0, cap = 0;
    for (int i = 0; i < n && st == ST_OK; i++)
        if (i == 0 || level_start[i]) lv[nl++] = i;
    if (st == ST_OK) lv[nl] = n;
    for (int l = 0; l < nl && st == ST_OK; l++) {
        uint64_t r = 0;
        for (int i = lv[l]; i < lv[l + 1]; i++) r += kernel_reads(p, &p->kernels[first + i]);
        lt[l] = r <= light;
    }
    for (int l = 0; l + 1 < nl && st == ST_OK; l++) {
        if (!lt[l]) continue;
        uint64_t left = budget;
        for (int m = l + 1; m < nl && left > 0 && !(m > l + 1 && lt[m]); m++)
            for (int i = lv[m]; i < lv[m + 1] && left > 0 && st == ST_OK; i++) {
                const PlanKernel *k = &p->kernels[first + i];
                for (int a = 0; a < k->nin && left > 0 && st == ST_OK; a++) {
                    int t = k->args[a];
                    if (t < 0 || p->tensors[t].kind != PT_WEIGHT || plan_base(p, t) != t) continue;
                    uint64_t size = hostxf_device_bytes(&p->tensors[t]) & ~(uint64_t)15;
                    if (done[t] >= size) continue;
                    uint64_t take = size - done[t];
                    if (take > left) take = left & ~(align - 1);
                    if (take == 0) {
                        left = 0;
                        break;
                    }
                    st = push(items, nitems, &cap,
                              (PfItem){.after = first + lv[l + 1] - 1, .t = t, .start = done[t], .len = take});
                    done[t] += take;
                    left -= take;
                }
            }
    }
    free(lv);
    free(lt);
    free(done);
    if (st != ST_OK) {
        free(*items);
        *items = NULL;
        *nitems = 0;
    }
    return st;
}

static uint64_t env_mb(const char *name, uint64_t dflt)
{
    const char *e = getenv(name);
    if (!e || !*e) return dflt;
    char *end;
    long v = strtol(e, &end, 10);
    return *end || v < 0 || v > 4096 ? dflt : (uint64_t)v << 20;
}

void pf_env(uint64_t *budget, uint64_t *light)
{
    *budget = env_mb("NPU_PREFETCH_MB", 0);
    *light = env_mb("NPU_PREFETCH_LIGHT_MB", 4);
}
