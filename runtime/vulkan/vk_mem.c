/* Buffers: one VkBuffer + one VkDeviceMemory each (the backend sub-allocates its arenas itself),
 * mapped when host-visible; uploads and downloads by memcpy or through a staging buffer. */
#include "runtime/vulkan/vk_internal.h"

#include <stdlib.h>
#include <string.h>

#define STAGING_MAX (64ull << 20) /* staged copies go in chunks of at most this */
#define COPY_TIMEOUT_NS (60ull * 1000 * 1000 * 1000)

static int find_type(const VkCtx *ctx, uint32_t bits, VkMemoryPropertyFlags want)
{
    for (uint32_t t = 0; t < ctx->mem.memoryTypeCount; t++)
        if ((bits & (1u << t)) && (ctx->mem.memoryTypes[t].propertyFlags & want) == want)
            return (int)t;
    return -1;
}

/* Preference lists per kind; the first type that exists wins. */
static int pick_type(const VkCtx *ctx, uint32_t bits, VkBufKind kind, bool *mapped)
{
    const VkMemoryPropertyFlags DL = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                                HV = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                HC = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    int t = -1;
    *mapped = true;
    if (kind == VKBUF_HOST) {
        t = find_type(ctx, bits, HV | HC); /* cached: reads back fast */
        if (t < 0) t = find_type(ctx, bits, HV);
        return t;
    }
    if (ctx->info.device_local_host_visible) t = find_type(ctx, bits, DL | HV);
    if (t >= 0) return t;
    *mapped = false;
    t = find_type(ctx, bits, DL);
    return t >= 0 ? t : find_type(ctx, bits, 0);
}

uint64_t vk_align_offset(const VkCtx *ctx, uint64_t off)
{
    uint64_t a = ctx->info.storage_offset_align ? ctx->info.storage_offset_align : 1;
    return (off + a - 1) / a * a;
}

Status vk_buf_create(VkCtx *ctx, uint64_t size, VkBufKind kind, const char *name, VkBuf **out,
                     DiagList *d)
{
    *out = NULL;
    const char *nm = name ? name : "(unnamed)";
    if (size == 0)
        return diag_add(d, DIAG_ERROR, ST_BAD_INPUT, NULL, NULL, nm, "buffer of 0 bytes");
    if (size > ctx->info.max_allocation_size)
        return diag_add(d, DIAG_ERROR, ST_BAD_INPUT, NULL, NULL, nm,
                        "buffer of %llu bytes exceeds the device's maxMemoryAllocationSize "
                        "(%llu bytes on '%s'): split it",
                        (unsigned long long)size, (unsigned long long)ctx->info.max_allocation_size,
                        ctx->info.name);
    size = (size + 3) / 4 * 4; /* whole 32-bit words: a binding's range may be rounded up to one */
    VkBuf *b = calloc(1, sizeof *b);
    if (!b) return diag_add(d, DIAG_ERROR, ST_NOMEM, NULL, NULL, nm, "out of memory");
    b->ctx = ctx;
    b->size = size;
    b->kind = kind;
    snprintf(b->name, sizeof b->name, "%s", nm);

    VkBufferCreateInfo bi = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = size,
        .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                 VK_BUFFER_USAGE_TRANSFER_DST_BIT,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    VkBuffer buffer = VK_NULL_HANDLE;
    VkResult r = vkCreateBuffer(ctx->device, &bi, NULL, &buffer);
    Status st = ST_OK;
    if (r != VK_SUCCESS) {
        st = vk_fail(d, ST_INTERNAL, r, "buffer '%s' (%llu bytes): vkCreateBuffer failed", nm,
                     (unsigned long long)size);
        goto fail;
    }
    b->buffer = buffer;
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(ctx->device, b->buffer, &req);
    bool mapped;
    int type = pick_type(ctx, req.memoryTypeBits, kind, &mapped);
    if (type < 0) {
        st = diag_add(d, DIAG_ERROR, ST_INTERNAL, NULL, NULL, nm, "no memory type for a %s buffer",
                      kind == VKBUF_HOST ? "host" : "device");
        goto fail;
    }
    if (kind == VKBUF_DEVICE && ctx->force_staging) mapped = false;
    VkMemoryAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = req.size,
        .memoryTypeIndex = (uint32_t)type,
    };
    VkDeviceMemory memory = VK_NULL_HANDLE;
    r = vkAllocateMemory(ctx->device, &ai, NULL, &memory);
    if (r != VK_SUCCESS) {
        st = vk_fail(d, ST_NOMEM, r, "buffer '%s': cannot allocate %llu bytes of %s memory", nm,
                     (unsigned long long)req.size, kind == VKBUF_HOST ? "host" : "device");
        goto fail;
    }
    b->memory = memory;
    b->uncached = !(ctx->mem.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    r = vkBindBufferMemory(ctx->device, b->buffer, b->memory, 0);
    if (r == VK_SUCCESS && mapped)
        r = vkMapMemory(ctx->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->map);
    if (r != VK_SUCCESS) {
        b->map = NULL;
        st = vk_fail(d, ST_INTERNAL, r, "buffer '%s': binding or mapping memory failed", nm);
        goto fail;
    }
    *out = b;
    return ST_OK;
fail:
    vk_buf_destroy(b);
    return st;
}

