/* Vulkan context: instance (+ validation layer and its messenger), device choice and facts,
 * logical device and compute queue. Buffers are in vk_mem.c, pipelines and the pipeline cache in
 * vk_pipe.c, command buffers in vk_record.c. */
#include "runtime/vulkan/vk_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define VALIDATION_LAYER "VK_LAYER_KHRONOS_validation"

const char *vk_result_name(VkResult r)
{
    switch (r) {
    case VK_SUCCESS:
        return "VK_SUCCESS";
    case VK_NOT_READY:
        return "VK_NOT_READY";
    case VK_TIMEOUT:
        return "VK_TIMEOUT";
    case VK_INCOMPLETE:
        return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY:
        return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
        return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED:
        return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST:
        return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED:
        return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT:
        return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT:
        return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT:
        return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER:
        return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS:
        return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_FORMAT_NOT_SUPPORTED:
        return "VK_ERROR_FORMAT_NOT_SUPPORTED";
    case VK_ERROR_FRAGMENTED_POOL:
        return "VK_ERROR_FRAGMENTED_POOL";
    case VK_ERROR_OUT_OF_POOL_MEMORY:
        return "VK_ERROR_OUT_OF_POOL_MEMORY";
    case VK_ERROR_INVALID_SHADER_NV:
        return "VK_ERROR_INVALID_SHADER_NV";
    default:
        return "VkResult";
    }
}

Status vk_fail(DiagList *d, Status st, VkResult r, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY) st = ST_NOMEM;
    return diag_add(d, DIAG_ERROR, st, NULL, NULL, NULL, "%s (%s, %d)", msg, vk_result_name(r),
                    (int)r);
}

const char *vk_dev_type_name(VkDevType t)
{
    switch (t) {
    case VKDEV_DISCRETE:
        return "discrete";
    case VKDEV_INTEGRATED:
        return "integrated";
    case VKDEV_VIRTUAL:
        return "virtual";
    case VKDEV_CPU:
        return "cpu";
    case VKDEV_OTHER:
        return "other";
    }
    return "other";
}

VkCtxOptions vk_ctx_options_default(void)
{
    VkCtxOptions o = {.device_index = -1, .validate = -1};
    return o;
}

/* ---- validation messenger ----------------------------------------------------------------- */

static VKAPI_ATTR VkBool32 VKAPI_CALL
on_debug_message(VkDebugUtilsMessageSeverityFlagBitsEXT sev, VkDebugUtilsMessageTypeFlagsEXT types,
                 const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    (void)types;
    VkCtx *ctx = user;
    if (sev & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
        if (ctx->val_nmsgs < VK_MAX_VALIDATION_MSGS && data && data->pMessage) {
            size_t n = strlen(data->pMessage) + 1;
            char *m = malloc(n);
            if (m) {
                memcpy(m, data->pMessage, n);
                ctx->val_msgs[ctx->val_nmsgs++] = m;
            }
        }
        ctx->val_errors++;
    } else if (sev & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
        ctx->val_warnings++;
    }
    return VK_FALSE;
}

int vk_validation_errors(const VkCtx *ctx)
{
    return ctx ? ctx->val_errors : 0;
}

const char *vk_validation_message(const VkCtx *ctx, int i)
{
    return ctx && i >= 0 && i < ctx->val_nmsgs ? ctx->val_msgs[i] : NULL;
}

void vk_validation_inject(VkCtx *ctx, const char *msg)
{
    if (!ctx || !ctx->submit_message) return;
    VkDebugUtilsMessengerCallbackDataEXT data = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CALLBACK_DATA_EXT,
        .pMessageIdName = "npu-inject",
        .pMessage = msg,
    };
    ctx->submit_message(ctx->instance, VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
                        VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT, &data);
}

/* ---- instance ----------------------------------------------------------------------------- */

