/* Status codes shared by every module. A function that can fail returns a Status; details of
 * what went wrong go to a DiagList (diag.h). The numeric values of the first four are the CLI's
 * exit codes (docs/CLI.md). */
#ifndef NPU_STATUS_H
#define NPU_STATUS_H

typedef enum Status {
    ST_OK = 0,
    ST_MISMATCH = 1,  /* numbers disagree beyond tolerance */
    ST_BAD_INPUT = 2, /* unreadable/malformed file, bad usage, missing weight */
    ST_NO_DEVICE = 3, /* no usable Vulkan device */
    ST_NOMEM = 4,     /* allocation failed (reported as exit 2 with a message) */
    ST_INTERNAL = 5,  /* a bug of ours; reported, never an abort */
} Status;

/* Maps a status to the process exit code documented in CLI.md. */
int status_exit_code(Status st);
const char *status_name(Status st);

#endif