void vk_buf_destroy(VkBuf *b)
{
    if (!b) return;
    VkDevice dev = b->ctx->device;
    if (b->map) vkUnmapMemory(dev, b->memory);
    if (b->buffer) vkDestroyBuffer(dev, b->buffer, NULL);
    if (b->memory) vkFreeMemory(dev, b->memory, NULL);
    free(b);
}

uint64_t vk_buf_size(const VkBuf *b)
{
    return b->size;
}

void *vk_buf_map(VkBuf *b)
{
    return b->map;
}

/* ---- staged copies ------------------------------------------------------------------------ */

static Status ensure_staging(VkCtx *ctx, uint64_t want, DiagList *d)
{
    if (!ctx->copy_fence) { /* all three or none, so a failure here is retried cleanly */
        VkCommandPoolCreateInfo pi = {
            .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
            .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT |
                     VK_COMMAND_POOL_CREATE_TRANSIENT_BIT,
            .queueFamilyIndex = ctx->queue_family,
        };
        VkCommandPool pool = VK_NULL_HANDLE;
        VkFence fence = VK_NULL_HANDLE;
        VkResult r = vkCreateCommandPool(ctx->device, &pi, NULL, &pool);
        if (r == VK_SUCCESS) {
            VkCommandBufferAllocateInfo ai = {
                .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                .commandPool = pool,
                .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                .commandBufferCount = 1,
            };
            r = vkAllocateCommandBuffers(ctx->device, &ai, &ctx->copy_cb);
        }
        if (r == VK_SUCCESS) {
            VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
            r = vkCreateFence(ctx->device, &fi, NULL, &fence);
        }
        if (r != VK_SUCCESS) {
            if (pool) vkDestroyCommandPool(ctx->device, pool, NULL);
            ctx->copy_cb = VK_NULL_HANDLE;
            return vk_fail(d, ST_INTERNAL, r, "staging: cannot create the copy command buffer");
        }
        ctx->copy_pool = pool;
        ctx->copy_fence = fence;
    }
    if (want > STAGING_MAX) want = STAGING_MAX;
    if (ctx->staging && ctx->staging->size >= want) return ST_OK;
    vk_buf_destroy(ctx->staging);
    ctx->staging = NULL;
    uint64_t size = want < (1u << 20) ? (1u << 20) : want;
    return vk_buf_create(ctx, size, VKBUF_HOST, "staging", &ctx->staging, d);
}

/* Copies `n` bytes src[so..] -> dst[do..] on the queue and waits. The trailing barrier makes the
 * copy visible to later shaders, copies and host reads. */
