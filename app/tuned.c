/* The tuning cache a command uses; see tuned.h. */
#include "app/tuned.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"

/* --tuned's value: the option, else $NPU_TUNED, else auto. */
static const char *tuned_value(const Options *o)
{
    const char *e = getenv("NPU_TUNED");
    return o->tuned ? o->tuned : e && *e ? e : "auto";
}

const char *tuned_path(const Options *o, char *buf, size_t n)
{
    const char *v = tuned_value(o);
    if (strcmp(v, "none") == 0) return NULL;
    if (strcmp(v, "auto") != 0) {
        snprintf(buf, n, "%s", v);
        return buf;
    }
    return cache_path(buf, n, "tuned.tsv");
}

/* The process's copy of one cache file (the last one asked for). */
static struct {
    char path[4096];
    TuneCache c;
    bool loaded, foreign;
} copy;
static pthread_mutex_t copy_lock = PTHREAD_MUTEX_INITIALIZER;

Status tuned_cache(const Options *o, TuneCache **out, bool *foreign, DiagList *d)
{
    *out = NULL;
    char path[4096];
    if (!tuned_path(o, path, sizeof path)) return ST_OK;
    Status st = ST_OK;
    pthread_mutex_lock(&copy_lock);
    if (!copy.loaded || strcmp(copy.path, path) != 0) {
        tune_cache_free(&copy.c);
        copy.loaded = false;
        snprintf(copy.path, sizeof copy.path, "%s", path);
        st = tune_cache_read(&copy.c, path, &copy.foreign, d);
        copy.loaded = st == ST_OK;
        if (st != ST_OK) tune_cache_free(&copy.c);
    }
    if (st == ST_OK) *out = &copy.c;
    if (foreign) *foreign = copy.foreign;
    pthread_mutex_unlock(&copy_lock);
    return st;
}

Status tuned_compile_options(const Options *o, const char *device, CompileOptions *co, DiagList *d)
{
    co->tuned = NULL;
    co->tuned_device = NULL;
    bool explicit_file = strcmp(tuned_value(o), "auto") != 0;
    if (!(device && *device) && !explicit_file) return ST_OK; /* auto without a device */
    TuneCache *c = NULL;
    Status st = tuned_cache(o, &c, NULL, d);
    if (st != ST_OK || !c) return st;
    if (device && *device) {
        co->tuned = c;
        co->tuned_device = device;
        return ST_OK;
    }
    const char *dev[2];
    int n = tune_cache_devices(c, dev, 2);
    if (n > 1)
        return diag_error(d, copy.path, NULL, NULL,
                          "--tuned: the file holds tuning for %d devices ('%s', '%s'%s); without "
                          "a device (compile, describe, dot) it must hold one: run or profile on "
                          "the device, or keep one device's lines",
                          n, dev[0], dev[1], n > 2 ? ", ..." : "");
    if (n == 1) {
        co->tuned = c;
        co->tuned_device = dev[0];
    }
    return ST_OK;
}

Status tuned_save(const Options *o, DiagList *d)
{
    char path[4096];
    if (!tuned_path(o, path, sizeof path)) return ST_OK;
    TuneCache *c = NULL;
    Status st = tuned_cache(o, &c, NULL, d);
    if (st != ST_OK || !c) return st;
    if (file_make_parent_dirs(path) != 0)
        return diag_error(d, path, NULL, NULL, "cannot create the tuning cache's directory: %s",
                          strerror(errno));
    pthread_mutex_lock(&copy_lock);
    st = tune_cache_write(c, path, d);
    pthread_mutex_unlock(&copy_lock);
    return st;
}
