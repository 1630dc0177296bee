/* The graph: tensors and nodes imported from IR JSON, mutated by compiler passes. A Graph owns an
 * arena for its strings and attribute payloads and malloc'd arrays for tensors and nodes; free it
 * with graph_free. Passes, the CPU reference and the viewers read it through these types. */
#ifndef NPU_GRAPH_H
#define NPU_GRAPH_H

#include <stdbool.h>
#include <stdint.h>
#include "common/arena.h"
#include "common/diag.h"
#include "common/strmap.h"
#include "compiler/dtype.h"
#include "compiler/ops.h"
#include "compiler/recipe.h"

typedef enum TensorKind {
    TK_ACT,    /* produced by a node */
    TK_INPUT,  /* graph input */
    TK_WEIGHT, /* parameter or buffer bound from the weights file */
    TK_CONST,  /* constant carried by the IR itself */
} TensorKind;

typedef struct GTensor {
    const char *name;
    DType dtype;
    int rank;
    int64_t shape[NPU_MAX_RANK];
    TensorKind kind;
    const char *weight_key;   /* TK_WEIGHT: state_dict key (via weight_name_mapping) */
    int producer;             /* node index, -1 for inputs/weights/consts */
    int producer_out;         /* which output of the producer */
    int nconsumers;           /* filled by graph_link */
    int *consumers;           /* node indices, arena-owned */
    bool is_output;           /* a graph output */
    const double *const_data; /* TK_CONST: numel values (arena-owned), NULL if none; a
                               * TK_WEIGHT's when the IR carries them too (a lifted tensor) */
    bool state;               /* model state (compiler/inplace.c): a weight or constant that an op
                               * writes in place, made a graph input (TK_INPUT) whose first value
                               * is the weight's or constant's; Graph.state_out names its value
                               * after a run */
    /* set by compiler passes */
    int alias_of;     /* views pass: shares the storage of this tensor (-1: own storage) */
    int64_t view_off; /* views pass: a view's first element inside its base's dense storage
                       * (a part of a linear_concat output), 0 otherwise */
    int64_t pshape[NPU_MAX_RANK]; /* layout pass: physical shape (channel padded) */
    int padded;                   /* layout pass: dim 1 padded to the channel tile */
    bool host_form; /* pack-inputs: a graph input stored on the device as the host holds it
                     * (f32, dense; a pack kernel makes the device form), not in the compute
                     * dtype */
    int64_t offset; /* plan-memory: byte offset in the arena (-1: not in the arena) */
    int64_t bytes;  /* plan-memory: bytes reserved */
} GTensor;

typedef enum Placement { PLACE_NPU, PLACE_CPU } Placement;

/* The most instances one merge runs (Fusion.merges) and the most tensors a fused kernel writes
 * besides its output (Fusion.xout). */
#define FUSE_MAX_MERGES 4
#define FUSE_MAX_XOUT 2

/* One fusion instance: a match of a pattern that can be switched on or off by id. */
typedef struct Fusion {
    const char *id;      /* "F3" */
    const char *pattern; /* "add_relu" (the variant) */
    const char *family;  /* the registry name that matched: "conv", "linear_act" (static) */
    const char *base;    /* the pattern it falls back to when switched off (FusePattern.fallback),
                            which selects it too; NULL */
    const char *fell_back_from; /* the extension switched off that this instance is the
                                   fallback form of ("rope_cache"), which selects it too; NULL */
    KernelKind kernel;  /* the kind of kernel it runs (FusePattern.kernel, KK_elementwise for a
                           generated group); KK_NONE: a prologue fold, which runs none */
    int *nodes, nnodes; /* member node indices, in graph order */
    int anchor;         /* node index where the fused kernel runs */
    int out;            /* the fused kernel's output tensor */
    bool enabled;
    /* The fused kernel's inputs when they are not the members' outside inputs (linear_concat:
     * x, the concatenated weight and bias), nkin 0 otherwise. */
    int kin[4], nkin;
    /* A prologue fold (compiler/fuse_fold.c): `folds` is 1 + the index of the instance (rmsnorm,
     * silu_mul) that this one computes inside the GEMVs reading its output, 0 for any other
     * instance. `folded` marks that base instance while the fold applies (both enabled): it runs
     * no kernel of its own and its output is never written. */
    int folds;
    bool folded;
    /* A merge (compiler/fuse_merge.c: decode_attention_cache) runs the work of other instances
     * inside its one kernel: `merges` lists them (indices, nmerges of them); their members and
     * any plain node it takes (an index_copy) are its members. While it applies (it and every
     * instance it merges enabled, none fallen back) each of those instances is `merged` (1 + the
     * merge's index; 0 otherwise): it runs no kernel of its own, and its nodes name the merge as
     * their instance (Node.fusion), so every pass sees one fused kernel. */
    int merges[FUSE_MAX_MERGES], nmerges;
    int merged;
    /* Tensors the kernel writes besides `out`, in place into an input's storage (a merge's KV
     * caches: index_copy outputs aliasing their self), nxout of them. */
    int xout[FUSE_MAX_XOUT], nxout;
} Fusion;

