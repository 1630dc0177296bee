/* The subcommands of the CLI (docs/CLI.md); each takes the arguments after its name and returns
 * the process exit code. */
#ifndef NPU_COMMANDS_H
#define NPU_COMMANDS_H

int cmd_run(int argc, char **argv);
int cmd_ops(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_describe(int argc, char **argv);
int cmd_dot(int argc, char **argv);
int cmd_batch(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_bisect(int argc, char **argv);

#endif
