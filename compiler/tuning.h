/* Tuning: the knobs of compiler/tuning.def (grid targets, tiles, workgroup shapes, bench-only
 * ablations) as values in CompileOptions.tuning. Filled once per compile by the caller: the
 * defaults (a zeroed Tuning), then the NPU_* environment (tuning_from_env: bench/'s override,
 * read nowhere else), then `--tune NAME=V` (tuning_set). Lowering reads a knob through
 * kc_tune (kernels.h); the plan records the knobs that differ from the defaults (Plan.tuning,
 * Plan.tuning_env), and `describe` and the .npubin carry them. docs/tuning.md lists the table. */
#ifndef NPU_TUNING_H
#define NPU_TUNING_H

#include <stddef.h>
#include <stdint.h>
#include "common/diag.h"
#include "compiler/lower/kernel_table.h"

#define TUNE_AUTO (-1) /* the default of a knob that lowering decides by itself */

typedef enum TuneKind { TK_INT, TK_POW2, TK_MUL32 } TuneKind;
/* TU_SEARCH: `npu-explore tune` searches it per kernel and a tuning cache may set it;
 * TU_BENCH: bench only (an ablation that changes results), never searched nor cached. */
typedef enum TuneUse { TU_SEARCH, TU_BENCH } TuneUse;

typedef enum TuneId {
#define X(id, name, env, pos, lo, hi, kind, dflt, fam, use, why) TUNE_##id,
#include "compiler/tuning.def"
#undef X
    TUNE_COUNT
} TuneId;

typedef struct TuneInfo {
    const char *name; /* "conv.target" */
    const char *env;  /* the bench/ override, "NPU_CONV_TARGET" */
    int pos;          /* place in env's comma-separated tuple */
    int64_t lo, hi;
    TuneKind kind;
    int64_t dflt;      /* TUNE_AUTO: lowering's own choice */
    KernelKind family; /* the kind whose lowering reads it */
    TuneUse use;
    const char *why;
} TuneInfo;
extern const TuneInfo tune_info[TUNE_COUNT];

/* A set of knobs: bit i is TuneId i. */
typedef uint64_t TuneMask;
#define TUNE_BIT(i) ((TuneMask)1 << (i))

/* A zeroed Tuning has every knob at its default. */
typedef struct Tuning {
    int64_t v[TUNE_COUNT];
    TuneMask set; /* bit i: knob i was given a value */
    TuneMask env; /* bit i: ... by its environment variable */
} Tuning;
_Static_assert(TUNE_COUNT <= 64, "Tuning's bit masks hold 64 knobs");

/* The knob's value: the one given, else its default (TUNE_AUTO for lowering's own choice). */
int64_t tuning_get(const Tuning *t, TuneId id);
/* The knob called name, or -1. */
int tuning_find(const char *name);
/* "NAME=V" (V decimal or 0x hex, or "auto" for the default): an unknown name or a value
 * outside the knob's range is an error naming the knob and its range. */
Status tuning_set(Tuning *t, const char *assign, DiagList *d);
/* Applies the NPU_* variables that are set (a tuple variable needs all its parts); a bad value
 * is an error naming the variable, the knob and its range. */
Status tuning_from_env(Tuning *t, DiagList *d);
/* The knobs that differ from their defaults, "cm.tile=128 gemv.wg=64" (empty: none), and the
 * environment variables that set any of them, "NPU_CM_TILE NPU_GEMV", into buf (truncated to n). */
void tuning_format(const Tuning *t, char *buf, size_t n);
void tuning_format_env(const Tuning *t, char *buf, size_t n);
/* How many knobs share knob id's environment variable (a tuple's length; 1 for a scalar). */
int tuning_env_parts(TuneId id);
/* The allowed values of knob id, "1..65536", "a power of two in 64..128, or auto", into buf. */
const char *tuning_range(TuneId id, char *buf, size_t n);
/* The values `tune` tries for knob id, ascending, at most max into v (returns the count): every
 * value of a range of at most 17, else the powers of two in it (a multiple of 32: 32 and 96
 * times a power of two) and its low end, with its numeric default; a TU_BENCH knob's single
 * bits (tests force one into a search). TUNE_AUTO, the default of an auto knob, is not among
 * them: the search starts from it. */
int tuning_candidates(TuneId id, int64_t *v, int max);
/* Does knob id shape kernels of this kind (its family's, or a kind lowered as its family with
 * more work: attention_cache as decode_attention)? */
bool tuning_knob_shapes(TuneId id, KernelKind kind);
/* Does some knob of use TU_SEARCH shape kernels of this kind? */
bool tuning_kind_searchable(KernelKind kind);
/* Knob assignments "cm.tile=128 cm.target=64" (blank-separated, as tuning_format writes them)
 * into t; an unknown knob or a bad value is an error as tuning_set's. */
Status tuning_parse_list(Tuning *t, const char *list, DiagList *d);
/* The knobs set in t, as tuning_format prints them but every set one, even at its default. */
void tuning_format_set(const Tuning *t, char *buf, size_t n);

#endif