static bool want_validation(const VkCtxOptions *opt)
{
    if (opt->validate >= 0) return opt->validate != 0;
    const char *e = getenv("NPU_VK_VALIDATE");
    return e && *e && strcmp(e, "0") != 0;
}

static bool has_layer(const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || n == 0) return false;
    VkLayerProperties *p = calloc(n, sizeof *p);
    bool found = false;
    if (p && vkEnumerateInstanceLayerProperties(&n, p) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++)
            found = strcmp(p[i].layerName, name) == 0;
    free(p);
    return found;
}

static bool has_instance_ext(const char *layer, const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateInstanceExtensionProperties(layer, &n, NULL) != VK_SUCCESS || n == 0)
        return false;
    VkExtensionProperties *p = calloc(n, sizeof *p);
    bool found = false;
    if (p && vkEnumerateInstanceExtensionProperties(layer, &n, p) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++)
            found = strcmp(p[i].extensionName, name) == 0;
    free(p);
    return found;
}

static Status create_instance(VkCtx *ctx, bool validate, DiagList *d)
{
    if (validate && !has_layer(VALIDATION_LAYER)) {
        diag_add(d, DIAG_WARNING, ST_OK, NULL, NULL, NULL,
                 "NPU_VK_VALIDATE: layer %s is not installed (package vulkan-validationlayers); "
                 "running without validation",
                 VALIDATION_LAYER);
        validate = false;
    }
    bool debug_utils = validate && has_instance_ext(NULL, VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    bool features =
        validate && has_instance_ext(VALIDATION_LAYER, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
    const char *exts[3];
    uint32_t next = 0;
    if (debug_utils) exts[next++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    if (features) exts[next++] = VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME;
    const char *layers[] = {VALIDATION_LAYER};

    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "npu-explore",
        .pEngineName = "npu-explore",
        .apiVersion = VK_API_VERSION_1_2,
    };
    VkDebugUtilsMessengerCreateInfoEXT mci = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = on_debug_message,
        .pUserData = ctx,
    };
    /* Synchronization validation finds missing barriers that NVIDIA's strong ordering hides. */
    VkValidationFeatureEnableEXT enables[] = {
        VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
    VkValidationFeaturesEXT vf = {
        .sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
        .enabledValidationFeatureCount = 1,
        .pEnabledValidationFeatures = enables,
    };
    const void *chain = NULL;
    if (debug_utils) chain = &mci;
    if (features) {
        vf.pNext = chain;
        chain = &vf;
    }
    VkInstanceCreateInfo ici = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pNext = chain,
        .pApplicationInfo = &app,
        .enabledLayerCount = validate ? 1u : 0u,
        .ppEnabledLayerNames = layers,
        .enabledExtensionCount = next,
        .ppEnabledExtensionNames = exts,
    };
    VkResult r = vkCreateInstance(&ici, NULL, &ctx->instance);
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
        return vk_fail(d, ST_NO_DEVICE, r,
                       "no Vulkan device found (is mesa-vulkan-drivers installed?): the loader "
                       "found no driver supporting Vulkan 1.2");
    if (r != VK_SUCCESS) {
        ctx->instance = VK_NULL_HANDLE;
        return vk_fail(d, ST_NO_DEVICE, r, "vkCreateInstance failed");
    }
    ctx->validating = validate;
    vk_pin_driver_libraries();
    if (debug_utils) {
        PFN_vkCreateDebugUtilsMessengerEXT create =
            (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
                ctx->instance, "vkCreateDebugUtilsMessengerEXT");
        ctx->destroy_messenger = (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
            ctx->instance, "vkDestroyDebugUtilsMessengerEXT");
        ctx->submit_message = (PFN_vkSubmitDebugUtilsMessageEXT)vkGetInstanceProcAddr(
            ctx->instance, "vkSubmitDebugUtilsMessageEXT");
        if (!create || !ctx->destroy_messenger ||
            create(ctx->instance, &mci, NULL, &ctx->messenger) != VK_SUCCESS) {
            ctx->messenger = VK_NULL_HANDLE;
            ctx->submit_message = NULL;
            diag_add(d, DIAG_WARNING, ST_OK, NULL, NULL, NULL,
                     "validation layer active but its messages cannot be counted "
                     "(vkCreateDebugUtilsMessengerEXT failed)");
        }
    }
    return ST_OK;
}

/* ---- physical devices --------------------------------------------------------------------- */

static bool has_device_ext(VkPhysicalDevice pd, const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS || n == 0)
        return false;
    VkExtensionProperties *p = calloc(n, sizeof *p);
    bool found = false;
    if (p && vkEnumerateDeviceExtensionProperties(pd, NULL, &n, p) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++)
            found = strcmp(p[i].extensionName, name) == 0;
    free(p);
    return found;
}

