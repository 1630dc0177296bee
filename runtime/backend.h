/* The backend interface: what runs a compiled Plan's NPU kernels. A backend is a struct of
 * function pointers (ggml's shape): the Vulkan backend (vk_backend.c) runs them on a GPU or on
 * lavapipe; the CPU reference backend (cpu_backend.c) runs the same plan on the reference
 * kernels, node by node. Values cross the interface as host tensors in the CPU reference's
 * dtypes (f32, i64, bool) and logical shapes; each backend applies the plan's host<->device
 * transforms (cast, channel padding, and back) itself. The caller owns the Backend and frees it
 * with ->destroy. Nothing here prints. */
#ifndef NPU_BACKEND_H
#define NPU_BACKEND_H

#include <stdbool.h>
#include "common/diag.h"
#include "compiler/plan.h"
#include "runtime/htensor.h"

typedef struct Backend Backend;

typedef struct BackendOps {
    const char *name; /* "vulkan", "cpu" */
    /* Can this backend run kernel k? When not, *why (static storage) says why. */
    bool (*supports)(Backend *b, const Plan *p, const PlanKernel *k, const char **why);
    /* Loads plan p (kept by pointer: it must outlive the backend): device memory, the weights
     * and constants from vals[plan tensor id] (NULL for other tensors), pipelines, and the
     * recording of every kernel of partitions whose target is KT_NPU. */
    Status (*prepare)(Backend *b, const Plan *p, const HTensor *const *vals, DiagList *d);
    /* Sets a graph input (or any tensor living outside the arena) for the next run. */
    Status (*set_input)(Backend *b, int tensor, const HTensor *v, DiagList *d);
    /* Runs the recorded kernels [first, first + n) (a whole NPU partition, or every kernel with
     * first 0 and n = p->nkernels); timed: with a timestamp around every kernel. */
    Status (*run)(Backend *b, int first, int n, bool timed, DiagList *d);
    /* Reads `tensor` back with every run that writes it (a decode step's logits): the recording
     * copies it to host memory, so read() after the run costs no second submit. Call after
     * prepare, before the first run. NULL when reading is cheap anyway. */
    Status (*watch)(Backend *b, int tensor, DiagList *d);
    /* Reads tensor `tensor` after a run into a new host tensor (logical shape, reference dtype). */
    Status (*read)(Backend *b, int tensor, HTensor *out, DiagList *d);
    /* GPU microseconds of each kernel in the last timed run (us[kernel index], -1 when not
     * timed); returns false when no timed run happened. */
    bool (*kernel_us)(Backend *b, double *us, int n);
    /* GPU microseconds of the last run() call, from the device's own clock (an untimed run:
     * between the timestamps at its start and end, so submit and wait are not counted);
     * -1 when the backend has no such clock. */
    double (*run_gpu_us)(Backend *b);
    /* Makes tensor `t` (outside or inside the arena) use the storage of tensor `src_t` of the
     * backend `src` (same device), e.g. a decode step's KV-cache input living in the prefill
     * program's cache buffer: state carried with no copy. Call after prepare, before the first
     * run. NULL when the backend cannot share (the caller then moves values through the host). */
    Status (*share)(Backend *b, int t, Backend *src, int src_t, DiagList *d);
    /* Pipelined steps (generate's decode loop; NULL when the backend has none): two input slots,
     * so the host writes one step's inputs while the step before runs, and steps queued back to
     * back. pipe_feed (after prepare and share, before the first pipelined step): each pipelined
     * step of kernels [first, first + n) copies tensor src, after its kernels, into input dst of
     * the other slot (the next token into the next step's ids), so the host writes dst only for
     * the first step; both slots' steps are recorded then, ahead of the first token. pipe_slot
     * selects the slot the following set_input calls write and pipe_submit runs; pipe_submit
     * queues the recording of kernels [first, first + n) on it and returns; pipe_wait(slot)
     * waits for that slot's step, after which read() and run_gpu_us() are that step's. A slot's
     * inputs may be written again only after its pipe_wait. */
    Status (*pipe_feed)(Backend *b, int dst, int src, int first, int n, DiagList *d);
    void (*pipe_slot)(Backend *b, int slot);
    Status (*pipe_submit)(Backend *b, int first, int n, DiagList *d);
    Status (*pipe_wait)(Backend *b, int slot, DiagList *d);
    /* Human description of the device ("NVIDIA H100 80GB HBM3 (NVIDIA 580.159.04)"). */
    const char *(*device)(Backend *b);
    void (*destroy)(Backend *b);
} BackendOps;

struct Backend {
    const BackendOps *ops;
};

/* The CPU reference backend over compiled graph g (which must outlive it): kernels run their
 * IR nodes. */
Status cpu_backend_create(const Graph *g, Backend **out);

typedef struct VkBackendOptions {
    int device;    /* -1: first discrete GPU, else the first device; else that index */
    int validate;  /* -1: from NPU_VK_VALIDATE; 0 off; 1 Khronos validation layer */
    bool poison;   /* fill device memory with NaN before the first run (tests) */
    bool no_cache; /* no on-disk pipeline cache */
    int warm;      /* the clock warm-up while prepare uploads (vk_core.h vk_warm_start): -1 on
                    * GPUs whose device memory is mapped, 0 off, 1 wherever uploads are mapped */
} VkBackendOptions;

VkBackendOptions vk_backend_options_default(void);
/* Creates the Vulkan backend: ST_NO_DEVICE (exit 3) with a message when no device is usable. */
Status vk_backend_create(const VkBackendOptions *o, Backend **out, DiagList *d);
/* A second Vulkan backend on the device of `with` (one VkCtx, so the two can share()). */
Status vk_backend_create_shared(Backend *with, Backend **out, DiagList *d);
/* Barriers between kernels in the untimed recordings made so far (each NPU partition recorded
 * once): what compiler/schedule.h's plan_barriers predicts; for tests and reports. */
int vk_backend_barriers(Backend *b);
/* The clock warm-up of the last prepare: the spin's trips (0: none ran, or b is no Vulkan
 * backend) and *us its time. */
uint32_t vk_backend_warm(Backend *b, double *us);
/* Will read(t) come from the last run's recorded copy (a watched tensor that run wrote)? Tests. */
bool vk_backend_read_is_copied(Backend *b, int t);
/* The best kernel tier (PlanTier) the backend's device runs: TIER_NV_COOPMAT when it exposes
 * VK_NV_cooperative_matrix with an f16 x f16 -> f32 16x16x16 subgroup shape, 16-bit storage,
 * shaderFloat16, the Vulkan memory model and 32-lane subgroups (the feature is then enabled),
 * else TIER_PORTABLE. prepare refuses a plan of a tier above it (ST_BAD_INPUT, exit 2). */
int vk_backend_best_tier(Backend *b);
/* Is the backend's device a CPU (lavapipe)? Lowering then takes the direct conv
 * (CompileOptions.cpu_device). */
bool vk_backend_cpu_device(Backend *b);
/* The device's identity for a tuning cache (compiler/tune_cache.h): its name, PCI vendor and
 * device ids and driver with its version, "NVIDIA H100 80GB HBM3 [10de:2330] NVIDIA:
 * 580.159.04"; one line (no tab or newline). */
void vk_backend_device_key(Backend *b, char *buf, size_t n);
/* Validation errors seen so far (0 without the layer); for tests. */
int vk_backend_validation_errors(Backend *b);
/* The i-th kept validation message ("" when none). */
const char *vk_backend_validation_message(Backend *b, int i);

#endif
