/* The CLI entry point: parses the subcommand and hands off to app/ functions. */
#include <stdio.h>
#include <string.h>

#include "app/cli.h"

int main(int argc, char **argv)
{
    return cli_main(argc, argv);
}
