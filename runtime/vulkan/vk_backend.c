/* The Vulkan backend: runs a plan's NPU kernels on one device. At prepare: one device-local arena
 * from the memory plan, one buffer per tensor living outside it (inputs, weights, constants,
 * tensors a CPU partition hands over), weights packed (cast, padded) and uploaded once, one
 * pipeline per distinct (module, specialization constants), shared by kernels. A range of
 * kernels is recorded once into a reusable command buffer on its first run and resubmitted
 * after; barriers go only where a kernel touches bytes an earlier kernel since the last barrier
 * wrote (or writes bytes it read): the arena reuses memory, so write-after-read counts too. The
 * timed recording puts a barrier and a timestamp after every kernel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/grow.h"
#include "common/hazard.h"
#include "runtime/backend.h"
#include "runtime/hostxf.h"
#include "runtime/vulkan/vk_core.h"
#include "runtime/vulkan/vk_shaders.h"
#include "compiler/lower/kernel_table.h"

typedef struct PipeEntry {
    char module[96];
    uint32_t spec[PLAN_MAX_SPEC];
    int nspec, npush, nargs;
    VkPipe *pipe;
} PipeEntry;

typedef struct Recording {
    int first, n;
    bool timed;
    int barriers; /* between kernels (untimed: where hazards are; timed: after every kernel) */
    VkCmd *cmd;
    unsigned copies; /* bit i: the recording copies watch[i] back (a kernel of it writes it) */
    int slot;        /* -1: run()'s; 0, 1: a pipelined step reading that input slot (pipe_*) */
} Recording;

/* A tensor the recording copies to host memory after the kernel that writes it. */
enum { MAX_WATCH = 8 };
typedef struct Watch {
    int t;
    uint64_t off; /* in rb */
    bool fresh;   /* `from` holds what the last run wrote */
    VkBuf *from;  /* rb, or the pipelined slot's prb */
} Watch;

typedef struct SharedCtx {
    VkCtx *ctx;
    int refs;
} SharedCtx;

typedef struct VkBackend {
    Backend base;
    VkBackendOptions opt;
    VkCtx *ctx;
    const Plan *p;
    VkBuf *arena;
    VkBuf **own; /* [ntensors]: buffers of tensors outside the arena (base tensors only) */
    int *kpipe;  /* [nkernels]: index into pipes, -1 for kernels not run here */
    PipeEntry *pipes;
    int npipes;
    Recording *rec; /* one per (kernel range, timed) run so far: each NPU partition twice */
    int nrec, caprec;
    double *kus;         /* [nkernels] */
    uint32_t warm_trips; /* the last prepare's clock warm-up: spin trips and time */
    double warm_us;
    VkBinding
        *over; /* [ntensors]: storage borrowed from another program (share), buf NULL if none */
    struct SharedCtx *sc; /* the device, shared by backends made with vk_backend_create_shared */
    bool have_times;
    double last_gpu_us; /* the last run()'s GPU time, -1 when unknown */
    void *pack;         /* host bytes of an upload, reused (inputs are packed on every run) */
    size_t pack_cap;
    Watch watch[MAX_WATCH]; /* tensors read back by every run (watch) */
    int nwatch;
    VkBuf *rb; /* their host copies (VKBUF_HOST), made at the first recording */
    /* Pipelined steps (backend.h pipe_*): two buffers of their own (outside the arena, whose
     * bytes a running step reuses) for every input the host writes per run, so one step's
     * inputs are written while the step before runs; the slot set_input writes and locate
     * resolves (-1: run()'s storage); the tensor copied after a step's kernels into the other
     * slot's input (the next token into the next step's ids); each slot's readback and
     * recording in flight. */
    VkBuf **slotbuf[2]; /* [ntensors]: those inputs' storage per slot, NULL for other tensors */
    int in_slot;
    int feed_dst, feed_src;
    VkBuf *prb[2];
    VkPipe *feed_pipe; /* shaders/feed.comp: the pipelined steps' copies */
    int pend[2];       /* index in rec of the slot's submitted recording, -1 */
    char desc[600];
} VkBackend;

VkBackendOptions vk_backend_options_default(void)
{
    return (VkBackendOptions){
        .device = -1, .validate = -1, .poison = false, .no_cache = false, .warm = -1};
}

/* The module for kernel k: one the plan carries (a generated kernel, compiler/codegen/codegen.h),
 * else the embedded build of its stem for the output's storage variant; NULL when there is none. */
static const VkSpv *module_of(const Plan *p, const PlanKernel *k, char *name, size_t n, VkSpv *gen)
{
    const PlanModule *pm = plan_find_module(p, k->shader);
    if (pm) {
        snprintf(name, n, "%s", pm->name);
        *gen = (VkSpv){pm->name, pm->spirv, (size_t)pm->nwords * 4};
        return gen;
    }
    return vk_spv_for(k->shader, p->tensors[k->args[k->nargs - 1]].storage, name, n);
}

