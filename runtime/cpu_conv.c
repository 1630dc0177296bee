/* SCAFFOLD: replaced by the real kernels of this family. */
#include "cpu_kernels.h"

Status cpu_conv2d(const CpuCall *c)
{
    return diag_add(c->diag, DIAG_ERROR, ST_INTERNAL, c->file, c->node->name, NULL,
                    "cpu_conv2d: not implemented yet");
}

Status cpu_pool2d(const CpuCall *c)
{
    return diag_add(c->diag, DIAG_ERROR, ST_INTERNAL, c->file, c->node->name, NULL,
                    "cpu_pool2d: not implemented yet");
}