/* A near miss: a pattern that almost matched, and why not. */
typedef struct NearMiss {
    const char *pattern;
    int node;
    const char *reason;
} NearMiss;

typedef enum AttrKind {
    ATTR_NONE, /* JSON null */
    ATTR_INT,
    ATTR_FLOAT,
    ATTR_BOOL,
    ATTR_STR,
    ATTR_INTS,
    ATTR_FLOATS,
    ATTR_OTHER, /* anything else (nested lists, objects): kept as JSON text in s */
} AttrKind;

typedef struct Attr {
    const char *key;
    AttrKind kind;
    int64_t i; /* INT, BOOL */
    double f;  /* FLOAT (and INT as double) */
    const char *s;
    int n;          /* INTS/FLOATS length */
    int64_t *ints;  /* INTS */
    double *floats; /* FLOATS (also filled for INTS) */
} Attr;

typedef struct Node {
    const char *name;
    OpId op;
    const char *aten; /* the op string as exported */
    int nin, nout;
    int *in, *out; /* tensor ids */
    int nattrs;
    Attr *attrs;
    bool dead; /* removed by a pass; kept so indices stay stable */
    /* set by compiler passes */
    Placement place;     /* partition */
    int part;            /* partition index (runs of equal placement) */
    int fusion;          /* index into Graph.fusions, -1 if not fused */
    int slot;            /* plan-memory: the step of the kernel order this node's kernel runs in
                          * (compiler/schedule.h), -1 when it runs none */
    const char *why_cpu; /* partition: why this node cannot run on the NPU */
    bool adopted;        /* fuse-elementwise took it from the CPU: only generated kernels run it */
    bool own;            /* the compiler's own work, not the model's (a depad, a pack, a copy
                          * into a cat in place): `ops --coverage` leaves it out */
} Node;

typedef struct Graph {
    Arena arena;
    const char *path; /* file it came from, for diagnostics */
    const char *model_name;
    GTensor *tensors;
    int ntensors, cap_tensors;
    Node *nodes;
    int nnodes, cap_nodes;
    int *inputs, ninputs; /* tensor ids, in IR order */
    int *outputs, noutputs;
    int *weights, nweights; /* weight placeholder tensor ids, in first-use order (a state
                             * input made from a weight stays listed: it is bound as one) */
    /* Model state, made explicit at import (compiler/inplace.c): state_in[i] is a state input,
     * outputs[state_out[i]] its value at the end of a run, the value the next run starts from
     * when the caller carries it. Arena-owned and never changed by passes. */
    int *state_in, *state_out, nstates;
    StrMap by_name;      /* tensor name -> id+1 (changed through graph.h's functions only) */
    StrMap node_by_name; /* node name -> index+1 (changed through graph.h's functions only) */
    Recipe *recipes;
    int nrecipes;
    Fusion *fusions;
    int nfusions;
    NearMiss *misses;
    int nmisses;
    int nparts;
    int64_t arena_bytes, naive_bytes; /* plan-memory */
    unsigned shared; /* GRAPH_SHARES_* bits: arrays that are an earlier snapshot's (graph_share) */
} Graph;

/* Graph.shared bits. */
enum {
    GRAPH_SHARES_TENSORS = 1,
    GRAPH_SHARES_NODES = 2,
    GRAPH_SHARES_BY_NAME = 4,
    GRAPH_SHARES_NODE_BY_NAME = 8,
};

Graph *graph_new(const char *path);
void graph_free(Graph *g);

/* Adds a tensor (name copied into the arena); returns its id or -1 on allocation failure. */
int graph_add_tensor(Graph *g, const char *name, DType dt, int rank, const int64_t *shape,
                     TensorKind kind);
/* Adds a node; in/out arrays are copied. Returns its index or -1 on allocation failure. */
int graph_add_node(Graph *g, const char *name, OpId op, const char *aten, const int *in, int nin,
                   const int *out, int nout);
/* Appends an int or bool attribute (kind ATTR_INT or ATTR_BOOL) to node `node` (a node built in
 * code; the IR reader parses its own). False on allocation failure. */
bool graph_add_attr(Graph *g, int node, const char *key, AttrKind kind, int64_t v);
/* Appends a copy of attribute *a (key, lists and string copied into g's arena) to node `node`.
 * False on allocation failure. */
