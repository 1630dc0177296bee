/* Tuning knobs (compiler/tuning.def): --tune parsing and its refusals, the NPU_* environment
 * override, the plan's record of non-default knobs, and that record through a .npubin. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/ir_json.h"
#include "compiler/npubin.h"
#include "compiler/pass.h"
#include "compiler/tuning.h"
#include "tests/testutil.h"

#define MODEL "tests/models/qwen2_tiny/decode.json" /* gemv and decode_attention kernels */

static void set_ok(Tuning *t, const char *assign)
{
    DiagList d = {0};
    Status st = tuning_set(t, assign, &d);
    if (st != ST_OK) diag_print(&d, stderr);
    assert_int_equal(st, ST_OK);
    diag_free(&d);
}

/* tuning_set refuses `assign` with a message containing each of want[0..n). */
static void set_bad(const char *assign, const char *want1, const char *want2)
{
    Tuning t = {0};
    DiagList d = {0};
    assert_int_equal(tuning_set(&t, assign, &d), ST_BAD_INPUT);
    assert_true(d.count >= 1);
    if (!strstr(d.items[0].msg, want1) || (want2 && !strstr(d.items[0].msg, want2)))
        fail_msg("'%s': message '%s' lacks '%s' / '%s'", assign, d.items[0].msg, want1,
                 want2 ? want2 : "");
    assert_int_equal(t.set, 0);
    diag_free(&d);
}

static void test_set(void **state)
{
    (void)state;
    Tuning t = {0};
    assert_int_equal(tuning_get(&t, TUNE_CONV_TARGET), 396);
    assert_int_equal(tuning_get(&t, TUNE_CM_TILE), TUNE_AUTO);
    set_ok(&t, "cm.tile=128");
    set_ok(&t, "attn.splits=0x2");
    set_ok(&t, "conv.target=396"); /* the default: given, but not recorded */
    assert_int_equal(tuning_get(&t, TUNE_CM_TILE), 128);
    assert_int_equal(tuning_get(&t, TUNE_ATTN_SPLITS), 2);
    char buf[256];
    tuning_format(&t, buf, sizeof buf);
    assert_string_equal(buf, "cm.tile=128 attn.splits=2");
    set_ok(&t, "cm.tile=auto"); /* back to lowering's own choice */
    tuning_format(&t, buf, sizeof buf);
    assert_string_equal(buf, "attn.splits=2");
    tuning_format_env(&t, buf, sizeof buf);
    assert_string_equal(buf, "");
    set_bad("cm.tiles=64", "unknown knob 'cm.tiles'", NULL);
    set_bad("cm.tile", "cm.tile", "a power of two in 64..128, or auto");
    set_bad("cm.tile=96", "cm.tile", "a power of two in 64..128, or auto");
    set_bad("cm.tile=256", "cm.tile", "64..128");
    set_bad("attn.wg=48", "attn.wg", "a multiple of 32 in 32..512");
    set_bad("conv.target=0", "conv.target", "1..65536");
    set_bad("conv.target=auto", "conv.target", "1..65536"); /* a knob with a numeric default */
    set_bad("attn.g=9", "attn.g", "1..8");
    set_bad("gemv.u=2x", "gemv.u", "1..8");
    set_bad("=1", "unknown knob ''", NULL);
}

