#include "tests/vk_check.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/ir_json.h"
#include "compiler/pass.h"
#include "compiler/plan.h"
#include "runtime/backend.h"
#include "runtime/bind.h"
#include "runtime/compare.h"
#include "runtime/cpu/cpu_ref.h"
#include "runtime/exec.h"

static const char *no_fuse_spec;

static int runs = 1;
static VcFill fill_fn;
static void *fill_ctx;

void vc_set_fill(VcFill fill, void *ctx)
{
    fill_fn = fill;
    fill_ctx = ctx;
}

static int filling_run; /* vc_filling_run */

int vc_filling_run(void)
{
    return filling_run;
}

/* Random inputs (seed), then the test's fill. */
static void bind_inputs(const Graph *g, uint64_t seed, Binding *b)
{
    assert_int_equal(bind_inputs_random(g, seed, b), ST_OK);
    for (int i = 0; fill_fn && i < g->ninputs; i++)
        fill_fn(&b->vals[g->inputs[i]], i, fill_ctx);
}

void vc_set_runs(int n)
{
    runs = n < 1 ? 1 : n;
}

void vc_set_no_fuse(const char *spec)
{
    no_fuse_spec = spec;
}

static const char *disable_pass;

void vc_set_disable(const char *pass)
{
    disable_pass = pass;
}

static Tuning tuning;
static void fail_with(DiagList *d, const char *what);

void vc_tune(const char *assign)
{
    if (!assign) {
        memset(&tuning, 0, sizeof tuning);
        return;
    }
    DiagList d = {0};
    if (tuning_set(&tuning, assign, &d) != ST_OK) fail_with(&d, "bad tuning");
    diag_free(&d);
}

const Tuning *vc_tuning(void)
{
    return &tuning;
}

void vc_options(CompileOptions *o)
{
    compile_defaults(o);
    o->kernel_cache = "none";
    o->tuning = tuning;
}

static Graph *read_graph(const char *json)
{
    Graph *g = NULL;
    DiagList d = {0};
    if (ir_read_buffer("<vk_check>", json, strlen(json), &g, &d) != ST_OK) diag_print(&d, stderr);
    diag_free(&d);
    return g;
}

static DType dtype_arg(const char *s)
{
    if (!strcmp(s, "fp16")) return DT_F16;
    if (!strcmp(s, "bf16")) return DT_BF16;
    return DT_F32;
}

static void fail_with(DiagList *d, const char *what)
{
    diag_print(d, stderr);
    fail_msg("%s", what);
}

/* The plan's transfers (PlanPart.in) move exactly what crosses targets: each entry's storage
 * was written by a kernel of the other target, and no tensor moves twice in one direction. */
static void check_transfers(const Plan *p)
{
    for (int pi = 0; pi < p->nparts; pi++)
        for (int j = 0; j < p->parts[pi].nin; j++) {
            int t = p->parts[pi].in[j], b = plan_base(p, t);
            bool other = false;
            for (int k = 0; k < p->nkernels; k++)
                for (int a = p->kernels[k].nin; a < p->kernels[k].nargs; a++)
                    if (plan_base(p, p->kernels[k].args[a]) == b)
                        other |= p->kernels[k].target != p->parts[pi].target;
            if (!other)
                fail_msg("partition %d lists transfer %s, made on its own side", pi,
                         p->tensors[t].name);
            for (int qi = 0; qi < p->nparts; qi++)
                for (int i = 0; i < p->parts[qi].nin; i++)
                    if ((qi != pi || i != j) && p->parts[qi].in[i] == t &&
                        p->parts[qi].target == p->parts[pi].target)
                        fail_msg("transfer %s listed twice", p->tensors[t].name);
        }
}

/* The plans every check runs (NPU_TEST_TIER): "all" (default) = portable (compiled for a GPU),
 * portable compiled for a CPU device (the direct conv), the emulation of the nv-coopmat kernels
 * (portable modules, so lavapipe runs them), and nv-coopmat itself where the device has it
 * (else counted as skipped and reported at exit); "portable" = the two portable plans;
 * "nv-coopmat" = nv-coopmat only, failing when the device lacks it. A plan identical to the
 * first is not run again. */
typedef enum RunKind { RUN_PORTABLE, RUN_DIRECT, RUN_EMULATED, RUN_COOPMAT } RunKind;

static struct {
    int coopmat_ran, coopmat_skipped, emulated_ran;
    char device[256];
    bool registered;
} tally;

