/* A loaded model: the imported (and shape-checked) graph plus its bound weights, inputs and
 * reference outputs, resolved with the CLI's defaults (docs/CLI.md). Owned by the caller; free
 * with model_free. Used by every subcommand and by the session. */
#ifndef NPU_MODEL_H
#define NPU_MODEL_H

#include "../compiler/graph.h"
#include "../runtime/bind.h"
#include "options.h"

typedef struct Model {
    Graph *g;
    Binding b;
    char *path;
} Model;

/* Imports o->model and checks it. */
Status model_load_graph(Model *m, const char *path, DiagList *d);
/* Binds weights, inputs and reference for m->g according to the options. */
Status model_bind(Model *m, const Options *o, DiagList *d);
/* Outputs with no reference from the files (architecture-only models, generated weights) get
 * the CPU reference's run as their reference; *added says whether any did. */
Status model_cpu_reference(Model *m, bool *added, DiagList *d);
void model_free(Model *m);

#endif
