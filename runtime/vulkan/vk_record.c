/* Reusable command buffers: record once (dispatches, barriers, timestamps), submit many times.
 * Buffers are bound with VK_KHR_push_descriptor when the context uses it, else with descriptor
 * sets allocated at record time from pools the VkCmd owns (freed when it is re-recorded). */
#include "runtime/vulkan/vk_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_TIMEOUT_NS (120ull * 1000 * 1000 * 1000)
#define SETS_PER_POOL 256

typedef enum CmdState { CMD_INITIAL, CMD_RECORDING, CMD_EXECUTABLE, CMD_PENDING } CmdState;

struct VkCmd {
    VkCtx *ctx;
    VkCommandPool pool;
    VkCommandBuffer cb;
    VkFence fence;
    VkQueryPool queries; /* NULL when max_ts == 0 or the queue has no timestamps */
    uint32_t max_ts, nts, ndispatch;
    uint32_t runs; /* completed runs since vk_cmd_begin */
    CmdState state;
    bool failed;              /* a record call was refused: vk_cmd_end fails */
    VkDescriptorPool *dpools; /* fallback path only */
    uint32_t ndpools, capdpools;
};

/* A refused record call: marks the recording failed and reports (node = pipeline name). */
static Status refuse(VkCmd *c, DiagList *d, const char *node, const char *fmt, ...)
    NPU_PRINTF(4, 5);
static Status refuse(VkCmd *c, DiagList *d, const char *node, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c) c->failed = true;
    return diag_add(d, DIAG_ERROR, ST_BAD_INPUT, NULL, node, NULL, "%s", msg);
}

Status vk_cmd_create(VkCtx *ctx, uint32_t max_timestamps, VkCmd **out, DiagList *d)
{
    *out = NULL;
    if (max_timestamps > 0 && !ctx->info.timestamps)
        return diag_add(d, DIAG_ERROR, ST_NO_DEVICE, NULL, NULL, NULL,
                        "'%s': the compute queue does not support timestamps", ctx->info.name);
    VkCmd *c = calloc(1, sizeof *c);
    if (!c) return diag_add(d, DIAG_ERROR, ST_NOMEM, NULL, NULL, NULL, "out of memory");
    c->ctx = ctx;
    c->max_ts = max_timestamps;
    VkCommandPoolCreateInfo pi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
        .queueFamilyIndex = ctx->queue_family,
    };
    const char *what = "vkCreateCommandPool";
    VkCommandPool pool = VK_NULL_HANDLE;
    VkResult r = vkCreateCommandPool(ctx->device, &pi, NULL, &pool);
    if (r == VK_SUCCESS) {
        c->pool = pool;
        VkCommandBufferAllocateInfo ai = {
            .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
            .commandPool = c->pool,
            .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
            .commandBufferCount = 1,
        };
        r = vkAllocateCommandBuffers(ctx->device, &ai, &c->cb);
        what = "vkAllocateCommandBuffers";
    }
    if (r == VK_SUCCESS) {
        VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        VkFence fence = VK_NULL_HANDLE;
        r = vkCreateFence(ctx->device, &fi, NULL, &fence);
        if (r == VK_SUCCESS) c->fence = fence;
        what = "vkCreateFence";
    }
    if (r == VK_SUCCESS && max_timestamps > 0) {
        VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                    .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                    .queryCount = max_timestamps};
        VkQueryPool qp = VK_NULL_HANDLE;
        r = vkCreateQueryPool(ctx->device, &qi, NULL, &qp);
        if (r == VK_SUCCESS) c->queries = qp;
        what = "vkCreateQueryPool";
    }
    if (r != VK_SUCCESS) {
        Status st = vk_fail(d, ST_INTERNAL, r, "command buffer: %s failed", what);
        vk_cmd_destroy(c);
        return st;
    }
    *out = c;
    return ST_OK;
}

void vk_cmd_destroy(VkCmd *c)
{
    if (!c) return;
    VkDevice dev = c->ctx->device;
    if (c->state == CMD_PENDING) vkWaitForFences(dev, 1, &c->fence, VK_TRUE, WAIT_TIMEOUT_NS);
    for (uint32_t i = 0; i < c->ndpools; i++)
        vkDestroyDescriptorPool(dev, c->dpools[i], NULL);
    free(c->dpools);
    if (c->queries) vkDestroyQueryPool(dev, c->queries, NULL);
    if (c->fence) vkDestroyFence(dev, c->fence, NULL);
    if (c->pool) vkDestroyCommandPool(dev, c->pool, NULL); /* frees c->cb */
    free(c);
}

