/* A compiled model ready to run on the Vulkan backend: the pipeline (with the switches of the
 * options), the weights' recipes applied, a backend and an executor. Shared by run, profile,
 * bisect and the session so they all compile and run the same way. */
#ifndef NPU_RUNNER_H
#define NPU_RUNNER_H

#include "../compiler/pass.h"
#include "../runtime/backend.h"
#include "../runtime/exec.h"
#include "model.h"
#include "options.h"

typedef struct Runner {
    Pipeline pipe;
    Backend *be;
    Exec x;
    char dtype[8]; /* "fp16", "bf16", "fp32" */
} Runner;

/* --dtype auto resolved against the bound weights: bf16 when one is stored bf16, else fp16. */
const char *runner_dtype(const Options *o, const Binding *b);
/* Compiles m's IR with o's switches (no_reuse: every tensor readable after a run), applies the
 * recipes to m's binding, creates the backend of --backend (Vulkan on --device, or the CPU
 * reference running each kernel's IR nodes) and loads the plan. */
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
