/* tui_main: `npu-explore MODEL [options]` opens the explorer over one Session. Without a
 * terminal (and no key script) it falls back to the --batch report. Headless options:
 *   --tui-script FILE   keys from FILE (see tui_script_key), no terminal needed
 *   --tui-keys KEYS     the same, inline
 *   --tui-size WxH      screen size of a headless run (80x24)
 *   --tui-dump FILE     where <Dump> and the final screen are written (stdout)
 *   --tui-stable        times shown as '-' (for golden screens) */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "app/commands.h"
#include "tui/internal.h"
#include "tui/tui.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (size_t r; buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += r;
        if (n + 1 == cap) {
            char *b = realloc(buf, cap *= 2);
            if (!b) free(buf);
            buf = b;
        }
    }
    fclose(f);
    if (buf) buf[n] = 0;
    return buf;
}

static void dump(Tui *t, FILE *f, int *nscreen)
{
    fprintf(f, "=== screen %d (%dx%d) ===\n", ++*nscreen, t->grid.w, t->grid.h);
    tui_grid_dump(&t->grid, f);
}

void tui_free_views(Tui *t)
{
    for (int p = 0; p < P_COUNT; p++)
        if (p != P_LOG && p != P_BISECT) tui_lines_reset(&t->lines[p]);
    tui_lines_reset(&t->log);
    tui_lines_reset(&t->bisect);
    tui_grid_free(&t->grid);
    tui_graph_free(t);
    tui_source_close(t);
    free(t->prof);
    t->prof = NULL;
}

static void close_tui(Tui *t)
{
    session_close(&t->s);
    tui_free_views(t);
}

int tui_main(int argc, char **argv)
{
    const char *script = NULL, *keys = NULL, *dump_path = NULL;
    int w = 80, h = 24;
    bool stable = false;
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    int nrest = 0;
    if (!rest) return 2;
    for (int i = 0; i < argc; i++) {
        bool has = i + 1 < argc;
        if (strcmp(argv[i], "--tui-script") == 0 && has)
            script = argv[++i];
        else if (strcmp(argv[i], "--tui-keys") == 0 && has)
            keys = argv[++i];
        else if (strcmp(argv[i], "--tui-dump") == 0 && has)
            dump_path = argv[++i];
        else if (strcmp(argv[i], "--tui-stable") == 0)
            stable = true;
        else if (strcmp(argv[i], "--tui-size") == 0 && has) {
            if (sscanf(argv[++i], "%dx%d", &w, &h) != 2 || w < 1 || h < 1 || w > 1000 || h > 500) {
                fprintf(stderr, "error: --tui-size wants WxH (up to 1000x500)\n");
                free(rest);
                return 2;
            }
        } else
            rest[nrest++] = argv[i];
    }
    bool headless = script || keys;
    if (!headless && (!isatty(0) || !isatty(1))) {
        fprintf(stderr, "npu-explore: no terminal: printing the batch report instead\n");
        int rc = cmd_batch(nrest, rest);
        free(rest);
        return rc;
    }
    char *text = script ? slurp(script) : NULL;
    if (script && !text) {
        fprintf(stderr, "error: %s: cannot read the key script\n", script);
        free(rest);
        return 2;
    }
    Options o;
    DiagList d = {0};
    Status st = opt_read(&o, nrest, rest, &d);
    Tui *t = calloc(1, sizeof *t);
    if (!t) st = ST_NOMEM;
    if (st == ST_OK) st = session_open(&t->s, &o, stderr, &d);
    if (st != ST_OK) {
        diag_print(&d, stderr);
        diag_free(&d);
        if (t) close_tui(t);
        free(t);
        free(text);
        free(rest);
        return status_exit_code(st);
    }
    t->headless = headless;
    t->stable = stable;
    t->sel_kernel = -1;
    t->main_pane = P_IR;
    t->focus = P_PASSES;
    tui_logf(t, TA_DIM, "opened %s: %d passes, %d kernels (keys: ? help)", o.model,
             t->s.pipe.nsnaps, t->s.pipe.plan ? t->s.pipe.plan->nkernels : 0);
    BreakSite b[TUI_MAX_BREAKS];
    for (int i = 0, nb = tui_breaks(t, b); i < nb; i++) { /* the banner's fault, said in full */
        char said[512];
        attrib_break_text(t->s.pipe.plan, &b[i], said, sizeof said);
        tui_logf(t, TA_BOLD | TA_COLOR(TC_RED), "--break %s: %s", b[i].id, said);
    }
    /* what the session said opening the model (a .npubin compiled again, an option of its plan
     * the command line overrode, no device), as --batch prints it to stderr; the file is the
     * one just opened */
    for (int i = 0; i < d.count; i++) {
        Diag g = d.items[i];
        char line[2048];
        g.file = NULL;
        diag_format(&g, line, sizeof line);
        tui_logf(t, g.level == DIAG_NOTE ? TA_DIM : TA_COLOR(TC_YELLOW), "%s", line);
    }
    diag_free(&d);
    int rc = 0;
    if (headless) {
        FILE *out = dump_path ? fopen(dump_path, "w") : stdout;
        if (!out) {
            fprintf(stderr, "error: %s: cannot write\n", dump_path);
            rc = 2;
        } else {
            t->keys_at = text ? text : keys;
            int nscreen = 0, nw = w, nh = h;
            tui_grid_resize(&t->grid, w, h);
            for (;;) {
                tui_render(t);
                if (t->quit) break;
                int k = tui_script_key(&t->keys_at, &nw, &nh);
                if (k == TK_NONE) break;
                if (k == TK_DUMP)
                    dump(t, out, &nscreen);
                else if (k == TK_RESIZE)
                    tui_grid_resize(&t->grid, nw, nh);
                else
                    tui_key(t, k);
            }
            dump(t, out, &nscreen);
            if (out != stdout) fclose(out);
        }
    } else if (tui_term_open(&t->no_color) != 0) {
        fprintf(stderr, "error: cannot open the terminal\n");
        rc = 2;
    } else {
        while (!t->quit) {
            int tw, th;
            tui_term_size(&tw, &th);
            if (tw != t->grid.w || th != t->grid.h) tui_grid_resize(&t->grid, tw, th);
            tui_render(t);
            tui_term_flush(&t->grid, t->no_color);
            tui_key(t, tui_next_key(t));
        }
        tui_term_close();
    }
    close_tui(t);
    free(t);
    free(text);
    free(rest);
    return rc;
}
