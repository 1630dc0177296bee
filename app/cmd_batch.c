/* `npu-explore --batch MODEL [options] [-x SCRIPT | -]`: session commands from a script or
 * stdin, one per line; with no script: describe, check (or run) and profile. A failing command
 * prints its error and stops the script with its exit code unless `set on-error continue`. */
#include <stdio.h>
#include <string.h>
#include "app/commands.h"
#include "app/session.h"

int cmd_batch(int argc, char **argv)
{
    Options o;
    DiagList d = {0};
    Status st = opt_read(&o, argc, argv, &d);
    Session s;
    memset(&s, 0, sizeof s);
    int rc = 0;
    if (st == ST_OK) st = session_open(&s, &o, stdout, &d);
    diag_print(&d, stderr); /* notes (a .npubin's IR compiled again), or the error */
    diag_clear(&d);
    if (st != ST_OK) {
        rc = status_exit_code(st);
        goto out;
    }
    FILE *in = NULL;
    if (o.script && strcmp(o.script, "-") != 0) {
        in = fopen(o.script, "r");
        if (!in) {
            diag_error(&d, o.script, NULL, NULL, "cannot open script");
            diag_print(&d, stderr);
            rc = 2;
            goto out;
        }
    } else if (o.script) {
        in = stdin;
    }
    /* no script: the report (on the CPU backend, check only against references from files;
     * on Vulkan the CPU reference stands in for missing ones) */
    const char *dflt[3] = {"describe", "check", "profile 5"};
    int ndflt = 3;
    if (s.model.b.nref == 0 && strcmp(s.opt.backend, "cpu") == 0) dflt[1] = "run";
    char line[4096];
    for (int n = 0;; n++) {
        const char *cmd;
        if (in) {
            if (!fgets(line, sizeof line, in)) break;
            line[strcspn(line, "\n")] = 0;
            cmd = line;
        } else {
            if (n >= ndflt) break;
            cmd = dflt[n];
        }
        diag_clear(&d);
        if (cancel_requested(&s.cancel)) break; /* never set by the CLI; between commands */
        Status cs = session_exec(&s, cmd, &d);
        fflush(stdout);
        if (cs != ST_OK) {
            diag_print(&d, stderr);
            if (rc == 0) rc = status_exit_code(cs);
            if (!s.keep_going) break;
        }
    }
    if (in && in != stdin) fclose(in);
out:
    session_close(&s);
    diag_free(&d);
    return rc;
}