static void test_env(void **state)
{
    (void)state;
    Tuning t = {0};
    DiagList d = {0};
    setenv("NPU_GEMV", "64,1,2,4", 1);
    setenv("NPU_CM_VEC", "0", 1);
    assert_int_equal(tuning_from_env(&t, &d), ST_OK);
    assert_int_equal(tuning_get(&t, TUNE_GEMV_WG), 64);
    assert_int_equal(tuning_get(&t, TUNE_GEMV_G), 4);
    assert_int_equal(tuning_get(&t, TUNE_CM_VEC), 0);
    set_ok(&t, "gemv.wg=32"); /* --tune after the environment wins and is not the env's */
    char buf[256];
    tuning_format(&t, buf, sizeof buf);
    assert_string_equal(buf, "cm.vec=0 gemv.wg=32 gemv.r=1 gemv.u=2 gemv.g=4");
    tuning_format_env(&t, buf, sizeof buf);
    assert_string_equal(buf, "NPU_CM_VEC NPU_GEMV");
    /* a tuple needs every part; a bad part names the variable, the knob and its range */
    static const char *bad[] = {"64,1,2", "64,1,2,4,5", "64,1,,4", "48,1,2,4", "64,9,2,4"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        Tuning u = {0};
        setenv("NPU_GEMV", bad[i], 1);
        assert_int_equal(tuning_from_env(&u, &d), ST_BAD_INPUT);
        assert_non_null(strstr(d.items[d.count - 1].msg, "NPU_GEMV"));
    }
    assert_non_null(strstr(d.items[d.count - 1].msg, "gemv.r must be 1..8"));
    unsetenv("NPU_GEMV");
    unsetenv("NPU_CM_VEC");
    Tuning u = {0};
    setenv("NPU_CM_TILE", "100", 1);
    assert_int_equal(tuning_from_env(&u, &d), ST_BAD_INPUT);
    assert_non_null(strstr(d.items[d.count - 1].msg, "NPU_CM_TILE='100'"));
    unsetenv("NPU_CM_TILE");
    diag_free(&d);
}

static Plan *compile(const Tuning *t)
{
    CompileOptions o;
    compile_defaults(&o);
    o.kernel_cache = "none";
    o.tuning = *t;
    Pipeline pipe = tu_compile_graph(tu_read_ir(MODEL), &o);
    Plan *p = pipe.plan;
    pipe.plan = NULL; /* kept past the pipeline */
    pipeline_free(&pipe);
    return p;
}

/* The first kernel of stem `stem` (by prefix), or NULL. */
static const PlanKernel *kernel(const Plan *p, const char *stem)
{
    for (int k = 0; k < p->nkernels; k++)
        if (strncmp(p->kernels[k].shader, stem, strlen(stem)) == 0) return &p->kernels[k];
    return NULL;
}

/* The knobs reach lowering, the plan records them, and the record survives a .npubin; a plan
 * of the default tuning has no record and no key in its file. */
static void test_plan_record(void **state)
{
    (void)state;
    Tuning t = {0};
    Plan *p0 = compile(&t);
    assert_null(p0->tuning);
    assert_null(p0->tuning_env);
    const PlanKernel *g0 = kernel(p0, "gemv");
    assert_non_null(g0);
    assert_int_equal(g0->spec[0], 128); /* lowering's own workgroup */
    unsigned char *buf = NULL;
    size_t len = 0;
    DiagList d = {0};
    assert_int_equal(npubin_encode(p0, &buf, &len, &d), ST_OK);
    for (size_t i = 0; i + 6 <= len; i++)
        assert_false(memcmp(buf + i, "tuning", 6) == 0);
    free(buf);

    set_ok(&t, "gemv.wg=64");
    set_ok(&t, "gemv.r=1");
    set_ok(&t, "gemv.u=2");
    set_ok(&t, "gemv.g=2");
    t.env |= TUNE_BIT(TUNE_GEMV_WG); /* as if NPU_GEMV had set it */
    set_ok(&t, "attn.ablate=0");     /* the default */
    Plan *p = compile(&t);
    assert_string_equal(p->tuning, "gemv.wg=64 gemv.r=1 gemv.u=2 gemv.g=2");
    assert_string_equal(p->tuning_env, "NPU_GEMV");
    const PlanKernel *g1 = kernel(p, "gemv");
    assert_int_equal(g1->spec[0], 64);
    assert_int_equal(g1->spec[5], 2);
    assert_int_equal(plan_equal(p0, p), 0);

    assert_int_equal(npubin_encode(p, &buf, &len, &d), ST_OK);
    Plan *q = NULL;
    assert_int_equal(npubin_decode("t.npubin", buf, len, &q, &d), ST_OK);
    assert_int_equal(plan_equal(p, q), 1);
    assert_string_equal(q->tuning, p->tuning);
    assert_string_equal(q->tuning_env, "NPU_GEMV");
    plan_free(q);
    free(buf);
    assert_int_equal(d.count, 0);
    diag_free(&d);
    plan_free(p);
    plan_free(p0);
}

TU_MAIN(test_set, test_env, test_plan_record)
