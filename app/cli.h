/* The command line (docs/CLI.md): subcommand dispatch, option parsing and the exit-code contract.
 * Called only by main(). */
#ifndef NPU_CLI_H
#define NPU_CLI_H

#define NPU_VERSION "0.1.0"

/* Runs the subcommand argv[1] and returns its exit code, or CLI_EXPLORER when argv[1] is a model
 * to open in the explorer (tui/, which the entry point calls: app/ does not call up into tui/). */
int cli_main(int argc, char **argv);
#define CLI_EXPLORER (-1)

#endif
