/* Generated kernels (issue #11). A group of elementwise and view ops (the fuse-elementwise pass)
 * becomes one kernel in four steps, each in its own file:
 *   codegen_expr.c   the kernel's expression DAG: hash-consed nodes (so building is CSE), every
 *                    node simplified as it is made (constant folding, algebraic identities, and
 *                    index arithmetic over affine forms: the div/mod chains that broadcasting,
 *                    reshapes and strided views produce fold back into plain offsets);
 *   codegen_build.c  the DAG of one fused group: each member's semantics (the CPU reference's,
 *                    runtime/cpu/cpu_eltwise.c), views as index maps, outside inputs as loads at
 *                    their physical strides;
 *   codegen_glsl.c   linearised (the nodes reachable from the store, in dependency order) and
 *                    rendered as one GLSL compute shader: shapes are specialised into the source
 *                    as constants, storage dtype by a define, arithmetic in float32;
 *   codegen_spv.c    compiled to SPIR-V in-process by glslang's C interface, cached by source
 *                    hash in memory and in an on-disk directory.
 * lower_gen.c ties them together as the `elementwise` kernel family. Nothing here prints; errors
 * are Cg.err (a static string) or diagnostics. */
#ifndef NPU_CODEGEN_H
#define NPU_CODEGEN_H

#include <stdbool.h>
#include <stdint.h>
#include "common/diag.h"
#include "compiler/dtype.h"

typedef enum CgType { CGT_F32, CGT_I32, CGT_BOOL } CgType;

/* clang-format off */
typedef enum CgOp {
    CG_CONST,   /* c */
    CG_GID,     /* the output element index, 0 <= gid < n (int) */
    CG_LOAD,    /* input binding (int)c at int offset a0 */
    CG_ADD, CG_SUB, CG_MUL, CG_DIV,                 /* of the node's type */
    CG_IDIV, CG_IMOD,                               /* int, by a positive constant a1 */
    CG_MIN, CG_MAX,                                 /* int clamps (index of a cat branch) */
    CG_NEG, CG_ABS, CG_EXP, CG_LOG, CG_SQRT, CG_RSQRT, CG_COS, CG_SIN, CG_TANH, CG_SIGMOID,
    CG_RELU, CG_GELU, CG_GELU_TANH, CG_SILU, CG_HARDSWISH, CG_HARDSIGMOID,
    CG_CLAMP,                                       /* a0 clamped to [a1, a2] (constants) */
    CG_POW, CG_DIV_TRUNC, CG_DIV_FLOOR,
    CG_EQ, CG_NE, CG_LT, CG_LE, CG_GT, CG_GE,       /* bool */
    CG_AND, CG_OR, CG_NOT,                          /* bool */
    CG_WHERE,                                       /* a0 ? a1 : a2 */
    CG_CAST,                                        /* a0 to the node's type */
    CG_OP_COUNT
} CgOp;
/* clang-format on */

typedef struct CgNode {
    CgOp op;
    CgType type;
    int a[3];
    int na;
    double c;       /* CONST value (float32-exact for floats); LOAD binding */
    int64_t lo, hi; /* int nodes: the value range */
} CgNode;

typedef struct Cg {
    CgNode *n;
    int count, cap;
    int *slot; /* open-addressing hash table of node ids (+1), for hash-consing */
    int nslot;
    int64_t numel;   /* elements of the output: the range of CG_GID */
    const char *err; /* first failure (out of memory, a node budget, an index beyond int32) */
} Cg;

#define CG_MAX_NODES 20000

void cg_init(Cg *g, int64_t numel);
void cg_free(Cg *g);
const char *cg_op_name(CgOp op);

/* Builders. Every one returns a node id, or -1 after setting g->err; every one accepts -1
 * arguments and passes the failure on, so a builder chain checks once at the end. */
int cg_fconst(Cg *g, double v); /* rounded to float32 */
int cg_iconst(Cg *g, int64_t v);
int cg_bconst(Cg *g, bool v);
int cg_gid(Cg *g);
int cg_load(Cg *g, int binding, CgType t, int offset);
/* int index arithmetic, kept in a canonical affine form */
int cg_iadd(Cg *g, int a, int b);
int cg_imul(Cg *g, int a, int64_t k);
int cg_idiv(Cg *g, int a, int64_t k); /* k > 0, a >= 0 */
int cg_imod(Cg *g, int a, int64_t k); /* k > 0, a >= 0 */
int cg_imin(Cg *g, int a, int64_t k);
int cg_imax(Cg *g, int a, int64_t k);
/* values */
int cg_unary(Cg *g, CgOp op, int x);
int cg_binary(Cg *g, CgOp op, int x, int y); /* types promote: bool < int < float */
int cg_clamp(Cg *g, int x, double lo, double hi);
int cg_where(Cg *g, int cond, int x, int y);
int cg_cast(Cg *g, CgType t, int x);

/* ---- rendering (codegen_glsl.c) ---------------------------------------------------------- */

#define CG_MAX_BINDINGS 12

typedef struct CgBinding {
    const char *name; /* the plan tensor (diagnostics; not rendered) */
    CgType type;      /* what a load yields: float storage, int32, or bool bytes */
} CgBinding;

typedef struct CgKernel {
    Cg g;
    int value;  /* the value stored at... */
    int offset; /* ...this int offset of the output (the last binding) */
    int nbind;  /* inputs, then the output */
    CgBinding bind[CG_MAX_BINDINGS + 1];
    DType storage;     /* float storage of the program: F32, F16 or BF16 */
    bool pack_bytes;   /* a bool output (dense bytes): each invocation writes one uint of four */
    const char *title; /* first comment line; NULL: "generated elementwise kernel" */
} CgKernel;

/* The GLSL compute shader of k: a malloc'd string (NULL on allocation failure). Bindings are
 * k->bind in order, spec constant 0 is the workgroup size (NPU_WG), no push constants. The text
 * names no tensor or node, so equal computations share one source (and module). */
char *cg_render_glsl(const CgKernel *k);

/* ---- compiling (codegen_spv.c) ----------------------------------------------------------- */

typedef struct CgStats {
    int compiled;      /* glslang runs */
    int memory_hits;   /* found in this process's cache */
    int disk_hits;     /* found in the cache directory */
    double compile_ms; /* total glslang time */
} CgStats;

/* Compiles a GLSL compute shader to SPIR-V. `#include "NAME"` lines are resolved from the
 * shader sources embedded at build time (compiler/shader_src.h); the key of both caches is the
 * hash of the expanded text, *key on return. cache_dir: a directory for NAME.spv files (created
 * when missing), "" for the default, NULL or "none" for no disk cache. *words is malloc'd (the
 * caller frees). Errors (glslang's log) name `what`. */
Status cg_compile(const char *source, const char *cache_dir, const char *what, uint32_t **words,
                  size_t *nwords, uint64_t *key, DiagList *d);
/* The text glslang compiles for `source` (includes expanded), malloc'd; NULL on failure. */
char *cg_expand_includes(const char *source);
CgStats cg_stats(void);
/* Empties the in-memory cache and zeroes the statistics (tests: a second compile then has to
 * come from the disk cache). */
void cg_cache_reset(void);

#endif
