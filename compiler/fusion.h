/* Fusion patterns: a registry in priority order, each a trigger op plus a match function that
 * collects the member nodes of one instance or says why not ("why not fused"). The fuse pass
 * (pass_fuse.c) walks the graph, records instances with stable ids (F1, F2, ... in discovery
 * order) and near misses, and applies the user's switches. */
#ifndef NPU_FUSION_H
#define NPU_FUSION_H

#include <stdbool.h>
#include "compiler/graph.h"
#include "shaders/abi.h" /* ATTN_MAX_D, the attention patterns' largest head dim; GEMV_MAX_ROWS */

#define FUSE_MAX_NODES 48
/* The longest walk of member views, permutes and selects making one of the attention's q, K and
 * V (fuse_attention.c select_sources, lower_attention.c). */
#define FUSE_ATTN_CHAIN 16
/* The pattern name of the fuse-elementwise pass's instances (generated kernels). */
#define FUSE_ELEMENTWISE "elementwise"

typedef struct FuseMatch {
    int nodes[FUSE_MAX_NODES];
    int n;
    const char *variant; /* pattern name as reported: "conv_add_relu", "linear_silu", ... */
    /* Parallel members (linear_concat): each member chain's output leaves the group as a view
     * of one combined output, and the kernel runs at the first member (fuse_concat.c). */
    bool parts;
    /* Completes the instance once recorded and switched on or off (linear_concat, linear_glu:
     * fuse_concat.c), not when it fell back; NULL: nothing to do. */
    Status (*finish)(Graph *g, int f);
} FuseMatch;

/* Returns true and fills m on a match rooted at `node`. On a near miss returns false with *why
 * set (NULL when the trigger simply does not start this pattern). `taken[i]` marks nodes already
 * in an instance. */
typedef bool (*FuseMatchFn)(const Graph *g, int node, const bool *taken, FuseMatch *m,
                            const char **why);

typedef struct FusePattern {
    const char *name;
    OpId trigger;
    FuseMatchFn match;
    const char *doc;
    /* A pattern that extends another (rope_cache: rope + the index_copy storing its output;
     * attention: masked_softmax inside the whole chain; linear_glu: silu_mul and the two linears
     * computing its operands): switched off while that pattern's form
     * stays selected, an instance falls back to it (the other pattern's match among its members,
     * same id; the remaining members are left to later patterns and passes), so switching the
     * extension off gives the kernels of the plan without it. Its name also selects the
     * extension's instances (`--no-fuse rope` switches rope_cache off too). NULL: no fallback. */
    const char *fallback;
    KernelKind kernel; /* the kind of kernel its instances run (shaders/kernels.def) */
} FusePattern;

extern const FusePattern fuse_patterns[];
extern const int fuse_pattern_count;

/* Does `spec` (a --no-fuse argument) select fusion f? Pattern names, variants, ids and "all". */
bool fuse_selected(const char *spec, const Fusion *f);

/* The operands of rope instance f (rope, or rope_cache: the chain's members), read off its member
 * nodes: x, the rotated tensor (the slices' input), cos (x*cos's other operand), sin (the cat's
 * multiplier), and tp, the member transpose or permute making x (its input is what a kernel
 * reads), -1 when none. False when the members do not say. */
bool fuse_rope_operands(const Graph *g, const Fusion *f, int *x, int *cos, int *sin, int *tp);

/* conv_scale: mul node `mul` is x * s with s one value per (image, channel) of x ([N or 1, C, 1,
 * 1], [C, 1, 1]; x 3-D or 4-D), all of one float dtype: true with the tensors in *x and *s. False
 * otherwise, *why (when not NULL) saying why not where the product broadcasts an operand. The
 * conv_scale pattern and the conv kernel's lowering (lower_conv2d.c) read the operands so. */
bool fuse_scale_operands(const Graph *g, const Node *mul, int *x, int *s, const char **why);

/* linear_concat (fuse_concat.c). Parts start at multiples of this many elements of the combined
 * output, so every part's binding offset is a multiple of 64 bytes in 16-bit storage (and of
 * 128 in f32): minStorageBufferOffsetAlignment is at most 64 on the devices we run. */
