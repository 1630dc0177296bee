/* The graph pane. Graphs of up to TUI_GRAPH_MAX_DRAW live nodes are drawn in the terminal from
 * Graphviz's layout (viz_layout, cached per pass and fusion-switch state; painted by
 * graph_draw.c): colour by partition or, after profiling, a heat map of GPU time or error per
 * node (the bins of `dot --color time|error`, a legend on the last row); arrows pan, +/- zoom,
 * 0 fits the pane again, m shows or hides the overview map, f follows the selection, c cycles
 * the colours. The default zoom fits the pane: across, the drawing spans the pane's width
 * (stretched or squeezed, 300% to 50%: a tall thin graph uses the width); down, the whole graph
 * when it fits at 50% or more, else 50% scrolled with the selection, the map then showing the
 * whole graph with the viewport marked. The node list (one row per live node with its fusion,
 * placement and edges) is built for every graph: it holds the selection (j/k move it, /
 * searches it) and is what larger graphs show instead of the drawing. `g` renders the real
 * drawing through Graphviz to an SVG file (the session's `dot` command). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "app/heat.h"
#include "tui/internal.h"

static void edges_in(const Graph *g, const Node *n, char *buf, size_t cap)
{
    size_t u = 0;
    buf[0] = 0;
    for (int i = 0; i < n->nin && u + 8 < cap; i++) {
        const GTensor *ten = &g->tensors[n->in[i]];
        if (ten->kind == TK_WEIGHT || ten->kind == TK_CONST) continue;
        const char *nm = ten->producer >= 0 && ten->producer < g->nnodes
                             ? g->nodes[ten->producer].name
                             : ten->name;
        int w = snprintf(buf + u, cap - u, "%s%s", u ? "," : "", nm);
        if (w > 0) u += (size_t)w;
    }
}

static void edges_out(const Graph *g, const Node *n, char *buf, size_t cap)
{
    size_t u = 0;
    buf[0] = 0;
    for (int o = 0; o < n->nout; o++) {
        const GTensor *ten = &g->tensors[n->out[o]];
        for (int c = 0; c < ten->nconsumers && u + 8 < cap; c++) {
            int k = ten->consumers[c];
            if (k < 0 || k >= g->nnodes || g->nodes[k].dead) continue;
            int w = snprintf(buf + u, cap - u, "%s%s", u ? "," : "", g->nodes[k].name);
            if (w > 0) u += (size_t)w;
        }
        if (ten->is_output && u + 8 < cap)
            u += (size_t)snprintf(buf + u, cap - u, "%sOUT", u ? "," : "");
    }
}

#define NCACHE 6
static const double zooms[] = {0.25, 0.35, 0.5, 0.7, 1.0, 1.4, 2.0};
#define NZOOM ((int)(sizeof zooms / sizeof zooms[0]))
#define ZOOM_FIT -1
/* points per cell at 100%: Graphviz's Courier 10 is 6 points a character, a row twice that */
#define PT_X 6.0
#define PT_Y 12.0
enum { COL_PART, COL_GPU, COL_ERR, COL_N };
enum { MAP_AUTO, MAP_ON, MAP_OFF };

typedef struct Entry {
    char *key; /* pass and switch state; NULL: empty */
    VizLayout l;
    bool failed;
    unsigned used;
} Entry;

struct TuiGraphView {
    Entry e[NCACHE];
    unsigned tick;
    int zoom; /* index into zooms[], or ZOOM_FIT */
    int color, map;
    bool follow, drawn, panned, map_shown;
    double cx, cy;   /* the view's centre, in points */
    double sx, sy;   /* the scale last drawn, points per cell */
    int live;        /* live nodes of the graph shown */
    const char *why; /* why the list is shown instead of the drawing */
};

static TuiGraphView *view(Tui *t)
{
    if (!t->gv) {
        t->gv = calloc(1, sizeof *t->gv);
        if (t->gv) {
            t->gv->zoom = ZOOM_FIT;
            t->gv->follow = true;
            t->gv->map = MAP_AUTO;
        }
    }
    return t->gv;
}

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Points per cell for a pane of w x h cells: the manual zoom's, or fit's (see the top); a map
 * beside the drawing takes `mapw` columns of the width fit spans. */
