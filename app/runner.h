/* A compiled model ready to run on the Vulkan backend: the pipeline (with the switches of the
 * options), the weights' recipes applied, a backend and an executor. Shared by run, profile,
 * bisect and the session so they all compile and run the same way. */
#ifndef NPU_RUNNER_H
#define NPU_RUNNER_H

#include "compiler/pass.h"
#include "runtime/backend.h"
#include "runtime/exec.h"
#include "app/model.h"
#include "app/options.h"

typedef struct Runner {
    Pipeline pipe;
    Backend *be;
    Exec x;
    char dtype[8]; /* "fp16", "bf16", "fp32" */
    bool borrowed; /* pipe is the caller's (runner_open_plan): not freed by runner_close */
    int verr0;     /* the shared device's validation errors when this runner opened */
} Runner;

/* What a plan is compiled for when it runs on the options' backend: the compute dtype (fp32 on
 * the CPU reference, else --dtype resolved against the bound weights), the kernel tier (auto:
 * the device's best; portable without a device) and whether the Vulkan device is a CPU
 * (lavapipe: the direct conv). runner_open decides it from its own backend; the session asks
 * once (runner_target) and compiles its one plan for it, so its plan is the one that runs. */
typedef struct RunTarget {
    char dtype[8];
    int tier;
    bool cpu_device;
    char device[512]; /* the device's identity for the tuning cache (vk_backend_device_key), ""
                       * on the CPU backend */
} RunTarget;

/* --dtype auto resolved against the bound weights: bf16 when one is stored bf16, else fp16. */
const char *runner_dtype(const Options *o, const Binding *b);
/* Opens o's Vulkan device to ask it (none for --backend cpu) and fills *t; ST_NO_DEVICE (exit
 * 3) when there is none. */
Status runner_target(const Options *o, const Binding *b, RunTarget *t, DiagList *d);
/* o's compile options (switches, passes, --break) for target t (the tuning cache: the
 * caller's, app/tuned.h). */
void runner_compile_options(const Options *o, const RunTarget *t, CompileOptions *co);
/* runner_compile_options with no_reuse and the tuning cache of o for t's device (app/tuned.h):
 * exactly the options runner_compile compiles an IR with (the edit and IR text aside). */
Status runner_options(const Options *o, const RunTarget *t, bool no_reuse, CompileOptions *co,
                      DiagList *d);
/* Compiles for target t what runner_open would: m's loaded graph with o's switches, or a
 * .npubin's own plan (unless o->recompile); no_reuse: every tensor readable after a run. */
Status runner_compile(const Options *o, Model *m, const RunTarget *t, bool no_reuse, Pipeline *p,
                      DiagList *d);
/* An executor over a pipeline compiled already (runner_compile; borrowed: it must outlive the
 * runner): the recipes applied to m's binding, the backend of --backend created, the plan loaded.
 */
Status runner_open_plan(Runner *r, const Options *o, Model *m, const Pipeline *pipe, DiagList *d);
/* Compiles m's IR (the loaded graph, not the file again) with o's switches (no_reuse: every tensor
 * readable after a run), applies the recipes to m's binding, creates the backend of --backend
 * (Vulkan on --device, or the CPU reference running each kernel's IR nodes) and loads the plan. */
Status runner_open(Runner *r, const Options *o, Model *m, bool no_reuse, DiagList *d);
/* The same on the device of an open runner's backend `with` (so the two can share storage). */
Status runner_open_with(Runner *r, const Options *o, Model *m, bool no_reuse, Backend *with,
                        DiagList *d);
/* The same with edit(g, ctx, d) applied to the imported graph before it compiles
 * (CompileOptions.edit); an IR model only. */
Status runner_open_edit(Runner *r, const Options *o, Model *m, bool no_reuse, Backend *with,
                        Status (*edit)(Graph *g, void *ctx, DiagList *d), void *ctx, DiagList *d);
/* An error quoting the first message when the validation layer (NPU_VK_VALIDATE=1) reported
 * errors so far; ST_OK otherwise. */
Status runner_check_validation(Runner *r, DiagList *d);
void runner_close(Runner *r);

#endif
