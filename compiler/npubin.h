/* .npubin: a compiled Plan on disk. Written by the compiler (`compile -o`), read by the runtime
 * and `describe`. The reader trusts nothing: every header field, byte, msgpack type, count and
 * index is checked, and anything wrong is one diagnostic naming the file and returns
 * ST_BAD_INPUT; it never crashes and never allocates more than a small multiple of the file.
 *
 * Layout (all integers little-endian):
 *   offset  size  field
 *        0     8  magic "\x89NPUBIN\n" (high bit: caught by 7-bit transfers; \n: by text mode)
 *        8     4  u32 format version (PLAN_FORMAT_VERSION); stays at this offset forever
 *       12     4  u32 reserved, 0
 *       16     8  u64 payload length in bytes (the file is exactly 32 + this long)
 *       24     8  u64 checksum: hash64 (FNV-1a, common/hash.h) of the payload
 *       32     -  payload: one msgpack map
 * The payload map has string keys named after the Plan fields (plan.h): model_name, source,
 * compute, channel_tile, arena_bytes, naive_bytes, nlevels, tensors, kernels, parts, fusions,
 * recipes, inputs, outputs, weights, ir_json, and modules (generated kernels' {name, source, spirv
 * bin}; optional when reading: a file from before generated kernels has none; their SPIR-V is
 * validated by spirv-val before it is accepted). tensors/kernels/parts/fusions/recipes are arrays
 * of maps keyed the same way; counts are the lengths of arrays (nargs = len(args), npush =
 * len(push), rank = len(shape), ...). Enums are written as names, not numbers, so reordering an
 * enum never changes the meaning of old files: dtypes as "F32"/"F16"/..., ops as their ops.def
 * id ("CONV2D"), kinds as "act"/"input"/"output"/"weight"/"const", targets as "npu"/"cpu",
 * recipes as "bn_fold"/"concat". Absent strings are nil; ir_json is bin: the IR JSON text the
 * plan was compiled from (the compiler embeds it so the file runs without it; nil in files
 * written before it did). tuning and tuning_env (strings, Plan.tuning) are written only for a
 * plan built with non-default tuning knobs, so they are optional. Every other key of
 * this version is required; keys this version does not know are ignored, so a later version may
 * add keys without a version bump (a bump is for changes old readers must refuse). Version 2
 * added a tensor's view_offset (a view starting inside its base) and a recipe's src (the
 * parts of a concat): a version 1 file lacks both and still reads (offset 0, no sources).
 * Version 3 added the fold recipe (kind "fold", its "nodes": the IR nodes computing its output
 * at load, fold-constants). Version 4 added a kernel's "fingerprint" (a uint64, on built-in NPU
 * kernels only: those running a module the build embeds, not one the file carries): hash64 of
 * the SPIR-V module the writing build lowered it for (compiler/shader_fp.h), which npubin_verify
 * compares with the reading build's module where a file is loaded to run or describe. The
 * header carries the lowest version that holds the plan (plan_format_version): a plan with a
 * fingerprint (every plan with a built-in NPU kernel) is written as version 4, since an older
 * build would ignore the key and run the kernels unchecked: it refuses the file as written by a
 * newer npu-explore instead. A plan without one is written as version 3 with a fold, else 2.
 * Files of versions 1 to 3 still read: no fingerprints, so npubin_verify warns that their
 * kernels cannot be checked. */
#ifndef NPU_NPUBIN_H
#define NPU_NPUBIN_H

#include <stdbool.h>
#include <stddef.h>
#include "common/diag.h"
#include "compiler/plan.h"

#define NPUBIN_MAGIC "\x89NPUBIN\n"
#define NPUBIN_HEADER_SIZE 32
#define NPUBIN_MAX_COUNT (1 << 24) /* most elements any one array may hold */

/* Encodes p into *out, a malloc'd buffer of *len bytes (the caller frees it). A plan that would
 * not read back (an index out of range, a count over a limit) is refused with ST_INTERNAL. */
Status npubin_encode(const Plan *p, unsigned char **out, size_t *len, DiagList *d);
/* Decodes a whole file image into a new Plan (*out, free with plan_free; NULL on error). `path`
 * names the file in messages; buf is only read, and not referenced after the call. */
Status npubin_decode(const char *path, const unsigned char *buf, size_t len, Plan **out,
                     DiagList *d);
/* Encodes p and writes it atomically (never leaves a partial file at path). */
Status npubin_write(const Plan *p, const char *path, DiagList *d);
/* Reads and decodes path (*out as for npubin_decode). */
Status npubin_read(const char *path, Plan **out, DiagList *d);
/* The payload's msgpack structure (npubin_decode's first step): every item complete, every
 * container's count backed by bytes, nesting bounded, nothing after the root; allocates nothing.
 * After it, msgpack-c's unpacker allocates at most one msgpack_object per payload byte. */
Status npubin_prescan(const char *path, const unsigned char *b, size_t n, DiagList *d);
/* Is kernel k of a plan read from a file stale: a built-in NPU kernel whose recorded fingerprint
 * differs from this build's module's (shader_fp_kernel: none when the build lacks the module)?
 * false for a plan compiled here, a file before version 4 (nothing recorded), a CPU or a
 * generated kernel. */
bool npubin_kernel_stale(const Plan *p, int k);
/* Checks a plan read from `path` against this build's shaders, once, where it is loaded to run
 * or to describe. Stale kernels: one diagnostic naming the first (index, shader, module, both
 * fingerprints), how many more, and the recompile that fixes it; an error and ST_BAD_INPUT when
 * strict (the file must not run), else a warning and ST_OK (describe shows the file). A file
 * before version 4 with built-in NPU kernels: one warning that they cannot be checked, ST_OK. */
Status npubin_verify(const Plan *p, const char *path, bool strict, DiagList *d);
/* Checks the invariants the reader enforces (indices in range, counts within limits, enums
 * valid); `file` (may be NULL) names the plan in messages, `st` is the status reported. */
Status npubin_check_plan(const Plan *p, const char *file, Status st, DiagList *d);

#endif
