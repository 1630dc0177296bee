/* The compiler pipeline: one table of passes run in order over a Graph, a snapshot after each
 * (the graph, what changed, the wall time). Snapshots are what the explorer steps through and
 * what --dump-after prints. Passes mutate the graph in place; the pipeline copies it after each. */
#ifndef NPU_PASS_H
#define NPU_PASS_H

#include <stdbool.h>
#include "common/arena.h"
#include "common/diag.h"
#include "compiler/graph.h"
#include "compiler/model_src.h"
#include "compiler/tuning.h"

#define COMPILE_MAX_LIST 512
/* pack-inputs packs a float input on the device from this many elements (pass_pack.c): below
 * it, the host's cast (~1-2 ns per element) costs less than a dispatch and a barrier level. */
#define PACK_INPUTS_MIN 16384

typedef struct CompileOptions {
    int channel_tile;     /* NPU conv-family channel padding (32) */
    DType compute;        /* storage dtype of float tensors on the NPU (F16, BF16, F32) */
    int tier;             /* PlanTier the kernels are chosen for (TIER_PORTABLE) */
    bool cm_emulate;      /* tests: tier nv-coopmat's kernel choice, but its tensor-core
                           * modules replaced by portable emulations (stems *_cmx); the
                           * plan is then portable (docs/kernels.md "Tiers") */
    bool cpu_device;      /* compiled for a CPU Vulkan device (lavapipe; the runner knows):
                           * portable convs take the direct kernel, 2.3x faster there and
                           * 20x slower on a GPU (docs/kernels.md "Tiers") */
    bool cm_force;        /* tests: on nv-coopmat, the tensor-core conv2d for every f16
                           * conv it can take, not only where it was measured faster */
    int arena_align;      /* byte alignment of arena offsets (256) */
    bool no_reuse;        /* plan-memory: no liveness reuse (every output readable) */
    int64_t pack_min;     /* pack-inputs: the fewest elements of an input it packs on
                           * the device (0: PACK_INPUTS_MIN; tests take 1) */
    const char *break_id; /* --break: corrupt this fusion instance's kernel on purpose */
    const char *no_fuse[COMPILE_MAX_LIST]; /* pattern names, instance ids, or "all", in order;
                                            * "+SEL" switches SEL back on */
    int n_no_fuse;
    const char *cpu_ops[COMPILE_MAX_LIST]; /* ATen names forced onto the CPU (debug) */
    int n_cpu_ops;
    const char *disable[COMPILE_MAX_LIST]; /* passes switched off (can_disable only) */
    int n_disable;
    const atomic_bool *cancel; /* polled between passes (NULL: never) */
    const char *kernel_cache;  /* generated kernels' SPIR-V cache directory: NULL the
                                * default ($XDG_CACHE_HOME/npu-explore/kernels), "none" off */
    const char *ir_text;       /* the IR JSON the graph came from, embedded in the plan so a
                                * .npubin runs without it (borrowed; NULL: none embedded) */
    size_t ir_len;
    bool ir_outlives; /* ir_text outlives the plan (pipeline_run keeps it in the
                       * Pipeline): the plan refers to it instead of a copy */
    /* An edit of the imported graph before its shape check and the passes (generate appends an
     * argmax output), NULL: none. The plan's embedded IR text does not have it. */
    Status (*edit)(Graph *g, void *ctx, DiagList *d);
    void *edit_ctx;
    /* Lowering's tuning knobs (tuning.h; zeroed: the defaults). Filled by the caller: the CLI
     * applies the NPU_* environment, then --tune; tests set it directly. */
    Tuning tuning;
    /* Per-kernel tuning (compiler/tune_cache.h): the entries of device `tuned_device` in
     * `tuned` give the kernels whose key they name their knob values (knobs set in `tuning`
     * still win). NULL (either): none. Borrowed. */
    const struct TuneCache *tuned;
    const char *tuned_device;
} CompileOptions;

typedef struct PassCtx {
    const CompileOptions *opt;
    DiagList *d;
    Arena *scratch; /* reset after each pass */
} PassCtx;

typedef Status (*PassFn)(Graph *g, PassCtx *c);

typedef struct Pass {
    const char *name;
    const char *summary;
    bool can_disable;
    PassFn fn; /* NULL for import (done by the pipeline itself) */
} Pass;

extern const Pass pass_table[];
extern const int pass_count;
int pass_find(const char *name); /* index or -1; accepts a number too */
/* The passes' names in order, ", "-separated (disable_only: those --disable takes), into buf. */
const char *pass_names(char *buf, size_t n, bool disable_only);

typedef enum ChangeKind { CH_ADDED, CH_REMOVED, CH_REWRITTEN } ChangeKind;
typedef struct Change {
    ChangeKind kind;
    int node;
    const char *what; /* "fused into F3", "placed on cpu: ...", "inputs rewired" */
} Change;

typedef struct Snapshot {
    const char *pass;
    Graph *g; /* owned */
    Change *changes;
    int nchanges;
    int added, removed, rewritten;
    double ms;
    bool skipped; /* disabled by the user */
} Snapshot;

typedef struct Pipeline {
    Snapshot *snaps; /* [pass_count] once complete */
    int nsnaps;
    Graph *g;          /* the final graph (== snaps[nsnaps-1].g) */
    struct Plan *plan; /* made by the lower step */
    double total_ms;
    ModelText src; /* pipeline_run's IR text, which the plan refers to */
} Pipeline;

void compile_defaults(CompileOptions *o);
/* Imports `path` (an IR JSON, or the IR a .npubin carries) and runs every pass, keeping a
 * snapshot after each; the plan embeds the IR text. On failure the snapshots made so far stay
 * (the explorer shows where it stopped) and the error is in d. */
