/* A loaded model: the imported (and shape-checked) graph plus its bound weights, inputs and
 * reference outputs, resolved with the CLI's defaults (docs/CLI.md). Owned by the caller; free
 * with model_free. Used by every subcommand and by the session. */
#ifndef NPU_MODEL_H
#define NPU_MODEL_H

#include "compiler/graph.h"
#include "runtime/bind.h"
#include "app/options.h"

typedef struct Model {
    Graph *g;
    Binding b;
    char *path;
    char *ir_text; /* the IR JSON text g was read from (a .npubin's embedded IR for one) */
    size_t ir_len;
    char *origin; /* a .npubin's recorded IR file (files beside it are defaults too), or NULL */
} Model;

/* Imports the model at path (an IR JSON, or the IR a .npubin carries) and checks it. */
Status model_load_graph(Model *m, const char *path, DiagList *d);
/* Binds weights, inputs and reference for m->g according to the options. The default files
 * are looked for beside the model, and for a .npubin then beside the IR it was compiled from. */
Status model_bind(Model *m, const Options *o, DiagList *d);
/* Outputs with no reference from the files (architecture-only models, generated weights) get
 * the CPU reference's run as their reference; *added says whether any did. Outputs an argmax
 * produces also get their input's reference value (Binding.argmax: the tie-aware check). */
Status model_cpu_reference(Model *m, bool *added, DiagList *d);
/* Only the argmax part of model_cpu_reference (for a run on the CPU backend, whose outputs
 * must not become their own reference); runs the CPU reference only when some is lacking. */
Status model_argmax_reference(Model *m, DiagList *d);
void model_free(Model *m);
/* For a .npubin o->model that a command compiles again from the IR it carries (compile, dot, the
 * session, tune): the options its plan records, compute dtype, tier and tuning knobs, become o's
 * where o leaves them at their defaults (--dtype auto, --tier auto, a knob neither --tune nor an
 * NPU_* variable sets), so the recompile gives the file's plan. An option o gives otherwise
 * wins, with a note naming both values; a recorded knob this build lacks is an error naming the
 * file, as that --tune would be. Kernels the file records knobs of a tuning cache for get a note
 * (their tuning keys are not recorded: --tuned's cache applies, as to an IR). An IR JSON: ST_OK. */
Status model_npubin_options(Options *o, DiagList *d);
/* --dtype auto before anything is bound (compile, describe, dot): "bf16" when the weights file
 * the model would bind (--weights, else weights.safetensors beside it) stores a tensor as bf16,
 * else "fp16", as runner_dtype decides after binding; only the file's header is read. Other
 * values of o->dtype are returned as they are. */
const char *model_auto_dtype(const Options *o);

#endif
