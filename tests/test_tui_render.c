/* The explorer's redraw cost: a frame of the graph pane (node list with edges), the full IR view
 * and the changes view over the 1725-node qwen2.5-1.5B prefill graph stays under 30 ms (the
 * session's pipeline is compiled here without weights, which drawing never needs); the graph
 * pane keeps its node list for a graph that large and says so in its title. Also: the
 * headless key-script reader and the grid dump. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "app/results.h"
#include "tests/testutil.h"
#include "tui/internal.h"
#include "common/clock.h"

static void test_redraw_1725_nodes(void **state)
{
    (void)state;
    Tui *t = calloc(1, sizeof *t);
    assert_non_null(t);
    CompileOptions co;
    compile_defaults(&co);
    DiagList d = {0};
    Status st = pipeline_run("tests/models/qwen2_5_1_5b/prefill.json", &co, &t->s.pipe, &d);
    if (st != ST_OK) diag_print(&d, stderr);
    assert_int_equal(st, ST_OK);
    t->s.cursor = t->s.pipe.nsnaps - 1;
    t->sel_kernel = -1;
    t->stable = true;
    tui_grid_resize(&t->grid, 160, 48);
    int live = 0;
    for (int i = 0; i < t->s.pipe.g->nnodes; i++)
        live += !t->s.pipe.g->nodes[i].dead;
    static const int panes[] = {P_GRAPH, P_IR, P_IR, P_KERNELS, P_FUSIONS};
    for (size_t k = 0; k < sizeof panes / sizeof panes[0]; k++) {
        t->main_pane = t->focus = panes[k];
        t->full_ir = k == 1;
        t->pane[t->focus].sel = 1 << 20; /* End: the last row */
        tui_render(t);                   /* warm */
        int frames = 20;
        double t0 = (clock_us() * 1e-3);
        for (int f = 0; f < frames; f++) {
            t->pane[t->focus].sel -= 7; /* follow the selection upwards */
            tui_render(t);
        }
        double per = ((clock_us() * 1e-3) - t0) / frames;
        printf("# redraw %-8s%s: %.2f ms per frame (%d live nodes, %d rows)\n",
               tui_pane_name(panes[k]), t->full_ir ? " full" : "", per, live, t->lines[panes[k]].n);
        assert_true(per < 30.0);
    }
    assert_true(t->lines[P_FUSIONS].n > 0);
    /* over TUI_GRAPH_MAX_DRAW live nodes the graph pane keeps the node list and says so */
    t->main_pane = t->focus = P_GRAPH;
    tui_render(t);
    char title[160];
    assert_non_null(strstr(tui_graph_title(t, title, sizeof title), "too many to draw"));
    assert_false(tui_graph_key_hint(t));
    pipeline_free(&t->s.pipe);
    tui_free_views(t);
    diag_free(&d);
    free(t);
}

/* The screen as one string (rows joined by newlines); caller frees. */
static char *screen(const Tui *t)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    tui_grid_dump(&t->grid, f);
    fclose(f);
    return buf;
}

/* A session over convnet on the CPU reference (no device needed), at 120x30. */
static Tui *open_tui(const char *brk)
{
    Tui *t = calloc(1, sizeof *t);
    assert_non_null(t);
    Options o;
    opt_defaults(&o);
    o.model = "tests/models/convnet/model.json";
    o.backend = "cpu";
    o.break_id = brk;
    DiagList d = {0};
    Status st = session_open(&t->s, &o, NULL, &d);
    if (st != ST_OK) diag_print(&d, stderr);
    diag_free(&d);
    assert_int_equal(st, ST_OK);
    t->sel_kernel = -1;
    t->stable = true;
    t->main_pane = P_IR;
    t->focus = P_PASSES;
    tui_grid_resize(&t->grid, 120, 30);
    return t;
}

static void close_tui(Tui *t)
{
    session_close(&t->s);
    tui_free_views(t);
    free(t);
}

/* The job ends (as tui_exec ends it, with nothing kept): the screen after it; caller frees. */
static char *end_job(Tui *t)
{
    t->busy = NULL;
    t->busy_line = NULL;
    session_live_clear(&t->s);
    session_progress(&t->s, NULL, 0, 0);
    tui_render(t);
    return screen(t);
}

/* While a profile runs on the worker the frame is drawn from the session's copy of its rows so
 * far: timed kernels show their times, the errors still to come read "...", a judged kernel its
 * verdict; keys that only move act, the others are dropped; when the job ends the rows are the
 * kept result's again. */
