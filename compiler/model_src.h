/* A model path's IR: an IR JSON file as it is, or the IR a .npubin carries (the compiler embeds
 * the IR text in every plan, so a .npubin runs, and recompiles, without the original file). */
#ifndef NPU_MODEL_SRC_H
#define NPU_MODEL_SRC_H

#include <stdbool.h>
#include <stddef.h>
#include "common/diag.h"
#include "common/fileio.h"
#include "compiler/graph.h"

/* Does path name a .npubin (by its extension)? */
bool model_is_npubin(const char *path);
/* The IR text of path (*text malloc'd and NUL-terminated, the caller frees it). For a .npubin,
 * *origin (may be NULL) receives a malloc'd copy of the IR file it was compiled from, as
 * recorded (NULL for an IR JSON path). A .npubin without an embedded IR (written before the IR
 * was embedded) is an error saying so. */
Status model_src_read(const char *path, char **text, size_t *len, char **origin, DiagList *d);
/* The IR text of path, read without a copy where it can be: an IR JSON file is mapped (not
 * NUL-terminated: text[0..len) is the file), a .npubin's IR is model_src_read's copy. Errors as
 * model_src_read's. Close with model_src_close. */
typedef struct ModelText {
    const char *text;
    size_t len;
    FileMap map;
    char *copy;
} ModelText;
Status model_src_open(const char *path, ModelText *t, DiagList *d);
void model_src_close(ModelText *t);
/* Imports the IR text of path (model_src_read, then the IR reader); the graph's path is `path`. */
Status model_src_graph(const char *path, Graph **g, DiagList *d);

#endif
