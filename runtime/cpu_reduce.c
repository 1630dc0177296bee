/* SCAFFOLD: replaced by the real kernels of this family. */
#include "cpu_kernels.h"

Status cpu_reduce(const CpuCall *c)
{
    return diag_add(c->diag, DIAG_ERROR, ST_INTERNAL, c->file, c->node->name, NULL,
                    "cpu_reduce: not implemented yet");
}

Status cpu_softmax(const CpuCall *c)
{
    return diag_add(c->diag, DIAG_ERROR, ST_INTERNAL, c->file, c->node->name, NULL,
                    "cpu_softmax: not implemented yet");
}

Status cpu_layer_norm(const CpuCall *c)
{
    return diag_add(c->diag, DIAG_ERROR, ST_INTERNAL, c->file, c->node->name, NULL,
                    "cpu_layer_norm: not implemented yet");
}

Status cpu_batch_norm(const CpuCall *c)
{
    return diag_add(c->diag, DIAG_ERROR, ST_INTERNAL, c->file, c->node->name, NULL,
                    "cpu_batch_norm: not implemented yet");
}

Status cpu_cumsum(const CpuCall *c)
{
    return diag_add(c->diag, DIAG_ERROR, ST_INTERNAL, c->file, c->node->name, NULL,
                    "cpu_cumsum: not implemented yet");
}

