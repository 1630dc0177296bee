/* The kernel table (shaders/kernels.def) as C: the kinds lowering asks for, the key that picks a
 * kernel of a kind, and one row per hand-written kernel (its stem, key, source file, storage
 * variants and glslc defines). A stem is spelled in the table alone: lowering names a kernel by
 * its key (kernel_pick), everything else reads the row. The enumerators KK_<kind> carry the
 * table's names verbatim (lower case, as QBE's generated op names do), so a kind too is spelled
 * once. Read-only data; any module may call these. */
#ifndef NPU_KERNEL_TABLE_H
#define NPU_KERNEL_TABLE_H

#include <stdbool.h>

typedef enum KernelKind {
    KK_NONE, /* no NPU kernel (an op the CPU reference alone computes) */
#define KIND(name, fn) KK_##name,
#define KERNEL(stem, kind, impl, flags, n, src, var, defs)
#include "shaders/kernels.def"
#undef KIND
#undef KERNEL
    KK_COUNT
} KernelKind;

/* How a kernel computes its kind (the table's IMPL column). */
typedef enum KernelImpl {
    KI_BASE,    /* the portable kernel */
    KI_DIRECT,  /* conv2d on a CPU device: no shared memory */
    KI_DW,      /* conv2d with one input channel per group (depthwise) */
    KI_GEMV,    /* the 16-byte-load GEMV */
    KI_CM,      /* nv-coopmat tensor cores */
    KI_CMX,     /* KI_CM's portable emulation (tests: CompileOptions.cm_emulate) */
    KI_GLOBAL,  /* a pool whose window is the whole input: a reduction per (n, c) row */
    KI_STRIDED, /* a norm over rows at any strides (layernorm_t: permutes read and written) */
    KI_MV,      /* a matrix-vector product with one-element loads (matmul.glsl's vector path) */
} KernelImpl;

/* The table's FLAGS column. */
enum {
    KF_BIAS = 1 << 0,     /* a bias binding */
    KF_RES = 1 << 1,      /* a residual binding */
    KF_PART = 1 << 2,     /* a K split's first pass: fp32 partials */
    KF_RED = 1 << 3,      /* a K split's reduce pass */
    KF_GLU = 1 << 4,      /* linear_glu's epilogue */
    KF_LARGE = 1 << 5,    /* the 128x128 tensor-core tile */
    KF_RMSNORM = 1 << 6,  /* the GEMV's rmsnorm_linear prologue */
    KF_SILU_MUL = 1 << 7, /* the GEMV's silu_mul_linear prologue */
    KF_SCALAR = 1 << 8,   /* one operand a push word, or one tensor for both */
    KF_WEIGHT = 1 << 9,   /* a norm's weight binding */
    KF_SCALE = 1 << 10,   /* conv2d: an input scale binding, s per (image, channel) (conv_scale) */
};

/* What lowering asks for: a row matches when all four are equal. */
typedef struct KernelKey {
    KernelKind kind;
    KernelImpl impl;
    unsigned flags;
    int n; /* cat's input count, argmax's input storage (DType); 0 otherwise */
} KernelKey;

typedef struct KernelRow {
    const char *stem; /* "conv2d_b": module STEM.VARIANT, PlanKernel.shader */
    KernelKey key;
    const char *source;   /* "conv2d_body.glsl", a file in shaders/ */
    const char *variants; /* "f32 f16 bf16"; "none": one module STEM without STORAGE_ */
    const char *defines;  /* "CONV_BIAS=1 CONV_RES=0": glslc's -D flags */
} KernelRow;

extern const KernelRow kernel_rows[];
extern const int kernel_row_count;

/* The kind's name in the table ("conv2d"), or NULL for KK_NONE and out-of-range values. */
const char *kernel_kind_name(KernelKind kind);
/* The row with exactly this key, or NULL. */
const KernelRow *kernel_pick(KernelKey key);
/* The row of this stem, or NULL (a generated kernel, a kind's name before lowering). */
const KernelRow *kernel_row(const char *stem);
/* The kind of a stem: its row's, or the kind a kind's name names; KK_NONE otherwise (a generated
 * kernel, a CPU kernel's op name). */
KernelKind kernel_kind_of(const char *stem);

#endif
