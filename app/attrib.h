/* Which kernel of a plan computes what, in the plan a user sees: a fusion instance's members
 * (its own kernel, or, for an instance a prologue fold computes inside the GEMVs that read it,
 * the kernel its ops run inside), a tensor, and where each `--break ID` lands (the kernel whose
 * output it corrupts and the `corrupt` kernel after it, compiler/lower/lower.c). bisect's culprit
 * line and the explorer's banner, kernels table and details all say it from here, so they name
 * kernels of the same plan. */
#ifndef NPU_ATTRIB_H
#define NPU_ATTRIB_H

#include <stdbool.h>
#include <stddef.h>
#include "compiler/plan.h"

/* The first kernel computing fusion f's members: its own (*own true), else the first kernel
 * whose IR nodes include them (*own false); -1 when none does (switched off). */
int attrib_fusion_kernel(const Plan *p, int f, bool *own);
/* The last kernel writing the tensor named `name` (*inside false), else the first computing an
 * IR node of that name inside it (*inside true); -1. `corrupt` kernels are never named. */
int attrib_tensor_kernel(const Plan *p, const char *name, bool *inside);

/* Where one --break id lands in a plan. */
typedef struct BreakSite {
    const char *id; /* the plan's fusion id */
    int fusion;     /* plan fusion index */
    int kernel;     /* the kernel whose output the break corrupts (computing the instance), -1 */
    bool own;       /* that kernel is the instance's own */
    int corrupt;    /* the corrupt kernel after it, -1 */
} BreakSite;

/* The sites of the comma-separated ids (--break) in p, at most max; returns how many. */
int attrib_breaks(const Plan *p, const char *ids, BreakSite *out, int max);
/* The site as a sentence: "F8 silu_mul has no kernel of its own in this plan: its ops run
 * inside kernel 12 (gemv_glu_r, F9); the break corrupts that kernel's output add_6 (kernel 13
 * corrupt)", or for an instance with its kernel "F2 conv_relu: the break corrupts the output
 * relu_1 of its kernel 3 (conv2d_red_b) (kernel 4 corrupt)". */
void attrib_break_text(const Plan *p, const BreakSite *b, char *buf, size_t n);
/* The same, short, for a banner: "F8 in kernel 12 (F9)", "F2 kernel 3". */
void attrib_break_short(const Plan *p, const BreakSite *b, char *buf, size_t n);
/* The site whose corrupt kernel or corrupted kernel is k, NULL. */
const BreakSite *attrib_break_of_kernel(const BreakSite *s, int n, int k);

#endif
