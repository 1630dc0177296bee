#include "compiler/shader_src.h"

#include <string.h>

const ShaderSource *shader_src_find(const char *name)
{
    if (!name) return NULL;
    size_t lo = 0, hi = shader_src_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, shader_src_table[mid].name);
        if (c == 0) return &shader_src_table[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}
