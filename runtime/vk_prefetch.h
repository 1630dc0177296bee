/* Weight prefetch into the GPU's L2 during levels that read little (runtime/vk_prefetch.c). */
#ifndef NPU_VK_PREFETCH_H
#define NPU_VK_PREFETCH_H

#include <stdbool.h>
#include <stdint.h>

#include "../common/status.h"
#include "../compiler/plan.h"

/* One prefetch dispatch: bytes [start, start + len) of weight tensor t, recorded right after
 * kernel `after` (the last kernel of a light level), before the next barrier. */
typedef struct PfItem {
    int after, t;
    uint64_t start, len;
} PfItem;

/* The prefetches of a recording of kernels [first, first + n), whose level starts are
 * level_start[i] (kernel first + i follows a barrier; level_start[0] is true). A level is light
 * when its kernels' inputs total at most `light` bytes; at its end, the weights of the levels
 * after it (up to the next light one) are prefetched in the order they are read, at most
 * `budget` bytes, each byte once per recording; starts and lengths are multiples of `align`
 * (a power of two >= 16) but a tensor's last piece, which is a multiple of 16 bytes. *items
 * (malloc'd, NULL when none) and *nitems. ST_NOMEM only. */
Status pf_plan(const Plan *p, int first, int n, const bool *level_start, uint64_t light,
               uint64_t budget, uint64_t align, PfItem **items, int *nitems);

/* The budget per light level from NPU_PREFETCH_MB (0: off, the default) and the light level's
 * threshold from NPU_PREFETCH_LIGHT_MB (default 4), in bytes: measuring aids (bench/probe.sh). */
void pf_env(uint64_t *budget, uint64_t *light);

#endif
