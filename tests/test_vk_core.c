/* run_tests: foreign-leaks-ok (lavapipe and the validation layer leak: see below)
 *
 * Vulkan core on whatever device the box has (lavapipe in CI): device facts, fill and axpy in
 * every storage variant against a CPU computation, replay of one recording, timestamps, the
 * descriptor-set and staging fallbacks, refusals of bad input, the pipeline cache file, and a
 * whole run under the validation layer with zero errors.
 *
 * Leaks: under ASan, Mesa 22.3.6's lavapipe leaks 128 bytes per device created (from a
 * pthread_once initialiser; a plain vkCreateInstance + vkCreateDevice program with no code of
 * ours shows it too), and with the Khronos validation layer 1.3.239 loaded the leaks grow to tens
 * of KB with the pipelines and dispatches recorded. The loader dlclose's both libraries, so their
 * frames print as "<unknown module>" and cannot be suppressed by name. tools/run_tests.sh
 * therefore ignores leak reports unless their stack names one of our source files. Vulkan
 * objects of ours that outlive their destroy call (whose memory the driver allocates) are
 * caught by the validation layer at device destruction: test_validation_clean asserts that
 * vk_ctx_destroy counts none, and that it would count one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/fileio.h"
#include "common/half.h"
#include "runtime/vulkan/vk_core.h"
#include "runtime/vulkan/vk_shaders.h"
#include "common/clock.h"
#include "tests/testutil.h"

#define WG 64

typedef DType Dt; /* F32, F16, BF16 come first in DType: they index the tables below */
static const char *dt_name[] = {"f32", "f16", "bf16"};
static const size_t dt_size[] = {4, 2, 2};

static void check_ok(Status st, DiagList *d)
{
    if (st != ST_OK) diag_print(d, stderr);
    assert_int_equal(st, ST_OK);
}

static bool diag_has(const DiagList *d, const char *needle)
{
    char buf[2048];
    for (int i = 0; i < d->count; i++) {
        diag_format(&d->items[i], buf, sizeof buf);
        if (strstr(buf, needle)) return true;
    }
    return false;
}

static VkCtx *make_ctx(const VkCtxOptions *opt)
{
    VkCtx *ctx = NULL;
    DiagList d = {0};
    check_ok(vk_ctx_create(opt, &ctx, &d), &d);
    diag_print(&d, stderr); /* warnings and notes, e.g. a missing validation layer */
    diag_free(&d);
    return ctx;
}

static float rnd(uint64_t *s) /* uniform in [0,1) */
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (float)(*s >> 40) / 16777216.0f;
}

/* Random values in +-[0.25, 2]: never zero, both signs. */
static void fill_random(float *v, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        float m = 0.25f + 1.75f * rnd(&seed);
        v[i] = rnd(&seed) < 0.5f ? -m : m;
    }
}

static void encode(Dt t, const float *src, void *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (t == DT_F32)
            ((float *)dst)[i] = src[i];
        else if (t == DT_F16)
            ((uint16_t *)dst)[i] = f32_to_f16(src[i]);
        else
            ((uint16_t *)dst)[i] = f32_to_bf16(src[i]);
    }
}

static void decode(Dt t, const void *src, float *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (t == DT_F32)
            dst[i] = ((const float *)src)[i];
        else if (t == DT_F16)
            dst[i] = f16_to_f32(((const uint16_t *)src)[i]);
        else
            dst[i] = bf16_to_f32(((const uint16_t *)src)[i]);
    }
}

/* What the storage type can hold of x (the CPU's idea of the rounding). */
static float round_to(Dt t, float x)
{
    char tmp[4];
    float r;
    encode(t, &x, tmp, 1);
    decode(t, tmp, &r, 1);
    return r;
}

/* Tolerance: 1 ulp of the storage type relative (the driver may round f16 toward zero), plus
 * an absolute floor for results near zero after cancellation. */
static bool close_enough(Dt t, float got, float want)
{
    static const double rel[] = {2e-6, 1.0 / 1024, 1.0 / 128}, abs_[] = {1e-6, 1e-3, 1e-2};
    return fabs((double)got - want) <= rel[t] * fabs((double)want) + abs_[t];
}

static VkPipe *make_pipe(VkCtx *ctx, const char *stem, Dt t, const uint32_t *spec, uint32_t nspec,
                         uint32_t nbind)
{
    char name[64];
    snprintf(name, sizeof name, "%s.%s", stem, dt_name[t]);
    VkPipeDesc pd = {
        .shader = name, .spec = spec, .nspec = nspec, .push_size = 8, .nbindings = nbind};
    VkPipe *p = NULL;
    DiagList d = {0};
    check_ok(vk_pipe_create(ctx, &pd, &p, &d), &d);
    diag_free(&d);
    return p;
}

