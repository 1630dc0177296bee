/* Kernel lowering: how one plan kernel's parameters are computed from the graph. The `lower`
 * step creates a PlanKernel per fused instance or NPU node (a kernel kind, bindings = plan tensor
 * ids: inputs then the output) and then calls the family function of its kind (the KIND rows of
 * shaders/kernels.def), which fills the push-constant words, the specialization constants and
 * the dispatch grid, may reorder the inputs, and picks the kernel by its key (kc_pick: the
 * table's row, so its stem). The row's shader reads exactly those words: docs/kernels.md is the
 * contract between the two sides.
 *
 * A .npubin keeps the words, so the runtime runs a plan without the graph and computes nothing
 * about semantics itself. Called only by lower.c and by the family files lower_*.c. */
#ifndef NPU_KERNELS_H
#define NPU_KERNELS_H

#include "common/diag.h"
#include "compiler/graph.h"
#include "compiler/lower/kernel_table.h"
#include "compiler/plan.h"
#include "shaders/abi.h"
#include "compiler/tuning.h"

#include <stddef.h>
#include <stdint.h> /* the push structs' fields (shaders/abi.h) */

/* What a family function may look at. */
typedef struct KernelCtx {
    const Graph *g;       /* the final (laid-out, planned) graph */
    const Plan *p;        /* its tensors are built; p->tensors[k->args[i]] */
    const Node *anchor;   /* the node that defines the kernel (a fusion's last member) */
    const Fusion *fusion; /* the fused instance, NULL for a single node */
    DiagList *d;
    /* The same plan, writable, and the capacity of its tensor and kernel arrays: only for
     * kc_scratch and kc_append (a family that needs more than one dispatch). */
    Plan *grow;
    int max_tensors, max_kernels;
    const struct CompileOptions *opt; /* the kernel cache and tuning; NULL: the defaults */
    KernelKind kind;                  /* the kind lowering asks for (ops.def, the fusion pattern) */
    /* The tier kernels are chosen for (PlanTier; the plan's, except under cm_emulate), and
     * whether its tensor-core stems are replaced by their portable emulations (`STEM` ->
     * the `_cmx` stems: tests only, CompileOptions.cm_emulate). */
    int tier;
    bool cm_emulate;
    bool cm_force;   /* tests: tensor cores for every conv the kernel can take (CompileOptions) */
    bool cpu_device; /* the plan is compiled for a CPU device (CompileOptions) */
    /* The knobs this kernel lowers with (opt's tuning with its tuning-cache entry applied:
     * tune_apply); NULL: opt's tuning. */
    const Tuning *tuning;
} KernelCtx;

typedef Status (*KernelLowerFn)(const KernelCtx *c, PlanKernel *k);

/* Fills k from the family function of c->kind (the table's KIND rows), k's stem first the
 * kind's base kernel (KI_BASE, no flags) where the table has one. A kind with no family keeps the
 * generic one-invocation-per-output-element grid and no parameters (the Vulkan backend then
 * refuses it by name). Errors name the node. */
Status kernel_lower(const KernelCtx *c, PlanKernel *k);
/* The family function of a kind (shaders/kernels.def), NULL for none. */
KernelLowerFn kernel_family(KernelKind kind);
/* Is a family registered for this stem (a row's, or a kind's name)? */
bool kernel_has_family(const char *stem);

/* ---- helpers for family functions (kernels.c) -------------------------------------------- */

/* The plan tensor bound at argument i (inputs first, then the output). */
const PlanTensor *kc_arg(const PlanKernel *k, const Plan *p, int i);
/* The plan tensor of the kernel's output (the last argument). */
const PlanTensor *kc_out(const PlanKernel *k, const Plan *p);
/* The member of the fused group with op `op` (the first in member order), or NULL. For a single
 * node: the anchor if its op matches. */
const Node *kc_member(const KernelCtx *c, OpId op);
/* Is graph node `node` a member of the kernel's fusion instance (false without one)? */
bool kc_is_member(const KernelCtx *c, int node);
/* The kernel input bound to graph tensor t (plan tensors keep the graph's names), or -1. */
int kc_arg_of(const KernelCtx *c, const PlanKernel *k, int t);
/* Strides of transpose/permute node tp's output (rank r, read as `shape`) from its input y's
 * physical strides: st[d] = stride of y's dim perm[d]. False if y's rank is not r, perm is bad
 * or the permuted y is not `shape` (a broadcast would read past y). */
bool kc_permuted_strides(const PlanTensor *y, const Node *tp, int r, const int64_t *shape,
                         int64_t *st);