Status vk_cmd_begin(VkCmd *c, DiagList *d)
{
    Status st = vk_cmd_wait(c, d);
    if (st != ST_OK) return st;
    VkDevice dev = c->ctx->device;
    for (uint32_t i = 0; i < c->ndpools; i++)
        vkResetDescriptorPool(dev, c->dpools[i], 0);
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VkResult r = vkResetCommandBuffer(c->cb, 0);
    if (r == VK_SUCCESS) r = vkBeginCommandBuffer(c->cb, &bi);
    c->state = CMD_INITIAL;
    if (r != VK_SUCCESS) return vk_fail(d, ST_INTERNAL, r, "vkBeginCommandBuffer failed");
    /* Reset inside the buffer, so every replay starts with fresh queries. */
    if (c->queries) vkCmdResetQueryPool(c->cb, c->queries, 0, c->max_ts);
    c->nts = c->ndispatch = c->runs = 0;
    c->failed = false;
    c->state = CMD_RECORDING;
    return ST_OK;
}

static Status check_recording(VkCmd *c, DiagList *d)
{
    if (c->state != CMD_RECORDING)
        return refuse(c, d, NULL, "not recording (call vk_cmd_begin first)");
    return ST_OK;
}

static Status check_binding(VkCmd *c, const VkPipe *p, uint32_t i, const VkBinding *b,
                            uint64_t *range, DiagList *d)
{
    const VkDeviceInfo *o = &c->ctx->info;
    char where[96];
    snprintf(where, sizeof where, "binding %u", i);
    if (!b->buf || b->buf->ctx != c->ctx)
        return refuse(c, d, p->name, "%s: no buffer, or a buffer of another context", where);
    if (b->offset % o->storage_offset_align != 0)
        return refuse(c, d, p->name,
                      "%s: offset %llu is not a multiple of minStorageBufferOffsetAlignment %llu",
                      where, (unsigned long long)b->offset,
                      (unsigned long long)o->storage_offset_align);
    if (b->offset >= b->buf->size)
        return refuse(c, d, p->name, "%s: offset %llu is past the buffer's end (%llu bytes)", where,
                      (unsigned long long)b->offset, (unsigned long long)b->buf->size);
    *range = b->range ? b->range : b->buf->size - b->offset;
    /* whole 32-bit words, so a shader may read a 16-bit tensor of odd length as words (conv2d's
     * staging loads); buffers are sized in words (vk_buf_create) */
    if (*range % 4 && (*range | 3) + 1 <= b->buf->size - b->offset) *range = (*range | 3) + 1;
    if (*range > b->buf->size - b->offset)
        return refuse(c, d, p->name, "%s: range %llu runs past the buffer's end (%llu bytes)",
                      where, (unsigned long long)*range, (unsigned long long)b->buf->size);
    if (*range > o->max_storage_buffer_range)
        return refuse(c, d, p->name,
                      "%s: range %llu exceeds maxStorageBufferRange %llu: bind a smaller window",
                      where, (unsigned long long)*range,
                      (unsigned long long)o->max_storage_buffer_range);
    return ST_OK;
}

/* Fallback path: a descriptor set for `p` from the command buffer's pools. */
static Status alloc_set(VkCmd *c, const VkPipe *p, VkDescriptorSet *set, DiagList *d)
{
    VkDevice dev = c->ctx->device;
    VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorSetCount = 1,
                                      .pSetLayouts = &p->set_layout};
    VkResult r = VK_ERROR_OUT_OF_POOL_MEMORY;
    if (c->ndpools) {
        ai.descriptorPool = c->dpools[c->ndpools - 1];
        r = vkAllocateDescriptorSets(dev, &ai, set);
    }
    if (r == VK_SUCCESS) return ST_OK;
    if (r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL)
        return vk_fail(d, ST_INTERNAL, r, "vkAllocateDescriptorSets failed");
    if (c->ndpools == c->capdpools) {
        uint32_t cap = c->capdpools ? 2 * c->capdpools : 4;
        VkDescriptorPool *np = realloc(c->dpools, cap * sizeof *np);
        if (!np) return diag_add(d, DIAG_ERROR, ST_NOMEM, NULL, NULL, NULL, "out of memory");
        c->dpools = np;
        c->capdpools = cap;
    }
    VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                 SETS_PER_POOL * VK_MAX_BINDINGS};
    VkDescriptorPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                     .maxSets = SETS_PER_POOL,
                                     .poolSizeCount = 1,
                                     .pPoolSizes = &size};
    VkDescriptorPool pool = VK_NULL_HANDLE;
    r = vkCreateDescriptorPool(dev, &pi, NULL, &pool);
    if (r != VK_SUCCESS) return vk_fail(d, ST_INTERNAL, r, "vkCreateDescriptorPool failed");
    c->dpools[c->ndpools++] = pool;
    ai.descriptorPool = pool;
    r = vkAllocateDescriptorSets(dev, &ai, set);
    if (r != VK_SUCCESS) return vk_fail(d, ST_INTERNAL, r, "vkAllocateDescriptorSets failed");
    return ST_OK;
}