static void report_tiers(void)
{
    if (tally.coopmat_skipped)
        fprintf(stderr,
                "vk_check: tier nv-coopmat is unavailable on %s: %d case%s of tensor-core kernels "
                "skipped (their portable run and the emulation of those kernels ran: %d)\n",
                tally.device, tally.coopmat_skipped, tally.coopmat_skipped == 1 ? "" : "s",
                tally.emulated_ran);
    if (tally.coopmat_ran)
        fprintf(stderr, "vk_check: tier nv-coopmat: %d case%s ran tensor-core kernels on %s\n",
                tally.coopmat_ran, tally.coopmat_ran == 1 ? "" : "s", tally.device);
}

/* One Vulkan device for the whole test process (buffers poisoned with NaN, no pipeline cache
 * file): every check's backend shares it (vk_backend_create_shared), so lavapipe creates one
 * device, not one per check, and a pipeline compiled for one check serves every later one that
 * needs the same module and specialization (vk_pipe.c's pool). */
static Backend *anchor;

static void drop_anchor(void)
{
    if (anchor) anchor->ops->destroy(anchor);
    anchor = NULL;
}

static Backend *device_anchor(void)
{
    if (anchor) return anchor;
    VkBackendOptions vo = vk_backend_options_default();
    vo.poison = true;
    vo.no_cache = true;
    DiagList d = {0};
    if (vk_backend_create(&vo, &anchor, &d) != ST_OK)
        fail_with(&d, "no Vulkan device (is lavapipe installed?)");
    atexit(drop_anchor);
    return anchor;
}

/* Does kernel stem s belong to the expected family e? The tier variants of a stem count as the
 * stem (conv2d_cm_b, conv2d_cmx_b and conv2d_direct_b are conv2d_b, matmul_cm and its large
 * tile matmul_cml, matmul_cmlx are matmul), and so
 * does a K split's reduce pass, which does the instance's epilogue (conv2d_red_b is conv2d_b;
 * the first pass, *_part, is no family of its own). A conv whose residual is its own input binds
 * that input to its reduce as a residual: conv2d_red_r and conv2d_red_br also stand for conv2d
 * and conv2d_b. The first pass of a split with the input scale (conv2d_spart: its reduce is the
 * plain one) stands for the scaled stems (conv2d_s, conv2d_sb, conv2d_sr, conv2d_sbr). */
static bool in_family(const char *s, const char *e)
{
    char n[64];
    snprintf(n, sizeof n, "%s", s);
    static const char *const infix[] = {"_cmlx", "_cml", "_cmhx",   "_cmh",
                                        "_cmx",  "_cm",  "_direct", "_red"};
    bool red = strstr(n, "_red") != NULL;
    for (int i = 0; i < 8; i++) {
        char *at = strstr(n, infix[i]);
        if (at) memmove(at, at + strlen(infix[i]), strlen(at + strlen(infix[i])) + 1);
    }
    if (strcmp(n, e) == 0) return true;
    /* the attention family's tensor-core kernel (several query rows; test_vk_attn checks which
     * plans take it) */
    if (strcmp(e, "decode_attention") == 0 && strcmp(n, "flash_attn") == 0) return true;
    size_t l = strlen(n);
    if (l > 6 && strcmp(n + l - 6, "_spart") == 0) return strncmp(n, e, l - 4) == 0;
    return red && l > 2 && strcmp(n + l - 2, "_r") == 0 && strlen(e) == l - 2 &&
           strncmp(n, e, l - 2) == 0;
}

/* Compiles and runs json once for `kind` on Vulkan with poisoned buffers and compares with the
 * reference r; returns the worst relative L2 error, or -1 when this kind does not apply (no
 * tensor-core kernel in the plan, or the tier is missing: counted). */
