/* Private to runtime/vk_*.c: the structs behind the opaque handles of vk_core.h and the helpers
 * the core files share. Includes the Vulkan headers; nothing outside runtime/vk_* may include it.
 */
#ifndef NPU_VK_INTERNAL_H
#define NPU_VK_INTERNAL_H

#include <vulkan/vulkan.h>

#include "vk_core.h"

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
    /* Staged copies (device memory not host-visible): grown on demand, reused. */
    VkCommandPool copy_pool;
    VkCommandBuffer copy_cb;
    VkFence copy_fence;
    VkBuf *staging;
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
};

/* Sanitizer builds: keep the loaded driver and layers mapped to exit (vk_pin.c). */
void vk_pin_driver_libraries(void);

/* A "VkResult: what" diagnostic; returns st. */
Status vk_fail(DiagList *d, Status st, VkResult r, const char *fmt, ...) NPU_PRINTF(4, 5);
const char *vk_result_name(VkResult r);

/* Pipeline cache: load at context creation (tolerates missing or corrupt files), save at destroy.
 */
Status vk_cache_load(VkCtx *ctx, const char *path, DiagList *d);
void vk_cache_destroy(VkCtx *ctx);

#endif
