/* Compute pipelines from embedded SPIR-V, and the VkPipelineCache persisted to a file. */
#include "runtime/vulkan/vk_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/fileio.h"
#include "common/grow.h"
#include "runtime/vulkan/vk_shaders.h"

/* ---- pipeline cache ----------------------------------------------------------------------- */

/* The header every pipeline cache blob starts with (Vulkan spec, "Pipeline Cache"). Drivers are
 * meant to reject foreign data, but not all do so gracefully: we check it ourselves first. */
static bool cache_header_ok(const VkCtx *ctx, const unsigned char *data, size_t len)
{
    if (len < 16 + VK_UUID_SIZE) return false;
    uint32_t w[4];
    memcpy(w, data, sizeof w);
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(ctx->phys, &p);
    return w[0] >= 16 + VK_UUID_SIZE && w[0] <= len &&
           w[1] == VK_PIPELINE_CACHE_HEADER_VERSION_ONE && w[2] == p.vendorID &&
           w[3] == p.deviceID && memcmp(data + 16, p.pipelineCacheUUID, VK_UUID_SIZE) == 0;
}

Status vk_cache_load(VkCtx *ctx, const char *path, DiagList *d)
{
    char *data = NULL;
    size_t len = 0;
    if (path) {
        ctx->cache_path = strdup(path);
        if (!ctx->cache_path)
            return diag_add(d, DIAG_ERROR, ST_NOMEM, NULL, NULL, NULL, "out of memory");
        if (file_exists(path)) {
            DiagList scratch = {0}; /* an unreadable cache is not an error: start empty */
            if (file_read_all(path, &data, &len, &scratch) != ST_OK) len = 0;
            diag_free(&scratch);
            if (len && !cache_header_ok(ctx, (const unsigned char *)data, len)) {
                diag_add(d, DIAG_NOTE, ST_OK, path, NULL, NULL,
                         "pipeline cache is corrupt or from another driver; starting empty");
                len = 0;
            }
        }
    }
    VkPipelineCacheCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
        .initialDataSize = len,
        .pInitialData = len ? data : NULL,
    };
    VkResult r = vkCreatePipelineCache(ctx->device, &ci, NULL, &ctx->cache);
    if (r != VK_SUCCESS && len) {
        diag_add(d, DIAG_NOTE, ST_OK, path, NULL, NULL,
                 "the driver rejected the pipeline cache (%s); starting empty", vk_result_name(r));
        ci.initialDataSize = 0;
        ci.pInitialData = NULL;
        r = vkCreatePipelineCache(ctx->device, &ci, NULL, &ctx->cache);
    }
    free(data);
    if (r != VK_SUCCESS) {
        ctx->cache = VK_NULL_HANDLE;
        return vk_fail(d, ST_INTERNAL, r, "vkCreatePipelineCache failed");
    }
    return ST_OK;
}

Status vk_ctx_save_pipeline_cache(VkCtx *ctx, DiagList *d)
{
    if (!ctx || !ctx->cache || !ctx->cache_path) return ST_OK;
    size_t len = 0;
    VkResult r = vkGetPipelineCacheData(ctx->device, ctx->cache, &len, NULL);
    if (r != VK_SUCCESS) return vk_fail(d, ST_INTERNAL, r, "vkGetPipelineCacheData failed");
    void *data = malloc(len ? len : 1);
    if (!data) return diag_add(d, DIAG_ERROR, ST_NOMEM, NULL, NULL, NULL, "out of memory");
    r = vkGetPipelineCacheData(ctx->device, ctx->cache, &len, data);
    Status st = ST_OK;
    if (r != VK_SUCCESS)
        st = vk_fail(d, ST_INTERNAL, r, "vkGetPipelineCacheData failed");
    else if (file_make_parent_dirs(ctx->cache_path) != 0)
        st = diag_add(d, DIAG_ERROR, ST_BAD_INPUT, ctx->cache_path, NULL, NULL,
                      "cannot create the pipeline cache directory: %s", strerror(errno));
    else
        st = file_write_atomic(ctx->cache_path, data, len, d);
    free(data);
    return st;
}