static bool vkb_supports(Backend *base, const Plan *p, const PlanKernel *k, const char **why)
{
    VkBackend *b = (VkBackend *)base;
    char name[96];
    VkSpv gen;
    if (k->target != KT_NPU) {
        *why = "a CPU kernel";
        return false;
    }
    const VkSpv *m = k->nargs < 1 ? NULL : module_of(p, k, name, sizeof name, &gen);
    if (!m) {
        *why = "no Vulkan shader is built for this kernel family and dtype";
        return false;
    }
    uint32_t need = vk_spv_subgroup_ops(m);
    if (b->ctx && (need & ~vk_ctx_info(b->ctx)->subgroup_ops)) {
        *why = "the device lacks a subgroup operation the shader uses in compute shaders";
        return false;
    }
    if (k->nspec == 0) {
        *why = "the kernel has no parameters (its family is not lowered)";
        return false;
    }
    /* decode_attention (the attention kind's portable kernel): teams of up to 8 lanes inside
     * one subgroup, at most 16 subgroups in its workgroups of <= 128
     * (shaders/decode_attention.glsl) */
    const KernelRow *row = kernel_row(k->shader);
    if (b->ctx && row && row->key.kind == KK_decode_attention && row->key.impl == KI_BASE &&
        vk_ctx_info(b->ctx)->subgroup_size < 8) {
        *why = "the attention kernel needs subgroups of at least 8 lanes";
        return false;
    }
    return true;
}

/* Where tensor t lives: buffer, offset and the bytes it spans. */
static Status locate(VkBackend *b, int t, VkBinding *out, DiagList *d)
{
    const Plan *p = b->p;
    int base = plan_base(p, t);
    const PlanTensor *x = &p->tensors[t], *bx = &p->tensors[base];
    uint64_t bytes = hostxf_device_bytes(x);
    if (b->in_slot >= 0 && b->slotbuf[b->in_slot] && b->slotbuf[b->in_slot][base]) {
        out->buf = b->slotbuf[b->in_slot][base];
        out->offset = 0;
    } else if (b->over && b->over[base].buf) {
        out->buf = b->over[base].buf;
        out->offset = b->over[base].offset;
    } else if (bx->offset >= 0) {
        out->buf = b->arena;
        out->offset = (uint64_t)bx->offset;
    } else {
        out->buf = b->own[base];
        out->offset = 0;
    }
    if (!out->buf)
        return diag_add(d, DIAG_ERROR, ST_INTERNAL, p->source, NULL, x->name,
                        "has no device storage");
    out->offset += plan_view_bytes(x); /* a part of its base (linear_concat, a split chunk) */
    if (out->offset + bytes > vk_buf_size(out->buf))
        return diag_add(d, DIAG_ERROR, ST_INTERNAL, p->source, NULL, x->name,
                        "spans %llu bytes at offset %llu, past its buffer of %llu",
                        (unsigned long long)bytes, (unsigned long long)out->offset,
                        (unsigned long long)vk_buf_size(out->buf));
    uint64_t maxr = vk_ctx_info(b->ctx)->max_storage_buffer_range;
    if (bytes > maxr)
        return diag_add(d, DIAG_ERROR, ST_BAD_INPUT, p->source, NULL, x->name,
                        "needs %llu bytes in one binding; the device binds at most %llu",
                        (unsigned long long)bytes, (unsigned long long)maxr);
    out->range = bytes;
    return ST_OK;
}

static Status get_pipe(VkBackend *b, const PlanKernel *k, int *idx, DiagList *d)
{
    char name[96];
    VkSpv gen;
    const VkSpv *m = module_of(b->p, k, name, sizeof name, &gen);
    if (!m)
        return diag_add(d, DIAG_ERROR, ST_INTERNAL, b->p->source, k->nprov ? k->prov[0] : NULL,
                        NULL, "no Vulkan shader '%s' for kernel family %s", name, k->shader);
    for (int i = 0; i < b->npipes; i++) {
        PipeEntry *e = &b->pipes[i];
        if (strcmp(e->module, name) == 0 && e->nspec == k->nspec && e->npush == k->npush &&
            e->nargs == k->nargs &&
            memcmp(e->spec, k->spec, sizeof(uint32_t) * (size_t)k->nspec) == 0) {
            *idx = i;
            return ST_OK;
        }
    }
    PipeEntry *e = &b->pipes[b->npipes];
    memset(e, 0, sizeof *e);
    snprintf(e->module, sizeof e->module, "%s", name);
    memcpy(e->spec, k->spec, sizeof e->spec);
    e->nspec = k->nspec;
    e->npush = k->npush;
    e->nargs = k->nargs;
    VkPipeDesc pd = {.shader = name,
                     .code = m == &gen ? gen.code : NULL,
                     .code_size = m == &gen ? gen.size : 0,
                     .spec = k->spec,
                     .nspec = (uint32_t)k->nspec,
                     .push_size = (uint32_t)k->npush * 4,
                     .nbindings = (uint32_t)k->nargs};
    Status st = vk_pipe_create(b->ctx, &pd, &e->pipe, d);
    if (st != ST_OK) return st;
    *idx = b->npipes++;
    return ST_OK;
}

static Status upload_tensor(VkBackend *b, int t, const HTensor *v, DiagList *d)
{
    const PlanTensor *x = &b->p->tensors[t];
    vk_warm_keep(b->ctx); /* the upload goes on: so does the clock warm-up */
    VkBinding loc;
    Status st = locate(b, t, &loc, d);
    if (st != ST_OK) return st;
    /* the host's bytes are the device's (an input in its host form, pack-inputs): one copy
     * into the mapped buffer, no packing */
    if (hostxf_is_raw(x, v) && (uint64_t)v->numel * 4 <= loc.range)
        return vk_buf_upload(loc.buf, loc.offset, v->data, (uint64_t)v->numel * 4, d);
    /* an input (packed on every run) in mapped device memory: packed straight into it, not
     * through host memory (weights, packed once, keep the copy: not measured that way) */
    char *map = vk_buf_map(loc.buf);
    if (map && x->kind == PT_INPUT) return hostxf_pack(x, v, map + loc.offset, b->p->source, d);
    if (loc.range > b->pack_cap) {
        free(b->pack);
        b->pack_cap = 0;
        if (!(b->pack = malloc(loc.range))) return ST_NOMEM;
        b->pack_cap = loc.range;
    }
    st = hostxf_pack(x, v, b->pack, b->p->source, d);
    if (st == ST_OK) st = vk_buf_upload(loc.buf, loc.offset, b->pack, loc.range, d);
    return st;
}

