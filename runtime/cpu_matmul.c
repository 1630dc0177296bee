/* SCAFFOLD: replaced by the real kernels of this family. */
#include "cpu_kernels.h"

Status cpu_matmul(const CpuCall *c)
{
    return diag_add(c->diag, DIAG_ERROR, ST_INTERNAL, c->file, c->node->name, NULL,
                    "cpu_matmul: not implemented yet");
}