static double run_kind(const char *json, const Graph *g0, const RefRun *r, const char *dtype,
                       double tol, const char *expect_shader, RunKind kind, bool cpu_backend)
{
    DiagList d = {0};
    CompileOptions o;
    compile_defaults(&o);
    o.compute = dtype_arg(dtype);
    o.kernel_cache = "none"; /* generated kernels: this process's cache only (hermetic tests) */
    if (no_fuse_spec) o.no_fuse[o.n_no_fuse++] = no_fuse_spec;
    if (disable_pass) o.disable[o.n_disable++] = disable_pass;
    o.tuning = tuning;
    o.tier = kind <= RUN_DIRECT ? TIER_PORTABLE : TIER_NV_COOPMAT;
    o.cpu_device = kind == RUN_DIRECT;
    o.cm_emulate = kind == RUN_EMULATED;
    o.cm_force = true; /* every conv the tensor-core kernel can take, not only the measured wins */
    Graph *g1 = read_graph(json);
    if (!g1) fail_msg("the test graph does not import");
    Pipeline pipe;
    if (pipeline_run_graph(g1, &o, &pipe, &d) != ST_OK) fail_with(&d, "compile failed");
    const Plan *p = pipe.plan;
    bool found = expect_shader == NULL, differs = kind == RUN_PORTABLE;
    for (int k = 0; k < p->nkernels; k++) {
        const char *s = p->kernels[k].shader;
        if (p->kernels[k].target != KT_NPU) continue;
        if (expect_shader && (in_family(s, expect_shader) ||
                              (strcmp(expect_shader, "gen") == 0 && strncmp(s, "gen_", 4) == 0)))
            found = true;
        if (strstr(s, kind == RUN_DIRECT ? "_direct" : "_cm")) differs = true;
        /* decode_attention's (and attention_cache's) workgroup and split count follow the
         * device kind */
        if (kind == RUN_DIRECT &&
            (strcmp(s, "decode_attention") == 0 || strcmp(s, "attention_cache") == 0))
            differs = true;
        /* so do argmax's chunks */
        if (kind == RUN_DIRECT && strncmp(s, "argmax", 6) == 0) differs = true;
    }
    if (!found) {
        for (int k = 0; k < p->nkernels; k++)
            fprintf(stderr, "  kernel %d: %s\n", k, p->kernels[k].shader);
        fail_msg("no NPU kernel of family '%s' in the compiled plan", expect_shader);
    }
    check_transfers(p);
    double worst = -1;
    Backend *be = NULL;
    int verr0 = 0;           /* the shared device's validation errors before this check */
    if (!differs) goto done; /* the same plan as the portable run */
    if (cpu_backend) {
        if (cpu_backend_create(pipe.g, &be) != ST_OK) fail_msg("no CPU backend");
    } else {
        if (vk_backend_create_shared(device_anchor(), &be, &d) != ST_OK)
            fail_with(&d, "no Vulkan backend");
        verr0 = vk_backend_validation_errors(be);
    }
    snprintf(tally.device, sizeof tally.device, "%s", be->ops->device(be));
    if (kind == RUN_COOPMAT && vk_backend_best_tier(be) < TIER_NV_COOPMAT) {
        const char *force = getenv("NPU_TEST_TIER");
        if (force && strcmp(force, "nv-coopmat") == 0)
            fail_msg("NPU_TEST_TIER=nv-coopmat, but %s lacks the tier", tally.device);
        tally.coopmat_skipped++;
        goto done;
    }
    Binding b;
    assert_int_equal(bind_init(g0, &b), ST_OK);
    assert_int_equal(bind_weights_random(g0, 11, &b), ST_OK);
    bind_inputs(g0, 7, &b);
    assert_int_equal(bind_constants(g0, &b), ST_OK);
    if (bind_apply_recipes(pipe.g, &b, &d) != ST_OK) fail_with(&d, "recipes failed");
    Exec x;
    if (exec_open(&x, p, pipe.g, &b, be, &d) != ST_OK) fail_with(&d, "prepare failed");
    /* earlier runs on other inputs first (vc_set_runs): state a kernel keeps between runs
     * must not leak into the compared one */
    for (int i = 1; i < runs; i++) {
        filling_run = i;
        bind_inputs(g0, 7 + 1000 * (uint64_t)i, &b);
        filling_run = 0;
        if (exec_run(&x, false, &d) != ST_OK) fail_with(&d, "run failed");
    }
    if (runs > 1) bind_inputs(g0, 7, &b);
    if (exec_run(&x, false, &d) != ST_OK) fail_with(&d, "run failed");
    static const char *const kind_name[] = {"portable", "portable for a CPU device",
                                            "nv-coopmat emulated", "nv-coopmat"};
    worst = 0;
    for (int i = 0; i < p->noutputs; i++) {
        HTensor got = {0};
        if (exec_read(&x, p->outputs[i], &got, &d) != ST_OK) fail_with(&d, "read failed");
        const HTensor *want = &r->vals[g0->outputs[i]];
        CmpStats s;
        if (!cmp_tensors(&got, want, &s)) fail_msg("output %d: element counts differ", i);
        if (s.rel_l2 > worst || s.nonfinite) worst = s.nonfinite ? 1e30 : s.rel_l2;
        if (s.nonfinite || !(s.rel_l2 <= tol)) {
            fprintf(stderr,
                    "output %s (%s, %s): rel_l2 %.3g (tol %.3g) max_abs %.3g nonfinite %lld\n",
                    p->tensors[p->outputs[i]].name, dtype, kind_name[kind], s.rel_l2, tol,
                    s.max_abs, (long long)s.nonfinite);
            htensor_free(&got);
            fail_msg("output %s disagrees with the CPU reference (tier %s)",
                     p->tensors[p->outputs[i]].name, kind_name[kind]);
        }
        htensor_free(&got);
    }
    if (kind == RUN_COOPMAT) tally.coopmat_ran++;
    if (kind == RUN_EMULATED) tally.emulated_ran++;
    exec_close(&x);
    bind_free(&b);
done:;
    int verr = be && !cpu_backend ? vk_backend_validation_errors(be) - verr0 : 0;
    if (be) be->ops->destroy(be);
    pipeline_free(&pipe);
    diag_free(&d);
    if (verr) fail_msg("%d Vulkan validation errors", verr);
    return worst;
}