static void scale(const TuiGraphView *v, const VizLayout *l, int w, int h, int mapw, double *sx,
                  double *sy)
{
    if (v->zoom != ZOOM_FIT) {
        *sx = PT_X / zooms[v->zoom];
        *sy = PT_Y / zooms[v->zoom];
        return;
    }
    w -= mapw;
    *sx = clamp(l->w / (w > 3 ? w - 2 : 1), PT_X / 2.0, PT_X / 0.5);
    *sy = clamp(l->h / (h > 2 ? h - 1 : 1), PT_Y / 2.0, PT_Y / 0.5);
}

void tui_graph_free(Tui *t)
{
    if (!t->gv) return;
    for (int i = 0; i < NCACHE; i++) {
        free(t->gv->e[i].key);
        viz_layout_free(&t->gv->e[i].l);
    }
    free(t->gv);
    t->gv = NULL;
}

/* The cached layout of the current pass under the current switches (laid out on a miss). */
static Entry *layout(Tui *t, TuiGraphView *v, const Graph *g)
{
    char key[2048];
    size_t u = (size_t)snprintf(key, sizeof key, "%d:%s:%d:%d", t->s.cursor,
                                t->s.pipe.snaps[t->s.cursor].pass, g->nnodes, g->nfusions);
    for (int i = 0; i < g->nfusions && u + 2 < sizeof key; i++)
        key[u++] = g->fusions[i].enabled ? '1' : '0';
    for (int i = 0; i < t->s.noff && u + 2 < sizeof key; i++)
        u += (size_t)snprintf(key + u, sizeof key - u, ",%s", t->s.off[i]);
    key[u < sizeof key ? u : sizeof key - 1] = 0;
    Entry *lru = &v->e[0];
    for (int i = 0; i < NCACHE; i++) {
        if (v->e[i].key && strcmp(v->e[i].key, key) == 0) {
            v->e[i].used = ++v->tick;
            return &v->e[i];
        }
        if (v->e[i].used < lru->used) lru = &v->e[i];
    }
    free(lru->key);
    viz_layout_free(&lru->l);
    lru->key = strdup(key);
    lru->used = ++v->tick;
    DiagList d = {0};
    lru->failed = viz_layout(g, &lru->l, &d) != ST_OK;
    if (lru->failed && d.count) tui_logf(t, TA_COLOR(TC_RED), "graph layout: %s", d.items[0].msg);
    diag_free(&d);
    return lru;
}

/* The graph's node that the IR or kernel selection names, -1. */
static int synced_node(const Tui *t, const Graph *g)
{
    if (t->sel_node[0]) return graph_find_node(g, t->sel_node);
    const Plan *p = t->s.pipe.plan;
    if (p && t->sel_kernel >= 0 && t->sel_kernel < p->nkernels)
        for (int i = 0; i < p->kernels[t->sel_kernel].nprov; i++) {
            int n = graph_find_node(g, p->kernels[t->sel_kernel].prov[i]);
            if (n >= 0 && !g->nodes[n].dead) return n;
        }
    return -1;
}

void tui_view_graph(Tui *t, TuiLines *out)
{
    if (!t->s.pipe.nsnaps) return;
    const Graph *g = t->s.pipe.snaps[t->s.cursor].g;
    int want = t->graph_sync ? synced_node(t, g) : -1;
    t->graph_sync = false;
    char in[256], outs[256];
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = &g->nodes[i];
        if (n->dead) continue;
        edges_in(g, n, in, sizeof in);
        edges_out(g, n, outs, sizeof outs);
        const char *fid = n->fusion >= 0 && n->fusion < g->nfusions ? g->fusions[n->fusion].id : "";
        int a = n->place == PLACE_CPU ? TA_COLOR(TC_YELLOW) : 0;
        if (i == want) t->pane[P_GRAPH].sel = out->n;
        tui_lines_add(out, a, i, "%-4s %-3s %-18s %-12s <- %s -> %s", fid[0] ? fid : "",
                      n->place == PLACE_CPU ? "cpu" : "npu", n->name, op_short_name(n->op), in,
                      outs);
    }
}

/* Colours of the boxes: placement, or the heat map of the session's profile of this plan by GPU
 * time or error (viz_heat, the bins and colours `dot --color time|error` draws); *hm is made
 * for the legend. */