typedef struct {
    uint32_t n;
    float value;
} Push;

/* fill: the buffer holds NaN first; n elements get `value` (+ i with RAMP), the tail stays NaN. */
static void run_fill(VkCtx *ctx, Dt t, uint32_t ramp)
{
    const uint32_t n = 1000, tail = 24; /* 1000 is not a multiple of WG */
    DiagList d = {0};
    VkBuf *buf = NULL;
    check_ok(vk_buf_create(ctx, (n + tail) * dt_size[t], VKBUF_DEVICE, "fill", &buf, &d), &d);
    float *f = malloc((n + tail) * sizeof *f);
    char *raw = malloc((n + tail) * 4);
    for (uint32_t i = 0; i < n + tail; i++)
        f[i] = NAN;
    encode(t, f, raw, n + tail);
    check_ok(vk_buf_upload(buf, 0, raw, (n + tail) * dt_size[t], &d), &d);

    uint32_t spec[2] = {WG, ramp};
    VkPipe *p = make_pipe(ctx, "fill", t, spec, 2, 1);
    VkCmd *c = NULL;
    check_ok(vk_cmd_create(ctx, 0, &c, &d), &d);
    Push pc = {n, 3.25f};
    VkBinding b = {buf, 0, 0};
    check_ok(vk_cmd_begin(c, &d), &d);
    check_ok(vk_cmd_dispatch(c, p, &b, 1, &pc, sizeof pc, (n + WG - 1) / WG, 1, 1, &d), &d);
    check_ok(vk_cmd_end(c, &d), &d);
    check_ok(vk_cmd_run(c, &d), &d);
    check_ok(vk_buf_download(buf, 0, raw, (n + tail) * dt_size[t], &d), &d);
    decode(t, raw, f, n + tail);
    int bad = 0;
    for (uint32_t i = 0; i < n; i++) {
        float want = round_to(t, 3.25f + (ramp ? (float)i : 0.0f));
        if (!close_enough(t, f[i], want) && bad++ < 5)
            fprintf(stderr, "fill.%s ramp=%u [%u] = %g, want %g\n", dt_name[t], ramp, i, f[i],
                    want);
    }
    for (uint32_t i = n; i < n + tail; i++)
        if (!isnan(f[i]) && bad++ < 10)
            fprintf(stderr, "fill.%s [%u] = %g past n: want NaN\n", dt_name[t], i, f[i]);
    assert_int_equal(bad, 0);
    vk_cmd_destroy(c);
    vk_pipe_destroy(p);
    vk_buf_destroy(buf);
    free(f);
    free(raw);
    diag_free(&d);
}

/* axpy on random data of a size that is not a multiple of WG, x and y at aligned sub-buffer
 * offsets of one buffer; `runs` submissions of one recording accumulate. */