#define CONCAT_ALIGN 32
#define CONCAT_MAX_PARTS RECIPE_MAX_SRC
/* One part of an instance: its linear node, the tensor its consumers read (the activation's
 * output when one is fused) and its first column in the combined output. */
typedef struct ConcatPart {
    int linear, out;
    int64_t start, n;
} ConcatPart;
/* The parts of linear_concat instance f in column order; returns their count. */
int fuse_concat_parts(const Graph *g, const Fusion *f, ConcatPart *parts, int max);
/* Completes instance f (just recorded by the fuse pass): the combined output tensor (f->out),
 * the anchor (the first member: every input is ready there, and the parts' readers may follow
 * any member), and when enabled the concatenated weight and bias as recipes and the kernel's
 * inputs (f->kin). */
Status fuse_concat_finish(Graph *g, int f);

/* linear_glu (fuse_concat.c): silu(x Wg^T) * (x Wu^T) as one matmul over Wg and Wu interleaved
 * in runs of GLU_BLOCK rows (a concat recipe with that block), its epilogue pairing column c
 * (c % 32 < 16) with c + 16 (shaders/matmul_glu.glsl). F, the rows of each weight, is a
 * multiple of GLU_BLOCK. */
#define GLU_BLOCK 16
/* The gate and up linears of linear_glu instance f (the silu reads the gate's output). */
void fuse_glu_linears(const Graph *g, const Fusion *f, int *gate, int *up);
/* Completes an enabled instance: the interleaved weight and bias (recipes) as its kernel's
 * inputs x, W, [bias] (f->kin). */
Status fuse_glu_finish(Graph *g, int f);

/* Prologue folds (fuse_fold.c): an rmsnorm or silu_mul instance computed inside the GEMVs that
 * read its output. The fold's pattern ("rmsnorm_linear", "silu_mul_linear") when `base` is an
 * instance a fold may take, else NULL; *why is NULL on a match, else why not. */
const char *fuse_fold_match(const Graph *g, const Fusion *base, const char **why);
/* The two tensors a fold reads for each element of the GEMV's A: rmsnorm x and gamma (with *eps),
 * silu_mul gate (the silu's input) and up. False when the members do not say. */
bool fuse_fold_operands(const Graph *g, const Fusion *base, int *a, int *b, double *eps);
/* The folded instance whose output is tensor t (fold and base enabled), or -1. */
int fuse_folded_at(const Graph *g, int t);
/* The fold instance of base instance `base`, or -1. */
int fuse_fold_of(const Graph *g, int base);

/* Merges (fuse_merge.c): one kernel running the work of several instances, recorded after the
 * walk and the folds. decode_attention_cache: a decode step's attention (a decode_attention
 * instance, one query row) whose K and V caches are updated at one position right before it by
 * index_copy, the new K row made by a rope (or not), q made by a rope (or not), runs all of it
 * as one kernel that writes the two cache rows itself (shaders/decode_attention.glsl
 * ATTN_CACHE). Its parts: */
#define FUSE_MERGE_ATTN "decode_attention_cache"
typedef struct MergeParts {
    int d;        /* the decode_attention instance */
    int q, k;     /* the rope instances making q and the new K row (rope or rope_cache), -1: none */
    int ick, icv; /* the index_copy nodes updating the K and V caches */
} MergeParts;
/* The parts of a merge around instance d (every instance may be one's attention): true with *p
 * filled when d is a decode_attention whose caches are updated right before it and the merge
 * can take the lot; false otherwise, *why saying why not when it is such an attention (NULL when
 * it is none: the caches are plain inputs, or d is no decode_attention). */
bool fuse_merge_parts(const Graph *g, int d, MergeParts *p, const char **why);
/* The parts of merge instance m as recorded (Fusion.merges: the attention first; xout: the K
 * and V caches); false when m is no decode_attention_cache. */
bool fuse_merge_of(const Graph *g, const Fusion *m, MergeParts *p);
/* The merge's member nodes (every node of its parts' instances and its plain index_copy nodes,
 * in graph order) into nodes[0..max); returns their count, -1 when more than max. */
int fuse_merge_nodes(const Graph *g, const MergeParts *p, int *nodes, int max);

#endif