static void colours(Tui *t, const Graph *g, const VizLayout *l, int mode, int *attr, VizHeat *hm)
{
    const ProfileResult *r = tui_profile_result(t);
    VizKernelData *kd = NULL;
    DiagList d = {0};
    bool heat = mode != COL_PART && r && heat_from_result(t->s.pipe.plan, r, &kd, &d) == ST_OK &&
                viz_heat(g, mode == COL_GPU ? VIZ_COLOR_TIME : VIZ_COLOR_ERROR, kd,
                         t->s.pipe.plan->nkernels, hm, &d) == ST_OK;
    free(kd);
    diag_free(&d);
    for (int i = 0; i < l->nbox; i++) {
        const VizBox *b = &l->box[i];
        attr[i] = 0;
        if (b->node < 0) continue;
        if (!heat) {
            attr[i] = TA_COLOR(g->nodes[b->node].place == PLACE_CPU ? TC_YELLOW : TC_CYAN);
            continue;
        }
        int c = b->node < hm->nnodes ? viz_heat_ansi(hm, hm->bin[b->node]) : 0;
        attr[i] = c ? TA_COLOR(c) : TA_DIM;
    }
}

/* The heat map's legend on the drawing's last row: each bin's range in its colour (under
 * --tui-stable a time bin's share of the slowest node, the same every run). */
static void heat_legend(Tui *t, const VizHeat *hm, int x, int y, int w)
{
    int cx = x;
    cx +=
        tui_put(&t->grid, cx, y, w, TA_BOLD, hm->by == VIZ_COLOR_TIME ? "gpu time: " : "rel_l2: ");
    for (int b = 0; b < VIZ_HEAT_BINS && cx < x + w; b++)
        cx += tui_putf(&t->grid, cx, y, x + w - cx, TA_REV | TA_COLOR(viz_heat_ansi(hm, b)), "[%s]",
                       t->stable ? hm->share[b] : hm->label[b]) +
              1;
    if (cx < x + w) tui_putf(&t->grid, cx, y, x + w - cx, TA_DIM, "(dim: %s)", viz_heat_none(hm));
}

bool tui_graph_draw(Tui *t, int x, int y, int w, int h)
{
    TuiGraphView *v = view(t);
    if (!v || !t->s.pipe.nsnaps) return false;
    v->drawn = false;
    const Graph *g = t->s.pipe.snaps[t->s.cursor].g;
    v->live = 0;
    for (int i = 0; i < g->nnodes; i++)
        v->live += !g->nodes[i].dead;
    v->why = NULL;
    if (v->live > TUI_GRAPH_MAX_DRAW) {
        v->why = "too many to draw";
        return false;
    }
    Entry *e = layout(t, v, g);
    if (e->failed) {
        v->why = "layout failed";
        return false;
    }
    const VizLayout *l = &e->l;
    int *attr = calloc((size_t)l->nbox + 1, sizeof *attr);
    if (!attr) return false;
    if (v->color != COL_PART && !t->busy && !tui_profile_result(t))
        v->color = COL_PART; /* none, or stale */
    VizHeat hm = {0};
    colours(t, g, l, tui_profile_result(t) ? v->color : COL_PART, attr, &hm);
    TuiGraphPaint p = {.l = l,
                       .g = g,
                       .x = x,
                       .y = y,
                       .w = w,
                       .h = hm.bin ? h - 1 : h,
                       .sel_box = -1,
                       .box_attr = attr};
    h = p.h;
    /* the overview: by default when the drawing does not fit the pane; m shows or hides it */
    scale(v, l, w, h, 0, &p.sx, &p.sy);
    bool fits = l->w <= (w - 1) * p.sx && l->h <= (h - 1) * p.sy;
    v->map_shown = v->map == MAP_ON || (v->map == MAP_AUTO && !fits);
    int mapw = v->map_shown ? tui_graph_map_width(l, w, h) : 0;
    if (mapw) scale(v, l, w, h, mapw + 1, &p.sx, &p.sy);
    v->sx = p.sx;
    v->sy = p.sy;
    p.shapes = p.sx <= PT_X && p.sy <= PT_Y; /* from 100% up: the edges carry their shapes */
    const TuiLines *rows = &t->lines[P_GRAPH];
    int sel = t->pane[P_GRAPH].sel, node = sel >= 0 && sel < rows->n ? rows->v[sel].id : -1;
    for (int i = 0; i < l->nbox && node >= 0; i++)
        if (l->box[i].node == node) p.sel_box = i;
    if (v->follow && p.sel_box >= 0) {
        v->cx = l->box[p.sel_box].x;
        v->cy = l->box[p.sel_box].y;
    } else if (!v->panned) {
        v->cx = l->w / 2;
        v->cy = h * p.sy / 2;
    }
    /* keep some of the drawing in view */
    if (v->cx < 0) v->cx = 0;
    if (v->cx > l->w) v->cx = l->w;
    if (v->cy < 0) v->cy = 0;
    if (v->cy > l->h) v->cy = l->h;
    int dw = w - (mapw ? mapw + 1 : 0); /* the drawing: the columns left of the map */
    p.w = dw;
    p.ox = v->cx - dw * p.sx / 2;
    p.oy = v->cy - h * p.sy / 2;
    bool across = l->w <= (dw - 1) * p.sx, down = l->h <= (h - 1) * p.sy;
    if (across)
        p.ox = (l->w - dw * p.sx) / 2; /* fits across: centred */
    else
        p.ox = clamp(p.ox, -p.sx, l->w - (dw - 1) * p.sx); /* else no blank beyond an edge */
    if (down)
        p.oy = -p.sy / 2; /* fits down: from the top */
    else
        p.oy = clamp(p.oy, -p.sy / 2, l->h - (h - 1) * p.sy);
    tui_graph_paint(t, &p);
    if (v->map_shown) tui_graph_map(t, &p, x + w - mapw, y, w, h);
    if (hm.bin) heat_legend(t, &hm, x, y + p.h, w); /* the row below the drawing */
    viz_heat_free(&hm);
    free(attr);
    v->drawn = true;
    return true;
}