Status vk_cmd_dispatch(VkCmd *c, const VkPipe *p, const VkBinding *b, uint32_t nb, const void *push,
                       uint32_t push_size, uint32_t gx, uint32_t gy, uint32_t gz, DiagList *d)
{
    Status st = check_recording(c, d);
    if (st != ST_OK) return st;
    if (!p || p->ctx != c->ctx)
        return refuse(c, d, NULL, "dispatch: no pipeline, or one of another context");
    if (nb != p->nbindings || (nb && !b))
        return refuse(c, d, p->name, "%u buffers bound, the pipeline has %u bindings", nb,
                      p->nbindings);
    if (push_size != p->push_size || (push_size && !push))
        return refuse(c, d, p->name, "%u push-constant bytes given, the pipeline takes %u",
                      push_size, p->push_size);
    const uint32_t *mx = c->ctx->info.max_workgroup_count;
    if (gx == 0 || gy == 0 || gz == 0 || gx > mx[0] || gy > mx[1] || gz > mx[2]) {
        return refuse(c, d, p->name,
                      "workgroup grid %ux%ux%u: each count must be >= 1 and <= "
                      "maxComputeWorkGroupCount (%ux%ux%u)",
                      gx, gy, gz, mx[0], mx[1], mx[2]);
    }
    VkDescriptorBufferInfo bi[VK_MAX_BINDINGS];
    VkWriteDescriptorSet w[VK_MAX_BINDINGS];
    for (uint32_t i = 0; i < nb; i++) {
        uint64_t range = 0;
        if ((st = check_binding(c, p, i, &b[i], &range, d)) != ST_OK) return st;
        bi[i] = (VkDescriptorBufferInfo){b[i].buf->buffer, b[i].offset, range};
        w[i] = (VkWriteDescriptorSet){
            .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
            .dstBinding = i,
            .descriptorCount = 1,
            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .pBufferInfo = &bi[i],
        };
    }
    vkCmdBindPipeline(c->cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipeline);
    if (c->ctx->push_descriptor_set) {
        c->ctx->push_descriptor_set(c->cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0, nb, w);
    } else {
        VkDescriptorSet set;
        if ((st = alloc_set(c, p, &set, d)) != ST_OK) {
            c->failed = true;
            return st;
        }
        for (uint32_t i = 0; i < nb; i++)
            w[i].dstSet = set;
        vkUpdateDescriptorSets(c->ctx->device, nb, w, 0, NULL);
        vkCmdBindDescriptorSets(c->cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0, 1, &set, 0,
                                NULL);
    }
    if (push_size)
        vkCmdPushConstants(c->cb, p->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size, push);
    vkCmdDispatch(c->cb, gx, gy, gz);
    c->ndispatch++;
    return ST_OK;
}

Status vk_cmd_barrier(VkCmd *c, DiagList *d)
{
    Status st = check_recording(c, d);
    if (st != ST_OK) return st;
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    vkCmdPipelineBarrier(c->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    return ST_OK;
}

Status vk_cmd_copy(VkCmd *c, const VkBuf *src, uint64_t so, VkBuf *dst, uint64_t dof, uint64_t n,
                   DiagList *d)
{
    Status st = check_recording(c, d);
    if (st != ST_OK) return st;
    if (so + n > src->size || dof + n > dst->size)
        return refuse(c, d, NULL, "copy of %llu bytes outside '%s' or '%s'", (unsigned long long)n,
                      src->name, dst->name);
    VkMemoryBarrier pre = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                           .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                           .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT};
    vkCmdPipelineBarrier(c->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &pre, 0, NULL, 0, NULL);
    VkBufferCopy region = {so, dof, n};
    vkCmdCopyBuffer(c->cb, src->buffer, dst->buffer, 1, &region);
    VkMemoryBarrier post = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                            .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                            .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    vkCmdPipelineBarrier(c->cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                         &post, 0, NULL, 0, NULL);
    return ST_OK;
}

Status vk_cmd_barrier_host(VkCmd *c, DiagList *d)
{
    Status st = check_recording(c, d);
    if (st != ST_OK) return st;
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_SHADER_READ_BIT |
                                           VK_ACCESS_SHADER_WRITE_BIT};
    vkCmdPipelineBarrier(c->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1,
                         &mb, 0, NULL, 0, NULL);
    return ST_OK;
}