bool graph_add_attr_v(Graph *g, int node, const Attr *a);
/* Makes tensor t one more graph output (last). False on allocation failure. */
bool graph_add_output(Graph *g, int t);
int graph_find_tensor(const Graph *g, const char *name); /* -1 if absent */
int graph_find_node(const Graph *g, const char *name);   /* -1 if absent */
/* The unique consumer of tensor t, or -1 (several consumers, none, or a graph output). */
int graph_only_consumer(const Graph *g, int t);
/* Maps the names of nodes from..nnodes-1 to their indices again (nodes moved). False on
 * allocation failure. */
bool graph_index_nodes(Graph *g, int from);
/* Names tensor t `name` (kept, not copied: g's arena or static) and maps the name to it. False
 * on allocation failure. */
bool graph_name_tensor(Graph *g, int t, const char *name);
/* Recomputes producer/consumer links from the live nodes. */
Status graph_link(Graph *g);
/* Copy for pass snapshots. The copy borrows g's immutable data (names, op strings, attributes,
 * constant values, state pairs) and copies what passes mutate (node operand lists, tensors,
 * fusions), so g must outlive it; it shares g's name maps until it changes them (graph_add_*,
 * graph_index_nodes, graph_name_tensor: the only ways to change them), so g must not change its
 * names meanwhile. NULL on allocation failure. */
Graph *graph_clone(const Graph *g);
/* For pass snapshots: each of g's tensor and node arrays and name maps that equals prev's is
 * dropped and prev's used instead (Graph.shared), so a snapshot holds only what its pass changed.
 * prev must outlive g, and neither may change afterwards (snapshots are read-only); a later
 * graph_add_tensor, graph_add_node or graph_link on g first makes its arrays its own again. */
void graph_share(Graph *g, const Graph *prev);
/* Checks invariants: every live node's inputs are produced earlier or are inputs/weights/consts,
 * ids in range, no tensor produced twice; in builds with assertions, also every node's name its
 * own and mapped to it. Errors name the node. */
Status graph_verify(const Graph *g, DiagList *d);

int64_t tensor_numel(const GTensor *t);
/* "f32[1,3,224,224]" into buf. */
char *tensor_describe(const GTensor *t, char *buf, size_t n);
char *shape_str(const int64_t *shape, int rank, char *buf, size_t n);
/* Whether two shapes (rank and sizes) are equal. */
bool shape_equal(int ra, const int64_t *a, int rb, const int64_t *b);
/* Whether shape a broadcasts to shape b as torch does: aligned at the last dim, each of a's sizes
 * b's or 1, a's rank at most b's. */
bool shape_bcasts_to(int ra, const int64_t *a, int rb, const int64_t *b);

static inline const GTensor *node_input(const Graph *g, const Node *n, int i)
{
    return &g->tensors[n->in[i]];
}
static inline const GTensor *node_output(const Graph *g, const Node *n, int i)
{
    return &g->tensors[n->out[i]];
}

/* Attribute access. Defaults are the caller's (ATen's) defaults. */
const Attr *node_attr(const Node *n, const char *key);
bool attr_present(const Node *n, const char *key); /* present and not null */
int64_t attr_int(const Node *n, const char *key, int64_t dflt);
double attr_float(const Node *n, const char *key, double dflt); /* accepts ints and bools */
/* A number, a bool or a numeric string ("inf", "-inf", "nan": how the IR writes a non-finite
 * scalar) into *v; false when absent, null or not a number. The CPU reference and the kernels
 * read scalar operands (`other`, `alpha`, `value`) through it. */
bool attr_number(const Node *n, const char *key, double *v);
bool attr_bool(const Node *n, const char *key, bool dflt);
const char *attr_str(const Node *n, const char *key, const char *dflt);
/* Reads an int list into out (at most maxn). A scalar int counts as a one-element list. Returns
 * the number read, or -1 if absent/null/not an int list. */
int attr_ints(const Node *n, const char *key, int64_t *out, int maxn);
/* Reads a list of `n` ints where a scalar or one-element list repeats (conv stride [2] -> [2,2]);
 * fills dflt when absent. Returns false if present with a wrong length/type. */
bool attr_ints_n(const Node *n, const char *key, int64_t *out, int cnt, int64_t dflt);

/* Normalises a possibly negative dim against rank; -1 if out of range. */
int norm_dim(int64_t dim, int rank);
/* The permutation of a transpose-like node (t, transpose, permute) on a rank-r input: output dim
 * i is input dim perm[i]; the identity for any other op. False when the node's dims are out of
 * range or not a permutation. */
bool node_perm(const Node *n, int r, int *perm);
/* A rank-r tensor (shape, strides st) seen as [outer, m, inner] around dim `dim` (index_copy's
 * geometry): the dims after dim must be contiguous and those before it collapse to one stride,
 * *so (0 when they are all 1). Else false and *why says which. */
bool strides_outer_m_inner(int r, const int64_t *shape, const int64_t *st, int dim, int64_t *so,
                           const char **why);

#endif
