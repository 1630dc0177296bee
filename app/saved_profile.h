/* A profile saved by `profile --save FILE` (its JSON lines, schema npu-explore/profile/1) read
 * back: per kernel its index, shader, fusion id, output tensor, the IR nodes it computes, GPU and
 * CPU times, error and verdict. `profile --baseline` matches its rows by output tensor; `dot
 * --profile` overlays its times or errors on the graph's nodes (app/heat.h). */
#ifndef NPU_SAVED_PROFILE_H
#define NPU_SAVED_PROFILE_H

#include <stdbool.h>
#include "common/diag.h"

typedef struct SavedKernel {
    int index;
    char *shader, *fusion, *output;
    char **nodes; /* the IR nodes it computes ("nodes", else "fused_from" split at commas) */
    int nnodes;
    double gpu_us, cpu_us, rel_l2; /* rel_l2 < 0: not judged */
    char verdict[16];              /* "ok", "MISMATCH", "-" */
} SavedKernel;

typedef struct SavedProfile {
    char *model;    /* the summary line's model, NULL without one */
    SavedKernel *k; /* [nk] in file order */
    int nk;
} SavedProfile;

/* Reads path; an unreadable file, a line that is not JSON, or no kernel line is an error naming
 * the file (and the line). */
Status saved_profile_load(const char *path, SavedProfile *sp, DiagList *d);
void saved_profile_free(SavedProfile *sp);

#endif