int vk_backend_best_tier(Backend *base)
{
    VkBackend *b = (VkBackend *)base;
    return vk_ctx_info(b->ctx)->coopmat_nv ? TIER_NV_COOPMAT : TIER_PORTABLE;
}

void vk_backend_device_key(Backend *base, char *buf, size_t n)
{
    const VkDeviceInfo *i = vk_ctx_info(((VkBackend *)base)->ctx);
    snprintf(buf, n, "%s [%04x:%04x] %s", i->name, i->vendor_id, i->device_id, i->driver);
    for (char *c = buf; *c; c++)
        if (*c == '\t' || *c == '\n' || *c == '\r') *c = ' ';
}

bool vk_backend_cpu_device(Backend *base)
{
    return vk_ctx_info(((VkBackend *)base)->ctx)->type == VKDEV_CPU;
}

static Status prepare_body(Backend *base, const Plan *p, const HTensor *const *vals, DiagList *d)
{
    VkBackend *b = (VkBackend *)base;
    if (p->tier > vk_backend_best_tier(base)) {
        const char *t = plan_tier_name(p->tier);
        return diag_error(d, p->source, NULL, NULL,
                          "the plan was compiled for kernel tier %s, which %s lacks "
                          "(VK_NV_cooperative_matrix with f16 16x16x16 shapes, shaderFloat16, "
                          "the Vulkan memory model, 32-lane subgroups); compile it with --tier "
                          "portable or --tier auto",
                          t ? t : "?", vk_ctx_info(b->ctx)->name);
    }
    b->p = p;
    b->own = calloc((size_t)p->ntensors + 1, sizeof *b->own);
    b->kpipe = malloc(sizeof(int) * ((size_t)p->nkernels + 1));
    b->pipes = calloc((size_t)p->nkernels + 1, sizeof *b->pipes);
    b->kus = malloc(sizeof(double) * ((size_t)p->nkernels + 1));
    if (!b->own || !b->kpipe || !b->pipes || !b->kus) return ST_NOMEM;
    uint64_t asize = p->arena_bytes > 256 ? (uint64_t)p->arena_bytes : 256;
    const VkDeviceInfo *info = vk_ctx_info(b->ctx);
    if (asize > info->max_allocation_size)
        return diag_add(d, DIAG_ERROR, ST_BAD_INPUT, p->source, NULL, NULL,
                        "the activation arena needs %llu bytes; the device allocates at most "
                        "%llu in one buffer",
                        (unsigned long long)asize, (unsigned long long)info->max_allocation_size);
    Status st = vk_buf_create(b->ctx, asize, VKBUF_DEVICE, "arena", &b->arena, d);
    if (st != ST_OK) return st;
    if (b->opt.poison) {
        unsigned char *nan = malloc(asize);
        if (!nan) return ST_NOMEM;
        memset(nan, 0xff, asize); /* NaN in f32, f16 and bf16; -1 in i32 */
        st = vk_buf_upload(b->arena, 0, nan, asize, d);
        free(nan);
        if (st != ST_OK) return st;
    }
    /* own buffers: every base tensor outside the arena that a kernel touches (a weight read
     * only by the CPU or by a recipe stays on the host) */
    for (int t = 0; t < p->ntensors && st == ST_OK; t++) {
        const PlanTensor *x = &p->tensors[t];
        if (x->alias_of >= 0 || x->offset >= 0 || !plan_on_device(p, t)) continue;
        char name[64];
        snprintf(name, sizeof name, "%s", x->name);
        uint64_t bytes = hostxf_device_bytes(x);
        if (bytes > info->max_allocation_size)
            return diag_add(d, DIAG_ERROR, ST_BAD_INPUT, p->source, NULL, x->name,
                            "needs %llu bytes; the device allocates at most %llu in one buffer",
                            (unsigned long long)bytes,
                            (unsigned long long)info->max_allocation_size);
        st = vk_buf_create(b->ctx, bytes, VKBUF_DEVICE, name, &b->own[t], d);
        if (st == ST_OK && (x->kind == PT_WEIGHT || x->kind == PT_CONST)) {
            if (!vals || !vals[t])
                return diag_error(d, p->source, NULL, x->name, "no value bound for this %s",
                                  x->kind == PT_WEIGHT ? "weight" : "constant");
            st = upload_tensor(b, t, vals[t], d);
        } else if (st == ST_OK && (b->opt.poison || x->kind == PT_SCRATCH)) {
            /* NaN in f32, f16 and bf16; a scratch that must start zeroed gets zeros */
            unsigned char *nan = malloc(bytes);
            if (!nan) return ST_NOMEM;
            memset(nan, x->kind == PT_SCRATCH ? 0 : 0xff, bytes);
            st = vk_buf_upload(b->own[t], 0, nan, bytes, d);
            free(nan);
        }
    }
    for (int k = 0; k < p->nkernels && st == ST_OK; k++) {
        b->kpipe[k] = -1;
        if (p->kernels[k].target != KT_NPU) continue;
        const char *why;
        if (!vkb_supports(base, p, &p->kernels[k], &why))
            return diag_add(d, DIAG_ERROR, ST_BAD_INPUT, p->source,
                            p->kernels[k].nprov ? p->kernels[k].prov[0] : NULL, NULL,
                            "kernel %d (%s) cannot run on Vulkan: %s", k, p->kernels[k].shader,
                            why);
        st = get_pipe(b, &p->kernels[k], &b->kpipe[k], d);
    }
    return st;
}