void vk_cache_destroy(VkCtx *ctx)
{
    if (!ctx->cache) return;
    vk_ctx_save_pipeline_cache(ctx, NULL);
    vkDestroyPipelineCache(ctx->device, ctx->cache, NULL);
    ctx->cache = VK_NULL_HANDLE;
}

/* ---- pipelines ---------------------------------------------------------------------------- */

/* NPU_VK_PIPE_STATS: the driver's statistics of each executable of pipeline p (NVIDIA: register
 * count, stack, local and shared memory, binary size) on stderr, one line per executable. */
static void print_stats(const VkPipe *p, const VkPipeDesc *desc)
{
    VkDevice dev = p->ctx->device;
    PFN_vkGetPipelineExecutablePropertiesKHR props =
        (PFN_vkGetPipelineExecutablePropertiesKHR)vkGetDeviceProcAddr(
            dev, "vkGetPipelineExecutablePropertiesKHR");
    PFN_vkGetPipelineExecutableStatisticsKHR stats =
        (PFN_vkGetPipelineExecutableStatisticsKHR)vkGetDeviceProcAddr(
            dev, "vkGetPipelineExecutableStatisticsKHR");
    if (!props || !stats) return;
    VkPipelineInfoKHR pi = {.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, .pipeline = p->pipeline};
    VkPipelineExecutablePropertiesKHR ex[4];
    uint32_t nex = 4;
    for (uint32_t i = 0; i < nex; i++)
        ex[i] = (VkPipelineExecutablePropertiesKHR){
            .sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR};
    if (props(dev, &pi, &nex, ex) < 0) return;
    for (uint32_t e = 0; e < nex; e++) {
        fprintf(stderr, "pipe-stats %s spec[", p->name);
        for (uint32_t i = 0; i < desc->nspec; i++)
            fprintf(stderr, "%s%u", i ? "," : "", desc->spec[i]);
        fprintf(stderr, "] %s (subgroup %u):", ex[e].name, ex[e].subgroupSize);
        VkPipelineExecutableInfoKHR ei = {.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR,
                                          .pipeline = p->pipeline,
                                          .executableIndex = e};
        VkPipelineExecutableStatisticKHR st[32];
        uint32_t n = 32;
        for (uint32_t i = 0; i < n; i++)
            st[i] = (VkPipelineExecutableStatisticKHR){
                .sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR};
        if (stats(dev, &ei, &n, st) < 0) n = 0;
        for (uint32_t i = 0; i < n; i++) {
            fprintf(stderr, " %s=", st[i].name);
            switch (st[i].format) {
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
                fprintf(stderr, "%u", st[i].value.b32);
                break;
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
                fprintf(stderr, "%lld", (long long)st[i].value.i64);
                break;
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
                fprintf(stderr, "%llu", (unsigned long long)st[i].value.u64);
                break;
            default:
                fprintf(stderr, "%g", st[i].value.f64);
                break;
            }
        }
        fputc('\n', stderr);
    }
}