double vc_check_json(const char *json, const char *dtype, double tol, const char *expect_shader)
{
    return vc_check_json_on(json, dtype, tol, expect_shader, false);
}

/* cpu_backend: the portable plan once, on the CPU reference backend (tiers are a device's). */
double vc_check_json_on(const char *json, const char *dtype, double tol, const char *expect_shader,
                        bool cpu_backend)
{
    if (!tally.registered) {
        tally.registered = true;
        atexit(report_tiers);
    }
    DiagList d = {0};
    Graph *g0 = read_graph(json);
    if (!g0) fail_msg("the test graph does not import");
    Binding b;
    assert_int_equal(bind_init(g0, &b), ST_OK);
    assert_int_equal(bind_weights_random(g0, 11, &b), ST_OK);
    bind_inputs(g0, 7, &b);
    assert_int_equal(bind_constants(g0, &b), ST_OK);
    RefRun r = {0};
    RefOptions ro = {.keep_all = false};
    if (ref_run(g0, b.vals, &ro, &r, &d) != ST_OK) fail_with(&d, "CPU reference failed");
    const char *tiers = getenv("NPU_TEST_TIER");
    bool all = !tiers || !*tiers || strcmp(tiers, "all") == 0;
    bool portable = all || strcmp(tiers, "portable") == 0,
         coopmat = all || strcmp(tiers, "nv-coopmat") == 0;
    if (!portable && !coopmat) fail_msg("NPU_TEST_TIER must be all, portable or nv-coopmat");
    double worst = 0, w;
    bool cb = cpu_backend;
    if (portable || cb) worst = run_kind(json, g0, &r, dtype, tol, expect_shader, RUN_PORTABLE, cb);
    if (cb) portable = coopmat = all = false;
    if (portable &&
        (w = run_kind(json, g0, &r, dtype, tol, expect_shader, RUN_DIRECT, false)) > worst)
        worst = w;
    if (all && (w = run_kind(json, g0, &r, dtype, tol, expect_shader, RUN_EMULATED, false)) > worst)
        worst = w;
    if (coopmat &&
        (w = run_kind(json, g0, &r, dtype, tol, expect_shader, RUN_COOPMAT, false)) > worst)
        worst = w;
    ref_free(&r);
    bind_free(&b);
    graph_free(g0);
    diag_free(&d);
    return worst;
}

double vc_check_node(const char *aten, int nin, const TuSpec *in, TuSpec out, const char *attrs,
                     const char *dtype, double tol, const char *expect_shader)
{
    char obj[8192];
    snprintf(obj, sizeof obj, "{%s}", attrs ? attrs : "");
    size_t n;
    char *json = tu_node_json(aten, nin, in, 1, &out, obj, &n);
    assert_non_null(json);
    double w = vc_check_json(json, dtype, tol, expect_shader);
    free(json);
    return w;
}

void vc_compile_json(const char *json, Pipeline *pipe)
{
    vc_compile_json_as(json, NULL, pipe);
}

void vc_compile_json_as(const char *json, const char *dtype, Pipeline *pipe)
{
    Graph *g = NULL;
    DiagList d = {0};
    if (ir_read_buffer("<t>", json, strlen(json), &g, &d) != ST_OK) fail_with(&d, "import failed");
    CompileOptions o;
    compile_defaults(&o);
    o.tuning = tuning;
    o.kernel_cache = "none"; /* generated kernels: this process's cache only (hermetic tests) */
    if (no_fuse_spec) o.no_fuse[o.n_no_fuse++] = no_fuse_spec;
    if (disable_pass) o.disable[o.n_disable++] = disable_pass;
    if (dtype) o.compute = dtype_arg(dtype);
    if (pipeline_run_graph(g, &o, pipe, &d) != ST_OK) fail_with(&d, "compile failed");
    diag_free(&d);
}