static void run_axpy(VkCtx *ctx, Dt t, int runs)
{
    const uint32_t n = 1037;
    const float a = -1.375f;
    DiagList d = {0};
    uint64_t xoff = vk_align_offset(ctx, 40); /* a sub-allocation not at 0 */
    uint64_t yoff = vk_align_offset(ctx, xoff + n * dt_size[t]);
    VkBuf *buf = NULL;
    check_ok(vk_buf_create(ctx, yoff + n * dt_size[t], VKBUF_DEVICE, "xy", &buf, &d), &d);
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *got = malloc(n * sizeof *got);
    char *raw = malloc(n * 4);
    fill_random(x, n, 1 + (uint64_t)t);
    fill_random(y, n, 100 + (uint64_t)t);
    for (uint32_t i = 0; i < n; i++) { /* the values the GPU sees */
        x[i] = round_to(t, x[i]);
        y[i] = round_to(t, y[i]);
    }
    encode(t, x, raw, n);
    check_ok(vk_buf_upload(buf, xoff, raw, n * dt_size[t], &d), &d);
    encode(t, y, raw, n);
    check_ok(vk_buf_upload(buf, yoff, raw, n * dt_size[t], &d), &d);

    uint32_t spec[1] = {WG};
    VkPipe *p = make_pipe(ctx, "axpy", t, spec, 1, 2);
    VkCmd *c = NULL;
    check_ok(vk_cmd_create(ctx, 0, &c, &d), &d);
    Push pc = {n, a};
    VkBinding b[2] = {{buf, xoff, n * dt_size[t]}, {buf, yoff, n * dt_size[t]}};
    check_ok(vk_cmd_begin(c, &d), &d);
    check_ok(vk_cmd_dispatch(c, p, b, 2, &pc, sizeof pc, (n + WG - 1) / WG, 1, 1, &d), &d);
    check_ok(vk_cmd_end(c, &d), &d);
    assert_int_equal(vk_cmd_dispatch_count(c), 1);
    for (int r = 0; r < runs; r++) {
        check_ok(vk_cmd_run(c, &d), &d);
        for (uint32_t i = 0; i < n; i++)
            y[i] = round_to(t, a * x[i] + y[i]);
    }
    check_ok(vk_buf_download(buf, yoff, raw, n * dt_size[t], &d), &d);
    decode(t, raw, got, n);
    int bad = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!close_enough(t, got[i], y[i]) && bad++ < 5)
            fprintf(stderr, "axpy.%s x%d [%u] = %.8g, want %.8g\n", dt_name[t], runs, i, got[i],
                    y[i]);
    assert_int_equal(bad, 0);
    vk_cmd_destroy(c);
    vk_pipe_destroy(p);
    vk_buf_destroy(buf);
    free(x);
    free(y);
    free(got);
    free(raw);
    diag_free(&d);
}

/* Three dispatches with timestamps between them; two runs of one recording. */
static void run_timestamps(VkCtx *ctx)
{
    DiagList d = {0};
    const uint32_t n = 4096;
    VkBuf *buf = NULL;
    check_ok(vk_buf_create(ctx, 2 * n * 4, VKBUF_DEVICE, "ts", &buf, &d), &d);
    uint32_t spec[2] = {WG, 1};
    VkPipe *fill = make_pipe(ctx, "fill", DT_F32, spec, 2, 1);
    VkPipe *axpy = make_pipe(ctx, "axpy", DT_F32, spec, 1, 2);
    VkCmd *c = NULL;
    check_ok(vk_cmd_create(ctx, 8, &c, &d), &d);
    VkBinding bx = {buf, 0, n * 4}, by = {buf, n * 4, n * 4}, bxy[2] = {bx, by};
    Push pc = {n, 0.5f};
    uint32_t slot;
    check_ok(vk_cmd_begin(c, &d), &d);
    check_ok(vk_cmd_timestamp(c, &slot, &d), &d);
    assert_int_equal(slot, 0);
    check_ok(vk_cmd_dispatch(c, fill, &bx, 1, &pc, sizeof pc, n / WG, 1, 1, &d), &d);
    check_ok(vk_cmd_dispatch(c, fill, &by, 1, &pc, sizeof pc, n / WG, 1, 1, &d), &d);
    check_ok(vk_cmd_barrier(c, &d), &d);
    check_ok(vk_cmd_timestamp(c, &slot, &d), &d);
    check_ok(vk_cmd_dispatch(c, axpy, bxy, 2, &pc, sizeof pc, n / WG, 1, 1, &d), &d);
    check_ok(vk_cmd_timestamp(c, &slot, &d), &d);
    assert_int_equal(slot, 2);
    check_ok(vk_cmd_end(c, &d), &d);
    assert_int_equal(vk_cmd_timestamp_count(c), 3);
    uint64_t ts[3], prev_end = 0;
    for (int run = 0; run < 2; run++) {
        check_ok(vk_cmd_run(c, &d), &d);
        check_ok(vk_cmd_timestamps_ns(c, ts, 3, &d), &d);
        assert_true(ts[0] > 0);
        assert_true(ts[0] >= prev_end);
        assert_true(ts[1] >= ts[0]);
        assert_true(ts[2] >= ts[1]);
        assert_true(ts[2] > ts[0]);
        prev_end = ts[2];
    }
    float y0;
    check_ok(vk_buf_download(buf, n * 4 + 4 * 7, &y0, 4, &d), &d); /* y[7] = 0.5*7.5 + 7.5 */
    assert_true(fabsf(y0 - (0.5f * 7.5f + 7.5f)) < 1e-5f);
    /* More timestamps than recorded are refused. */
    assert_int_equal(vk_cmd_timestamps_ns(c, ts, 4, &d), ST_BAD_INPUT);
    vk_cmd_destroy(c);
    vk_pipe_destroy(axpy);
    vk_pipe_destroy(fill);
    vk_buf_destroy(buf);
    diag_free(&d);
}

