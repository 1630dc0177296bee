#include "vk_check.h"

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
#include "runtime/cpu_ref.h"
#include "runtime/exec.h"

static const char *no_fuse_spec;

void vc_set_no_fuse(const char *spec)
{
    no_fuse_spec = spec;
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
            if (!other) fail_msg("partition %d lists transfer %s, made on its own side", pi, p->tensors[t].name);
            for (int qi = 0; qi < p->nparts; qi++)
                for (int i = 0; i < p->parts[qi].nin; i++)
                    if ((qi != pi || i != j) && p->parts[qi].in[i] == t &&
                        p->parts[qi].target == p->parts[pi].target)
                        fail_msg("transfer %s listed twice", p->tensors[t].name);
        }
}

double vc_check_json(const char *json, const char *dtype, double tol, const char *expect_shader)
{
    return vc_check_json_on(json, dtype, tol, expect_shader, false);
}

double vc_check_json_on(const char *json, const char *dtype, double tol, const char *expect_shader,
                        bool cpu_backend)
{
    DiagList d = {0};
    Graph *g0 = read_graph(json), *g1 = read_graph(json);
    if (!g0 || !g1) fail_msg("the test graph does not import");
    Binding b;
    assert_int_equal(bind_init(g0, &b), ST_OK);
    assert_int_equal(bind_weights_random(g0, 11, &b), ST_OK);
    assert_int_equal(bind_inputs_random(g0, 7, &b), ST_OK);
    assert_int_equal(bind_constants(g0, &b), ST_OK);
    RefRun r = {0};
    RefOptions ro = {.keep_all = false};
    if (ref_run(g0, b.vals, &ro, &r, &d) != ST_OK) fail_with(&d, "CPU reference failed");
    CompileOptions o;
    compile_defaults(&o);
    o.compute = dtype_arg(dtype);
    o.kernel_cache = "none"; /* generated kernels: this process's cache only (hermetic tests) */
    if (no_fuse_spec) o.no_fuse[o.n_no_fuse++] = no_fuse_spec;
    Pipeline pipe;
    if (pipeline_run_graph(g1, &o, &pipe, &d) != ST_OK) fail_with(&d, "compile failed");
    if (bind_apply_recipes(pipe.g, &b, &d) != ST_OK) fail_with(&d, "recipes failed");
    const Plan *p = pipe.plan;
    bool found = expect_shader == NULL;
    for (int k = 0; k < p->nkernels; k++)
        if (p->kernels[k].target == KT_NPU && expect_shader &&
            (strcmp(p->kernels[k].shader, expect_shader) == 0 ||
             (strcmp(expect_shader, "gen") == 0 && strncmp(p->kernels[k].shader, "gen_", 4) == 0)))
            found = true;
    if (!found) fail_msg("no NPU kernel of family '%s' in the compiled plan", expect_shader);
    check_transfers(p);
    VkBackendOptions vo = vk_backend_options_default();
    vo.poison = true;
    vo.no_cache = true;
    Backend *be = NULL;
    if (cpu_backend) {
        if (cpu_backend_create(pipe.g, &be) != ST_OK) fail_msg("no CPU backend");
    } else if (vk_backend_create(&vo, &be, &d) != ST_OK) {
        fail_with(&d, "no Vulkan device (is lavapipe installed?)");
    }
    Exec x;
    if (exec_open(&x, p, pipe.g, &b, be, &d) != ST_OK) fail_with(&d, "prepare failed");
    if (exec_run(&x, false, &d) != ST_OK) fail_with(&d, "run failed");
    double worst = 0;
    for (int i = 0; i < p->noutputs; i++) {
        HTensor got = {0};
        if (exec_read(&x, p->outputs[i], &got, &d) != ST_OK) fail_with(&d, "read failed");
        const HTensor *want = &r.vals[g0->outputs[i]];
        CmpStats s;
        if (!cmp_tensors(&got, want, &s)) fail_msg("output %d: element counts differ", i);
        if (s.rel_l2 > worst || s.nonfinite) worst = s.nonfinite ? 1e30 : s.rel_l2;
        if (s.nonfinite || !(s.rel_l2 <= tol)) {
            fprintf(stderr, "output %s (%s): rel_l2 %.3g (tol %.3g) max_abs %.3g nonfinite %lld\n",
                    p->tensors[p->outputs[i]].name, dtype, s.rel_l2, tol, s.max_abs,
                    (long long)s.nonfinite);
            htensor_free(&got);
            fail_msg("output %s disagrees with the CPU reference", p->tensors[p->outputs[i]].name);
        }
        htensor_free(&got);
    }
    int verr = cpu_backend ? 0 : vk_backend_validation_errors(be);
    exec_close(&x);
    be->ops->destroy(be);
    pipeline_free(&pipe);
    ref_free(&r);
    bind_free(&b);
    graph_free(g0);
    diag_free(&d);
    if (verr) fail_msg("%d Vulkan validation errors", verr);
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
