#include "vk_shaders.h"

#include <string.h>

const VkSpv *vk_spv_find(const char *name)
{
    if (!name) return NULL;
    size_t lo = 0, hi = vk_spv_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, vk_spv_table[mid].name);
        if (c == 0) return &vk_spv_table[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}
