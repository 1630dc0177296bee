/* The entry point: the subcommands (app/cli.c), or the explorer (tui/) on a model. The one file
 * of app/ that includes tui/: it is linked above every layer (Makefile LAYERS). */
#include "app/cli.h"
#include "tui/tui.h"

int main(int argc, char **argv)
{
    int rc = cli_main(argc, argv);
    return rc == CLI_EXPLORER ? tui_main(argc - 1, argv + 1) : rc;
}
