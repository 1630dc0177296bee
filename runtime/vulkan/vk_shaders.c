#include "runtime/vulkan/vk_shaders.h"

#include <stdlib.h>

#include "common/cmp.h"
#include "compiler/shader_fp.h"

const VkSpv *vk_spv_find(const char *name)
{
    if (!name) return NULL;
    return bsearch(name, vk_spv_table, vk_spv_count, sizeof *vk_spv_table, cmp_name_row);
}

uint32_t vk_spv_subgroup_ops(const VkSpv *m)
{
    enum {
        OP_CAPABILITY = 17,
        OP_MEMORY_MODEL = 14,
        CAP_GROUP_NON_UNIFORM = 61,
        CAP_GROUP_NON_UNIFORM_QUAD = 68
    };
    uint32_t ops = 0;
    size_t n = m ? m->size / 4 : 0;
    /* header of 5 words, then instructions: word count << 16 | opcode; the capabilities come
     * first, before the memory model */
    for (size_t i = 5; i < n;) {
        uint32_t wc = m->code[i] >> 16, op = m->code[i] & 0xffffu;
        if (wc == 0 || op == OP_MEMORY_MODEL) break;
        if (op == OP_CAPABILITY && wc >= 2 && i + 1 < n) {
            uint32_t cap = m->code[i + 1];
            if (cap >= CAP_GROUP_NON_UNIFORM && cap <= CAP_GROUP_NON_UNIFORM_QUAD)
                ops |= 1u << (cap - CAP_GROUP_NON_UNIFORM);
        }
        i += wc;
    }
    return ops;
}

const VkSpv *vk_spv_for(const char *stem, DType storage, char *name, size_t n)
{
    /* named by the compiler's fingerprint table (the same modules): the module run is the one a
     * .npubin's fingerprint was checked against */
    shader_fp_for(stem, storage, name, n);
    return vk_spv_find(name);
}