Status pipeline_run(const char *path, const CompileOptions *o, Pipeline *p, DiagList *d);
/* Same from an already imported graph (ownership moves to the pipeline). */
Status pipeline_run_graph(Graph *g, const CompileOptions *o, Pipeline *p, DiagList *d);
void pipeline_free(Pipeline *p);

/* The passes (one file each). */
Status pass_canonicalize(Graph *g, PassCtx *c);
/* canonicalize's part (canon_sdpa.c): sdpa nodes written out as the attention chain (not those
 * o forces onto the CPU; o may be NULL). */
Status canon_sdpa(Graph *g, const CompileOptions *o);
Status pass_fold_constants(Graph *g, PassCtx *c);
/* fold-constants' analysis: cst[t] (one per tensor) whether tensor t depends on weights and
 * constants only (no graph input, no model state, no random or asserting node). */
void fold_const_tensors(const Graph *g, bool *cst);
/* fold-constants' part (fold_terms.c): each chain of adds of constants and reshapes ending at a
 * softmax's input rewritten as one add of their sum (cst: fold_const_tensors); *done counts the
 * chains rewritten. */
Status fold_score_terms(Graph *g, const bool *cst, int *done);
Status pass_fold_batchnorm(Graph *g, PassCtx *c);
Status pass_partition(Graph *g, PassCtx *c);
Status pass_fuse(Graph *g, PassCtx *c);
Status pass_fuse_elementwise(Graph *g, PassCtx *c);
Status pass_layout(Graph *g, PassCtx *c);
Status pass_pack_inputs(Graph *g, PassCtx *c);
Status pass_cat_in_place(Graph *g, PassCtx *c);
Status pass_views(Graph *g, PassCtx *c);
Status pass_plan_memory(Graph *g, PassCtx *c);

/* Graph editing helpers for passes (pass_util.c). */
/* Replaces every use of tensor `from` by `to` in live nodes (and graph outputs). */
void graph_replace_uses(Graph *g, int from, int to);
/* Inserts a node before position `pos` (execution order), shifting later nodes and remapping
 * every node index held by the graph (fusions, near misses, fold recipes, links). Returns the new
 * node's index
 * (== pos) or -1 on allocation failure. */
int graph_insert_node(Graph *g, int pos, const char *name, OpId op, const int *in, int nin,
                      const int *out, int nout);
/* Moves the nodes with first[i] ahead of the others, each side in its order, and remaps every
 * node index the graph holds (fusions, near misses, fold recipes, names, links). Moving a node
 * earlier must not put it before a producer it reads (callers move nodes whose producers move too).
 */
Status graph_move_first(Graph *g, const bool *first);
/* Marks node dead. */
void graph_kill(Graph *g, int node);
/* Appends a weight-like tensor (derived by a recipe). */
int graph_add_derived_weight(Graph *g, const char *name, const GTensor *like, int rank,
                             const int64_t *shape);
/* The tensors a fused group reads from outside, in member order without duplicates (at most
 * max), or the instance's own kernel inputs (Fusion.kin); returns the count. */
int fusion_inputs(const Graph *g, const Fusion *f, int *ins, int max);
/* The node whose kernel computes node i: i itself, the anchor of i's enabled fusion, or -1
 * when i runs no kernel (dead, a view aliasing its input, an op without a shader, a member of a
 * folded instance: its readers' kernels compute it). */
int graph_kernel_node(const Graph *g, int i);
/* The tensors the kernel anchored at node i reads: its fusion's inputs or its node's, with the
 * output of a folded instance (fuse_fold.c) replaced by that instance's two operands. */
int graph_kernel_inputs(const Graph *g, int i, int *ins, int max);
/* May index_copy node i write into its self's storage (pass_views.c makes its output an alias of
 * self)? Only when nothing reads that storage after the write (through any alias; the write
 * happens where its kernel runs), the storage is not a graph output of its own, it is not a
 * weight or a constant (their buffers are shared and uploaded once; a graph input is uploaded
 * before every run), and index and source do not live in it. The CPU neither produces nor reads
 * it, so no partition transfer has to see the write. */
bool graph_index_copy_in_place(const Graph *g, int i);
/* The element offset of each input of cat node n inside its output, when its slices are
 * contiguous runs of it (every dim before the cat dim of size 1, inputs of its rank); false
 * otherwise. off has room for n->nin. */
bool graph_cat_offsets(const Graph *g, const Node *n, int64_t *off);
/* Does cat node i run no kernel: is every input already a view of its output's storage at the
 * offset the cat would copy it to (pass_cat.c)? */
bool graph_cat_in_place(const Graph *g, int i);
/* Partition indices: runs of one placement over the live nodes in graph order (g->nparts). */
void graph_number_parts(Graph *g);
/* Moves the host-only nodes (on the CPU, reading only graph inputs, weights, constants and other
 * such nodes' outputs) ahead of the rest, so they form one CPU partition before the NPU work,
 * and numbers the partitions (pass_partition.c). */
Status graph_hoist_host(Graph *g, Arena *scratch);
/* Is this ATen name listed in opt->cpu_ops? */
bool compile_forced_cpu(const CompileOptions *o, const Node *n);
/* A tensor's device storage: floats in the compute dtype, bools too (0/1, so comparisons, where
 * and masks read them as floats), other integers as int32. */
DType compile_storage(const CompileOptions *o, DType dt);
/* Tensor t's device storage: compile_storage, or f32 for a graph input that pack-inputs left in
 * its host form. */
DType compile_tensor_storage(const CompileOptions *o, const GTensor *t);

#endif