/* Prepares with the clock warm-up around it (vk_core.h vk_warm_start) where uploads are memcpys
 * into mapped device memory: on a GPU by default, anywhere with opt.warm 1. A warm-up that
 * cannot start costs nothing but its effect: prepare goes on without it. */
static Status vkb_prepare(Backend *base, const Plan *p, const HTensor *const *vals, DiagList *d)
{
    VkBackend *b = (VkBackend *)base;
    const VkDeviceInfo *info = vk_ctx_info(b->ctx);
    bool gpu = info->type == VKDEV_DISCRETE || info->type == VKDEV_INTEGRATED;
    bool warm = info->device_local_host_visible && (b->opt.warm > 0 || (b->opt.warm < 0 && gpu));
    /* NPU_VK_WARM=0|1 (bench only): overrides it, to measure what the warm-up saves */
    const char *ew = getenv("NPU_VK_WARM");
    if (ew && *ew) warm = atoi(ew) != 0;
    if (warm) {
        DiagList quiet = {0};
        (void)vk_warm_start(b->ctx, &quiet);
        diag_free(&quiet);
    }
    Status st = prepare_body(base, p, vals, d);
    b->warm_trips = vk_warm_stop(b->ctx, &b->warm_us);
    return st;
}

uint32_t vk_backend_warm(Backend *base, double *us)
{
    if (us) *us = 0;
    if (!base || base->ops->prepare != vkb_prepare) return 0; /* not a Vulkan backend */
    VkBackend *b = (VkBackend *)base;
    if (us) *us = b->warm_us;
    return b->warm_trips;
}

/* Does a kernel of [first, first + n) write (a view of) tensor t's base? */
static bool range_writes(const Plan *p, int first, int n, int t)
{
    int base = plan_base(p, t);
    for (int k = first; k < first + n; k++)
        for (int a = p->kernels[k].nin; a < p->kernels[k].nargs; a++)
            if (p->kernels[k].args[a] >= 0 && plan_base(p, p->kernels[k].args[a]) == base)
                return true;
    return false;
}

/* A pipelined step's copy of `from` into `to` by shaders/feed.comp (a dispatch after the step's
 * last barrier: two transfer commands with their barriers cost ~20 us between steps). */
static Status feed_copy(VkBackend *b, Recording *r, VkBinding from, VkBinding to, DiagList *d)
{
    Status st = ST_OK;
    if (!b->feed_pipe) {
        VkPipeDesc pd = {.shader = "feed", .push_size = 4, .nbindings = 2};
        st = vk_pipe_create(b->ctx, &pd, &b->feed_pipe, d);
    }
    uint32_t n = (uint32_t)(to.range / 4), groups = (n + 63) / 64;
    VkBinding bind[2] = {from, to};
    if (st == ST_OK && (from.range != to.range || to.range % 4))
        st = diag_add(d, DIAG_ERROR, ST_INTERNAL, b->p->source, NULL, NULL,
                      "feed: %llu bytes into %llu", (unsigned long long)from.range,
                      (unsigned long long)to.range);
    if (st == ST_OK)
        st = vk_cmd_dispatch(r->cmd, b->feed_pipe, bind, 2, &n, 4, groups > 65535 ? 65535 : groups,
                             1, 1, d);
    return st;
}

/* After the kernels (and the closing timestamp: the step's GPU time stays the kernels'), a copy
 * of each watched tensor the range writes into host memory: read() is then a memcpy, where a
 * staged download would cost a second submit and wait per step. */
static Status record_readback(VkBackend *b, Recording *r, DiagList *d)
{
    Status st = ST_OK;
    if (b->nwatch && !b->rb) {
        uint64_t size = 0;
        for (int i = 0; i < b->nwatch; i++) {
            b->watch[i].off = size;
            size =
                vk_align_offset(b->ctx, size + hostxf_device_bytes(&b->p->tensors[b->watch[i].t]));
        }
        st = vk_buf_create(b->ctx, size, VKBUF_HOST, "readback", &b->rb, d);
    }
    VkBuf *to = b->rb;
    if (st == ST_OK && r->slot >= 0 && b->nwatch && !b->prb[r->slot])
        st = vk_buf_create(b->ctx, vk_buf_size(b->rb), VKBUF_HOST, "readback", &b->prb[r->slot], d);
    if (r->slot >= 0) to = b->prb[r->slot];
    for (int i = 0; i < b->nwatch && st == ST_OK; i++) {
        if (!range_writes(b->p, r->first, r->n, b->watch[i].t)) continue;
        VkBinding loc;
        st = locate(b, b->watch[i].t, &loc, d);
        if (st == ST_OK && r->slot >= 0) /* after the step's barrier: see record */
            st = feed_copy(b, r, loc, (VkBinding){to, b->watch[i].off, loc.range}, d);
        else if (st == ST_OK)
            st = vk_cmd_copy(r->cmd, loc.buf, loc.offset, to, b->watch[i].off, loc.range, d);
        r->copies |= 1u << i;
    }
    return st;
}