static Status check_desc(const VkCtx *ctx, const VkPipeDesc *pd, const uint32_t **code,
                         size_t *size, DiagList *d)
{
    const char *nm = pd->shader ? pd->shader : "(inline SPIR-V)";
    const VkDeviceInfo *o = &ctx->info;
    if (pd->code) {
        *code = pd->code;
        *size = pd->code_size;
    } else {
        const VkSpv *s = vk_spv_find(pd->shader);
        if (!s)
            return diag_add(d, DIAG_ERROR, ST_BAD_INPUT, NULL, nm, NULL,
                            "no embedded shader module '%s' (names are NAME.VARIANT, e.g. "
                            "'axpy.f32')",
                            nm);
        *code = s->code;
        *size = s->size;
    }
    if (*size < 20 || *size % 4 != 0 || (*code)[0] != 0x07230203u)
        return diag_add(d, DIAG_ERROR, ST_BAD_INPUT, NULL, nm, NULL,
                        "not a SPIR-V module (%zu bytes)", *size);
    if (pd->nbindings < 1 || pd->nbindings > VK_MAX_BINDINGS)
        return diag_add(d, DIAG_ERROR, ST_BAD_INPUT, NULL, nm, NULL,
                        "%u storage-buffer bindings; must be 1..%d", pd->nbindings,
                        VK_MAX_BINDINGS);
    if (o->push_descriptors && pd->nbindings > o->max_push_descriptors)
        return diag_add(d, DIAG_ERROR, ST_BAD_INPUT, NULL, nm, NULL,
                        "%u bindings exceed maxPushDescriptors %u", pd->nbindings,
                        o->max_push_descriptors);
    if (pd->push_size % 4 != 0 || pd->push_size > o->max_push_constants)
        return diag_add(d, DIAG_ERROR, ST_BAD_INPUT, NULL, nm, NULL,
                        "push constants of %u bytes: must be a multiple of 4 and <= %u "
                        "(maxPushConstantsSize)",
                        pd->push_size, o->max_push_constants);
    if (pd->nspec > 64 || (pd->nspec && !pd->spec))
        return diag_add(d, DIAG_ERROR, ST_BAD_INPUT, NULL, nm, NULL,
                        "%u specialization constants: at most 64, with values", pd->nspec);
    return ST_OK;
}