static void run_all(VkCtx *ctx)
{
    for (Dt t = DT_F32; t <= DT_BF16; t++) {
        run_fill(ctx, t, 0);
        run_axpy(ctx, t, 1);
    }
    run_fill(ctx, DT_F32, 1);
    run_axpy(ctx, DT_F32, 3);
    run_timestamps(ctx);
}

/* ---- tests -------------------------------------------------------------------------------- */

static void test_device_info(void **state)
{
    (void)state;
    VkCtx *ctx = make_ctx(NULL);
    const VkDeviceInfo *o = vk_ctx_info(ctx);
    printf("device %d: %s [%s] (%s), api %u.%u, subgroup %u, shared %u B, push %u B, "
           "storage range %llu B, max alloc %llu B, offset align %llu, ts period %.3f ns "
           "(%u bits), host-visible device memory %d, push descriptors %d (max %u), f16 %d "
           "16-bit storage %d int64 %d\n",
           o->index, o->name, o->driver, vk_dev_type_name(o->type), o->api_version >> 22,
           (o->api_version >> 12) & 0x3ff, o->subgroup_size, o->max_shared_memory,
           o->max_push_constants, (unsigned long long)o->max_storage_buffer_range,
           (unsigned long long)o->max_allocation_size, (unsigned long long)o->storage_offset_align,
           o->timestamp_period_ns, o->timestamp_valid_bits, o->device_local_host_visible,
           o->push_descriptors, o->max_push_descriptors, o->f16_arith, o->storage16, o->int64);
    assert_true(o->name[0] && o->driver[0]);
    assert_true(o->api_version >= ((1u << 22) | (2u << 12)));
    assert_true(o->subgroup_size >= 1 && (o->subgroup_size & (o->subgroup_size - 1)) == 0);
    assert_true(o->max_shared_memory >= 16384);
    assert_true(o->max_push_constants >= 128);
    assert_true(o->max_storage_buffer_range >= (1u << 27));
    assert_true(o->max_allocation_size >= (1u << 30));
    assert_true(o->storage_offset_align >= 1 && o->storage_offset_align <= 256);
    assert_true(o->max_workgroup_invocations >= 128 && o->max_workgroup_count[0] >= 65535);
    assert_true(o->storage16); /* the f16/bf16 variants need it */
    if (o->timestamps) assert_true(o->timestamp_period_ns > 0 && o->timestamp_valid_bits >= 36);
    if (strstr(o->name, "llvmpipe")) { /* the facts VULKAN-NOTES.md records for lavapipe */
        assert_int_equal(o->type, VKDEV_CPU);
        assert_int_equal(o->subgroup_size, 8);
        assert_int_equal(o->max_shared_memory, 32768);
        assert_int_equal(o->max_push_constants, 128);
        assert_int_equal(o->max_storage_buffer_range, 128u << 20);
        assert_true(o->push_descriptors && o->timestamps && o->device_local_host_visible);
    }
    assert_non_null(vk_spv_find("axpy.bf16"));
    assert_null(vk_spv_find("axpy"));

    VkDeviceInfo list[8];
    int count = 0;
    DiagList d = {0};
    check_ok(vk_list_devices(list, 8, &count, &d), &d);
    assert_true(count >= 1 && o->index < count);
    assert_string_equal(list[o->index].name, o->name);
    vk_ctx_destroy(ctx);
    diag_free(&d);
}

static void test_no_such_device(void **state)
{
    (void)state;
    VkCtxOptions opt = vk_ctx_options_default();
    opt.device_index = 999;
    VkCtx *ctx = (VkCtx *)&opt; /* must be reset to NULL */
    DiagList d = {0};
    assert_int_equal(vk_ctx_create(&opt, &ctx, &d), ST_NO_DEVICE);
    assert_null(ctx);
    assert_true(diag_has(&d, "device index 999 does not exist"));
    diag_free(&d);
    vk_ctx_destroy(NULL);
}

static void test_fill_and_axpy(void **state)
{
    (void)state;
    VkCtx *ctx = make_ctx(NULL);
    run_all(ctx);
    vk_ctx_destroy(ctx);
}

/* n fill dispatches of one workgroup into one buffer in one recording, a barrier after each
 * (value i for the i-th): the buffer holds n - 1 after the run. */
