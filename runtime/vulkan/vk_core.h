/* Vulkan core: the layer the NPU backend stands on. It owns the instance, one device and its
 * compute queue, buffers and their memory, compute pipelines built from the embedded SPIR-V
 * (vk_shaders.h) with an on-disk pipeline cache, reusable command buffers with timestamp queries,
 * and submission. Handles are opaque, so callers need no Vulkan headers (only runtime/vk_* files
 * include them). Every function reports through a DiagList and returns a Status: nothing prints,
 * exits or aborts on bad input. Every create has a destroy, and destroy accepts NULL and partially
 * created objects. One VkCtx and everything made from it belong to one thread at a time.
 *
 * Typical use: vk_ctx_create -> vk_buf_create + vk_buf_upload -> vk_pipe_create -> vk_cmd_create,
 * vk_cmd_begin, vk_cmd_dispatch / vk_cmd_barrier / vk_cmd_timestamp ..., vk_cmd_end -> vk_cmd_run
 * as often as needed -> vk_buf_download, vk_cmd_timestamps_ns -> destroy in reverse order. */
#ifndef NPU_VK_CORE_H
#define NPU_VK_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/diag.h"

typedef struct VkCtx VkCtx;   /* instance + device + queue + pipeline cache */
typedef struct VkBuf VkBuf;   /* one VkBuffer with its own memory */
typedef struct VkPipe VkPipe; /* compute pipeline + its layout */
typedef struct VkCmd VkCmd;   /* reusable command buffer + fence + timestamp pool */

/* ---- context ------------------------------------------------------------------------------ */

typedef enum VkDevType {
    VKDEV_OTHER,
    VKDEV_INTEGRATED,
    VKDEV_DISCRETE,
    VKDEV_VIRTUAL,
    VKDEV_CPU,
} VkDevType;

typedef struct VkCtxOptions {
    int device_index; /* -1: choose (discrete, then integrated, virtual, CPU); else that index */
    int validate;     /* -1: from env NPU_VK_VALIDATE=1; 0: off; 1: Khronos validation layer */
    const char *pipeline_cache_path; /* NULL: no disk cache; the default is common/fileio.h
                                        cache_path(.., "pipelines.bin") */
    bool force_staging;       /* testing: treat device memory as not host-visible (staged copies) */
    bool no_push_descriptors; /* testing: use allocated descriptor sets even if push is present */
} VkCtxOptions;

/* Options that choose automatically, validate per env, and keep no cache file. */
VkCtxOptions vk_ctx_options_default(void);

typedef struct VkDeviceInfo {
    int index; /* in vkEnumeratePhysicalDevices order */
    char name[256];
    char driver[256]; /* "llvmpipe: Mesa 22.3.6 (LLVM 15.0.6)" */
    VkDevType type;
    uint32_t vendor_id, device_id, api_version; /* api_version: VK_MAKE_API_VERSION packing */
    uint32_t subgroup_size;
    uint32_t subgroup_ops;      /* VkSubgroupFeatureFlags usable in compute shaders (0: none) */
    uint32_t max_shared_memory; /* maxComputeSharedMemorySize, bytes */
    uint32_t max_workgroup_invocations;
    uint32_t max_workgroup_count[3];
    uint32_t max_push_constants;             /* bytes */
    uint32_t max_push_descriptors;           /* 0 without VK_KHR_push_descriptor */
    uint64_t max_storage_buffer_range;       /* bytes one binding may cover */
    uint64_t max_allocation_size;            /* maxMemoryAllocationSize: the largest VkBuf */
    uint64_t storage_offset_align;           /* minStorageBufferOffsetAlignment */
    uint64_t device_local_bytes;             /* size of the largest device-local heap */
    double timestamp_period_ns;              /* ns per tick */
    uint32_t timestamp_valid_bits;           /* of the compute queue; 0: no timestamps */
    bool timestamps;                         /* the compute queue supports timestamp queries */
    bool device_local_host_visible;          /* device buffers are mapped: uploads are memcpy */
    bool push_descriptors;                   /* VK_KHR_push_descriptor is used */
    bool f16_arith, storage16, int16, int64; /* features enabled on the device */
    bool memory_model;                       /* vulkanMemoryModel (enabled with coopmat_nv) */
    /* VK_NV_cooperative_matrix with an f16 x f16 -> f32 16x16x16 subgroup shape for compute,
     * shaderFloat16, 16-bit storage, the memory model and 32-lane subgroups: what the nv-coopmat
     * kernel tier needs; the extension and its feature are enabled then (else not). */
    bool coopmat_nv;
    bool validation; /* the validation layer is active */
} VkDeviceInfo;