/* The compute queue family we use: the first with timestamps, else the first with compute;
 * UINT32_MAX when there is none. */
static uint32_t pick_queue_family(VkPhysicalDevice pd, uint32_t *ts_bits)
{
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
    VkQueueFamilyProperties *q = calloc(n ? n : 1, sizeof *q);
    uint32_t best = UINT32_MAX;
    *ts_bits = 0;
    if (!q) return best;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, q);
    for (uint32_t i = 0; i < n; i++) {
        if (!(q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || q[i].queueCount == 0) continue;
        if (best == UINT32_MAX || (*ts_bits == 0 && q[i].timestampValidBits > 0)) {
            best = i;
            *ts_bits = q[i].timestampValidBits;
        }
    }
    free(q);
    return best;
}

static VkDevType dev_type(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
        return VKDEV_DISCRETE;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
        return VKDEV_INTEGRATED;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
        return VKDEV_VIRTUAL;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
        return VKDEV_CPU;
    default:
        return VKDEV_OTHER;
    }
}

/* Does the device offer what the nv-coopmat tier's shaders use (VkDeviceInfo.coopmat_nv)? */
static bool probe_coopmat_nv(VkInstance inst, VkPhysicalDevice pd, const VkDeviceInfo *o)
{
    if (!o->f16_arith || !o->storage16 || !o->memory_model || o->subgroup_size != 32 ||
        !has_device_ext(pd, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME))
        return false;
    VkPhysicalDeviceCooperativeMatrixFeaturesNV cf = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
    VkPhysicalDeviceFeatures2 f = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                   .pNext = &cf};
    vkGetPhysicalDeviceFeatures2(pd, &f);
    VkPhysicalDeviceCooperativeMatrixPropertiesNV cp = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_NV};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                      .pNext = &cp};
    vkGetPhysicalDeviceProperties2(pd, &p2);
    PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV get =
        (PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV)vkGetInstanceProcAddr(
            inst, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV");
    uint32_t n = 0;
    if (!cf.cooperativeMatrix ||
        !(cp.cooperativeMatrixSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT) || !get ||
        get(pd, &n, NULL) != VK_SUCCESS || n == 0)
        return false;
    VkCooperativeMatrixPropertiesNV *m = calloc(n, sizeof *m);
    bool ok = false;
    if (!m) return false;
    for (uint32_t i = 0; i < n; i++)
        m[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV;
    VkResult r = get(pd, &n, m);
    if (r == VK_SUCCESS || r == VK_INCOMPLETE)
        for (uint32_t i = 0; i < n && !ok; i++)
            ok = m[i].MSize == 16 && m[i].NSize == 16 && m[i].KSize == 16 &&
                 m[i].AType == VK_COMPONENT_TYPE_FLOAT16_NV &&
                 m[i].BType == VK_COMPONENT_TYPE_FLOAT16_NV &&
                 m[i].CType == VK_COMPONENT_TYPE_FLOAT32_NV &&
                 m[i].DType == VK_COMPONENT_TYPE_FLOAT32_NV && m[i].scope == VK_SCOPE_SUBGROUP_NV;
    free(m);
    return ok;
}

/* Fills the facts of one physical device; returns the queue family (UINT32_MAX: no compute). */
static uint32_t describe(VkInstance inst, VkPhysicalDevice pd, int index, VkDeviceInfo *o,
                         VkPhysicalDeviceMemoryProperties *mem_out)
{
    memset(o, 0, sizeof *o);
    o->index = index;
    VkPhysicalDeviceProperties base;
    vkGetPhysicalDeviceProperties(pd, &base);
    bool v12 = base.apiVersion >= VK_API_VERSION_1_2;
    bool push = has_device_ext(pd, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);

    VkPhysicalDevicePushDescriptorPropertiesKHR pushp = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PUSH_DESCRIPTOR_PROPERTIES_KHR};
    VkPhysicalDeviceMaintenance3Properties m3 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES,
        .pNext = push ? &pushp : NULL};
    VkPhysicalDeviceSubgroupProperties sg = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, .pNext = &m3};
    VkPhysicalDeviceDriverProperties drv = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES, .pNext = &sg};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                      .pNext = v12 ? (void *)&drv : (void *)&sg};
    vkGetPhysicalDeviceProperties2(pd, &p2);
    const VkPhysicalDeviceLimits *L = &p2.properties.limits;

    snprintf(o->name, sizeof o->name, "%s", base.deviceName);
    if (v12)
        snprintf(o->driver, sizeof o->driver, "%.120s: %.120s", drv.driverName, drv.driverInfo);
    else
        snprintf(o->driver, sizeof o->driver, "driver version 0x%x", base.driverVersion);
    o->type = dev_type(base.deviceType);
    o->vendor_id = base.vendorID;
    o->device_id = base.deviceID;
    o->api_version = base.apiVersion;
    o->subgroup_size = sg.subgroupSize;
    o->subgroup_ops =
        (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) ? sg.supportedOperations : 0;
    o->max_shared_memory = L->maxComputeSharedMemorySize;
    o->max_workgroup_invocations = L->maxComputeWorkGroupInvocations;
    for (int i = 0; i < 3; i++)
        o->max_workgroup_count[i] = L->maxComputeWorkGroupCount[i];
    o->max_push_constants = L->maxPushConstantsSize;
    o->max_push_descriptors = push ? pushp.maxPushDescriptors : 0;
    o->max_storage_buffer_range = L->maxStorageBufferRange;
    o->max_allocation_size = m3.maxMemoryAllocationSize;
    o->storage_offset_align = L->minStorageBufferOffsetAlignment;
    o->timestamp_period_ns = L->timestampPeriod;

    VkPhysicalDeviceMemoryProperties mem;
    vkGetPhysicalDeviceMemoryProperties(pd, &mem);
    uint32_t big = 0;
    for (uint32_t h = 0; h < mem.memoryHeapCount; h++)
        if ((mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) &&
            mem.memoryHeaps[h].size > o->device_local_bytes) {
            o->device_local_bytes = mem.memoryHeaps[h].size;
            big = h;
        }
    /* Host-visible device memory counts only over the whole big heap (full ReBAR, UMA, CPU);
     * a 256 MiB BAR window is not where our arenas go. */
    const VkMemoryPropertyFlags hv = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
                                     VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    for (uint32_t t = 0; t < mem.memoryTypeCount; t++)
        if ((mem.memoryTypes[t].propertyFlags & hv) == hv && mem.memoryTypes[t].heapIndex == big)
            o->device_local_host_visible = true;
    if (mem_out) *mem_out = mem;

    if (v12) {
        VkPhysicalDeviceVulkan12Features f12 = {
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
        VkPhysicalDeviceVulkan11Features f11 = {
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, .pNext = &f12};
        VkPhysicalDeviceFeatures2 f = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                       .pNext = &f11};
        vkGetPhysicalDeviceFeatures2(pd, &f);
        o->f16_arith = f12.shaderFloat16;
        o->storage16 = f11.storageBuffer16BitAccess;
        o->int16 = f.features.shaderInt16;
        o->int64 = f.features.shaderInt64;
        o->memory_model = f12.vulkanMemoryModel;
        o->coopmat_nv = probe_coopmat_nv(inst, pd, o);
    }
    o->push_descriptors = push; /* what the device offers; the context may decline */
    uint32_t qf = pick_queue_family(pd, &o->timestamp_valid_bits);
    o->timestamps = o->timestamp_valid_bits > 0 && o->timestamp_period_ns > 0;
    return qf;
}

