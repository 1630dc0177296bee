/* The command line (docs/CLI.md): subcommand dispatch, option parsing and the exit-code contract.
 * Called only by main(). */
#ifndef NPU_CLI_H
#define NPU_CLI_H

#define NPU_VERSION "0.1.0"

int cli_main(int argc, char **argv);
/* The explorer, defined in tui/ (nothing includes tui/; the linker joins them). argv[0] is MODEL.
 */
int tui_main(int argc, char **argv);

#endif
