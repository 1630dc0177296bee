/* The monotonic clock every timing in the tool reads: profile runs, the CPU reference's per-node
 * times, generate's steps, the session's progress. */
#ifndef NPU_CLOCK_H
#define NPU_CLOCK_H

#include <time.h>

/* Microseconds on CLOCK_MONOTONIC (an arbitrary origin: only differences mean anything). */
static inline double clock_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

#endif
