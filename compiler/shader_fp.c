#include "compiler/shader_fp.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/cmp.h"

/* The fingerprint of module `name`, 0 when this build has none (or the name did not fit). */
static uint64_t find(const char *name, int len, size_t n)
{
    if (len < 0 || (size_t)len >= n) return 0;
    const ShaderFp *r =
        bsearch(name, shader_fp_table, shader_fp_count, sizeof *shader_fp_table, cmp_name_row);
    return r ? r->fp : 0;
}

uint64_t shader_fp_for(const char *stem, DType storage, char *name, size_t n)
{
    const char *v = storage == DT_F16    ? "f16"
                    : storage == DT_BF16 ? "bf16"
                    : storage == DT_I32  ? "i32"
                                         : "f32";
    uint64_t fp = find(name, snprintf(name, n, "%s.%s", stem, v), n);
    return fp ? fp : find(name, snprintf(name, n, "%s", stem), n);
}

uint64_t shader_fp_kernel(const Plan *p, const PlanKernel *k, char *name, size_t n)
{
    char buf[256];
    uint64_t fp = 0;
    snprintf(buf, sizeof buf, "%s", k->shader);
    if (plan_kernel_builtin(p, k) && k->nargs >= 1)
        fp = shader_fp_for(k->shader, p->tensors[k->args[k->nargs - 1]].storage, buf, sizeof buf);
    if (name && n) snprintf(name, n, "%s", buf);
    return fp;
}

void shader_fp_plan(Plan *p)
{
    for (int k = 0; k < p->nkernels; k++)
        p->kernels[k].fingerprint = shader_fp_kernel(p, &p->kernels[k], NULL, 0);
}
