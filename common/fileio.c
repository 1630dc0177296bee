#define _POSIX_C_SOURCE 200809L
#include "common/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

Status file_read_all(const char *path, char **out, size_t *len, DiagList *d)
{
    *out = NULL;
    if (len) *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return diag_error(d, path, NULL, NULL, "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return diag_error(d, path, NULL, NULL, "not a regular file");
    }
    size_t n = (size_t)st.st_size;
    char *buf = malloc(n + 1);
    if (!buf) {
        fclose(f);
        return diag_add(d, DIAG_ERROR, ST_NOMEM, path, NULL, NULL, "out of memory reading file");
    }
    size_t got = fread(buf, 1, n, f);
    fclose(f);
    if (got != n) {
        free(buf);
        return diag_error(d, path, NULL, NULL, "short read (%zu of %zu bytes)", got, n);
    }
    buf[n] = 0;
    *out = buf;
    if (len) *len = n;
    return ST_OK;
}

Status file_map(const char *path, FileMap *m, DiagList *d)
{
    m->data = NULL;
    m->size = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return diag_error(d, path, NULL, NULL, "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return diag_error(d, path, NULL, NULL, "not a regular file");
    }
    if (st.st_size == 0) {
        close(fd);
        return ST_OK;
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return diag_error(d, path, NULL, NULL, "cannot map: %s", strerror(errno));
    m->data = p;
    m->size = (size_t)st.st_size;
    return ST_OK;
}

void file_unmap(FileMap *m)
{
    if (m->data) munmap((void *)m->data, m->size);
    m->data = NULL;
    m->size = 0;
}

Status file_write_atomic(const char *path, const void *data, size_t len, DiagList *d)
{
    size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    if (!tmp) return diag_add(d, DIAG_ERROR, ST_NOMEM, path, NULL, NULL, "out of memory");
    snprintf(tmp, n, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        Status st = diag_error(d, path, NULL, NULL, "cannot write: %s", strerror(errno));
        free(tmp);
        return st;
    }
    size_t w = len ? fwrite(data, 1, len, f) : 0;
    int bad = (w != len) | (fclose(f) != 0);
    if (bad || rename(tmp, path) != 0) {
        Status st = diag_error(d, path, NULL, NULL, "cannot write: %s", strerror(errno));
        remove(tmp);
        free(tmp);
        return st;
    }
    free(tmp);
    return ST_OK;
}

char *path_sibling(char *buf, size_t n, const char *base, const char *name)
{
    const char *slash = strrchr(base, '/');
    if (!slash) {
        snprintf(buf, n, "%s", name);
    } else {
        int dl = (int)(slash - base);
        snprintf(buf, n, "%.*s/%s", dl, base, name);
    }
    return buf;
}

const char *cache_path(char *buf, size_t n, const char *name)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int k = xdg && *xdg     ? snprintf(buf, n, "%s/npu-explore/%s", xdg, name)
            : home && *home ? snprintf(buf, n, "%s/.cache/npu-explore/%s", home, name)
                            : -1;
    return k > 0 && (size_t)k < n ? buf : NULL;
}

int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* mkdir -p of the directory part of `path`. */
int file_make_parent_dirs(const char *path)
{
    char *p = strdup(path);
    if (!p) return -1;
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = 0;
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            free(p);
            return -1;
        }
        *s = '/';
    }
    free(p);
    return 0;
}
