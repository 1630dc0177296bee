/* File I/O helpers: whole-file reads, read-only maps, and atomic writes (temporary + rename, so a
 * failed write never leaves a partial output file). Errors go to the DiagList with the path. */
#ifndef NPU_FILEIO_H
#define NPU_FILEIO_H

#include <stddef.h>
#include "common/diag.h"

/* Reads a whole file; *out is malloc'd (NUL-terminated), caller frees. */
Status file_read_all(const char *path, char **out, size_t *len, DiagList *d);

typedef struct FileMap {
    const unsigned char *data;
    size_t size;
} FileMap;
/* Maps a file read-only (an empty file maps to data=NULL, size=0). Unmap with file_unmap. */
Status file_map(const char *path, FileMap *m, DiagList *d);
void file_unmap(FileMap *m);

/* Writes `len` bytes to `path` atomically (path.tmp then rename). */
Status file_write_atomic(const char *path, const void *data, size_t len, DiagList *d);

/* Joins dir(of base path) and name into buf; returns buf. */
char *path_sibling(char *buf, size_t n, const char *base, const char *name);
int file_exists(const char *path);
/* The path of the tool's cache file or folder `name` in buf: $XDG_CACHE_HOME/npu-explore/NAME,
 * else $HOME/.cache/npu-explore/NAME; NULL when neither variable is set or buf is too small. */
const char *cache_path(char *buf, size_t n, const char *name);
/* mkdir -p of the directory part of path (mode 0755); 0, or -1 with errno set. */
int file_make_parent_dirs(const char *path);

#endif
