/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * argmax kernels (argmax_f32|f16|bf16, argmax_red) on Vulkan against the CPU reference, exactly
 * (tolerance 0: an index differs or it does not), in f32, f16 and bf16, each plan compiled for a
 * GPU (chunks of >= 2048: rows of 151936 split in 75) and for a CPU device (chunks of >= 16384):
 * - row lengths 1, 7, 1000 and 151936 (a Qwen2.5 vocabulary), one row and several, rank 1..3,
 *   keepdim or not;
 * - data of multiples of 1/8 in [-5, 5] (exact in every storage, so the reference on f32 and the
 *   device on f16/bf16 see the same numbers), where equal maxima abound: the first index wins;
 * - NaN-poisoned elements: NaN is the maximum (its first index), as torch, or ignored with
 *   `skip_nan` (generate's pick); a row of NaN alone gives -1 with skip_nan;
 * - -inf elements and a row of -inf alone (index 0);
 * - the plans themselves: a 151936-logit row is cut into 75 chunks for a GPU and 10 for a CPU
 *   device (pass 1 then argmax_red), short rows take one pass. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/ir_json.h"
#include "compiler/pass.h"
#include "compiler/plan.h"
#include "tests/vk_check.h"

static const char *dts[] = {"fp32", "fp16", "bf16"};
static const char *stems[] = {"argmax_f32", "argmax_f16", "argmax_bf16"};

typedef enum Mode { M_TIES, M_NAN, M_NEGINF, M_NAN_ROW } Mode;

typedef struct Fill {
    Mode mode;
    int64_t len; /* the reduced (last) dim */
} Fill;

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

/* Multiples of 1/8 in [-5, 5]; NaN (1 in 11) or -inf (1 in 5) by mode; the first row all NaN
 * (M_NAN_ROW, the others as M_NAN) or all -inf (M_NEGINF). */
static void fill(HTensor *t, int input, void *ctx)
{
    const Fill *f = ctx;
    (void)input;
    assert_int_equal(t->dtype, DT_F32);
    float *v = t->data;
    uint64_t s = 12345 + (uint64_t)t->numel;
    for (int64_t i = 0; i < t->numel; i++) {
        v[i] = (float)((int)(lcg(&s) % 81) - 40) / 8.0f;
        uint64_t u = lcg(&s);
        if ((f->mode == M_NAN || f->mode == M_NAN_ROW) && u % 11 == 0) v[i] = NAN;
        if (f->mode == M_NEGINF && u % 5 == 0) v[i] = -INFINITY;
        if (f->mode == M_NAN_ROW && i < f->len) v[i] = NAN;
        if (f->mode == M_NEGINF && i < f->len && t->numel > f->len) v[i] = -INFINITY;
    }
}

/* The graph y = argmax(x) with x's and y's JSON shapes and the node's attributes. */
static void am_graph(char *json, size_t size, const char *in, const char *out, const char *attrs)
{
    /* clang-format off */
    snprintf(json, size,
             "{\"model_name\":\"am\",\"graph_inputs\":[" VC_T("x", "%s") "],"
             "\"graph_outputs\":[" VC_TI("y", "%s") "],\"weights\":[],\"weight_name_mapping\":{},"
             "\"nodes\":[" VC_NODE("am", "aten.argmax.default", VC_T("x", "%s"), VC_TI("y", "%s"),
                                   "%s") "]}",
             in, out, in, out, attrs);
    /* clang-format on */
}

/* argmax over the last dim of `in` (a JSON shape of rank r, last dim len) to `out`. */
static void check(const char *in, const char *out, int64_t len, bool keepdim, bool skip, Mode mode)
{
    char json[2048], attrs[64];
    snprintf(attrs, sizeof attrs, "\"dim\":-1,\"keepdim\":%s%s", keepdim ? "true" : "false",
             skip ? ",\"skip_nan\":true" : "");
    am_graph(json, sizeof json, in, out, attrs);
    Fill f = {mode, len};
    vc_set_fill(fill, &f);
    for (int t = 0; t < 3; t++)
        vc_check_json(json, dts[t], 0.0, stems[t]);
    vc_set_fill(NULL, NULL);
}

static const struct {
    const char *in, *out, *out_keep;
    int64_t len;
} shapes[] = {
    {"[1]", "[]", "[1]", 1},
    {"[7]", "[]", "[1]", 7},
    {"[1000]", "[]", "[1]", 1000},
    {"[151936]", "[]", "[1]", 151936},
    {"[1,1,151936]", "[1,1]", "[1,1,1]", 151936},
    {"[3,151936]", "[3]", "[3,1]", 151936},
    {"[50,7]", "[50]", "[50,1]", 7},
    {"[2,3,1000]", "[2,3]", "[2,3,1]", 1000},
    {"[5,1]", "[5]", "[5,1]", 1},
};

static void test_ties(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        check(shapes[i].in, shapes[i].out, shapes[i].len, false, false, M_TIES);
        check(shapes[i].in, shapes[i].out_keep, shapes[i].len, true, false, M_TIES);
    }
}