/* NPU_VK_NO_BARRIER=STEM[,STEM..] (bench only, wrong results by design; STEM* a prefix, * all):
 * no barrier before the kernels of those stems, so they overlap the level before them entirely
 * (work, not only ramps and tails). An upper bound on what removing those barriers could gain;
 * what a real dependency costs is another matter (bench/NOTES.md "Barriers"). */
static bool no_barrier(const char *stem)
{
    const char *e = getenv("NPU_VK_NO_BARRIER");
    if (!e || !*e) return false;
    for (const char *p = e; *p;) {
        size_t n = strcspn(p, ",");
        bool pre = n && p[n - 1] == '*'; /* STEM* : a prefix */
        size_t m = pre ? n - 1 : n;
        if (n && strncmp(stem, p, m) == 0 && (pre || stem[m] == '\0')) return true;
        p += n + (p[n] == ',');
    }
    return false;
}

/* Records kernels [r->first, +r->n): a barrier before a kernel only where it touches bytes the
 * kernels since the last barrier wrote, or writes bytes they read (common/hazard.h; the compiler
 * models the same rule to order kernels by level, compiler/schedule.h). */
static Status record(VkBackend *b, Recording *r, DiagList *d)
{
    const Plan *p = b->p;
    int nts = r->timed ? r->n + 1 : 2;
    int keep_slot = b->in_slot;
    b->in_slot = r->slot; /* the recording binds its slot's inputs */
    Status st = vk_cmd_create(b->ctx, (uint32_t)nts, &r->cmd, d);
    if (st == ST_OK) st = vk_cmd_begin(r->cmd, d);
    if (st == ST_OK) st = vk_cmd_timestamp(r->cmd, NULL, d);
    HzSet pending = {0};
    r->barriers = 0;
    for (int k = r->first; k < r->first + r->n && st == ST_OK; k++) {
        const PlanKernel *kn = &p->kernels[k];
        if (kn->target != KT_NPU) {
            st = diag_add(d, DIAG_ERROR, ST_INTERNAL, p->source, NULL, NULL,
                          "kernel %d is a CPU kernel inside a Vulkan recording", k);
            break;
        }
        VkBinding bind[16]; /* vk_core's binding limit */
        if (kn->nargs > 16) {
            st = diag_add(d, DIAG_ERROR, ST_INTERNAL, p->source, NULL, NULL,
                          "kernel %d binds %d tensors", k, kn->nargs);
            break;
        }
        bool hazard = false;
        HzSpan span[16];
        for (int a = 0; a < kn->nargs && st == ST_OK; a++) {
            st = locate(b, kn->args[a], &bind[a], d);
            if (st != ST_OK) break;
            span[a] =
                (HzSpan){(uintptr_t)bind[a].buf, bind[a].offset, bind[a].offset + bind[a].range, 0};
            hazard |= hz_conflict(&pending, &span[a], a >= kn->nin) >= 0;
        }
        if (st != ST_OK) break;
        if (hazard && !r->timed && no_barrier(kn->shader)) {
            hz_clear(&pending); /* NPU_VK_NO_BARRIER: the measuring aid above */
        } else if (hazard && !r->timed) {
            st = vk_cmd_barrier(r->cmd, d);
            hz_clear(&pending);
            r->barriers++;
        }
        for (int a = 0; a < kn->nargs && st == ST_OK; a++)
            st = hz_add(&pending, &span[a], a >= kn->nin);
        const PipeEntry *e = &b->pipes[b->kpipe[k]];
        if (st == ST_OK)
            st = vk_cmd_dispatch(r->cmd, e->pipe, bind, (uint32_t)kn->nargs, kn->push,
                                 (uint32_t)kn->npush * 4, kn->groups[0], kn->groups[1],
                                 kn->groups[2], d);
        if (st == ST_OK && r->timed) {
            st = vk_cmd_barrier(r->cmd, d);
            if (st == ST_OK) st = vk_cmd_timestamp(r->cmd, NULL, d);
            hz_clear(&pending);
            r->barriers++;
        }
    }
    hz_free(&pending);
    if (st == ST_OK && !r->timed) st = vk_cmd_timestamp(r->cmd, NULL, d);
    /* a pipelined step's copies are dispatches: after one barrier, the readback and the next
     * token into the next step's slot */
    if (st == ST_OK && r->slot >= 0) st = vk_cmd_barrier(r->cmd, d);
    if (st == ST_OK) st = record_readback(b, r, d);
    if (st == ST_OK && r->slot >= 0 && b->feed_src >= 0) {
        VkBinding from, to;
        st = locate(b, b->feed_src, &from, d);
        b->in_slot = 1 - r->slot;
        if (st == ST_OK) st = locate(b, b->feed_dst, &to, d);
        if (st == ST_OK) st = feed_copy(b, r, from, to, d);
    }
    /* the host reads the copies after the fence; a step queued behind this one (pipelined
     * steps are submitted while the one before runs) starts after this barrier */
    if (st == ST_OK && r->slot >= 0) st = vk_cmd_barrier_host(r->cmd, d);
    if (st == ST_OK) st = vk_cmd_end(r->cmd, d);
    b->in_slot = keep_slot;
    return st;
}

/* The recording of kernels [first, +n) (timed or not, for input slot `slot` or -1), made on
 * first use; *idx its index in b->rec. */
