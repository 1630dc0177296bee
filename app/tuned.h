/* Which tuning cache a command uses (--tuned auto|none|FILE, docs/CLI.md "Tuning"): auto is the
 * file beside the pipeline cache, $XDG_CACHE_HOME/npu-explore/tuned.tsv (else
 * $HOME/.cache/...), and applies to plans compiled for a device (run, profile, bisect,
 * generate, the explorer, tune): that device's entries; compile, describe and dot open no
 * device and use a cache only when --tuned names a FILE (the entries of its one device).
 * $NPU_TUNED is --tuned's default when the option is not given (the test runner sets it to
 * none, so tests never read a developer's cache). The file is read once per process; `tune`
 * updates that copy and writes it back. */
#ifndef NPU_APP_TUNED_H
#define NPU_APP_TUNED_H

#include "common/diag.h"
#include "compiler/pass.h"
#include "compiler/tune_cache.h"
#include "app/options.h"

/* The cache file o names (auto: the default path) into buf, or NULL for none (or no home). */
const char *tuned_path(const Options *o, char *buf, size_t n);
/* The process's copy of the cache file o names, read on first use (its warnings into d; a
 * foreign file reads as empty, *foreign then set when given); NULL for --tuned none. */
Status tuned_cache(const Options *o, TuneCache **out, bool *foreign, DiagList *d);
/* Sets co->tuned and co->tuned_device for a plan compiled for the device `device` (its
 * vk_backend_device_key; NULL or "": no device, so only a --tuned FILE of one device applies;
 * a FILE of several devices is an error naming them). */
Status tuned_compile_options(const Options *o, const char *device, CompileOptions *co, DiagList *d);
/* Writes the process's copy back to the file o names (its directory made first). */
Status tuned_save(const Options *o, DiagList *d);

#endif