static void run_fills(VkCtx *ctx, uint32_t n)
{
    DiagList d = {0};
    VkBuf *buf = NULL;
    check_ok(vk_buf_create(ctx, 4 * WG, VKBUF_DEVICE, "fills", &buf, &d), &d);
    uint32_t spec[2] = {WG, 0};
    VkPipe *p = make_pipe(ctx, "fill", DT_F32, spec, 2, 1);
    VkCmd *c = NULL;
    check_ok(vk_cmd_create(ctx, 0, &c, &d), &d);
    check_ok(vk_cmd_begin(c, &d), &d);
    VkBinding bb = {buf, 0, 0};
    for (uint32_t i = 0; i < n; i++) {
        Push pc = {WG, (float)i};
        check_ok(vk_cmd_dispatch(c, p, &bb, 1, &pc, sizeof pc, 1, 1, 1, &d), &d);
        check_ok(vk_cmd_barrier(c, &d), &d);
    }
    check_ok(vk_cmd_end(c, &d), &d);
    check_ok(vk_cmd_run(c, &d), &d);
    float v[WG];
    check_ok(vk_buf_download(buf, 0, v, sizeof v, &d), &d);
    assert_true(v[0] == (float)(n - 1) && v[WG - 1] == (float)(n - 1));
    vk_cmd_destroy(c);
    vk_pipe_destroy(p);
    vk_buf_destroy(buf);
    diag_free(&d);
}

/* Descriptor sets instead of push descriptors, staged copies instead of memcpy. */
static void test_fallback_paths(void **state)
{
    (void)state;
    VkCtxOptions opt = vk_ctx_options_default();
    opt.no_push_descriptors = true;
    opt.force_staging = true;
    VkCtx *ctx = make_ctx(&opt);
    assert_false(vk_ctx_info(ctx)->push_descriptors);
    assert_false(vk_ctx_info(ctx)->device_local_host_visible);
    DiagList d = {0};
    VkBuf *b = NULL;
    check_ok(vk_buf_create(ctx, 64, VKBUF_DEVICE, "unmapped", &b, &d), &d);
    assert_null(vk_buf_map(b));
    vk_buf_destroy(b);
    run_all(ctx);
    /* More than one descriptor pool's worth of sets in one recording. */
    run_fills(ctx, 600);
    vk_ctx_destroy(ctx);
    diag_free(&d);
}

/* The clock warm-up: the spin runs until stopped (it sees the host's flag: far fewer trips than
 * its bound), a second start while it runs does nothing, and any other submission stops it first
 * (else a run would queue behind it), as does a staged copy and the device's end. */
static void test_warm_up(void **state)
{
    (void)state;
    VkCtx *ctx = make_ctx(NULL);
    DiagList d = {0};
    check_ok(vk_warm_start(ctx, &d), &d);
    assert_true(vk_warm_running(ctx));
    check_ok(vk_warm_start(ctx, &d), &d);
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    double us = 0;
    uint32_t trips = vk_warm_stop(ctx, &us);
    assert_false(vk_warm_running(ctx));
    assert_true(trips >= 1 && trips < (1u << 20));
    assert_true(us >= 20000);
    assert_int_equal(vk_warm_stop(ctx, NULL), 0); /* nothing runs: nothing to stop */

    /* the watchdog: a bound of 8 trips ends the spin by itself unless vk_warm_keep re-arms it (an
     * upload longer than the bound kept the GPU busy for only its first ~2 s). Re-armed, it
     * passes its bound, unless the host was descheduled through its first 8 trips (a loaded CI
     * box): up to 10 tries, of which one must pass; without the re-arm none can. */
    check_ok(vk_warm_start_bound(ctx, 8, &d), &d);
    nanosleep(&ts, NULL);
    assert_true(vk_warm_stop(ctx, NULL) <= 8);
    uint32_t most = 0;
    for (int try = 0; try < 10 && most <= 8; try++) {
        check_ok(vk_warm_start_bound(ctx, 8, &d), &d);
        double t0 = clock_us();
        while (vk_warm_trips(ctx) <= 8 && clock_us() - t0 < 1e6)
            vk_warm_keep(ctx);
        uint32_t n = vk_warm_stop(ctx, NULL);
        most = n > most ? n : most;
    }
    assert_true(most > 8);

    check_ok(vk_warm_start(ctx, &d), &d);
    run_fills(ctx, 8); /* its submit stops the spin first, else the run would wait behind it */
    assert_false(vk_warm_running(ctx));
    check_ok(vk_warm_start(ctx, &d), &d); /* left running: vk_ctx_destroy stops it */
    vk_ctx_destroy(ctx);

    VkCtxOptions opt = vk_ctx_options_default();
    opt.force_staging = true; /* a staged upload stops it */
    ctx = make_ctx(&opt);
    check_ok(vk_warm_start(ctx, &d), &d);
    VkBuf *buf = NULL;
    float v[WG] = {0};
    check_ok(vk_buf_create(ctx, 4 * WG, VKBUF_DEVICE, "staged", &buf, &d), &d);
    check_ok(vk_buf_upload(buf, 0, v, sizeof v, &d), &d);
    assert_false(vk_warm_running(ctx));
    vk_buf_destroy(buf);
    vk_ctx_destroy(ctx);
    diag_free(&d);
}