static Status recording(VkBackend *b, int first, int n, bool timed, int slot, int *idx, DiagList *d)
{
    for (int i = 0; i < b->nrec; i++)
        if (b->rec[i].first == first && b->rec[i].n == n && b->rec[i].timed == timed &&
            b->rec[i].slot == slot)
            return (*idx = i), ST_OK;
    Recording *nr = grow_array(b->rec, b->nrec, &b->caprec, sizeof *nr, 8);
    if (!nr) return ST_NOMEM;
    b->rec = nr;
    Recording *r = &b->rec[b->nrec];
    *r = (Recording){first, n, timed, 0, NULL, 0, slot};
    Status st = record(b, r, d);
    if (st == ST_OK) *idx = b->nrec;
    b->nrec++; /* kept even when recording failed: destroy frees its command buffer */
    return st;
}

/* After recording r's run completed with status st: its watched copies are fresh, and the
 * untimed run's GPU time is known. */
static Status ran(VkBackend *b, const Recording *r, Status st, DiagList *d)
{
    b->last_gpu_us = -1;
    for (int i = 0; i < b->nwatch; i++)
        if (r->copies & (1u << i)) {
            b->watch[i].fresh = st == ST_OK;
            b->watch[i].from = r->slot >= 0 ? b->prb[r->slot] : b->rb;
        }
    if (st != ST_OK || r->timed) return st;
    uint64_t se[2];
    if (vk_cmd_timestamps_ns(r->cmd, se, 2, d) == ST_OK)
        b->last_gpu_us = (double)(se[1] - se[0]) / 1000.0;
    return ST_OK;
}

static Status vkb_run(Backend *base, int first, int n, bool timed, DiagList *d)
{
    VkBackend *b = (VkBackend *)base;
    if (!b->p || first < 0 || n < 0 || first + n > b->p->nkernels)
        return diag_add(d, DIAG_ERROR, ST_INTERNAL, NULL, NULL, NULL, "bad kernel range");
    if (b->pend[0] >= 0 || b->pend[1] >= 0)
        return diag_add(d, DIAG_ERROR, ST_INTERNAL, NULL, NULL, NULL,
                        "run while a pipelined step is in flight");
    int ri;
    Status st = recording(b, first, n, timed, -1, &ri, d);
    if (st != ST_OK) return st;
    Recording *r = &b->rec[ri];
    st = vk_cmd_run(r->cmd, d);
    st = ran(b, r, st, d);
    if (st != ST_OK || !timed) return st;
    uint64_t *ts = malloc(sizeof(uint64_t) * ((size_t)n + 1));
    if (!ts) return ST_NOMEM;
    st = vk_cmd_timestamps_ns(r->cmd, ts, (uint32_t)n + 1, d);
    if (st == ST_OK) {
        if (!b->have_times)
            for (int k = 0; k < b->p->nkernels; k++)
                b->kus[k] = -1;
        for (int k = 0; k < n; k++)
            b->kus[first + k] = (double)(ts[k + 1] - ts[k]) / 1000.0;
        b->last_gpu_us = (double)(ts[n] - ts[0]) / 1000.0;
        b->have_times = true;
    }
    free(ts);
    return st;
}

static Status vkb_set_input(Backend *base, int t, const HTensor *v, DiagList *d)
{
    VkBackend *b = (VkBackend *)base;
    if (!b->p || t < 0 || t >= b->p->ntensors)
        return diag_add(d, DIAG_ERROR, ST_INTERNAL, NULL, NULL, NULL, "bad tensor id %d", t);
    for (int i = 0; i < b->nwatch; i++)
        if (plan_base(b->p, b->watch[i].t) == plan_base(b->p, t)) b->watch[i].fresh = false;
    return upload_tensor(b, t, v, d);
}

bool vk_backend_read_is_copied(Backend *base, int t)
{
    VkBackend *b = (VkBackend *)base;
    for (int i = 0; i < b->nwatch; i++)
        if (b->watch[i].t == t) return b->watch[i].fresh;
    return false;
}

static Status vkb_watch(Backend *base, int t, DiagList *d)
{
    VkBackend *b = (VkBackend *)base;
    if (!b->p || t < 0 || t >= b->p->ntensors)
        return diag_add(d, DIAG_ERROR, ST_INTERNAL, NULL, NULL, NULL, "bad tensor id %d", t);
    for (int i = 0; i < b->nwatch; i++)
        if (b->watch[i].t == t) return ST_OK;
    if (b->nrec || b->nwatch == MAX_WATCH)
        return diag_add(d, DIAG_ERROR, ST_INTERNAL, b->p->source, NULL, b->p->tensors[t].name,
                        "watch: %s",
                        b->nrec ? "the program was already recorded" : "too many watched tensors");
    b->watch[b->nwatch++] = (Watch){t, 0, false, NULL};
    return ST_OK;
}

static Status vkb_read(Backend *base, int t, HTensor *out, DiagList *d)
{
    VkBackend *b = (VkBackend *)base;
    if (!b->p || t < 0 || t >= b->p->ntensors)
        return diag_add(d, DIAG_ERROR, ST_INTERNAL, NULL, NULL, NULL, "bad tensor id %d", t);
    for (int i = 0; i < b->nwatch; i++)
        if (b->watch[i].t == t && b->watch[i].fresh)
            return hostxf_unpack(&b->p->tensors[t],
                                 (const char *)vk_buf_map(b->watch[i].from) + b->watch[i].off, out);
    VkBinding loc;
    Status st = locate(b, t, &loc, d);
    if (st != ST_OK) return st;
    void *tmp = malloc(loc.range);
    if (!tmp) return ST_NOMEM;
    st = vk_buf_download(loc.buf, loc.offset, tmp, loc.range, d);
    if (st == ST_OK) st = hostxf_unpack(&b->p->tensors[t], tmp, out);
    free(tmp);
    return st;
}

