/* Hazard tracking between dispatches: the byte ranges read and written since the last barrier.
 * A dispatch must wait for earlier ones when it reads bytes they wrote (read after write) or
 * writes bytes they read or wrote (write after read, write after write): the arena reuses
 * memory, so the last two happen between tensors that never meet in the graph. One rule for the
 * Vulkan recorder (buffers are VkBuf pointers; runtime/vulkan/vk_backend.c) and for the compiler's
 * model of it (compiler/schedule.c: kernel levels and barrier counts), so the two cannot drift. */
#ifndef NPU_HAZARD_H
#define NPU_HAZARD_H

#include <stdbool.h>
#include <stdint.h>
#include "common/status.h"

/* Bytes [lo, hi) of one buffer (any key that tells buffers apart) and a caller's tag. */
typedef struct HzSpan {
    uintptr_t buf;
    uint64_t lo, hi;
    int tag;
} HzSpan;

typedef struct HzSet {
    HzSpan *rd, *wr;
    int nrd, nwr, caprd, capwr;
} HzSet;

/* The largest tag among recorded spans that x conflicts with (writes overlapping x; also reads
 * overlapping x when x is a write), or -1 when none. */
int hz_conflict(const HzSet *s, const HzSpan *x, bool write);
/* Records x as read or written. ST_NOMEM when the set cannot grow. */
Status hz_add(HzSet *s, const HzSpan *x, bool write);
/* Forgets every span (a barrier). */
void hz_clear(HzSet *s);
void hz_free(HzSet *s);

#endif