static void test_validation_clean(void **state)
{
    (void)state;
    setenv("NPU_VK_VALIDATE", "1", 1);
    for (int fallback = 0; fallback < 2; fallback++) {
        VkCtxOptions opt = vk_ctx_options_default();
        opt.no_push_descriptors = opt.force_staging = fallback;
        VkCtx *ctx = make_ctx(&opt);
        assert_true(vk_ctx_info(ctx)->validation);
        run_all(ctx);
        int errs = vk_validation_errors(ctx);
        for (int i = 0; vk_validation_message(ctx, i); i++)
            fprintf(stderr, "validation: %s\n", vk_validation_message(ctx, i));
        assert_int_equal(errs, 0);
        /* The counter counts: a message of error severity through the same messenger. */
        vk_validation_inject(ctx, "injected by test_vk_core");
        assert_int_equal(vk_validation_errors(ctx), 1);
        assert_string_equal(vk_validation_message(ctx, 0), "injected by test_vk_core");
        /* Teardown adds nothing: no Vulkan object of ours outlived its destroy call. */
        assert_int_equal(vk_ctx_destroy(ctx), 1);
    }
    /* ... and teardown would say so: a buffer left alive is an error at device destruction. */
    VkCtx *ctx = make_ctx(NULL);
    VkBuf *left = NULL;
    DiagList d = {0};
    check_ok(vk_buf_create(ctx, 256, VKBUF_DEVICE, "left alive", &left, &d), &d);
    assert_true(vk_ctx_destroy(ctx) >= 1);
    free(left); /* its Vulkan handles died with the device; the struct is one malloc block */
    diag_free(&d);
    unsetenv("NPU_VK_VALIDATE");
}

