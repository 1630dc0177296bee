/* The profiled step as a picture: kernels laid out by dependency level (the kernels of one level
 * side by side on lanes, the levels one after another, each as long as its slowest kernel), bars
 * as long as each kernel's measured median, and a mixed plan's transfers on a lane of their own
 * before the level that needs them. One layout serves the explorer's timeline (tui/) and
 * `profile --format trace` (Chrome trace-event JSON, which Perfetto and chrome://tracing open).
 * Times are microseconds from the start of the step. */
#ifndef NPU_TIMELINE_H
#define NPU_TIMELINE_H

#include <stdio.h>
#include "compiler/plan.h"
#include "app/results.h"

typedef struct TimelineBar {
    int kernel;        /* plan kernel index; -1 for a transfer */
    int xfer;          /* the transfer's index in Profile.x; -1 for a kernel */
    int level, lane;   /* lane: its place among its level's kernels (transfers: 0) */
    double start, dur; /* dur: the median, 0 when not timed */
} TimelineBar;

typedef struct Timeline {
    TimelineBar *bar; /* [nkernels + nxfers]: the kernels by index, then the transfers */
    int nkernels, nxfers;
    int nlanes; /* the most kernels of one level */
    int nlevels;
    double end;     /* the step's end by this layout */
    double cpu_end; /* the CPU reference's kernels one after another */
} Timeline;

/* Lays out pr, the measurement of plan p. tl->bar is malloc'd (timeline_free). */
Status timeline_build(const Plan *p, const Profile *pr, Timeline *tl, DiagList *d);
void timeline_free(Timeline *tl);
/* Chrome trace-event JSON of r over plan p: process 1 the device's kernels by level (a thread
 * per lane, transfers on their own thread), process 2 the CPU reference's time per kernel; each
 * kernel an "X" event whose args carry its index, shader, fusion, level, output, error and
 * verdict. */
Status timeline_write_trace(FILE *f, const Plan *p, const ProfileResult *r, DiagList *d);

#endif