/* Creates the instance, picks a device (opt NULL = defaults), creates the compute queue and loads
 * the pipeline cache. ST_NO_DEVICE when no usable device exists or the index is out of range. */
Status vk_ctx_create(const VkCtxOptions *opt, VkCtx **out, DiagList *d);
/* Saves the pipeline cache (errors are dropped: a cache is optional), then frees everything.
 * Returns the validation errors counted over the context's whole life, teardown included (the
 * layer reports buffers, pipelines or command buffers still alive at that point); 0 without
 * validation. Destroy everything made from ctx first. */
int vk_ctx_destroy(VkCtx *ctx);
/* The chosen device. Owned by ctx. */
const VkDeviceInfo *vk_ctx_info(const VkCtx *ctx);
/* "discrete", "integrated", "virtual", "cpu", "other". */
const char *vk_dev_type_name(VkDevType t);
/* Lists the devices without creating one: writes up to `max` entries, sets *count to the total.
 * Fields needing a device (push_descriptors, validation) are false. */
Status vk_list_devices(VkDeviceInfo *out, int max, int *count, DiagList *d);
/* Writes the pipeline cache file now (also done by vk_ctx_destroy). ST_OK if no path is set. */
Status vk_ctx_save_pipeline_cache(VkCtx *ctx, DiagList *d);

/* Validation-layer messages of severity ERROR counted since vk_ctx_create (0 without layer). */
int vk_validation_errors(const VkCtx *ctx);
/* The i-th stored error message (the first few are kept), or NULL. Owned by ctx. */
const char *vk_validation_message(const VkCtx *ctx, int i);
/* Sends an error-severity message through the debug messenger, as the layer would; tests use it
 * to prove the counter counts. No-op without validation. */
void vk_validation_inject(VkCtx *ctx, const char *msg);

/* ---- the clock warm-up (vk_warm.c) ------------------------------------------------------- */

/* Keeps one workgroup of the device spinning so that an idle GPU's clock ramps up while the host
 * uploads by memcpy (mapped device memory). Runs until vk_warm_stop; any other submission,
 * staged copy or vk_ctx_destroy stops it first. A second start while one runs does nothing. */
Status vk_warm_start(VkCtx *ctx, DiagList *d);
/* The same with the watchdog's bound in trips (vk_warm_start's: ~2 s on an H100): tests. */
Status vk_warm_start_bound(VkCtx *ctx, uint32_t trips, DiagList *d);
/* Re-arms the spin's watchdog (~2 s without a call ends it): called per uploaded tensor, so the
 * spin lasts as long as the upload. Nothing when no spin runs. */
void vk_warm_keep(VkCtx *ctx);
/* The trips the running spin has made so far (0 when none runs). */
uint32_t vk_warm_trips(const VkCtx *ctx);
/* Stops the spin and waits for it; returns the trips it ran (0 when none ran) and, in *us (may
 * be NULL), how long it ran. */
uint32_t vk_warm_stop(VkCtx *ctx, double *us);
bool vk_warm_running(const VkCtx *ctx);

/* ---- buffers ------------------------------------------------------------------------------ */

typedef enum VkBufKind {
    VKBUF_DEVICE, /* device-local storage buffer; mapped too when the memory is host-visible */
    VKBUF_HOST,   /* host-visible, coherent, always mapped (staging, readback, per-step inputs) */
} VkBufKind;

/* Creates a storage buffer of `size` bytes (> 0, <= max_allocation_size). `name` (may be NULL)
 * appears in diagnostics. */
Status vk_buf_create(VkCtx *ctx, uint64_t size, VkBufKind kind, const char *name, VkBuf **out,
                     DiagList *d);
void vk_buf_destroy(VkBuf *b);
uint64_t vk_buf_size(const VkBuf *b);
/* The persistent mapping, or NULL when the buffer is not host-visible. Owned by the buffer. */
void *vk_buf_map(VkBuf *b);
/* Copies n bytes from host memory into b at `offset`: memcpy when mapped, else through a staging
 * buffer and a copy command (waits for it). Must not run while a command using b executes. */
Status vk_buf_upload(VkBuf *b, uint64_t offset, const void *src, uint64_t n, DiagList *d);
/* Copies n bytes of b at `offset` to host memory (waits for the copy when staged). */
Status vk_buf_download(VkBuf *b, uint64_t offset, void *dst, uint64_t n, DiagList *d);
/* Rounds off up to minStorageBufferOffsetAlignment: the offset of the next sub-allocation. */
uint64_t vk_align_offset(const VkCtx *ctx, uint64_t off);