static void test_live_profile_rows(void **state)
{
    (void)state;
    Tui *t = open_tui(NULL);
    const Plan *p = t->s.pipe.plan;
    assert_true(p->nkernels >= 3);
    t->main_pane = t->focus = P_KERNELS;
    t->busy = session_command("profile");
    t->busy_line = "profile 5";
    Profile so_far;
    assert_int_equal(prof_init(&so_far, p), ST_OK);
    so_far.k[0].gpu_med = 12.5;
    so_far.k[0].cpu_us = 40;
    so_far.k[0].has_err = true;
    so_far.k[0].ok = true;
    so_far.k[1].gpu_med = 7.25;
    session_progress(&t->s, "errors", 1, p->nkernels);
    session_live_rows(&t->s, &so_far);
    tui_render(t);
    char *txt = screen(t);
    assert_non_null(strstr(txt, "kernels, profiling: the rows fill in as measured"));
    assert_non_null(strstr(txt, "working: profile 5: errors 1/"));
    assert_non_null(strstr(txt, "ok            12.5      40.0    3.2x")); /* judged */
    assert_non_null(
        strstr(txt, "...            7.2       ...     ...      ...")); /* timed, error to come */
    assert_non_null(strstr(txt, "...            ...       ..."));      /* not yet timed */
    free(txt);
    /* a later publication replaces the rows */
    so_far.k[1].has_err = true;
    so_far.k[1].ok = false;
    so_far.k[1].err.rel_l2 = 0.5;
    session_live_rows(&t->s, &so_far);
    tui_render(t);
    txt = screen(t);
    assert_non_null(strstr(txt, "MISMATCH"));
    free(txt);
    /* keys while busy: j moves (UI only), p is dropped and says so */
    int sel = t->pane[P_KERNELS].sel;
    assert_true(tui_key_ui(t, 'j'));
    assert_int_equal(t->pane[P_KERNELS].sel, sel + 1);
    assert_false(tui_key_ui(t, 'p'));
    assert_false(tui_key_ui(t, ' '));
    assert_true(tui_key_ui(t, 'Z'));
    assert_true(t->zoomed);
    /* the job ends with nothing kept (cancelled): the table is the plan's kernels again */
    txt = end_job(t);
    assert_null(strstr(txt, "profiling"));
    assert_null(strstr(txt, "MISMATCH"));
    assert_non_null(strstr(txt, "kernels (p: profile)"));
    free(txt);
    prof_free(&so_far);
    close_tui(t);
}

/* A running bisect: its steps so far in pane 6 and "step k of ~N" in the busy line. */
static void test_live_bisect_steps(void **state)
{
    (void)state;
    Tui *t = open_tui(NULL);
    t->main_pane = t->focus = P_BISECT;
    t->busy = session_command("bisect");
    t->busy_line = "bisect";
    BisectResult r = {0};
    BisectStep steps[2] = {
        {.what = "all off", .enabled = 0, .of = 3, .ok = true},
        {.what = "all on", .enabled = 3, .of = 3, .list = "F1,F2,F3", .ok = false, .worst = 0.5}};
    r.steps = steps;
    r.nsteps = 2;
    session_progress(&t->s, "bisect step", 2, -4);
    session_live_steps(&t->s, &r);
    tui_render(t);
    char *txt = screen(t);
    assert_non_null(strstr(txt, "bisect (running: the steps so far)"));
    assert_non_null(strstr(txt, "step 1   all off"));
    assert_non_null(strstr(txt, "step 2   all on           3 of 3 on [F1,F2,F3]  MISMATCH"));
    assert_non_null(strstr(txt, "running: bisect step 2 of ~4, "));
    assert_non_null(strstr(txt, "working: bisect: bisect step 2 of ~4, "));
    free(txt);
    txt = end_job(t);
    assert_null(strstr(txt, "step 2   all on"));
    free(txt);
    close_tui(t);
}

/* The words of the help rows at a width, joined by single blanks; caller frees. */
static char *help_words(int width, int *widest)
{
    TuiLines l = {0};
    tui_help_lines(&l, width);
    size_t cap = 1, u = 0;
    for (int i = 0; i < l.n; i++)
        cap += strlen(l.v[i].text) + 1;
    char *w = calloc(cap, 1);
    assert_non_null(w);
    *widest = 0;
    for (int i = 0; i < l.n; i++) {
        int n = (int)strlen(l.v[i].text);
        if (n > *widest) *widest = n;
        for (const char *p = l.v[i].text; *p;) {
            while (*p == ' ')
                p++;
            size_t k = strcspn(p, " ");
            if (k) u += (size_t)sprintf(w + u, "%s%.*s", u ? " " : "", (int)k, p);
            p += k;
        }
    }
    tui_lines_reset(&l);
    return w;
}