static Status enumerate(VkInstance inst, VkPhysicalDevice **pds, uint32_t *n, DiagList *d)
{
    *pds = NULL;
    *n = 0;
    VkResult r = vkEnumeratePhysicalDevices(inst, n, NULL);
    if (r != VK_SUCCESS) return vk_fail(d, ST_NO_DEVICE, r, "vkEnumeratePhysicalDevices failed");
    if (*n == 0)
        return diag_add(d, DIAG_ERROR, ST_NO_DEVICE, NULL, NULL, NULL,
                        "no Vulkan device found (is mesa-vulkan-drivers installed?)");
    *pds = calloc(*n, sizeof **pds);
    if (!*pds) return diag_add(d, DIAG_ERROR, ST_NOMEM, NULL, NULL, NULL, "out of memory");
    r = vkEnumeratePhysicalDevices(inst, n, *pds);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        free(*pds);
        *pds = NULL;
        return vk_fail(d, ST_NO_DEVICE, r, "vkEnumeratePhysicalDevices failed");
    }
    return ST_OK;
}

/* Why a device cannot be used, or NULL. */
static const char *unusable(const VkDeviceInfo *o, uint32_t qf)
{
    if (o->api_version < VK_API_VERSION_1_2) return "it supports only Vulkan < 1.2";
    if (qf == UINT32_MAX) return "it has no compute queue";
    return NULL;
}

