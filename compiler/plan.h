/* The plan: the compiled program. Everything a backend needs to run a model and everything
 * `describe` shows: compute dtype, target parameters, tensors with their arena placement and
 * host<->device transforms, weight recipes, kernels (shader stem, bindings, push constants,
 * dispatch size, provenance, fusion id), partitions with transfers. Serialised as .npubin
 * (npubin.h). A Plan owns an arena holding all its strings and arrays; free with plan_free. */
#ifndef NPU_PLAN_H
#define NPU_PLAN_H

#include <stdint.h>
#include "common/arena.h"
#include "common/status.h"
#include "compiler/dtype.h"
#include "compiler/recipe.h"

/* The .npubin format: 2 views with offsets, concat recipes; 3 fold recipes; 4 kernel
 * fingerprints (1 to 3 still read, their kernels unchecked: npubin.h). */
#define PLAN_FORMAT_VERSION 4
#define PLAN_MAX_PUSH 32 /* 32-bit words: 128 bytes, lavapipe's limit */
#define PLAN_MAX_SPEC 16

typedef enum PlanTensorKind {
    PT_ACT,    /* intermediate, lives in the arena */
    PT_INPUT,  /* graph input: uploaded before each run */
    PT_OUTPUT, /* graph output: downloaded after each run (also in the arena) */
    PT_WEIGHT, /* uploaded once at load */
    PT_CONST,
    PT_SCRATCH, /* a kernel family's private device buffer (kc_scratch) that must start zeroed:
                 * the backend fills it with zeros once, at load (never poisons it), and the
                 * kernels leave it zero after every run (decode_attention's tickets) */
} PlanTensorKind;

typedef struct PlanTensor {
    const char *name;
    PlanTensorKind kind;
    DType dtype;   /* declared (logical) dtype */
    DType storage; /* on the device: the compute dtype for floats, I32 for integers */
    int rank;
    int64_t shape[NPU_MAX_RANK];
    int64_t pshape[NPU_MAX_RANK]; /* physical shape (dim 1 padded to the channel tile) */
    int padded;
    int alias_of;     /* view of another plan tensor's storage, -1 if none */
    int64_t view_off; /* a view's first element inside its base's dense storage (a part of a
                       * linear_concat output: its byte offset is view_off times the storage
                       * size), 0 otherwise */
    int64_t offset;   /* byte offset in the arena, -1 for weights (own buffers) */
    int64_t bytes;
    const char *weight_key; /* PT_WEIGHT: state_dict key or recipe output name */
} PlanTensor;

typedef enum KernelTarget { KT_NPU, KT_CPU } KernelTarget;

/* Kernel tiers: the set of kernels a plan may use, fixed at compile time (docs/kernels.md
 * "Tiers"). Portable kernels run on every Vulkan device (lavapipe in CI); nv-coopmat adds
 * tensor-core kernels (GL_NV_cooperative_matrix, f16 storage) and needs a device with
 * VK_NV_cooperative_matrix (the Vulkan backend refuses the plan elsewhere). */
typedef enum PlanTier { TIER_PORTABLE = 0, TIER_NV_COOPMAT = 1, TIER_COUNT } PlanTier;
/* The SM count the nv-coopmat tier sizes its grids for (an H100 has 132). */
#define TIER_NV_COOPMAT_SMS 132
/* "portable", "nv-coopmat" (NULL out of range). */
const char *plan_tier_name(int tier);
/* The tier of a name, -1 when unknown. */
int plan_tier_parse(const char *name);

