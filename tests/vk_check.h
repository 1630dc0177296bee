/* Conformance checks of NPU kernels on Vulkan (lavapipe in CI) against the CPU reference, the
 * way ggml's test-backend-ops does it: a graph in the exporter's JSON format is run on the CPU
 * reference as imported, and compiled (fusions on, the given compute dtype) and run on Vulkan
 * with every device buffer poisoned with NaN first, on the same seeded random weights and
 * inputs (never zeros). Each graph output is compared by relative L2 error; the check fails the
 * cmocka test, naming the output and the numbers, when it exceeds `tol`, and also when no kernel
 * of family `expect_shader` ran (so a test cannot pass without exercising its kernel; "gen" stands
 * for any generated kernel, compiler/codegen/codegen.h). Generated kernels are cached in memory
 * only. With NPU_VK_VALIDATE=1 it also fails on any validation-layer error. */
#ifndef NPU_VK_CHECK_H
#define NPU_VK_CHECK_H

#include "compiler/pass.h"
#include "tests/testutil.h"

/* Compiles `json` (the exporter's format) with the default options, vc_tune's knobs and
 * vc_set_no_fuse's switch into *pipe, failing the test on any error; pipeline_free(pipe) when
 * done. */
void vc_compile_json(const char *json, Pipeline *pipe);
/* The same in compute dtype `dtype` ("fp16", "bf16", "fp32"; NULL: the default). */
void vc_compile_json_as(const char *json, const char *dtype, Pipeline *pipe);

/* A --no-fuse spec for the checks and compiles that follow (NULL: none), e.g. "fuse-elementwise"
 * for the plans of before generated kernels, "elementwise" for their members as lone kernels. */
void vc_set_no_fuse(const char *spec);
/* A pass switched off (--disable) for the checks that follow (NULL: none), e.g. "fold-constants"
 * for graphs whose weight-only sources the test wants computed by kernels. */
void vc_set_disable(const char *pass);
/* A tuning knob for the compiles that follow ("NAME=V", as --tune; NULL: every knob back to its
 * default), failing the test on a bad one; vc_tuning() is the current set, for a test's own
 * compiles. */
void vc_tune(const char *assign);
const Tuning *vc_tuning(void);
/* The defaults with vc_tune's knobs and no disk kernel cache: the options of a test's own
 * compiles (tu_compile_json), before the fields it sets. */
void vc_options(CompileOptions *o);
/* Runs of each compiled plan per check (default 1): the first n - 1 on other random inputs, the
 * last compared, so state a kernel keeps in its buffers from run to run is checked. */
void vc_set_runs(int n);
/* A function that rewrites the random value of graph input `input` (its index in the graph's
 * inputs) before the checks that follow, for the reference and the device alike (NULL: none):
 * data with ties, NaN or infinities the random fill never makes. */
typedef void (*VcFill)(HTensor *t, int input, void *ctx);
void vc_set_fill(VcFill fill, void *ctx);
/* Inside a fill: 0 while the compared run's inputs (and the reference's) are filled, i while
 * those of the i-th earlier run of vc_set_runs are: a test can give that run other data. */
int vc_filling_run(void);
/* dtype: "fp16", "bf16" or "fp32". Returns the worst relative L2 error over the outputs. */
double vc_check_json(const char *json, const char *dtype, double tol, const char *expect_shader);
/* The same with the compiled plan run by the CPU reference backend instead (cpu_backend true):
 * what `--backend cpu` runs, views and partitions included. */
double vc_check_json_on(const char *json, const char *dtype, double tol, const char *expect_shader,
                        bool cpu_backend);
/* One node: inputs "in0".. as graph inputs, output "out0" (as tu_node_graph). */
double vc_check_node(const char *aten, int nin, const TuSpec *in, TuSpec out, const char *attrs,
                     const char *dtype, double tol, const char *expect_shader);
/* Tolerances (relative L2) that fit each storage dtype with fp32 arithmetic. */
#define VC_TOL_F32 1e-5
#define VC_TOL_F16 3e-3
#define VC_TOL_BF16 2e-2

/* JSON building blocks for the exporter's format: a tensor, a node. */
#define VC_T(n, s) "{\"name\":\"" n "\",\"shape\":" s "}"
#define VC_TI(n, s) "{\"name\":\"" n "\",\"dtype\":\"int64\",\"shape\":" s "}"
#define VC_NODE(name, op, ins, outs, attrs)                                                        \
    "{\"name\":\"" name "\",\"op_type\":\"" op "\",\"inputs\":[" ins "],\"outputs\":[" outs        \
    "],\"attrs\":{" attrs "}}"

#endif