Status vk_cmd_timestamp(VkCmd *c, uint32_t *slot, DiagList *d)
{
    Status st = check_recording(c, d);
    if (st != ST_OK) return st;
    if (c->nts >= c->max_ts)
        return refuse(c, d, NULL, "timestamp %u exceeds the %u made room for", c->nts + 1,
                      c->max_ts);
    vkCmdWriteTimestamp(c->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, c->queries, c->nts);
    if (slot) *slot = c->nts;
    c->nts++;
    return ST_OK;
}

Status vk_cmd_end(VkCmd *c, DiagList *d)
{
    if (c->state != CMD_RECORDING) return refuse(c, d, NULL, "vk_cmd_end: not recording");
    /* Shader writes become visible to the host (downloads after the fence) and to the next
     * submission of this or any buffer on the queue (a replay reads what the last run wrote). */
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                           VK_ACCESS_TRANSFER_READ_BIT |
                                           VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT};
    vkCmdPipelineBarrier(c->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
                             VK_PIPELINE_STAGE_HOST_BIT,
                         0, 1, &mb, 0, NULL, 0, NULL);
    VkResult r = vkEndCommandBuffer(c->cb);
    if (r != VK_SUCCESS) {
        c->state = CMD_INITIAL;
        return vk_fail(d, ST_INTERNAL, r, "vkEndCommandBuffer failed");
    }
    if (c->failed) {
        c->state = CMD_INITIAL;
        return diag_add(d, DIAG_ERROR, ST_BAD_INPUT, NULL, NULL, NULL,
                        "the recording had refused commands; it will not be submitted");
    }
    c->state = CMD_EXECUTABLE;
    return ST_OK;
}

Status vk_cmd_submit(VkCmd *c, DiagList *d)
{
    if (c->state == CMD_PENDING)
        return diag_add(d, DIAG_ERROR, ST_BAD_INPUT, NULL, NULL, NULL,
                        "vk_cmd_submit: already submitted (call vk_cmd_wait first)");
    if (c->state != CMD_EXECUTABLE)
        return diag_add(d, DIAG_ERROR, ST_BAD_INPUT, NULL, NULL, NULL,
                        "vk_cmd_submit: nothing recorded (vk_cmd_begin .. vk_cmd_end)");
    if (c->ctx->warm) vk_warm_stop(c->ctx, NULL); /* nothing queues behind the spin */
    VkResult r = vkResetFences(c->ctx->device, 1, &c->fence);
    VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &c->cb};
    if (r == VK_SUCCESS) r = vkQueueSubmit(c->ctx->queue, 1, &si, c->fence);
    if (r != VK_SUCCESS) return vk_fail(d, ST_INTERNAL, r, "vkQueueSubmit failed");
    c->state = CMD_PENDING;
    return ST_OK;
}

Status vk_cmd_wait(VkCmd *c, DiagList *d)
{
    if (c->state != CMD_PENDING) return ST_OK;
    VkResult r = vk_wait_fence(c->ctx, c->fence, WAIT_TIMEOUT_NS);
    if (r != VK_SUCCESS) return vk_fail(d, ST_INTERNAL, r, "waiting for the command buffer failed");
    c->state = CMD_EXECUTABLE;
    c->runs++;
    return ST_OK;
}

Status vk_cmd_run(VkCmd *c, DiagList *d)
{
    Status st = vk_cmd_submit(c, d);
    return st != ST_OK ? st : vk_cmd_wait(c, d);
}

Status vk_cmd_timestamps_ns(VkCmd *c, uint64_t *ns, uint32_t n, DiagList *d)
{
    if (n == 0) return ST_OK;
    if (c->state == CMD_PENDING || c->runs == 0 || n > c->nts)
        return diag_add(d, DIAG_ERROR, ST_BAD_INPUT, NULL, NULL, NULL,
                        "vk_cmd_timestamps_ns: %u asked, %u recorded, %u completed runs", n, c->nts,
                        c->runs);
    VkResult r =
        vkGetQueryPoolResults(c->ctx->device, c->queries, 0, n, n * sizeof *ns, ns, sizeof *ns,
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    if (r != VK_SUCCESS) return vk_fail(d, ST_INTERNAL, r, "vkGetQueryPoolResults failed");
    uint32_t bits = c->ctx->info.timestamp_valid_bits;
    uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    double period = c->ctx->info.timestamp_period_ns;
    for (uint32_t i = 0; i < n; i++)
        ns[i] = (uint64_t)((double)(ns[i] & mask) * period);
    return ST_OK;
}

uint32_t vk_cmd_timestamp_count(const VkCmd *c)
{
    return c->nts;
}

uint32_t vk_cmd_dispatch_count(const VkCmd *c)
{
    return c->ndispatch;
}