typedef struct PlanKernel {
    const char *shader; /* shader stem ("conv2d", "binary", ...); for KT_CPU the op name */
    KernelTarget target;
    int op;         /* OpId of the node that defines the kernel (the anchor) */
    int node;       /* graph node index (anchor), for CPU kernels and provenance */
    int fusion;     /* index into plan fusions, -1 */
    int nargs, nin; /* args[0..nin) inputs, args[nin..nargs) outputs: plan tensor ids */
    int *args;
    int npush;
    uint32_t push[PLAN_MAX_PUSH];
    int nspec;
    uint32_t spec[PLAN_MAX_SPEC];
    uint32_t groups[3]; /* dispatch size in workgroups */
    int nprov;
    const char **prov; /* IR node names this kernel computes */
    int part;          /* partition index */
    int level;         /* dependency level: kernels of one level need no barrier between them */
    /* The kernel's tuning key (compiler/tune_cache.h, kc_tune_key) when its kind has knobs
     * `tune` searches, else NULL; every kernel of one lowered instance has it. In memory only:
     * a .npubin does not keep it. */
    const char *tune_key;
    /* The knobs a tuning-cache entry set for it, "cm.target=64" (the instance's kernels all
     * have it); NULL: none. Kept in a .npubin, shown by describe. */
    const char *tuned;
    /* The fingerprint of the embedded SPIR-V module lowering shaped this kernel's push words,
     * spec constants and grid for (compiler/shader_fp.h); 0: none (a CPU kernel, a generated
     * one, whose module the plan carries, a module the build lacked, a file before format 4).
     * Kept in a .npubin and checked against the reading build's (npubin_verify). */
    uint64_t fingerprint;
} PlanKernel;

typedef struct PlanFusion {
    const char *id, *pattern;
    int enabled;
    int kernel; /* kernel index computing it, -1 when switched off */
    int nnodes;
    const char **nodes;
} PlanFusion;

typedef struct PlanPart {
    KernelTarget target;
    int first_kernel, nkernels;
    int nin, nout;
    /* in: the transfers into the partition, each tensor once, at the first partition of this
     * target that reads it: for a CPU partition the NPU tensors its kernels read (device to
     * host), for an NPU partition the storage (base) of CPU-made tensors its kernels read (host
     * to device). out: unused (0). */
    int *in, *out;
} PlanPart;

/* A kernel module generated at compile time (compiler/codegen/codegen.h): the kernels whose shader
 * is `name` run it. The runtime needs no compiler: the SPIR-V travels in the plan (and .npubin). */
typedef struct PlanModule {
    const char *name;      /* "gen_3fa9c2e1d4b5": from the hash of the source it compiles */
    const char *source;    /* the GLSL (describe --source, the explorer) */
    const uint32_t *spirv; /* SPIR-V words, host byte order */
    int64_t nwords;
} PlanModule;
/* What transfer part->in[j] does to the bytes: a device read casts the storage dtype back to
 * the reference's (f16 -> f32, i32 -> i64) and depads; an upload the other way round. */
typedef struct PlanTransfer {
    int tensor;
    bool to_cpu;          /* NPU -> CPU (a device read); else CPU -> NPU (an upload) */
    DType from, to;       /* element types before and after (equal: no cast) */
    bool relayout;        /* channel padding removed (to_cpu) or added by the host */
    int depad_kernel;     /* the NPU depad kernel that made the dense copy it moves, -1 */
    int64_t device_bytes; /* bytes on the device side (physical shape, storage dtype) */
} PlanTransfer;

typedef struct PlanRecipe {
    RecipeKind kind;
    int out_w, out_b, conv_w, conv_b, gamma, beta, mean, var; /* plan tensor ids, -1 = none */
    double eps;
    int nsrc, src[RECIPE_MAX_SRC]; /* concat: out_w = src[0] | src[1] | ... along dim 0 */
    int block; /* concat: interleaved in runs of this many rows per source (0: whole sources) */
    /* fold: the IR nodes computing out_w (names: the IR of a .npubin has them, and the
     * identities canonicalize removed besides, app/runner.c) */
    const char **nodes;
    int nnodes;
} PlanRecipe;

