/* The subcommands of the CLI (docs/CLI.md); each takes the arguments after its name and returns
 * the process exit code. */
#ifndef NPU_COMMANDS_H
#define NPU_COMMANDS_H

int cmd_run(int argc, char **argv);
int cmd_ops(int argc, char **argv);
/* ops --coverage MODEL.json...: per model, where each node runs (app/coverage.c). */
int cmd_ops_coverage(int argc, char **argv);
int cmd_tuning(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_describe(int argc, char **argv);
int cmd_dot(int argc, char **argv);
int cmd_batch(int argc, char **argv);
int cmd_profile(int argc, char **argv);
/* The CLI's profile and bisect without the argument parsing (tests call them): they load
 * o->model with o's options, measure with app/results.h and print to `out` (JSON lines when
 * o->json; profile -o FILE writes there instead). bisect sets *rc to the exit code. */
#include <stdio.h>
#include "common/diag.h"
#include "app/options.h"
Status app_profile(const Options *o, FILE *out, DiagList *d);
Status app_bisect(const Options *o, FILE *out, int *rc, DiagList *d);
int cmd_bisect(int argc, char **argv);
int cmd_generate(int argc, char **argv);
/* tune MODEL: app/tune.h's search, its report, the tuning cache written. */
int cmd_tune(int argc, char **argv);

#endif
