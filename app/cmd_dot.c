/* `npu-explore dot MODEL.json [--after PASS] [--color kind|partition|time|error]
 * [--profile SAVED.jsonl] -o FILE.dot|svg|png`: time and error colour the nodes by a saved
 * profile of the same model and plan (a heat map with its legend, app/heat.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "viz/viz.h"
#include "app/commands.h"
#include "app/compile.h"
#include "app/heat.h"

int cmd_dot(int argc, char **argv)
{
    Options o;
    DiagList d = {0};
    Status st = opt_read(&o, argc, argv, &d);
    if (st == ST_OK && !o.out)
        st = diag_error(&d, NULL, NULL, NULL, "dot needs -o FILE.dot|svg|png");
    VizOptions vo = {.color = VIZ_COLOR_KIND};
    int c = st == ST_OK ? heat_color_parse(o.color) : 0;
    bool heat = c == VIZ_COLOR_TIME || c == VIZ_COLOR_ERROR;
    if (c < 0)
        st = diag_error(&d, NULL, NULL, NULL, "--color must be kind, partition, time or error");
    else
        vo.color = (VizColor)c;
    if (st == ST_OK && heat && !o.profile)
        st = diag_error(&d, NULL, NULL, NULL,
                        "--color %s needs --profile FILE (a profile saved by "
                        "`profile MODEL --save FILE`)",
                        o.color);
    if (st == ST_OK && !heat && o.profile)
        st = diag_error(&d, o.profile, NULL, NULL,
                        "--profile colours nothing without --color time or error");
    int at = -1;
    if (st == ST_OK && o.after && (at = pass_find(o.after)) < 0)
        st = diag_error(&d, NULL, NULL, NULL, "--after: unknown pass '%s'", o.after);
    SavedProfile sp = {0};
    VizKernelData *kd = NULL;
    VizHeat hm = {0};
    if (st == ST_OK && heat) st = saved_profile_load(o.profile, &sp, &d);
    Pipeline p = {0};
    if (st == ST_OK) st = compile_model(&o, &p, &d);
    const Graph *g = st == ST_OK ? (at >= 0 && at < p.nsnaps ? p.snaps[at].g : p.g) : NULL;
    if (st == ST_OK && heat) st = heat_from_saved(&sp, o.profile, p.plan, p.g, &kd, &d);
    if (st == ST_OK && heat) st = viz_heat(g, vo.color, kd, sp.nk, &hm, &d);
    if (st == ST_OK && heat) vo.heat = &hm;
    if (st == ST_OK) {
        int live = 0;
        for (int i = 0; i < g->nnodes; i++)
            live += !g->nodes[i].dead;
        vo.collapse_fusions = live > 400 && !o.expand; /* large graphs stay readable */
        st = viz_write(g, &vo, o.out, &d);
        if (st == ST_OK)
            printf("wrote %s (%d nodes%s%s%s)\n", o.out, live,
                   vo.collapse_fusions ? ", fusions collapsed" : "", heat ? ", coloured by " : "",
                   heat ? hm.title : "");
    }
    diag_print(&d, stderr);
    viz_heat_free(&hm);
    free(kd);
    saved_profile_free(&sp);
    pipeline_free(&p);
    diag_free(&d);
    return status_exit_code(st);
}