/* Help wraps to any width: no row is wider than asked, and no word is lost or cut (the words
 * are those of the unwrapped text, in order); rows above 100 columns put what beside the keys. */
static void test_help_wraps(void **state)
{
    (void)state;
    int widest;
    char *all_narrow = help_words(99, &widest);
    assert_true(widest <= 99);
    char *all_wide = help_words(1000, &widest);
    assert_non_null(strstr(all_wide, "focusing another pane zooms that one"));
    for (int w = TUI_MIN_W - 4; w < 100; w += 7) { /* the help box's text at the smallest screen */
        char *x = help_words(w, &widest);
        assert_true(widest <= w);
        assert_string_equal(x, all_narrow);
        free(x);
    }
    for (int w = 100; w < 200; w += 13) {
        char *x = help_words(w, &widest);
        assert_true(widest <= w);
        assert_string_equal(x, all_wide);
        free(x);
    }
    free(all_narrow);
    free(all_wide);
    TuiLines l = {0};
    tui_lines_wrap(&l, 0, -1, "head", 6, 16, "one two three four five");
    assert_int_equal(l.n, 3);
    assert_string_equal(l.v[0].text, "head  one two");
    assert_string_equal(l.v[1].text, "      three four");
    assert_string_equal(l.v[2].text, "      five");
    tui_lines_reset(&l);
    tui_lines_wrap(&l, 0, -1, "a very long head", 4, 20, "x");
    assert_int_equal(l.n, 2);
    assert_string_equal(l.v[1].text, "    x");
    tui_lines_reset(&l);
}

/* A Tui over a compiled pipeline alone (drawing needs no weights), the graph pane focused. */
static Tui *graph_tui(const char *path, int w, int h)
{
    Tui *t = calloc(1, sizeof *t);
    assert_non_null(t);
    assert_int_equal(tu_compile(path, NULL, &t->s.pipe), ST_OK);
    t->s.cursor = t->s.pipe.nsnaps - 1;
    t->sel_kernel = -1;
    t->stable = true;
    t->main_pane = t->focus = P_GRAPH;
    tui_grid_resize(&t->grid, w, h);
    return t;
}

static void free_graph_tui(Tui *t)
{
    pipeline_free(&t->s.pipe);
    tui_free_views(t);
    free(t);
}

/* Every [label] and (input) drawn in the graph area (columns x0..x1, rows y0..y1) is a whole
 * op name or graph input name: zoomed out, crowded boxes become 'o', never cut labels. */
static void labels_whole(const Tui *t, int x0, int x1, int y0, int y1)
{
    const Graph *g = t->s.pipe.snaps[t->s.cursor].g;
    for (int y = y0; y <= y1; y++)
        for (int x = x0; x <= x1; x++) {
            char open = t->grid.c[y * t->grid.w + x].ch, close = open == '['   ? ']'
                                                                 : open == '(' ? ')'
                                                                               : 0;
            if (!close) continue;
            char lab[128];
            int n = 0;
            for (int k = x + 1; k <= x1 && n < 127; k++) {
                char ch = t->grid.c[y * t->grid.w + k].ch;
                if (ch == close) break;
                if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_')) {
                    n = -1;
                    break;
                }
                lab[n++] = ch;
            }
            if (n <= 0) continue; /* not a label (a shape's brackets hold digits and commas) */
            lab[n] = 0;
            bool known = false;
            for (int i = 0; i < g->nnodes && !known; i++)
                known = !g->nodes[i].dead && strcmp(op_short_name(g->nodes[i].op), lab) == 0;
            for (int i = 0; i < g->ninputs && !known; i++)
                known = strcmp(g->tensors[g->inputs[i]].name, lab) == 0;
            if (!known) fprintf(stderr, "cut label '%c%s%c' at %d,%d\n", open, lab, close, x, y);
            assert_true(known);
        }
}

/* The graph pane fits the pane by default: resnet18 (tall, narrow) spans the width left of its
 * overview map instead of a thin column; every zoom from 25% to 200% draws whole labels; the
 * map shows by default when the drawing does not fit, m hides it, 0 fits again; from 100% up
 * the edges carry their tensors' shapes. */