static Status copy_and_wait(VkCtx *ctx, VkBuf *src, uint64_t so, VkBuf *dst, uint64_t dof,
                            uint64_t n, DiagList *d)
{
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    if (ctx->warm) vk_warm_stop(ctx, NULL); /* the copy would wait behind the spin */
    VkResult r = vkResetCommandBuffer(ctx->copy_cb, 0);
    if (r == VK_SUCCESS) r = vkBeginCommandBuffer(ctx->copy_cb, &bi);
    if (r != VK_SUCCESS) return vk_fail(d, ST_INTERNAL, r, "staging: begin command buffer");
    /* Earlier shader work may still read or write dst / src (WAR, WAW, RAW). */
    VkMemoryBarrier pre = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                           .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                           .dstAccessMask =
                               VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
    vkCmdPipelineBarrier(ctx->copy_cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &pre, 0, NULL, 0, NULL);
    VkBufferCopy region = {so, dof, n};
    vkCmdCopyBuffer(ctx->copy_cb, src->buffer, dst->buffer, 1, &region);
    VkMemoryBarrier post = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                            .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                            .dstAccessMask =
                                VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
                                VK_ACCESS_HOST_READ_BIT};
    vkCmdPipelineBarrier(ctx->copy_cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
                             VK_PIPELINE_STAGE_HOST_BIT,
                         0, 1, &post, 0, NULL, 0, NULL);
    r = vkEndCommandBuffer(ctx->copy_cb);
    if (r != VK_SUCCESS) return vk_fail(d, ST_INTERNAL, r, "staging: end command buffer");
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &ctx->copy_cb};
    r = vkResetFences(ctx->device, 1, &ctx->copy_fence);
    if (r == VK_SUCCESS) r = vkQueueSubmit(ctx->queue, 1, &si, ctx->copy_fence);
    if (r == VK_SUCCESS) r = vk_wait_fence(ctx, ctx->copy_fence, COPY_TIMEOUT_NS);
    if (r != VK_SUCCESS) return vk_fail(d, ST_INTERNAL, r, "staging: buffer copy");
    return ST_OK;
}

static Status check_range(const VkBuf *b, uint64_t offset, uint64_t n, const char *what,
                          DiagList *d)
{
    if (offset > b->size || n > b->size - offset)
        return diag_add(d, DIAG_ERROR, ST_BAD_INPUT, NULL, NULL, b->name,
                        "%s of %llu bytes at offset %llu runs past the buffer's %llu bytes", what,
                        (unsigned long long)n, (unsigned long long)offset,
                        (unsigned long long)b->size);
    return ST_OK;
}

Status vk_buf_upload(VkBuf *b, uint64_t offset, const void *src, uint64_t n, DiagList *d)
{
    Status st = check_range(b, offset, n, "upload", d);
    if (st != ST_OK || n == 0) return st;
    if (b->map) {
        memcpy((char *)b->map + offset, src, n);
        return ST_OK;
    }
    VkCtx *ctx = b->ctx;
    if ((st = ensure_staging(ctx, n, d)) != ST_OK) return st;
    for (uint64_t done = 0; done < n;) {
        uint64_t k = n - done < ctx->staging->size ? n - done : ctx->staging->size;
        memcpy(ctx->staging->map, (const char *)src + done, k);
        if ((st = copy_and_wait(ctx, ctx->staging, 0, b, offset + done, k, d)) != ST_OK) return st;
        done += k;
    }
    return ST_OK;
}

Status vk_buf_download(VkBuf *b, uint64_t offset, void *dst, uint64_t n, DiagList *d)
{
    Status st = check_range(b, offset, n, "download", d);
    if (st != ST_OK || n == 0) return st;
    if (b->map && !b->uncached) {
        memcpy(dst, (const char *)b->map + offset, n);
        return ST_OK;
    }
    VkCtx *ctx = b->ctx;
    if ((st = ensure_staging(ctx, n, d)) != ST_OK) return st;
    for (uint64_t done = 0; done < n;) {
        uint64_t k = n - done < ctx->staging->size ? n - done : ctx->staging->size;
        if ((st = copy_and_wait(ctx, b, offset + done, ctx->staging, 0, k, d)) != ST_OK) return st;
        memcpy((char *)dst + done, ctx->staging->map, k);
        done += k;
    }
    return ST_OK;
}