typedef struct Plan {
    Arena arena;
    const char *model_name;
    const char *source; /* the IR file it was compiled from */
    DType compute;      /* F16, BF16 or F32 */
    int tier;           /* PlanTier: the kernels it may use and the devices it runs on */
    int channel_tile;
    /* The tuning knobs that differ from their defaults (tuning.h), "cm.tile=128 attn.g=2", and
     * the NPU_* variables that set any of them, "NPU_CM_TILE"; NULL: none. */
    const char *tuning, *tuning_env;
    int ntensors, nkernels, nparts, nfusions, nrecipes;
    PlanTensor *tensors;
    PlanKernel *kernels;
    PlanPart *parts;
    PlanFusion *fusions;
    PlanRecipe *recipes;
    int ninputs, noutputs, nweights;
    int *inputs, *outputs, *weights; /* plan tensor ids */
    /* Model state (Graph.state_in/state_out): input state_in[i] (one of inputs) holds the state
     * a run starts from, output state_out[i] (one of outputs) the state it ends with; the same
     * storage when the run updates the state in place (plan_base of the output is the input).
     * Plan tensor ids; nstates 0 for a model without state. */
    int nstates;
    int *state_in, *state_out;
    int64_t arena_bytes; /* planned arena size */
    int64_t naive_bytes; /* one buffer per tensor */
    int nlevels;
    /* CPU partitions run IR nodes on the CPU reference: the IR they came from is embedded so a
     * .npubin runs without the original file (NULL when every kernel runs on the NPU). */
    const char *ir_json;
    uint64_t ir_json_len;
    PlanModule *modules; /* generated kernels' modules, by name */
    int nmodules, cap_modules;
    int file_version; /* the format version of the .npubin it was read from; 0: compiled here */
} Plan;

Plan *plan_new(void);
/* The lowest format version that holds p (npubin.h): 4 with a kernel fingerprint (a plan with
 * a built-in NPU kernel), else 3 with a fold recipe, else 2. */
int plan_format_version(const Plan *p);
/* The tensor named `name`, -1 when the plan has none. */
int plan_find_tensor(const Plan *p, const char *name);
void plan_free(Plan *p);
/* The tensor whose storage plan tensor t shares (t itself when it is no view). */
int plan_base(const Plan *p, int t);
/* The index i of the model state whose input (state_in[i]) is plan tensor t, -1 when t is none. */
int plan_state_of(const Plan *p, int t);
/* Gives every tensor that owns arena bytes a range of its own, aligned to `align` (no liveness
 * reuse, as CompileOptions.no_reuse would have planned it): the same kernels, each output
 * readable after a run (per-kernel errors of a compiled .npubin). Views follow their base. */
void plan_spread_arena(Plan *p, int64_t align);
/* Bytes of t on the device: physical element count times the storage size, rounded up to 4. */
uint64_t plan_device_bytes(const PlanTensor *t);
/* Where view t starts inside its base's storage, in bytes. */
uint64_t plan_view_bytes(const PlanTensor *t);
/* Does the device need tensor t's storage? Everything in the arena, and a tensor outside it
 * (weights, constants, scratch) only when an NPU kernel binds it or a view of it: a weight
 * read only by the CPU or only as a recipe's source (a batch-norm fold's, the parts of a
 * concatenated weight) stays on the host. */
bool plan_on_device(const Plan *p, int t);
/* Does kernel k run a module of the build (an NPU kernel whose shader is no module p carries)? */
bool plan_kernel_builtin(const Plan *p, const PlanKernel *k);
/* The generated module called name, or NULL. */
const PlanModule *plan_find_module(const Plan *p, const char *name);
/* Adds a module (name, source and words copied into the plan's arena) unless one of that name
 * is there; ST_NOMEM on allocation failure. */
Status plan_add_module(Plan *p, const char *name, const char *source, const uint32_t *words,
                       int64_t nwords);
/* Transfer j of partition part (0 <= j < parts[part].nin). */
PlanTransfer plan_transfer(const Plan *p, int part, int j);
/* What the transfer does, "f16->f32 depad" ("no cast" when the types agree; "pad"/"depad" when
 * the channel padding changes), into buf. */
const char *plan_transfer_text(const Plan *p, const PlanTransfer *x, char *buf, size_t n);
/* Transfers of the whole plan (the sum of parts[].nin). */
int plan_ntransfers(const Plan *p);

/* Structural equality (used by the .npubin round-trip test). */
int plan_equal(const Plan *a, const Plan *b);

#endif