static Status vkb_share(Backend *base, int t, Backend *src, int src_t, DiagList *d)
{
    VkBackend *b = (VkBackend *)base, *o = (VkBackend *)src;
    if (!b->p || !o->p || src->ops != base->ops || o->ctx != b->ctx)
        return diag_add(d, DIAG_ERROR, ST_INTERNAL, NULL, NULL, NULL,
                        "share: both programs must be prepared on one Vulkan device");
    if (b->nrec)
        return diag_add(d, DIAG_ERROR, ST_INTERNAL, NULL, NULL, NULL,
                        "share: the program was already recorded");
    const PlanTensor *x = &b->p->tensors[t], *y = &o->p->tensors[src_t];
    if (hostxf_device_bytes(x) != hostxf_device_bytes(y) || x->storage != y->storage)
        return diag_error(d, b->p->source, NULL, x->name,
                          "cannot share the storage of '%s': sizes or dtypes differ", y->name);
    if (!b->over) {
        b->over = calloc((size_t)b->p->ntensors + 1, sizeof *b->over);
        if (!b->over) return ST_NOMEM;
    }
    VkBinding loc;
    Status st = locate(o, src_t, &loc, d);
    if (st == ST_OK) b->over[plan_base(b->p, t)] = loc;
    return st;
}

static double vkb_run_gpu_us(Backend *base)
{
    return ((VkBackend *)base)->last_gpu_us;
}

static bool vkb_kernel_us(Backend *base, double *us, int n)
{
    VkBackend *b = (VkBackend *)base;
    if (!b->have_times || !b->p) return false;
    for (int k = 0; k < n && k < b->p->nkernels; k++)
        us[k] = b->kus[k];
    return true;
}

static const char *vkb_device(Backend *base)
{
    return ((VkBackend *)base)->desc;
}

static void vkb_destroy(Backend *base)
{
    VkBackend *b = (VkBackend *)base;
    if (!b) return;
    for (int s = 0; s < 2; s++) /* a step still in flight (an error stopped the loop) */
        if (b->pend[s] >= 0) vk_cmd_wait(b->rec[b->pend[s]].cmd, NULL);
    for (int i = 0; i < b->nrec; i++)
        vk_cmd_destroy(b->rec[i].cmd);
    free(b->rec);
    for (int i = 0; i < b->npipes; i++)
        vk_pipe_destroy(b->pipes[i].pipe);
    if (b->own && b->p)
        for (int t = 0; t < b->p->ntensors; t++)
            vk_buf_destroy(b->own[t]);
    vk_buf_destroy(b->arena);
    vk_buf_destroy(b->rb);
    for (int s = 0; s < 2; s++)
        vk_buf_destroy(b->prb[s]);
    vk_pipe_destroy(b->feed_pipe);
    for (int s = 0; s < 2; s++) {
        if (b->slotbuf[s] && b->p)
            for (int t = 0; t < b->p->ntensors; t++)
                vk_buf_destroy(b->slotbuf[s][t]);
        free(b->slotbuf[s]);
    }
    if (b->sc && --b->sc->refs == 0) { /* the device goes with its last user */
        vk_ctx_destroy(b->sc->ctx);
        free(b->sc);
    }
    free(b->over);
    free(b->pack);
    free(b->own);
    free(b->kpipe);
    free(b->pipes);
    free(b->kus);
    free(b);
}

Status vk_backend_create_shared(Backend *with, Backend **out, DiagList *d)
{
    *out = NULL;
    VkBackend *w = (VkBackend *)with;
    if (!w || with->ops->destroy != vkb_destroy || !w->sc)
        return diag_add(d, DIAG_ERROR, ST_INTERNAL, NULL, NULL, NULL,
                        "a shared backend needs a Vulkan backend to share with");
    VkBackend *b = calloc(1, sizeof *b);
    if (!b) return ST_NOMEM;
    b->feed_dst = b->feed_src = b->pend[0] = b->pend[1] = b->in_slot = -1;
    b->base.ops = with->ops;
    b->opt = w->opt;
    b->sc = w->sc;
    b->sc->refs++;
    b->ctx = w->ctx;
    memcpy(b->desc, w->desc, sizeof b->desc);
    *out = &b->base;
    return ST_OK;
}

int vk_backend_barriers(Backend *base)
{
    VkBackend *b = (VkBackend *)base;
    int n = 0;
    for (int i = 0; b && i < b->nrec; i++)
        if (!b->rec[i].timed) n += b->rec[i].barriers;
    return n;
}

int vk_backend_validation_errors(Backend *base)
{
    VkBackend *b = (VkBackend *)base;
    return b && b->ctx ? vk_validation_errors(b->ctx) : 0;
}

const char *vk_backend_validation_message(Backend *base, int i)
{
    VkBackend *b = (VkBackend *)base;
    const char *m = b && b->ctx ? vk_validation_message(b->ctx, i) : NULL;
    return m ? m : "";
}

/* Each slot's storage of every input the host writes per run (on the device, not model state,
 * not storage shared with another program). */
