/* The graph drawing's layout (viz/): fusion instances are frames (Graphviz clusters) around their
 * members, each node in one frame (a prologue fold's members are its base's: the base's frame
 * names the fold; a merge that applies frames the instances it runs), and few edges pass through a
 * frame that holds neither of their ends; the DOT text of `dot` carries the same frames. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/pass.h"
#include "tests/testutil.h"
#include "viz/viz.h"

static Pipeline compiled(const char *path, const char *brk)
{
    Pipeline p;
    assert_int_equal(tu_compile(path, brk, &p), ST_OK);
    return p;
}

static bool in_cluster(const VizLayout *l, const VizCluster *c, int box, const Graph *g)
{
    int n = l->box[box].node;
    if (n < 0) return false;
    if (g->nodes[n].fusion == c->fusion) return true;
    return c->also >= 0 && g->nodes[n].fusion == c->also;
}

/* Edges whose spline passes through the inside of a frame holding neither end (sampled along
 * each cubic segment, a point's margin inside the frame's border). */
static int crossings(const VizLayout *l, const Graph *g)
{
    int bad = 0;
    for (int e = 0; e < l->nedge; e++) {
        const VizEdge *ed = &l->edge[e];
        int n = ed->npts - ((ed->npts - 1) % 3 != 0); /* without the arrow tip */
        bool crossed = false;
        for (int c = 0; c < l->ncl && !crossed; c++) {
            const VizCluster *k = &l->cl[c];
            if (in_cluster(l, k, ed->from, g) || in_cluster(l, k, ed->to, g)) continue;
            for (int s = 0; s + 3 < n && !crossed; s += 3) {
                const double *q = ed->pts + 2 * s;
                for (int i = 0; i <= 16 && !crossed; i++) {
                    double u = i / 16.0, v = 1 - u;
                    double x = v * v * v * q[0] + 3 * v * v * u * q[2] + 3 * v * u * u * q[4] +
                               u * u * u * q[6];
                    double y = v * v * v * q[1] + 3 * v * v * u * q[3] + 3 * v * u * u * q[5] +
                               u * u * u * q[7];
                    crossed = x > k->x0 + 2 && x < k->x1 - 2 && y > k->y0 + 2 && y < k->y1 - 2;
                }
            }
        }
        bad += crossed;
    }
    return bad;
}

static void check_frames(const char *path, int max_crossing)
{
    Pipeline p = compiled(path, NULL);
    const Graph *g = p.g;
    VizLayout l;
    DiagList d = {0};
    assert_int_equal(viz_layout(g, &l, &d), ST_OK);
    /* one frame per instance that is not a fold (its members are its base's), an instance a
     * merge runs (the merge's frame holds its members) or a merge that does not apply */
    int want = 0;
    for (int f = 0; f < g->nfusions; f++) {
        const Fusion *fu = &g->fusions[f];
        want += !fu->folds && !fu->merged && !(fu->nmerges && !fu->enabled);
    }
    assert_int_equal(l.ncl, want);
    for (int c = 0; c < l.ncl; c++) {
        const VizCluster *k = &l.cl[c];
        assert_false(g->fusions[k->fusion].folds);
        if (k->also >= 0) assert_int_equal(g->fusions[k->also].folds, k->fusion + 1);
        /* every member's box lies inside its frame */
        for (int b = 0; b < l.nbox; b++) {
            if (!in_cluster(&l, k, b, g)) continue;
            const VizBox *x = &l.box[b];
            assert_true(x->x >= k->x0 && x->x <= k->x1 && x->y >= k->y0 && x->y <= k->y1);
        }
    }
    int bad = crossings(&l, g);
    printf("# %s: %d frames, %d edges, %d through a frame holding neither end\n", path, l.ncl,
           l.nedge, bad);
    assert_true(bad <= max_crossing);
    /* the DOT text of `dot` names each node in one cluster at most */
    VizOptions o = {.color = VIZ_COLOR_KIND};
    char *text;
    assert_int_equal(viz_dot(g, &o, &text, &d), ST_OK);
    int *seen = calloc((size_t)g->nnodes + 1, sizeof *seen);
    int ncl = 0;
    bool in = false;
    for (const char *s = text; *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : s + strlen(s)) {
        int n;
        if (strncmp(s, "  subgraph cluster_", 19) == 0)
            in = true, ncl++;
        else if (strncmp(s, "  }", 3) == 0)
            in = false;
        else if (in && sscanf(s, " n%d;", &n) == 1)
            seen[n]++;
    }
    for (int i = 0; i < g->nnodes; i++)
        assert_true(seen[i] <= 1);
    assert_int_equal(ncl, want);
    free(seen);
    free(text);
    viz_layout_free(&l);
    diag_free(&d);
    pipeline_free(&p);
}

/* qwen2_tiny decode: rmsnorm and silu_mul instances folded into the GEMVs reading them */
static void test_frames_qwen_decode(void **state)
{
    (void)state;
    check_frames("tests/models/qwen2_tiny/decode.json", 2);
}

static void test_frames_qwen_prefill(void **state)
{
    (void)state;
    check_frames("tests/models/qwen2_tiny/prefill.json", 2);
}

static void test_frames_resnet18(void **state)
{
    (void)state;
    check_frames("tests/models/resnet18/model.json", 0);
}

TU_MAIN(test_frames_qwen_decode, test_frames_qwen_prefill, test_frames_resnet18)
