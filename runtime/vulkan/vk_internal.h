/* Private to runtime/vk_*.c: the structs behind the opaque handles of vk_core.h and the helpers
 * the core files share. Includes the Vulkan headers; nothing outside runtime/vk_* may include it.
 */
#ifndef NPU_VK_INTERNAL_H
#define NPU_VK_INTERNAL_H

#include <vulkan/vulkan.h>

#include "runtime/vulkan/vk_core.h"

#define VK_MAX_BINDINGS 16
#define VK_MAX_VALIDATION_MSGS 8

struct VkCtx {
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger;
    PFN_vkSubmitDebugUtilsMessageEXT submit_message;
    VkPhysicalDevice phys;
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family;
    PFN_vkCmdPushDescriptorSetKHR push_descriptor_set; /* NULL: descriptor sets */
    VkPhysicalDeviceMemoryProperties mem;
    VkDeviceInfo info;
    VkPipelineCache cache;
    char *cache_path;
    bool force_staging;
    bool validating; /* the validation layer is enabled on the instance */
    bool pipe_stats; /* NPU_VK_PIPE_STATS: print each pipeline's executable statistics */
    /* Fence waits poll for up to spin_ns before sleeping in the driver: the sleep's wake-up
     * cost ~0.1-0.4 ms per decode step on the H100 (bench/NOTES.md). GPUs only (on lavapipe
     * the polling thread would take a core from the device's own threads); NPU_VK_WAIT=block
     * or spin overrides. */
    uint64_t spin_ns;
    /* Staged copies (device memory not host-visible): grown on demand, reused. */
    VkCommandPool copy_pool;
    VkCommandBuffer copy_cb;
    VkFence copy_fence;
    VkBuf *staging;
    /* Pipelines made on this device, kept until it goes (vk_pipe.c): a plan recompiled after a
     * fusion toggle, or a second backend sharing the device, reuses those whose SPIR-V,
     * specialization and layout are the same instead of compiling them again. */
    VkPipe **pool;
    int npool, cappool;
    /* The clock warm-up's spin while it runs (vk_warm.c), else NULL. */
    struct VkWarm *warm;
    /* Validation messenger state. */
    int val_errors, val_warnings, val_nmsgs;
    char *val_msgs[VK_MAX_VALIDATION_MSGS];
};

struct VkBuf {
    VkCtx *ctx;
    VkBuffer buffer;
    VkDeviceMemory memory;
    uint64_t size;
    VkBufKind kind;
    void *map; /* NULL when not host-visible (or force_staging) */
    /* mapped but not host-cached: the CPU reads it uncached, over PCIe on a discrete GPU with
     * a ReBAR heap (the H100's decode step spent ~12 ms outside the GPU reading 300 KB of
     * logits that way), so downloads go through a GPU copy into cached staging memory */
    bool uncached;
    char name[64];
};

struct VkPipe {
    VkCtx *ctx;
    VkShaderModule module;
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    VkPipeline pipeline;
    uint32_t push_size, nbindings;
    char name[64];
    /* the pool's key: what vkCreateComputePipelines was given */
    uint64_t code_hash;
    size_t code_size;
    uint32_t nspec, spec[64];
    bool pooled; /* in ctx->pool, freed with the device; else freed by vk_pipe_destroy */
};

/* Destroys every pipeline of the pool (at the device's end). */
void vk_pipe_pool_destroy(VkCtx *ctx);

/* Sanitizer builds: keep the loaded driver and layers mapped to exit (vk_pin.c). */
void vk_pin_driver_libraries(void);

/* A "VkResult: what" diagnostic; returns st. */
Status vk_fail(DiagList *d, Status st, VkResult r, const char *fmt, ...) NPU_PRINTF(4, 5);
const char *vk_result_name(VkResult r);
/* Waits for a fence: polling vkGetFenceStatus for up to ctx->spin_ns, then vkWaitForFences. */
VkResult vk_wait_fence(VkCtx *ctx, VkFence f, uint64_t timeout_ns);

/* Pipeline cache: load at context creation (tolerates missing or corrupt files), save at destroy.
 */
Status vk_cache_load(VkCtx *ctx, const char *path, DiagList *d);
void vk_cache_destroy(VkCtx *ctx);

#endif