static void test_nan(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        for (int skip = 0; skip < 2; skip++)
            check(shapes[i].in, shapes[i].out, shapes[i].len, false, skip, M_NAN);
}

static void test_nan_row(void **state)
{
    (void)state;
    /* the first row NaN alone: -1 with skip_nan, 0 (its first NaN) without */
    static const int pick[] = {1, 3, 5, 6, 7};
    for (size_t i = 0; i < sizeof pick / sizeof *pick; i++)
        for (int skip = 0; skip < 2; skip++)
            check(shapes[pick[i]].in, shapes[pick[i]].out, shapes[pick[i]].len, false, skip,
                  M_NAN_ROW);
}

static void test_neginf(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        check(shapes[i].in, shapes[i].out, shapes[i].len, false, true, M_NEGINF);
}

/* Random data (no fill) in f32, where storage rounding cannot reorder the values. */
static void test_random_f32(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        char json[2048];
        /* clang-format off */
        snprintf(json, sizeof json,
                 "{\"model_name\":\"am\",\"graph_inputs\":[" VC_T("x", "%s") "],"
                 "\"graph_outputs\":[" VC_TI("y", "%s") "],\"weights\":[],"
                 "\"weight_name_mapping\":{},\"nodes\":[" VC_NODE("am", "aten.argmax.default",
                 VC_T("x", "%s"), VC_TI("y", "%s"), "\"dim\":-1") "]}",
                 shapes[i].in, shapes[i].out, shapes[i].in, shapes[i].out);
        /* clang-format on */
        vc_check_json(json, "fp32", 0.0, "argmax_f32");
    }
}

/* The kernels lowering makes: stems, the chunk count (push word 3) and the grids. */
static void expect_plan(const char *shape, const char *out, bool cpu_device, int nkernels,
                        int nsplit, uint32_t groups1, uint32_t groups2)
{
    char json[2048];
    am_graph(json, sizeof json, shape, out, "\"dim\":-1");
    CompileOptions o;
    compile_defaults(&o);
    o.compute = DT_BF16;
    o.cpu_device = cpu_device;
    /* the argmax's own kernels: a 151936-element input would otherwise be uploaded as f32 and
     * cast by a pack kernel in front (pack-inputs) */
    o.disable[o.n_disable++] = "pack-inputs";
    Pipeline pipe = tu_compile_json(json, &o);
    const Plan *p = pipe.plan;
    assert_int_equal(p->nkernels, nkernels);
    assert_string_equal(p->kernels[0].shader, "argmax_bf16");
    assert_int_equal(p->kernels[0].push[3], (uint32_t)nsplit);
    assert_int_equal(p->kernels[0].groups[0], groups1);
    if (nkernels == 2) {
        assert_string_equal(p->kernels[1].shader, "argmax_red");
        assert_int_equal(p->kernels[1].groups[0], groups2);
        assert_int_equal(p->kernels[0].nargs, 3);
        assert_int_not_equal(p->kernels[0].args[1], p->kernels[0].args[2]); /* the partials */
    }
    pipeline_free(&pipe);
}

static void test_plans(void **state)
{
    (void)state;
    expect_plan("[1,1,151936]", "[1,1]", false, 2, 75, 75, 1);
    expect_plan("[1,1,151936]", "[1,1]", true, 2, 10, 10, 1);
    expect_plan("[3,151936]", "[3]", false, 2, 75, 225, 2); /* pass 2: 128 lanes a row */
    expect_plan("[1,1000]", "[1]", false, 1, 1, 1, 0);
    expect_plan("[50,7]", "[50]", false, 1, 1, 2, 0); /* 8 lanes a row: 32 rows a workgroup */
}

TU_MAIN(test_ties, test_nan, test_nan_row, test_neginf, test_random_f32, test_plans)
