/* The compile step shared by subcommands and the session: options into CompileOptions, the
 * pipeline run, and --dump-after printing. */
#ifndef NPU_APP_COMPILE_H
#define NPU_APP_COMPILE_H

#include "compiler/pass.h"
#include "app/options.h"

void compile_options_from(const Options *o, CompileOptions *co);
Status compile_model(const Options *o, Pipeline *p, DiagList *d);

#endif