/* Physical row-major strides in elements (from pshape: padded channels count). */
void kc_strides(const PlanTensor *t, int64_t *strides);
/* Logical element count. */
int64_t kc_numel(const PlanTensor *t);
/* The byte offset at which the backend binds t (runtime/vulkan/vk_backend.c): its base's arena
 * offset (0 for an own buffer) plus a view's own offset (a linear_concat part, a split chunk). */
int64_t kc_binding_offset(const Plan *p, const PlanTensor *t);
/* The push blocks of shaders/abi.h as C structs: a family fills one by field name and pushes it
 * whole (kc_push_block); the shader declares its block from the same list (PUSH_BLOCK).
 * PUSH_STRUCT(Name, LIST): the struct of LIST's words, asserted to be LIST_WORDS words and
 * within PLAN_MAX_PUSH. */
#define PUSH_STRUCT(Name, LIST)                                                                    \
    typedef struct Name {                                                                          \
        LIST(PUSH_FIELD)                                                                           \
    } Name;                                                                                        \
    _Static_assert(sizeof(Name) == 4 * LIST##_WORDS && LIST##_WORDS <= PLAN_MAX_PUSH,              \
                   #Name ": " #LIST "_WORDS words")
PUSH_STRUCT(ConvPush, CONV2D_PUSH);
PUSH_STRUCT(DwPush, DWCONV_PUSH);
PUSH_STRUCT(MatmulPush, MATMUL_PUSH);
PUSH_STRUCT(AttnPush, ATTN_PUSH);
PUSH_STRUCT(PoolPush, POOL2D_PUSH);
PUSH_STRUCT(FlashPush, FLASH_PUSH);
PUSH_STRUCT(CatPush, CAT_PUSH);
PUSH_STRUCT(UnaryPush, UNARY_PUSH);
PUSH_STRUCT(BinaryPush, BINARY_PUSH);
PUSH_STRUCT(WherePush, WHERE_PUSH);
PUSH_STRUCT(GatherPush, GATHER_PUSH);
PUSH_STRUCT(WindowPush, WINDOW_PUSH);
PUSH_STRUCT(EmbeddingPush, EMBEDDING_PUSH);
PUSH_STRUCT(IndexCopyPush, INDEX_COPY_PUSH);
PUSH_STRUCT(ReducePush, REDUCE_PUSH);
PUSH_STRUCT(ArgmaxPush, ARGMAX_PUSH);
PUSH_STRUCT(SoftmaxPush, SOFTMAX_PUSH);
PUSH_STRUCT(NormRowPush, NORM_ROW_PUSH);
PUSH_STRUCT(LnTPush, LN_T_PUSH);
PUSH_STRUCT(BatchnormPush, BATCHNORM_PUSH);
PUSH_STRUCT(RopePush, ROPE_PUSH);
PUSH_STRUCT(CorruptPush, CORRUPT_PUSH);
/* the tensor-core matmul's, the conv matrix-vector product's, rope_cache's and attention_cache's:
 * the base family's words, then their own */
typedef struct MatmulCmPush {
    MatmulPush mm;
    MATMUL_CM_TAIL(PUSH_FIELD)
} MatmulCmPush;
_Static_assert(sizeof(MatmulCmPush) == 4 * MATMUL_CM_PUSH_WORDS &&
                   MATMUL_CM_PUSH_WORDS <= PLAN_MAX_PUSH,
               "MatmulCmPush: MATMUL_CM_PUSH_WORDS words");
typedef struct MatmulConvPush {
    MatmulPush mm;
    MATMUL_CONV_TAIL(PUSH_FIELD)
} MatmulConvPush;
_Static_assert(sizeof(MatmulConvPush) == 4 * MATMUL_CONV_PUSH_WORDS &&
                   MATMUL_CONV_PUSH_WORDS <= PLAN_MAX_PUSH,
               "MatmulConvPush: MATMUL_CONV_PUSH_WORDS words");
typedef struct RopeCachePush {
    RopePush rope;
    ROPE_CACHE_TAIL(PUSH_FIELD)
} RopeCachePush;
_Static_assert(sizeof(RopeCachePush) == 4 * ROPE_CACHE_PUSH_WORDS &&
                   ROPE_CACHE_PUSH_WORDS <= PLAN_MAX_PUSH,
               "RopeCachePush: ROPE_CACHE_PUSH_WORDS words");
typedef struct AttnCachePush {
    AttnPush attn;
    ATTN_CACHE_TAIL(PUSH_FIELD)
} AttnCachePush;
_Static_assert(sizeof(AttnCachePush) == 4 * ATTN_CACHE_PUSH_WORDS &&
                   ATTN_CACHE_PUSH_WORDS <= PLAN_MAX_PUSH,
               "AttnCachePush: ATTN_CACHE_PUSH_WORDS words");
/* A push block's values: kc_word(&w, v) is v as a 32-bit word and remembers the first v outside
 * int32, which kc_words_ok then refuses with an error naming the node and the value. */
typedef struct KcWords {
    bool bad;
    int64_t first_bad;
} KcWords;
int32_t kc_word(KcWords *w, int64_t v);
/* kc_word of each of v[0..n) into the 32-bit words at dst (an array field of a push block). */
void kc_word_n(KcWords *w, void *dst, const int64_t *v, int n);
/* An array field filled from v, as many words as the field has. */
#define KC_WORDS(w, field, v)                                                                      \
    kc_word_n((w), (field), (v), (int)(sizeof(field) / sizeof((field)[0])))
Status kc_words_ok(const KernelCtx *c, const PlanKernel *k, const KcWords *w);
/* Appends a push block (a struct above; bytes a multiple of 4), the only way a family sets its
 * push words; an error naming the node past PLAN_MAX_PUSH words (nothing appended). */
Status kc_push_block(const KernelCtx *c, PlanKernel *k, const void *block, size_t bytes);
/* Appends a specialization constant (constant_id = its position; id 0 is the workgroup size). */
Status kc_spec(const KernelCtx *c, PlanKernel *k, uint32_t v);
/* Sets a grid of ceil(n / per_group) workgroups, folded into y (and z) past 65535 in x: shaders
 * linearise with npu_group_index() (shaders/index.glsl). */
void kc_grid(PlanKernel *k, int64_t n, int64_t per_group);
/* Lanes per row for row kernels: the power of two at or above len, in 1..wg. */
uint32_t kc_lanes_for(int64_t len, uint32_t wg);
/* Tuning knob id's value for this kernel (KernelCtx.tuning, else CompileOptions.tuning;
 * compiler/tuning.def): the one given, else its default, TUNE_AUTO where lowering decides by
 * itself. The only way lowering reads tuning: it never looks at the environment. */
int64_t kc_tune(const KernelCtx *c, TuneId id);
/* The kernel's tuning key into buf (false when it does not fit): what a tuning-cache entry is
 * found by. Its kind and fusion pattern (or op), the tier, every bound tensor's storage dtype
 * and physical shape (inputs -> output), and a hash of the computed nodes' ops and attributes:
 * "matmul:linear portable f16[1,64] f16[64,64] -> f16[1,64] #3fa9c2e1". Read before the family
 * function runs (it may reorder the inputs), so the same instance always has the same key. */
bool kc_tune_key(const KernelCtx *c, const PlanKernel *k, char *buf, size_t n);
/* The rows of a reduction over x's last dim into y (reduce, argmax): the outer dims right-
 * aligned in ROW_OUTER slots (leading slots of size 1, stride 0), their element strides in x
 * and y, the row count, the row length and x's stride along it. The caller has checked
 * x->rank - 1 <= ROW_OUTER. */
typedef struct KcRows {
    int64_t rows, len, step;
    int64_t shape[ROW_OUTER], xs[ROW_OUTER], ys[ROW_OUTER];
} KcRows;
KcRows kc_last_dim_rows(const PlanTensor *x, const PlanTensor *y);
/* A scratch tensor private to the kernels of this instance: dense, kind PT_ACT, offset -1 (so
 * the backend gives it its own device buffer, outside the arena and never seen by the host),
 * dtype and storage `storage` (a shader declares its binding with that type explicitly). The
 * name is the output's with `suffix` appended. Returns its plan tensor id, or -1 after reporting
 * an error. */
int kc_scratch(const KernelCtx *c, const PlanKernel *k, const char *suffix, int rank,
               const int64_t *shape, DType storage);
/* Names k's kernel: the table's row of this key (kernel_pick), the one way lowering chooses a
 * kernel. An error naming the node when the table has no such row. */
Status kc_pick(const KernelCtx *c, PlanKernel *k, KernelKey key);
/* Appends one more kernel right after k (the plan's last kernel) for the same instance: same
 * target, anchor, fusion and provenance (so profile, bisect and describe name the instance),
 * the kernel of `key`, bindings args[0..nargs) of which the first nin are inputs. The caller
 * fills its push words, spec constants and grid. Returns NULL after reporting an error. */
PlanKernel *kc_append(const KernelCtx *c, const PlanKernel *k, KernelKey key, const int *args,
                      int nin, int nargs);
/* Replaces k's bindings by args[0..nargs) (the first nin inputs), in the plan's arena: for a
 * family that binds more tensors than the graph gives it (a scratch tensor). */
Status kc_set_args(const KernelCtx *c, PlanKernel *k, const int *args, int nin, int nargs);
/* Strides of t viewed in out's shape (right-aligned, physical strides, 0 on broadcast dims), as
 * 6 dims with leading dims of size 1; false if t does not broadcast to out (lower_binary.c). */
bool kc_bcast_strides6(const PlanTensor *t, const PlanTensor *out, int64_t st[6]);
/* Tiles of the GEMM kernels (shaders/gemm_tile.glsl: implicit-GEMM conv2d, tensor-core matmul)
 * for `batch` independent M x N x K products. One workgroup per BM x BN tile and K split; a grid
 * of fewer than `target` workgroups splits K (at least KC_MIN_STEPS steps of BK per split) into
 * fp32 partials that a reduce pass adds up with the epilogue, so the few tiles of a small image
 * or a batch-1 GEMM with a long K still fill the GPU.
 * Targets are in workgroups per SM of the nv-coopmat tier's reference GPU (TIER_NV_COOPMAT_SMS,
 * an H100), chosen by measurement there (bench/NOTES.md "Tuning history"), and are the defaults
 * of the tuning knobs conv.target, conv.cm_target and cm.target (compiler/tuning.def). The
 * portable tier uses them too: the H100 is the target, and lavapipe loses little by a split.
 * The tensor-core matmul's large tile (128x128 on 256 invocations, 160 registers each on the
 * H100: one workgroup per SM) aims at 1 per SM (KC_MATMUL_TARGET_LARGE).
 * Portable (cm_tile 0, SIMT): BM 16/32/64 covering small M (a depthwise conv wastes 15 of 16 rows
 * rather than 63 of 64), BN 32/64, BK 16, 4x4 outputs per invocation. nv-coopmat (tensor cores;
 * compile-time constants in the shaders): cm_tile 64 = 64x64x32, 128 invocations = 4 subgroups
 * (conv2d_cm*: 256 = 8, set by its lowering); cm_tile 128 = 128x128x32, 256 invocations = 8
 * subgroups (the matmul_cml* stems). */
enum {
    KC_CONV_TARGET = 3 * TIER_NV_COOPMAT_SMS,
    KC_CONV_CM_TARGET = 2 * TIER_NV_COOPMAT_SMS,
    KC_MATMUL_TARGET = 4 * TIER_NV_COOPMAT_SMS,
    KC_MATMUL_TARGET_LARGE = TIER_NV_COOPMAT_SMS,
    KC_MIN_STEPS = 4,
    KC_SPLIT_TAIL_STEPS =
        2,                  /* a workgroup's epilogue (its partials out), in K steps: an estimate */
    KC_CM_TILE = 64,        /* the tensor-core tile of conv2d_cm* and matmul_cm* */
    KC_CM_TILE_LARGE = 128, /* of matmul_cml* */
    KC_CM_BK_LARGE = 64,    /* the K step of matmul_cml* on the GPU (the emulation's: 32) */
};
/* decode_attention's limits ATTN_MAX_G and ATTN_MAX_SPLIT are shaders/abi.h's: the tuning knobs
 * attn.g and attn.splits stay within them. */
typedef struct KcTile {
    int64_t bm, bn, bk, tr, tc, wg; /* tile, per-invocation tile (SIMT), workgroup size */
    int64_t mtiles, ntiles, tiles;  /* tiles over M, N, and in all (times batch) */
    int64_t nsplit, kchunk;         /* K splits of kchunk (a multiple of bk) each */
    bool cm;
} KcTile;
KcTile kc_gemm_tile(int64_t m, int64_t n, int64_t k, int64_t batch, int64_t cm_tile,
                    int64_t target);
/* The tile counts and the K split of t's tile (bm, bn, bk set) for the same product. */
void kc_gemm_split(KcTile *t, int64_t m, int64_t n, int64_t k, int64_t batch, int64_t target);
/* The same where the grid runs in waves of `slots` workgroups (a kernel with one workgroup per
 * SM): the split with the least waves x (steps per split + KC_SPLIT_TAIL_STEPS), the fewest
 * splits on a tie. 144 workgroups on 132 SMs run a second wave of 12 as long as the first: ViT's
 * qkv product (36 tiles, 24 steps) takes 3 splits of 8 steps in one wave, not 4 of 6 in two. */
void kc_gemm_split_waves(KcTile *t, int64_t m, int64_t n, int64_t k, int64_t batch, int64_t slots);

/* index_copy's geometry (lower_index_copy.c), shared by the kernels that store into a cache:
 * self and out seen as [outer, size, inner] around dim, the source as [outer, m, inner]. */
typedef struct IcGeom {
    int dim;
    int64_t size, m, inner;
    bool in_place; /* out aliases self's storage (pass_views.c): write the source rows only */
} IcGeom;
/* Checks index_copy node n's tensors (self and the int index at arguments self_arg, idx_arg,
 * the output last; the source by its shape, which may be computed in the kernel) and fills ic. */
Status kc_index_copy_geom(const KernelCtx *c, const PlanKernel *k, const Node *n, int self_arg,
                          int idx_arg, int src_rank, const int64_t *src_shape, bool src_padded,
                          IcGeom *ic);

/* An error naming the kernel's anchor node. */
Status kc_error(const KernelCtx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- the families (one file each: lower_FAMILY.c) ---------------------------------------- */
Status lower_copy(const KernelCtx *c,
                  PlanKernel *k); /* copy, transpose, expand, slice, depad, cast */
Status lower_cat(const KernelCtx *c, PlanKernel *k);
Status lower_embedding(const KernelCtx *c, PlanKernel *k);
Status lower_index_copy(const KernelCtx *c, PlanKernel *k);
Status lower_unary(const KernelCtx *c, PlanKernel *k);
Status lower_binary(const KernelCtx *c, PlanKernel *k); /* binary, add_relu, silu_mul */
Status lower_where(const KernelCtx *c, PlanKernel *k);  /* where, where_s (masked_fill) */
Status lower_reduce(const KernelCtx *c, PlanKernel *k);
Status lower_argmax(const KernelCtx *c, PlanKernel *k);  /* argmax_f32|f16|bf16, argmax_red */
Status lower_softmax(const KernelCtx *c, PlanKernel *k); /* softmax, log_softmax, masked_softmax */
Status lower_norm(const KernelCtx *c, PlanKernel *k);    /* rmsnorm, layernorm, batchnorm */
Status lower_conv2d(const KernelCtx *c, PlanKernel *k);
Status lower_pool2d(const KernelCtx *c, PlanKernel *k);
Status lower_matmul(const KernelCtx *c, PlanKernel *k); /* matmul*, gemv* */
/* lower_matmul's M > 1 branch on the nv-coopmat tier (lower_matmul_cm.c). The product as it
 * describes it: B contiguous along K (kmajor), which of bias and residual are bound, and whether
 * 16-byte staging loads fit (vec: see shaders/matmul_cm.glsl). matmul_cm_applies: does the
 * tensor-core kernel take it (f16 or bf16 storage, M, N, K >= 16)? lower_matmul_cm finishes k
 * from the family's push block mp. */
typedef struct CmProduct {
    int64_t m, n, k, nbatch;
    bool kmajor, bias, res, vec;
    bool glu; /* linear_glu: Y has N / 2 columns, act(gate) * up (shaders/matmul_glu.glsl) */
} CmProduct;
bool matmul_cm_applies(const KernelCtx *c, const PlanKernel *k, const CmProduct *q);
Status lower_matmul_cm(const KernelCtx *c, PlanKernel *k, const CmProduct *q, const MatmulPush *mp);
/* A pointwise conv over a 1x1 map (lower_conv2d.c: 1x1 kernel, no padding, groups 1, a 1x1
 * input) as one matrix-vector product per image: Y[i, o] = act(sum_c W[o, c] x[i, c] + bias[o])
 * over the weight [cout, cin, 1, 1] read as [cout, cin], x's rows xcp and Y's ycp elements apart
 * (the padded channels); act (abi.h ACT_*) with ACT_CLAMP's bounds act_lim as ConvPush has them.
 * k binds x, weight(, bias) -> y. lower_conv_matvec picks conv2d_gemv(_b) (shaders/gemv.glsl)
 * where 16-byte loads provably fit, else conv2d_mv(_b) (shaders/matmul.glsl's vector path). */
typedef struct ConvMatvec {
    int64_t n, cin, cout, xcp, ycp;
    bool bias;
    uint32_t act, act_lim;
} ConvMatvec;
Status lower_conv_matvec(const KernelCtx *c, PlanKernel *k, const ConvMatvec *cv);
Status lower_rope(const KernelCtx *c, PlanKernel *k);      /* rope, rope_cache */
Status lower_attention(const KernelCtx *c, PlanKernel *k); /* decode_attention, attention_cache */
Status lower_corrupt(const KernelCtx *c, PlanKernel *k);   /* --break: lower_debug.c */
Status lower_generated(const KernelCtx *c, PlanKernel *k); /* elementwise: lower_gen.c */

#endif
