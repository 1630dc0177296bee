/* The op table (ops.def) as C: the OpId enum, per-op metadata and ATen name lookup. Everything
 * per-op in the project is keyed by OpId; per-op tables elsewhere are [OP_COUNT] arrays with
 * designated initialisers. */
#ifndef NPU_OPS_H
#define NPU_OPS_H

#include <stdbool.h>

#include "compiler/lower/kernel_table.h"

enum {
    OPF_ELTWISE = 1 << 0,
    OPF_REDUCE = 1 << 1,
    OPF_VIEW = 1 << 2,
    OPF_NPU = 1 << 3,
    OPF_NOOP = 1 << 4,
    OPF_SOURCE = 1 << 5,
    OPF_INT_OK = 1 << 6,
};

/* The CLASS column: groups of ops that code treats alike. */
typedef enum OpClass {
    OC_other,    /* none of these */
    OC_unary,    /* elementwise f(x) */
    OC_binary,   /* elementwise arithmetic a OP b */
    OC_compare,  /* a OP b, a bool result */
    OC_logical,  /* logical not/and/or of bools (bitwise of integers) */
    OC_select,   /* where, masked_fill */
    OC_reshape,  /* the same elements in order, a new shape */
    OC_identity, /* the same tensor (identity, eval dropout) */
    OC_permute,  /* dims reordered */
    OC_slice,    /* a strided part along one dim */
    OC_expand,   /* broadcast to a larger shape */
} OpClass;

typedef enum OpId {
#define X(id, names, mn, mx, fl, kind, cls, shape, dt, doc) OP_##id,
#include "compiler/ops.def"
#undef X
    OP_COUNT,
    OP_INVALID = -1
} OpId;

typedef struct OpInfo {
    const char *id;    /* "ADD" */
    const char *names; /* "aten.add.Tensor|aten.add_.Tensor|..." */
    int min_in, max_in;
    unsigned flags;
    KernelKind kernel; /* the NPU kernel's kind (shaders/kernels.def), KK_NONE for none */
    OpClass cls;
    const char *doc;
} OpInfo;

extern const OpInfo op_info[OP_COUNT];

/* Looks up an ATen op string ("aten.add_.Tensor"); OP_INVALID if unknown. Thread-safe after the
 * first call (the table is built once). */
OpId op_lookup(const char *aten);
/* The first (canonical) ATen name of an op, e.g. "aten.add.Tensor"; static storage. */
const char *op_canonical_name(OpId op);
/* Short display name: "add", "conv2d", "max_pool2d". Static storage. */
const char *op_short_name(OpId op);
static inline bool op_has(OpId op, unsigned flag)
{
    return op >= 0 && op < OP_COUNT && (op_info[op].flags & flag);
}
/* The op's class; OC_other outside the table. */
static inline OpClass op_class(OpId op)
{
    return op >= 0 && op < OP_COUNT ? op_info[op].cls : OC_other;
}
/* A reshape or an identity: the output is the input's elements in their order (on the NPU an
 * alias of its storage where the layout allows). */
static inline bool op_keeps_order(OpId op)
{
    return op_class(op) == OC_reshape || op_class(op) == OC_identity;
}

#endif
