/* The tuning cache: per device and kernel, the knob values `npu-explore tune` measured fastest
 * (compiler/tuning.def's TU_SEARCH knobs). Lowering asks it for a kernel's values by the
 * kernel's key (CompileOptions.tuned and tuned_device; kc_tune_key in lower/kernels.h), so a
 * kernel of the same shape in a model nobody tuned gets them too; knobs set for the whole
 * compile (--tune, NPU_*) still win. A text file, one entry a line after a header line:
 *   device <TAB> kernel key <TAB> knobs <TAB> default_us <TAB> tuned_us
 * device: the backend's identity (name [vendor:device] driver); kernel key: kind, fusion or
 * op, tier, the bound tensors' storage and physical shapes, a hash of the computed nodes'
 * attributes; knobs: "cm.target=64 cm.vec=0" (tuning_format_set); times: microseconds of the
 * kernel alone with the default and with these knobs, when tune measured them. The file lives
 * beside the pipeline cache (app/tuned.h). Nothing in it can change what a kernel computes:
 * lines naming a TU_BENCH knob, an unknown knob or a value out of range are refused. */
#ifndef NPU_TUNE_CACHE_H
#define NPU_TUNE_CACHE_H

#include "common/diag.h"
#include "compiler/tuning.h"

#define TUNE_CACHE_HEADER "# npu-explore tuning cache v1"

typedef struct TuneEntry {
    char *device, *key;
    Tuning knobs; /* the values set (Tuning.set) */
    double default_us, tuned_us;
} TuneEntry;

typedef struct TuneCache {
    TuneEntry *e;
    int n, cap;
} TuneCache;

/* Reads path into c (entries added to those there). A missing file is an empty cache. A file
 * that does not start with the header, or a bad line (file:line, why), is a warning in d and
 * is skipped: the cache only ever makes kernels faster, so a damaged one is ignored, never
 * fatal. *foreign (may be NULL) is set when the file exists but is no tuning cache (`tune` then
 * refuses to overwrite it). Errors: only an unreadable file (ST_IO) or no memory. */
Status tune_cache_read(TuneCache *c, const char *path, bool *foreign, DiagList *d);
/* Writes c to path atomically (entries in order, each line as tune_cache_read reads it). */
Status tune_cache_write(const TuneCache *c, const char *path, DiagList *d);
/* The entry of (device, key), or NULL. */
const TuneEntry *tune_cache_find(const TuneCache *c, const char *device, const char *key);
/* Sets (device, key)'s entry (added, or replaced in place); ST_NOMEM or ST_BAD_INPUT (a tab or
 * newline in device or key, a TU_BENCH knob in knobs). */
Status tune_cache_put(TuneCache *c, const char *device, const char *key, const Tuning *knobs,
                      double default_us, double tuned_us, DiagList *d);
/* Removes (device, key)'s entry, if any. */
void tune_cache_drop(TuneCache *c, const char *device, const char *key);
/* The distinct devices of c's entries, in first-seen order: at most max into dev (borrowed);
 * returns how many there are. */
int tune_cache_devices(const TuneCache *c, const char **dev, int max);
/* How many entries device has. */
int tune_cache_count(const TuneCache *c, const char *device);
void tune_cache_free(TuneCache *c);

/* The tuning a kernel of kind `kind` lowers with: `global`, and for each knob of that kind
 * that global leaves unset, entry's value (entry NULL: global alone). rec gets entry's knobs
 * that took effect, "cm.target=64" ("" none). */
void tune_apply(const Tuning *global, const TuneEntry *entry, KernelKind kind, Tuning *out,
                char *rec, size_t n);

#endif
