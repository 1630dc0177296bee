/* Status codes shared by every module. A function that can fail returns a Status; details of
 * what went wrong go to a DiagList (diag.h). The numeric values of the first four are the CLI's
 * exit codes (docs/CLI.md). */
#ifndef NPU_STATUS_H
#define NPU_STATUS_H

#include <stdatomic.h>
#include <stdbool.h>

typedef enum Status {
    ST_OK = 0,
    ST_MISMATCH = 1,  /* numbers disagree beyond tolerance */
    ST_BAD_INPUT = 2, /* unreadable/malformed file, bad usage, missing weight */
    ST_NO_DEVICE = 3, /* no usable Vulkan device */
    ST_NOMEM = 4,     /* allocation failed (reported as exit 2 with a message) */
    ST_INTERNAL = 5,  /* a bug of ours; reported, never an abort */
    ST_CANCELLED = 6, /* stopped by the user (the TUI's Esc); the CLI never sets the flag */
} Status;

/* A cancel flag polled between steps of long work (bisect steps, profile iterations, passes);
 * NULL: never cancelled. */
static inline bool cancel_requested(const atomic_bool *flag)
{
    return flag && atomic_load(flag);
}

/* Maps a status to the process exit code documented in CLI.md. */
int status_exit_code(Status st);
const char *status_name(Status st);

#endif
