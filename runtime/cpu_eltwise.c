/* SCAFFOLD: replaced by the real kernels of this family. */
#include "cpu_kernels.h"

Status cpu_unary(const CpuCall *c)
{
    return diag_add(c->diag, DIAG_ERROR, ST_INTERNAL, c->file, c->node->name, NULL,
                    "cpu_unary: not implemented yet");
}

Status cpu_binary(const CpuCall *c)
{
    return diag_add(c->diag, DIAG_ERROR, ST_INTERNAL, c->file, c->node->name, NULL,
                    "cpu_binary: not implemented yet");
}

Status cpu_where(const CpuCall *c)
{
    return diag_add(c->diag, DIAG_ERROR, ST_INTERNAL, c->file, c->node->name, NULL,
                    "cpu_where: not implemented yet");
}