static int type_rank(VkDevType t)
{
    switch (t) {
    case VKDEV_DISCRETE:
        return 0;
    case VKDEV_INTEGRATED:
        return 1;
    case VKDEV_VIRTUAL:
        return 2;
    case VKDEV_CPU:
        return 3;
    case VKDEV_OTHER:
        return 4;
    }
    return 4;
}

static Status pick_device(VkCtx *ctx, int want, DiagList *d)
{
    VkPhysicalDevice *pds;
    uint32_t n;
    Status st = enumerate(ctx->instance, &pds, &n, d);
    if (st != ST_OK) return st;
    VkDeviceInfo info;
    int best = -1, best_rank = 99;
    uint32_t best_qf = 0;
    char list[512] = "";
    size_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t qf = describe(ctx->instance, pds[i], (int)i, &info, NULL);
        if (k < sizeof list)
            k += (size_t)snprintf(list + k, sizeof list - k, "%s%u = %s (%s)", i ? ", " : "", i,
                                  info.name, vk_dev_type_name(info.type));
        const char *why = unusable(&info, qf);
        if ((int)i == want && why) {
            free(pds);
            return diag_add(d, DIAG_ERROR, ST_NO_DEVICE, NULL, NULL, NULL,
                            "Vulkan device %d (%s) cannot be used: %s", want, info.name, why);
        }
        if (why || (want >= 0 && (int)i != want)) continue;
        if (best < 0 || type_rank(info.type) < best_rank) {
            best = (int)i;
            best_rank = type_rank(info.type);
            best_qf = qf;
        }
    }
    if (best < 0) {
        free(pds);
        if (want >= 0)
            return diag_add(d, DIAG_ERROR, ST_NO_DEVICE, NULL, NULL, NULL,
                            "Vulkan device index %d does not exist; %u device(s): %s", want, n,
                            list);
        return diag_add(d, DIAG_ERROR, ST_NO_DEVICE, NULL, NULL, NULL,
                        "no usable Vulkan device (need Vulkan 1.2 and a compute queue); "
                        "devices: %s",
                        list);
    }
    ctx->phys = pds[best];
    ctx->queue_family = best_qf;
    describe(ctx->instance, ctx->phys, best, &ctx->info, &ctx->mem);
    free(pds);
    return ST_OK;
}