/* ---- pipelines ---------------------------------------------------------------------------- */

typedef struct VkPipeDesc {
    const char *shader;   /* embedded module name, "axpy.f16"; also names the pipeline */
    const uint32_t *code; /* optional SPIR-V to use instead of the embedded module */
    size_t code_size;     /* bytes of `code` */
    const uint32_t *spec; /* specialization constants: spec[i] -> constant_id i */
    uint32_t nspec;
    uint32_t push_size; /* push-constant bytes (multiple of 4, <= max_push_constants) */
    uint32_t nbindings; /* storage buffers at set 0, bindings 0..nbindings-1 (1..16) */
} VkPipeDesc;

/* Creates a compute pipeline through the context's pipeline cache, or hands out the one this
 * context already made from the same SPIR-V, specialization and layout (pipelines are pooled per
 * context: a recompiled plan or a second backend on the device compiles nothing twice). */
Status vk_pipe_create(VkCtx *ctx, const VkPipeDesc *desc, VkPipe **out, DiagList *d);
/* Releases a pipeline from vk_pipe_create; pooled ones live until vk_ctx_destroy. */
void vk_pipe_destroy(VkPipe *p);

/* ---- recording and submission ------------------------------------------------------------- */

typedef struct VkBinding {
    VkBuf *buf;
    uint64_t offset; /* multiple of storage_offset_align */
    uint64_t range;  /* bytes; 0 = to the end of the buffer. <= max_storage_buffer_range */
} VkBinding;

/* Creates a reusable command buffer with room for `max_timestamps` timestamp queries. */
Status vk_cmd_create(VkCtx *ctx, uint32_t max_timestamps, VkCmd **out, DiagList *d);
/* Waits for a pending submission, then frees. */
void vk_cmd_destroy(VkCmd *c);
/* Starts (re)recording: drops what was recorded, resets the timestamp pool inside the buffer. */
Status vk_cmd_begin(VkCmd *c, DiagList *d);
/* Records one dispatch: binds p, its buffers (count must equal the pipeline's) and push-constant
 * bytes (exactly the pipeline's push_size), then dispatches gx*gy*gz workgroups. Bad arguments
 * record nothing and make vk_cmd_end fail, so a half-recorded buffer is never submitted. */
Status vk_cmd_dispatch(VkCmd *c, const VkPipe *p, const VkBinding *b, uint32_t nb, const void *push,
                       uint32_t push_size, uint32_t gx, uint32_t gy, uint32_t gz, DiagList *d);
/* Global compute->compute memory barrier (shader writes visible to later shader reads/writes). */
Status vk_cmd_barrier(VkCmd *c, DiagList *d);
/* Copies n bytes of src (written by earlier dispatches) into dst, visible to the host once the
 * run's fence signals: a per-run readback into a VKBUF_HOST buffer with no second submit. */
Status vk_cmd_copy(VkCmd *c, const VkBuf *src, uint64_t so, VkBuf *dst, uint64_t dof, uint64_t n,
                   DiagList *d);
/* Shader writes before it visible to the host once the submission's fence signals, and to the
 * shaders of anything recorded or submitted after it (a command buffer queued behind this one). */
Status vk_cmd_barrier_host(VkCmd *c, DiagList *d);
/* Writes a timestamp after all previously recorded work completes; *slot (may be NULL) gets its
 * index for vk_cmd_timestamps_ns. */
Status vk_cmd_timestamp(VkCmd *c, uint32_t *slot, DiagList *d);
Status vk_cmd_end(VkCmd *c, DiagList *d);
/* Submits the recorded buffer; vk_cmd_wait waits for it; vk_cmd_run does both. */
Status vk_cmd_submit(VkCmd *c, DiagList *d);
Status vk_cmd_wait(VkCmd *c, DiagList *d);
Status vk_cmd_run(VkCmd *c, DiagList *d);
/* Timestamps written by the last completed run, in ns from an arbitrary origin; n must not exceed
 * the number recorded. */
Status vk_cmd_timestamps_ns(VkCmd *c, uint64_t *ns, uint32_t n, DiagList *d);
uint32_t vk_cmd_timestamp_count(const VkCmd *c);
/* Number of dispatches recorded since vk_cmd_begin. */
uint32_t vk_cmd_dispatch_count(const VkCmd *c);

#endif
