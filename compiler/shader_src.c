#include "compiler/shader_src.h"

#include <stdlib.h>

#include "common/cmp.h"

const ShaderSource *shader_src_find(const char *name)
{
    if (!name) return NULL;
    return bsearch(name, shader_src_table, shader_src_count, sizeof *shader_src_table,
                   cmp_name_row);
}