const char *tui_graph_title(const Tui *t, char *buf, size_t n)
{
    static const char *cols[COL_N] = {"partition: cyan npu, yellow cpu",
                                      "heat: gpu time (legend below)",
                                      "heat: error (legend below)"};
    const TuiGraphView *v = t->gv;
    if (!v || !v->drawn) {
        if (v && v->why)
            snprintf(buf, n, "node list with edges: %d nodes, %s (over %d; g: svg)", v->live,
                     v->why, TUI_GRAPH_MAX_DRAW);
        else
            snprintf(buf, n, "node list with edges");
        return buf;
    }
    char zoom[48];
    if (v->zoom == ZOOM_FIT)
        snprintf(zoom, sizeof zoom, "fit %.0fx%.0f%%", 100 * PT_X / v->sx,
                 100 * PT_Y / v->sy); /* across x down */
    else
        snprintf(zoom, sizeof zoom, "zoom %.0f%%", zooms[v->zoom] * 100);
    snprintf(buf, n, "graph %d nodes, %s%s%s, %s", v->live, zoom, v->follow ? ", follow" : "",
             v->map_shown ? ", map" : "", cols[v->color]);
    return buf;
}

bool tui_graph_key_hint(const Tui *t)
{
    return t->gv && t->gv->drawn;
}

bool tui_graph_key(Tui *t, int key)
{
    TuiGraphView *v = t->gv;
    if (!v || !v->drawn) return false;
    double sx = v->sx, sy = v->sy, now = PT_Y / sy; /* the zoom down, which +/- step from */
    int pw = t->grid.w / 3, ph = t->grid.h / 4, z;
    switch (key) {
    case TK_LEFT:
        v->cx -= pw * sx;
        break;
    case TK_RIGHT:
        v->cx += pw * sx;
        break;
    case TK_UP:
        v->cy -= ph * sy;
        break;
    case TK_DOWN:
        v->cy += ph * sy;
        break;
    case '+':
    case '=': /* the next zoom above the one shown */
        for (z = 0; z < NZOOM - 1 && zooms[z] <= now * 1.01; z++) {
        }
        v->zoom = zooms[z] > now * 1.01 ? z : v->zoom;
        return true;
    case '-':
        for (z = NZOOM - 1; z > 0 && zooms[z] >= now * 0.99; z--) {
        }
        v->zoom = zooms[z] < now * 0.99 ? z : v->zoom;
        return true;
    case '0':
        v->zoom = ZOOM_FIT;
        v->panned = false;
        return true;
    case 'm':
        v->map = v->map_shown ? MAP_OFF : MAP_ON;
        return true;
    case 'f':
        v->follow = !v->follow;
        v->panned = false;
        snprintf(t->status, sizeof t->status, "graph: follow the selection %s",
                 v->follow ? "on" : "off");
        return true;
    case 'c':
        v->color = (v->color + 1) % COL_N;
        if (v->color != COL_PART && !tui_profile_result(t)) {
            v->color = COL_PART;
            snprintf(
                t->status, sizeof t->status, "%s",
                tui_profile_kept(t)
                    ? "graph: the profile measured an earlier plan: p profiles this one, then c"
                    : "graph: colour by GPU time or error after p (profile)");
        }
        return true;
    default:
        return false;
    }
    v->follow = false; /* an arrow pans: stop following the selection */
    v->panned = true;
    return true;
}
