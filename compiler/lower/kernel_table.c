#include "compiler/lower/kernel_table.h"

#include <string.h>

#include "compiler/dtype.h" /* argmax's N column */

static const char *const kind_names[KK_COUNT] = {
#define KIND(name, fn) [KK_##name] = #name,
#define KERNEL(stem, kind, impl, flags, n, src, var, defs)
#include "shaders/kernels.def"
#undef KIND
#undef KERNEL
};

/* The FLAGS column's names, while the table is read. */
#define BIAS KF_BIAS
#define RES KF_RES
#define PART KF_PART
#define RED KF_RED
#define GLU KF_GLU
#define LARGE KF_LARGE
#define RMSNORM KF_RMSNORM
#define SILU_MUL KF_SILU_MUL
#define SCALAR KF_SCALAR
#define WEIGHT KF_WEIGHT
#define SCALE KF_SCALE
const KernelRow kernel_rows[] = {
#define KIND(name, fn)
#define KERNEL(stem, kind, impl, flags, n, src, var, defs)                                         \
    {#stem, {KK_##kind, KI_##impl, flags, n}, src, var, defs},
#include "shaders/kernels.def"
#undef KIND
#undef KERNEL
};
#undef BIAS
#undef RES
#undef PART
#undef RED
#undef GLU
#undef LARGE
#undef RMSNORM
#undef SILU_MUL
#undef SCALAR
#undef WEIGHT
#undef SCALE
const int kernel_row_count = (int)(sizeof kernel_rows / sizeof kernel_rows[0]);

const char *kernel_kind_name(KernelKind kind)
{
    return kind > KK_NONE && kind < KK_COUNT ? kind_names[kind] : NULL;
}

const KernelRow *kernel_pick(KernelKey key)
{
    for (int i = 0; i < kernel_row_count; i++) {
        const KernelKey *k = &kernel_rows[i].key;
        if (k->kind == key.kind && k->impl == key.impl && k->flags == key.flags && k->n == key.n)
            return &kernel_rows[i];
    }
    return NULL;
}

KernelKind kernel_kind_of(const char *stem)
{
    const KernelRow *r = kernel_row(stem);
    if (r) return r->key.kind;
    for (int k = KK_NONE + 1; stem && k < KK_COUNT; k++)
        if (strcmp(kind_names[k], stem) == 0) return (KernelKind)k;
    return KK_NONE;
}

const KernelRow *kernel_row(const char *stem)
{
    for (int i = 0; stem && i < kernel_row_count; i++)
        if (strcmp(kernel_rows[i].stem, stem) == 0) return &kernel_rows[i];
    return NULL;
}