Status vk_list_devices(VkDeviceInfo *out, int max, int *count, DiagList *d)
{
    *count = 0;
    VkCtx tmp = {0};
    Status st = create_instance(&tmp, false, d);
    if (st != ST_OK) return st;
    VkPhysicalDevice *pds;
    uint32_t n;
    st = enumerate(tmp.instance, &pds, &n, d);
    if (st == ST_OK) {
        for (uint32_t i = 0; i < n; i++)
            if ((int)i < max) {
                describe(tmp.instance, pds[i], (int)i, &out[i], NULL);
                out[i].push_descriptors = false;
            }
        *count = (int)n;
    }
    free(pds);
    vkDestroyInstance(tmp.instance, NULL);
    return st;
}

/* ---- logical device ----------------------------------------------------------------------- */

static Status create_device(VkCtx *ctx, const VkCtxOptions *opt, DiagList *d)
{
    VkDeviceInfo *o = &ctx->info;
    float prio = 1.0f;
    VkDeviceQueueCreateInfo q = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = ctx->queue_family,
        .queueCount = 1,
        .pQueuePriorities = &prio,
    };
    /* Enable exactly the wanted features the device reports (describe() read them). */
    VkPhysicalDeviceCooperativeMatrixFeaturesNV cmf = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV,
        .cooperativeMatrix = VK_TRUE,
    };
    /* the memory model only for the coopmat modules (their SPIR-V declares it) */
    if (!o->coopmat_nv) o->memory_model = false;
    VkPhysicalDeviceVulkan12Features f12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
        .pNext = o->coopmat_nv ? &cmf : NULL,
        .shaderFloat16 = o->f16_arith,
        .vulkanMemoryModel = o->memory_model,
    };
    VkPhysicalDeviceVulkan11Features f11 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
        .pNext = &f12,
        .storageBuffer16BitAccess = o->storage16,
    };
    VkPhysicalDeviceFeatures2 f = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
        .pNext = &f11,
        .features = {.shaderInt16 = o->int16, .shaderInt64 = o->int64},
    };
    o->push_descriptors = o->push_descriptors && !opt->no_push_descriptors;
    if (!o->push_descriptors) o->max_push_descriptors = 0;
    const char *exts[3];
    uint32_t next = 0;
    if (o->push_descriptors) exts[next++] = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
    if (o->coopmat_nv) exts[next++] = VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME;
    /* NPU_VK_PIPE_STATS=1: every pipeline's executable statistics (NVIDIA: registers, stack,
     * shared memory, binary size) on stderr at creation (vk_pipe.c), where the driver has them */
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pe = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR,
        .pipelineExecutableInfo = VK_TRUE};
    const char *ps = getenv("NPU_VK_PIPE_STATS");
    bool want = ps && *ps && strcmp(ps, "0") != 0;
    ctx->pipe_stats =
        want && has_device_ext(ctx->phys, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    if (ctx->pipe_stats) {
        exts[next++] = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
        pe.pNext = f12.pNext;
        f12.pNext = &pe;
    } else if (want) {
        fprintf(stderr, "NPU_VK_PIPE_STATS: '%s' lacks VK_KHR_pipeline_executable_properties\n",
                o->name);
    }
    VkDeviceCreateInfo dci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pNext = &f,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = &q,
        .enabledExtensionCount = next,
        .ppEnabledExtensionNames = exts,
    };
    VkResult r = vkCreateDevice(ctx->phys, &dci, NULL, &ctx->device);
    if (r != VK_SUCCESS) {
        ctx->device = VK_NULL_HANDLE;
        return vk_fail(d, ST_NO_DEVICE, r, "vkCreateDevice failed on '%s'", o->name);
    }
    vkGetDeviceQueue(ctx->device, ctx->queue_family, 0, &ctx->queue);
    if (o->push_descriptors) {
        ctx->push_descriptor_set = (PFN_vkCmdPushDescriptorSetKHR)vkGetDeviceProcAddr(
            ctx->device, "vkCmdPushDescriptorSetKHR");
        if (!ctx->push_descriptor_set) {
            o->push_descriptors = false;
            o->max_push_descriptors = 0;
        }
    }
    return ST_OK;
}

