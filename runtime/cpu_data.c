/* SCAFFOLD: replaced by the real kernels of this family. */
#include "cpu_kernels.h"

Status cpu_copy(const CpuCall *c)
{
    return diag_add(c->diag, DIAG_ERROR, ST_INTERNAL, c->file, c->node->name, NULL,
                    "cpu_copy: not implemented yet");
}

Status cpu_getitem(const CpuCall *c)
{
    return diag_add(c->diag, DIAG_ERROR, ST_INTERNAL, c->file, c->node->name, NULL,
                    "cpu_getitem: not implemented yet");
}

Status cpu_permute(const CpuCall *c)
{
    return diag_add(c->diag, DIAG_ERROR, ST_INTERNAL, c->file, c->node->name, NULL,
                    "cpu_permute: not implemented yet");
}

Status cpu_expand(const CpuCall *c)
{
    return diag_add(c->diag, DIAG_ERROR, ST_INTERNAL, c->file, c->node->name, NULL,
                    "cpu_expand: not implemented yet");
}

Status cpu_cat(const CpuCall *c)
{
    return diag_add(c->diag, DIAG_ERROR, ST_INTERNAL, c->file, c->node->name, NULL,
                    "cpu_cat: not implemented yet");
}

Status cpu_slice(const CpuCall *c)
{
    return diag_add(c->diag, DIAG_ERROR, ST_INTERNAL, c->file, c->node->name, NULL,
                    "cpu_slice: not implemented yet");
}

Status cpu_index_copy(const CpuCall *c)
{
    return diag_add(c->diag, DIAG_ERROR, ST_INTERNAL, c->file, c->node->name, NULL,
                    "cpu_index_copy: not implemented yet");
}

Status cpu_embedding(const CpuCall *c)
{
    return diag_add(c->diag, DIAG_ERROR, ST_INTERNAL, c->file, c->node->name, NULL,
                    "cpu_embedding: not implemented yet");
}

Status cpu_source(const CpuCall *c)
{
    return diag_add(c->diag, DIAG_ERROR, ST_INTERNAL, c->file, c->node->name, NULL,
                    "cpu_source: not implemented yet");
}