/* FNV-1a over the SPIR-V words: with the size, the pool's identity of a module. */
static uint64_t code_hash(const uint32_t *code, size_t size)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *b = (const unsigned char *)code;
    for (size_t i = 0; i < size; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static VkPipe *pool_find(VkCtx *ctx, uint64_t hash, size_t size, const VkPipeDesc *desc)
{
    for (int i = 0; i < ctx->npool; i++) {
        VkPipe *p = ctx->pool[i];
        if (p->code_hash == hash && p->code_size == size && p->nspec == desc->nspec &&
            p->push_size == desc->push_size && p->nbindings == desc->nbindings &&
            (desc->nspec == 0 || memcmp(p->spec, desc->spec, sizeof(uint32_t) * desc->nspec) == 0))
            return p;
    }
    return NULL;
}

static Status pool_add(VkCtx *ctx, VkPipe *p)
{
    VkPipe **n = grow_array(ctx->pool, ctx->npool, &ctx->cappool, sizeof *n, 64);
    if (!n) return ST_NOMEM;
    ctx->pool = n;
    ctx->pool[ctx->npool++] = p;
    return ST_OK;
}

static void pipe_free(VkPipe *p)
{
    VkDevice dev = p->ctx->device;
    if (p->pipeline) vkDestroyPipeline(dev, p->pipeline, NULL);
    if (p->layout) vkDestroyPipelineLayout(dev, p->layout, NULL);
    if (p->set_layout) vkDestroyDescriptorSetLayout(dev, p->set_layout, NULL);
    if (p->module) vkDestroyShaderModule(dev, p->module, NULL);
    free(p);
}

void vk_pipe_pool_destroy(VkCtx *ctx)
{
    for (int i = 0; i < ctx->npool; i++)
        pipe_free(ctx->pool[i]);
    free(ctx->pool);
    ctx->pool = NULL;
    ctx->npool = ctx->cappool = 0;
}

Status vk_pipe_create(VkCtx *ctx, const VkPipeDesc *desc, VkPipe **out, DiagList *d)
{
    *out = NULL;
    const uint32_t *code = NULL;
    size_t size = 0;
    Status st = check_desc(ctx, desc, &code, &size, d);
    if (st != ST_OK) return st;
    uint64_t hash = code_hash(code, size);
    /* NPU_VK_PIPE_STATS prints at creation: every pipeline is made anew then */
    VkPipe *p = ctx->pipe_stats ? NULL : pool_find(ctx, hash, size, desc);
    if (p) {
        *out = p;
        return ST_OK;
    }
    p = calloc(1, sizeof *p);
    if (!p) return diag_add(d, DIAG_ERROR, ST_NOMEM, NULL, NULL, NULL, "out of memory");
    p->ctx = ctx;
    p->code_hash = hash;
    p->code_size = size;
    p->nspec = desc->nspec;
    if (desc->nspec) memcpy(p->spec, desc->spec, sizeof(uint32_t) * desc->nspec);
    p->push_size = desc->push_size;
    p->nbindings = desc->nbindings;
    snprintf(p->name, sizeof p->name, "%s", desc->shader ? desc->shader : "(inline SPIR-V)");

    VkShaderModuleCreateInfo smi = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = size, .pCode = code};
    VkShaderModule module = VK_NULL_HANDLE;
    VkResult r = vkCreateShaderModule(ctx->device, &smi, NULL, &module);
    if (r == VK_SUCCESS) p->module = module;
    const char *what = "vkCreateShaderModule";
    if (r == VK_SUCCESS) {
        VkDescriptorSetLayoutBinding b[VK_MAX_BINDINGS];
        for (uint32_t i = 0; i < desc->nbindings; i++)
            b[i] = (VkDescriptorSetLayoutBinding){
                .binding = i,
                .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                .descriptorCount = 1,
                .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
            };
        VkDescriptorSetLayoutCreateInfo sli = {
            .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
            .flags = ctx->info.push_descriptors
                         ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR
                         : 0,
            .bindingCount = desc->nbindings,
            .pBindings = b,
        };
        VkDescriptorSetLayout sl = VK_NULL_HANDLE;
        r = vkCreateDescriptorSetLayout(ctx->device, &sli, NULL, &sl);
        if (r == VK_SUCCESS) p->set_layout = sl;
        what = "vkCreateDescriptorSetLayout";
    }
    if (r == VK_SUCCESS) {
        VkPushConstantRange pr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, desc->push_size};
        VkPipelineLayoutCreateInfo pli = {
            .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
            .setLayoutCount = 1,
            .pSetLayouts = &p->set_layout,
            .pushConstantRangeCount = desc->push_size ? 1u : 0u,
            .pPushConstantRanges = &pr,
        };
        VkPipelineLayout pl = VK_NULL_HANDLE;
        r = vkCreatePipelineLayout(ctx->device, &pli, NULL, &pl);
        if (r == VK_SUCCESS) p->layout = pl;
        what = "vkCreatePipelineLayout";
    }
    if (r == VK_SUCCESS) {
        VkSpecializationMapEntry map[64];
        for (uint32_t i = 0; i < desc->nspec; i++)
            map[i] = (VkSpecializationMapEntry){i, 4 * i, 4};
        VkSpecializationInfo spec = {desc->nspec, map, 4 * (size_t)desc->nspec, desc->spec};
        VkComputePipelineCreateInfo ci = {
            .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
            .stage =
                {
                    .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                    .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                    .module = p->module,
                    .pName = "main",
                    .pSpecializationInfo = desc->nspec ? &spec : NULL,
                },
            .layout = p->layout,
            .flags = ctx->pipe_stats ? VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR : 0,
        };
        VkPipeline pipe = VK_NULL_HANDLE;
        r = vkCreateComputePipelines(ctx->device, ctx->cache, 1, &ci, NULL, &pipe);
        if (r == VK_SUCCESS) p->pipeline = pipe;
        what = "vkCreateComputePipelines";
    }
    if (r != VK_SUCCESS) {
        st = vk_fail(d, ST_INTERNAL, r, "pipeline '%s': %s failed", p->name, what);
        pipe_free(p);
        return st;
    }
    if (ctx->pipe_stats)
        print_stats(p, desc);
    else
        p->pooled = pool_add(ctx, p) == ST_OK; /* not pooled (no memory): freed by its user */
    *out = p;
    return ST_OK;
}

/* A pooled pipeline stays with the device for the next plan that needs it (vk_ctx_destroy
 * frees it); one that could not be pooled (stats, no memory) is freed now. */
void vk_pipe_destroy(VkPipe *p)
{
    if (p && !p->pooled) pipe_free(p);
}
