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
    for (int i = 0; i < t->s.pipe.g->nnodes; i++) live += !t->s.pipe.g->nodes[i].dead;
    static const int panes[] = {P_GRAPH, P_IR, P_IR, P_KERNELS, P_FUSIONS};
    for (size_t k = 0; k < sizeof panes / sizeof panes[0]; k++) {
        t->main_pane = t->focus = panes[k];
        t->full_ir = k == 1;
        t->pane[t->focus].sel = 1 << 20; /* End: the last row */
        tui_render(t);                    /* warm */
        int frames = 20;
        double t0 = (clock_us() * 1e-3);
        for (int f = 0; f < frames; f++) {
            t->pane[t->focus].sel -= 7; /* follow the selection upwards */
            tui_render(t);
        }
        double per = ((clock_us() * 1e-3) - t0) / frames;
        printf("# redraw %-8s%s: %.2f ms per frame (%d live nodes, %d rows)\n", tui_pane_name(panes[k]),
               t->full_ir ? " full" : "", per, live, t->lines[panes[k]].n);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_redraw_1725_nodes),
        cmocka_unit_test(test_script_keys),
        cmocka_unit_test(test_grid_dump),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