static void test_bad_input(void **state)
{
    (void)state;
    VkCtx *ctx = make_ctx(NULL);
    const VkDeviceInfo *o = vk_ctx_info(ctx);
    DiagList d = {0};
    VkBuf *b = NULL, *big = NULL;
    VkPipe *p = NULL;
    assert_int_equal(vk_buf_create(ctx, 0, VKBUF_DEVICE, "zero", &b, &d), ST_BAD_INPUT);
    assert_int_equal(vk_buf_create(ctx, o->max_allocation_size + 1, VKBUF_DEVICE, "huge", &b, &d),
                     ST_BAD_INPUT);
    assert_true(diag_has(&d, "maxMemoryAllocationSize"));
    assert_null(b);
    check_ok(vk_buf_create(ctx, 1024, VKBUF_HOST, "small", &b, &d), &d);
    assert_non_null(vk_buf_map(b));
    char tmp[64] = {0};
    assert_int_equal(vk_buf_upload(b, 1000, tmp, 64, &d), ST_BAD_INPUT);
    assert_int_equal(vk_buf_download(b, UINT64_MAX, tmp, 1, &d), ST_BAD_INPUT);

    VkPipeDesc pd = {.shader = "nope.f32", .push_size = 8, .nbindings = 1};
    assert_int_equal(vk_pipe_create(ctx, &pd, &p, &d), ST_BAD_INPUT);
    assert_true(diag_has(&d, "no embedded shader module 'nope.f32'"));
    pd.shader = "fill.f32";
    pd.push_size = o->max_push_constants + 4;
    assert_int_equal(vk_pipe_create(ctx, &pd, &p, &d), ST_BAD_INPUT);
    pd.push_size = 8;
    pd.nbindings = 0;
    assert_int_equal(vk_pipe_create(ctx, &pd, &p, &d), ST_BAD_INPUT);
    uint32_t junk[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    VkPipeDesc jd = {
        .shader = "junk", .code = junk, .code_size = sizeof junk, .push_size = 8, .nbindings = 1};
    assert_int_equal(vk_pipe_create(ctx, &jd, &p, &d), ST_BAD_INPUT);
    assert_null(p);
    pd.nbindings = 1;
    uint32_t spec[1] = {16};
    pd.spec = spec;
    pd.nspec = 1;
    check_ok(vk_pipe_create(ctx, &pd, &p, &d), &d);

    VkCmd *c = NULL;
    check_ok(vk_cmd_create(ctx, 1, &c, &d), &d);
    Push pc = {16, 1.0f};
    VkBinding bb = {b, 0, 0};
    assert_int_equal(vk_cmd_submit(c, &d), ST_BAD_INPUT); /* nothing recorded */
    assert_int_equal(vk_cmd_dispatch(c, p, &bb, 1, &pc, 8, 1, 1, 1, &d), ST_BAD_INPUT);
    check_ok(vk_cmd_begin(c, &d), &d);
    assert_int_equal(vk_cmd_dispatch(c, p, &bb, 1, &pc, 4, 1, 1, 1, &d), ST_BAD_INPUT);
    assert_int_equal(vk_cmd_dispatch(c, p, &bb, 0, &pc, 8, 1, 1, 1, &d), ST_BAD_INPUT);
    assert_int_equal(vk_cmd_dispatch(c, p, &bb, 1, &pc, 8, 0, 1, 1, &d), ST_BAD_INPUT);
    VkBinding past = {b, 1024, 0}, longer = {b, 0, 2048};
    assert_int_equal(vk_cmd_dispatch(c, p, &past, 1, &pc, 8, 1, 1, 1, &d), ST_BAD_INPUT);
    assert_int_equal(vk_cmd_dispatch(c, p, &longer, 1, &pc, 8, 1, 1, 1, &d), ST_BAD_INPUT);
    if (o->storage_offset_align > 1) {
        VkBinding mis = {b, o->storage_offset_align / 2, 64};
        assert_int_equal(vk_cmd_dispatch(c, p, &mis, 1, &pc, 8, 1, 1, 1, &d), ST_BAD_INPUT);
        assert_true(diag_has(&d, "minStorageBufferOffsetAlignment"));
    }
    if (o->max_storage_buffer_range < o->max_allocation_size) {
        check_ok(
            vk_buf_create(ctx, o->max_storage_buffer_range + 256, VKBUF_DEVICE, "wide", &big, &d),
            &d);
        VkBinding wide = {big, 0, 0};
        assert_int_equal(vk_cmd_dispatch(c, p, &wide, 1, &pc, 8, 1, 1, 1, &d), ST_BAD_INPUT);
        assert_true(diag_has(&d, "maxStorageBufferRange"));
        wide.offset = 256; /* a window of exactly the maximum is fine */
        check_ok(vk_cmd_dispatch(c, p, &wide, 1, &pc, 8, 1, 1, 1, &d), &d);
    }
    check_ok(vk_cmd_timestamp(c, NULL, &d), &d);
    assert_int_equal(vk_cmd_timestamp(c, NULL, &d), ST_BAD_INPUT); /* room for one */
    assert_int_equal(vk_cmd_end(c, &d), ST_BAD_INPUT);             /* refusals were made */
    assert_int_equal(vk_cmd_submit(c, &d), ST_BAD_INPUT);
    /* A clean re-recording works. */
    check_ok(vk_cmd_begin(c, &d), &d);
    check_ok(vk_cmd_dispatch(c, p, &bb, 1, &pc, 8, 1, 1, 1, &d), &d);
    check_ok(vk_cmd_end(c, &d), &d);
    check_ok(vk_cmd_run(c, &d), &d);
    const float *m = vk_buf_map(b);
    assert_true(m[15] == 1.0f && m[0] == 1.0f);
    vk_cmd_destroy(c);
    vk_pipe_destroy(p);
    vk_buf_destroy(big);
    vk_buf_destroy(b);
    vk_ctx_destroy(ctx);
    diag_free(&d);
}

static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

static void cache_round(const char *path, bool expect_note)
{
    VkCtxOptions opt = vk_ctx_options_default();
    opt.pipeline_cache_path = path;
    VkCtx *ctx = NULL;
    DiagList d = {0};
    check_ok(vk_ctx_create(&opt, &ctx, &d), &d);
    assert_int_equal(diag_has(&d, "pipeline cache"), expect_note);
    assert_int_equal(d.errors, 0);
    run_fill(ctx, DT_F16, 0);
    check_ok(vk_ctx_save_pipeline_cache(ctx, &d), &d);
    vk_ctx_destroy(ctx);
    diag_free(&d);
    assert_true(file_size(path) >= 32);
}

static void test_pipeline_cache(void **state)
{
    (void)state;
    char dir[] = "/tmp/npu-vk-cache-XXXXXX", path[320], sub[256];
    assert_non_null(mkdtemp(dir));
    snprintf(sub, sizeof sub, "%s/nested", dir);
    snprintf(path, sizeof path, "%s/pipelines.bin", sub); /* the directory does not exist yet */
    cache_round(path, false);
    cache_round(path, false); /* reloads what it wrote */
    FILE *f = fopen(path, "wb");
    for (int i = 0; i < 300; i++)
        fputc((i * 37) & 0xff, f);
    fclose(f);
    cache_round(path, true); /* garbage: a note, then a valid file again */
    cache_round(path, false);
    f = fopen(path, "wb");
    fclose(f);
    cache_round(path, false); /* empty file: nothing to load, no note */
    unlink(path);
    rmdir(sub);
    rmdir(dir);
    char buf[512];
    const char *def = cache_path(buf, sizeof buf, "pipelines.bin");
    if (def) assert_non_null(strstr(def, "npu-explore/pipelines.bin"));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Measures, for the report: empty submit+wait, per-dispatch GPU cost with and without barriers,
 * CPU cost of recording one dispatch. Asserts only that the numbers exist. */
static void test_measure(void **state)
{
    (void)state;
    VkCtx *ctx = make_ctx(NULL);
    DiagList d = {0};
    VkCmd *c = NULL;
    check_ok(vk_cmd_create(ctx, 2, &c, &d), &d);
    check_ok(vk_cmd_begin(c, &d), &d);
    check_ok(vk_cmd_end(c, &d), &d);
    enum { RUNS = 41 };
    double t[RUNS];
    for (int i = 0; i < RUNS; i++) {
        double t0 = clock_us();
        check_ok(vk_cmd_run(c, &d), &d);
        t[i] = clock_us() - t0;
    }
    qsort(t, RUNS, sizeof t[0], cmp_double);
    printf("empty command buffer submit+wait: median %.1f us (min %.1f)\n", t[RUNS / 2], t[0]);

    VkBuf *buf = NULL;
    check_ok(vk_buf_create(ctx, 4 * WG, VKBUF_DEVICE, "m", &buf, &d), &d);
    uint32_t spec[2] = {WG, 0};
    VkPipe *p = make_pipe(ctx, "fill", DT_F32, spec, 2, 1);
    VkBinding bb = {buf, 0, 0};
    Push pc = {WG, 1.0f};
    const int N = 200;
    for (int barrier = 0; barrier < 2; barrier++) {
        check_ok(vk_cmd_begin(c, &d), &d);
        check_ok(vk_cmd_timestamp(c, NULL, &d), &d);
        double r0 = clock_us();
        for (int i = 0; i < N; i++) {
            check_ok(vk_cmd_dispatch(c, p, &bb, 1, &pc, sizeof pc, 1, 1, 1, &d), &d);
            if (barrier) check_ok(vk_cmd_barrier(c, &d), &d);
        }
        double rec = (clock_us() - r0) / N;
        check_ok(vk_cmd_timestamp(c, NULL, &d), &d);
        check_ok(vk_cmd_end(c, &d), &d);
        double best = 1e30, wall = 1e30;
        for (int r = 0; r < 5; r++) {
            double w0 = clock_us();
            check_ok(vk_cmd_run(c, &d), &d);
            double w = clock_us() - w0;
            uint64_t ts[2];
            check_ok(vk_cmd_timestamps_ns(c, ts, 2, &d), &d);
            double g = (double)(ts[1] - ts[0]) / 1e3 / N;
            if (g < best) best = g;
            if (w < wall) wall = w;
        }
        printf("%d one-workgroup dispatches %s: GPU %.2f us/dispatch, wall %.2f us/dispatch, "
               "record %.2f us/dispatch\n",
               N, barrier ? "with a barrier after each" : "without barriers", best, wall / N, rec);
        assert_true(best > 0);
    }
    vk_cmd_destroy(c);
    vk_pipe_destroy(p);
    vk_buf_destroy(buf);
    vk_ctx_destroy(ctx);
    diag_free(&d);
}

TU_MAIN(test_device_info, test_no_such_device, test_fill_and_axpy, test_fallback_paths,
        test_validation_clean, test_bad_input, test_pipeline_cache, test_measure, test_warm_up)
