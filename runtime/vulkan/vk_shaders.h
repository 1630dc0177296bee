/* Embedded SPIR-V: the build compiles each row of the kernel table (shaders/kernels.def) with
 * glslc into one module per storage variant the row lists ("axpy.f32", "axpy.f16", "axpy.bf16";
 * or just "NAME" for a row of variants "none") and tools/embed.sh spv writes them all into the
 * generated $(BUILD)/gen/shaders_spv.c, which defines the table below, sorted by name. Read-only
 * data; any module may call these. */
#ifndef NPU_VK_SHADERS_H
#define NPU_VK_SHADERS_H

#include <stddef.h>
#include <stdint.h>
#include "compiler/dtype.h"

typedef struct VkSpv {
    const char *name;     /* "axpy.f16" */
    const uint32_t *code; /* SPIR-V words, host byte order */
    size_t size;          /* bytes (a multiple of 4) */
} VkSpv;

/* Defined by the generated file: vk_spv_count rows sorted by strcmp, then a {0} sentinel. */
extern const VkSpv vk_spv_table[];
extern const size_t vk_spv_count;

/* The module called `name` ("fill.f32"), or NULL. The returned row is static data. */
const VkSpv *vk_spv_find(const char *name);
/* The module a hand-written kernel of shader `stem` runs for output storage `storage`:
 * "stem.f16" / "stem.bf16" / "stem.i32" / "stem.f32", else "stem" (a shader without variants);
 * its name goes to name[n]; NULL when neither was built. */
const VkSpv *vk_spv_for(const char *stem, DType storage, char *name, size_t n);
/* The subgroup operations module m declares (its OpCapability GroupNonUniform* instructions) as
 * VkSubgroupFeatureFlags bits (BASIC 0x1, VOTE 0x2, ARITHMETIC 0x4, BALLOT 0x8, SHUFFLE 0x10,
 * SHUFFLE_RELATIVE 0x20, CLUSTERED 0x40, QUAD 0x80): a device must support them all. */
uint32_t vk_spv_subgroup_ops(const VkSpv *m);

#endif