static Status make_slots(VkBackend *b, DiagList *d)
{
    const Plan *p = b->p;
    Status st = ST_OK;
    for (int s = 0; s < 2 && st == ST_OK && !b->slotbuf[s]; s++) {
        if (!(b->slotbuf[s] = calloc((size_t)p->ntensors + 1, sizeof(VkBuf *)))) return ST_NOMEM;
        for (int t = 0; t < p->ntensors && st == ST_OK; t++) {
            const PlanTensor *x = &p->tensors[t];
            if (x->kind != PT_INPUT || x->alias_of >= 0 || !plan_on_device(p, t) ||
                plan_state_of(p, t) >= 0 || (b->over && b->over[t].buf))
                continue;
            char name[80];
            snprintf(name, sizeof name, "%s.slot%d", x->name, s);
            st = vk_buf_create(b->ctx, hostxf_device_bytes(x), VKBUF_DEVICE, name,
                               &b->slotbuf[s][t], d);
        }
    }
    return st;
}

static Status vkb_pipe_feed(Backend *base, int dst, int src, int first, int n, DiagList *d)
{
    VkBackend *b = (VkBackend *)base;
    const Plan *p = b->p;
    if (!p || dst < 0 || dst >= p->ntensors || src < 0 || src >= p->ntensors)
        return diag_add(d, DIAG_ERROR, ST_INTERNAL, NULL, NULL, NULL, "feed: bad tensor ids");
    for (int i = 0; i < b->nrec; i++)
        if (b->rec[i].slot >= 0)
            return diag_add(d, DIAG_ERROR, ST_INTERNAL, p->source, NULL, NULL,
                            "feed: a pipelined step was already recorded");
    Status st = make_slots(b, d);
    if (st == ST_OK && !b->slotbuf[0][plan_base(p, dst)])
        st = diag_add(d, DIAG_ERROR, ST_INTERNAL, p->source, NULL, p->tensors[dst].name,
                      "feed: not an input the host writes per run");
    if (st == ST_OK) b->feed_dst = dst, b->feed_src = src;
    /* both slots' recordings now, at load: made at each slot's first submit, slot 1's cost the
     * second token ~20 ms in a fresh process (bench/NOTES.md "Pipelined decode") */
    if (st == ST_OK && (first < 0 || n < 0 || first + n > p->nkernels))
        st = diag_add(d, DIAG_ERROR, ST_INTERNAL, p->source, NULL, NULL, "feed: bad kernel range");
    for (int s = 0, ri; s < 2 && st == ST_OK; s++)
        st = recording(b, first, n, false, s, &ri, d);
    return st;
}

static void vkb_pipe_slot(Backend *base, int slot)
{
    ((VkBackend *)base)->in_slot = slot < 0 ? -1 : slot ? 1 : 0;
}

static Status vkb_pipe_submit(Backend *base, int first, int n, DiagList *d)
{
    VkBackend *b = (VkBackend *)base;
    int slot = b->in_slot, ri;
    if (!b->p || first < 0 || n < 0 || first + n > b->p->nkernels || slot < 0 || b->pend[slot] >= 0)
        return diag_add(d, DIAG_ERROR, ST_INTERNAL, NULL, NULL, NULL,
                        "pipe_submit: bad kernel range, no slot, or slot %d still in flight", slot);
    Status st = make_slots(b, d);
    if (st == ST_OK) st = recording(b, first, n, false, slot, &ri, d);
    if (st == ST_OK) st = vk_cmd_submit(b->rec[ri].cmd, d);
    if (st == ST_OK) b->pend[slot] = ri;
    return st;
}

static Status vkb_pipe_wait(Backend *base, int slot, DiagList *d)
{
    VkBackend *b = (VkBackend *)base;
    int ri = b->pend[slot ? 1 : 0];
    if (ri < 0) return ST_OK;
    b->pend[slot ? 1 : 0] = -1;
    Recording *r = &b->rec[ri];
    return ran(b, r, vk_cmd_wait(r->cmd, d), d);
}

static const BackendOps vk_ops = {
    .name = "vulkan",
    .supports = vkb_supports,
    .prepare = vkb_prepare,
    .set_input = vkb_set_input,
    .watch = vkb_watch,
    .run = vkb_run,
    .read = vkb_read,
    .kernel_us = vkb_kernel_us,
    .run_gpu_us = vkb_run_gpu_us,
    .share = vkb_share,
    .pipe_feed = vkb_pipe_feed,
    .pipe_slot = vkb_pipe_slot,
    .pipe_submit = vkb_pipe_submit,
    .pipe_wait = vkb_pipe_wait,
    .device = vkb_device,
    .destroy = vkb_destroy,
};

Status vk_backend_create(const VkBackendOptions *o, Backend **out, DiagList *d)
{
    *out = NULL;
    VkBackend *b = calloc(1, sizeof *b);
    if (!b) return ST_NOMEM;
    b->feed_dst = b->feed_src = b->pend[0] = b->pend[1] = b->in_slot = -1;
    b->base.ops = &vk_ops;
    b->opt = o ? *o : vk_backend_options_default();
    VkCtxOptions co = vk_ctx_options_default();
    co.device_index = b->opt.device;
    co.validate = b->opt.validate;
    char cache[512];
    co.pipeline_cache_path =
        b->opt.no_cache ? NULL : cache_path(cache, sizeof cache, "pipelines.bin");
    b->sc = calloc(1, sizeof *b->sc);
    Status st = b->sc ? vk_ctx_create(&co, &b->ctx, d) : ST_NOMEM;
    if (st != ST_OK) {
        free(b->sc);
        free(b);
        return st;
    }
    b->sc->ctx = b->ctx;
    b->sc->refs = 1;
    const VkDeviceInfo *i = vk_ctx_info(b->ctx);
    snprintf(b->desc, sizeof b->desc, "%s (%s, %s)", i->name, vk_dev_type_name(i->type), i->driver);
    *out = &b->base;
    return ST_OK;
}