static void test_graph_fits(void **state)
{
    (void)state;
    Tui *t = graph_tui("tests/models/resnet18/model.json", 120, 40);
    tui_render(t);
    char title[160];
    assert_non_null(strstr(tui_graph_title(t, title, sizeof title), ", fit "));
    assert_non_null(strstr(title, ", map"));
    char *txt = screen(t);
    assert_non_null(strstr(txt, "+- map "));
    free(txt);
    /* the drawing's extent across, left of the map: the pane is x 41..118 at 120 columns */
    int lo = 1000, hi = -1, mapx = 1000;
    for (int y = 3; y < 32; y++)
        for (int x = 41; x < 119; x++) {
            char ch = t->grid.c[y * 120 + x].ch;
            if (ch == '+' && y == 3 && x < mapx) mapx = x; /* the map's corner */
            if (ch != ' ' && x < mapx) lo = x < lo ? x : lo, hi = x > hi ? x : hi;
        }
    printf("# resnet18 at fit spans columns %d..%d of 41..%d\n", lo, hi, mapx - 1);
    assert_true(hi - lo >= (mapx - 41) / 2);
    labels_whole(t, 41, 118, 3, 32);
    for (int k = 0; k < 8; k++) { /* down to 25%, then up to 200% */
        tui_key(t, '-');
        tui_render(t);
        labels_whole(t, 41, 118, 3, 32);
    }
    assert_non_null(strstr(tui_graph_title(t, title, sizeof title), "zoom 25%"));
    for (int k = 0; k < 8; k++) {
        tui_key(t, '+');
        tui_render(t);
        labels_whole(t, 41, 118, 3, 32);
    }
    assert_non_null(strstr(tui_graph_title(t, title, sizeof title), "zoom 200%"));
    tui_key(t, '0');
    tui_key(t, 'm');
    tui_render(t);
    assert_non_null(strstr(tui_graph_title(t, title, sizeof title), ", fit "));
    assert_null(strstr(title, ", map"));
    txt = screen(t);
    assert_null(strstr(txt, "+- map "));
    free(txt);
    free_graph_tui(t);
    /* convnet from 100%: shapes on edges */
    t = graph_tui("tests/models/convnet/model.json", 120, 40);
    tui_render(t);
    for (int k = 0; k < 4 && !strstr(tui_graph_title(t, title, sizeof title), "zoom 100%"); k++) {
        tui_key(t, '+');
        tui_render(t);
    }
    assert_non_null(strstr(tui_graph_title(t, title, sizeof title), "zoom 100%"));
    txt = screen(t);
    assert_non_null(strstr(txt, "f32[2,3,32,32]"));
    assert_non_null(strstr(txt, "|relu|"));
    free(txt);
    free_graph_tui(t);
}

static void test_script_keys(void **state)
{
    (void)state;
    const char *p = "a<Left>\n<Size 100x30><Dump><lt><Nope>b";
    int w = 0, h = 0;
    assert_int_equal(tui_script_key(&p, &w, &h), 'a');
    assert_int_equal(tui_script_key(&p, &w, &h), TK_LEFT);
    assert_int_equal(tui_script_key(&p, &w, &h), TK_RESIZE);
    assert_int_equal(w * 1000 + h, 100030);
    assert_int_equal(tui_script_key(&p, &w, &h), TK_DUMP);
    assert_int_equal(tui_script_key(&p, &w, &h), '<');
    assert_int_equal(tui_script_key(&p, &w, &h), 0); /* unknown names do nothing */
    assert_int_equal(tui_script_key(&p, &w, &h), 'b');
    assert_int_equal(tui_script_key(&p, &w, &h), TK_NONE);
}

static void test_grid_dump(void **state)
{
    (void)state;
    TuiGrid g = {0};
    tui_grid_resize(&g, 10, 3);
    tui_box(&g, 0, 0, 10, 3, "ab", false);
    tui_put(&g, 1, 1, 20, 0, "0123456789XYZ"); /* clipped at the grid's edge */
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    tui_grid_dump(&g, f);
    fclose(f);
    assert_string_equal(buf, "+- ab ---+\n|012345678\n+--------+\n");
    free(buf);
    tui_grid_free(&g);
}

TU_MAIN(test_redraw_1725_nodes, test_live_profile_rows, test_live_bisect_steps, test_help_wraps,
        test_graph_fits, test_script_keys, test_grid_dump)