VkResult vk_wait_fence(VkCtx *ctx, VkFence f, uint64_t timeout_ns)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (uint64_t ns = 0; ns < ctx->spin_ns && ns < timeout_ns;) {
        VkResult r = vkGetFenceStatus(ctx->device, f);
        if (r != VK_NOT_READY) return r;
        clock_gettime(CLOCK_MONOTONIC, &t);
        ns = (uint64_t)(t.tv_sec - t0.tv_sec) * 1000000000ull + (uint64_t)t.tv_nsec -
             (uint64_t)t0.tv_nsec;
    }
    return vkWaitForFences(ctx->device, 1, &f, VK_TRUE, timeout_ns);
}

Status vk_ctx_create(const VkCtxOptions *opt, VkCtx **out, DiagList *d)
{
    *out = NULL;
    VkCtxOptions def = vk_ctx_options_default();
    if (!opt) opt = &def;
    VkCtx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return diag_add(d, DIAG_ERROR, ST_NOMEM, NULL, NULL, NULL, "out of memory");
    /* NPU_VK_STAGING=1: device buffers in device-local memory that is not host-visible, as
     * without ReBAR (a measurement aid, bench/NOTES.md) */
    const char *stg = getenv("NPU_VK_STAGING");
    ctx->force_staging = opt->force_staging || (stg && *stg && strcmp(stg, "0") != 0);
    Status st = create_instance(ctx, want_validation(opt), d);
    if (st == ST_OK) st = pick_device(ctx, opt->device_index, d);
    if (st == ST_OK) st = create_device(ctx, opt, d);
    if (st == ST_OK) st = vk_cache_load(ctx, opt->pipeline_cache_path, d);
    if (st != ST_OK) {
        vk_ctx_destroy(ctx);
        return st;
    }
    if (ctx->force_staging) ctx->info.device_local_host_visible = false;
    const char *w = getenv("NPU_VK_WAIT");
    bool gpu = ctx->info.type == VKDEV_DISCRETE || ctx->info.type == VKDEV_INTEGRATED;
    ctx->spin_ns = w && strcmp(w, "block") == 0           ? 0
                   : (w && strcmp(w, "spin") == 0) || gpu ? 20000000ull
                                                          : 0;
    ctx->info.validation = ctx->validating;
    *out = ctx;
    return ST_OK;
}

const VkDeviceInfo *vk_ctx_info(const VkCtx *ctx)
{
    return &ctx->info;
}

int vk_ctx_destroy(VkCtx *ctx)
{
    if (!ctx) return 0;
    if (ctx->device) {
        vk_warm_stop(ctx, NULL);
        vkDeviceWaitIdle(ctx->device);
        vk_buf_destroy(ctx->staging);
        if (ctx->copy_fence) vkDestroyFence(ctx->device, ctx->copy_fence, NULL);
        if (ctx->copy_pool) vkDestroyCommandPool(ctx->device, ctx->copy_pool, NULL);
        vk_pipe_pool_destroy(ctx);
        vk_cache_destroy(ctx);
        vkDestroyDevice(ctx->device, NULL);
    }
    free(ctx->cache_path);
    if (ctx->messenger) ctx->destroy_messenger(ctx->instance, ctx->messenger, NULL);
    if (ctx->instance) vkDestroyInstance(ctx->instance, NULL);
    for (int i = 0; i < ctx->val_nmsgs; i++)
        free(ctx->val_msgs[i]);
    int errors = ctx->val_errors;
    free(ctx);
    return errors;
}
