/* A kernel's source and SPIR-V, Compiler-Explorer style: for a generated kernel the GLSL the
 * compiler rendered and the SPIR-V the plan carries; for a hand-written one the source file its
 * row of shaders/kernels.def names, after the defines glslc gets, with the files it includes
 * (embedded at build time), and the SPIR-V glslc built for the output's storage variant. `describe
 * --source K`, the session's `source K` and the explorer's source view all print through here. */
#ifndef NPU_KERNEL_SOURCE_H
#define NPU_KERNEL_SOURCE_H

#include <stdio.h>
#include "common/diag.h"
#include "compiler/plan.h"

typedef struct KernelSource {
    char *title;  /* "kernel 3: gen_3fa9c2e1d4b5 (generated, F14 elementwise)" */
    char *source; /* GLSL, or a note for a CPU kernel */
    char *disasm; /* SPIR-V disassembly, or a note when there is none */
    int nwords;   /* SPIR-V words (0: none) */
} KernelSource;

/* Finds a kernel by index ("3") or by fusion instance id ("F14"); -1 with an error naming spec. */
int kernel_source_find(const Plan *p, const char *spec, DiagList *d);
/* Fills *out (free with kernel_source_free) for plan kernel k. */
Status kernel_source_get(const Plan *p, int k, KernelSource *out, DiagList *d);
void kernel_source_free(KernelSource *s);
/* Prints the title, the source and the disassembly under section headers. */
void kernel_source_print(FILE *f, const KernelSource *s);

#endif
