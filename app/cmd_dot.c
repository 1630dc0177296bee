/* `npu-explore dot MODEL.json [--after PASS] [--color kind|partition] -o FILE.dot|svg|png` */
#include <stdio.h>
#include <string.h>
#include "../viz/viz.h"
#include "commands.h"
#include "compile.h"

int cmd_dot(int argc, char **argv)
{
    Options o;
    DiagList d = {0};
    opt_defaults(&o);
    Status st = opt_parse(&o, argc, argv, 1, &d);
    if (st == ST_OK && !o.out) st = diag_error(&d, NULL, NULL, NULL, "dot needs -o FILE.dot|svg|png");
    VizOptions vo = {VIZ_COLOR_KIND, false, false};
    if (st == ST_OK && strcmp(o.color, "partition") == 0) vo.color = VIZ_COLOR_PARTITION;
    else if (st == ST_OK && strcmp(o.color, "kind") != 0)
        st = diag_error(&d, NULL, NULL, NULL, "--color must be kind or partition (time and error "
                                              "colouring need a profile, not built yet)");
    int at = -1;
    if (st == ST_OK && o.after && (at = pass_find(o.after)) < 0)
        st = diag_error(&d, NULL, NULL, NULL, "--after: unknown pass '%s'", o.after);
    Pipeline p = {0};
    if (st == ST_OK) st = compile_model(&o, &p, &d);
    if (st == ST_OK) {
        const Graph *g = at >= 0 && at < p.nsnaps ? p.snaps[at].g : p.g;
        int live = 0;
        for (int i = 0; i < g->nnodes; i++) live += !g->nodes[i].dead;
        vo.collapse_fusions = live > 400 && !o.expand; /* large graphs stay readable */
        st = viz_write(g, &vo, o.out, &d);
        if (st == ST_OK)
            printf("wrote %s (%d nodes%s)\n", o.out, live, vo.collapse_fusions ? ", fusions collapsed" : "");
    }
    diag_print(&d, stderr);
    pipeline_free(&p);
    diag_free(&d);
    return status_exit_code(st);
}
