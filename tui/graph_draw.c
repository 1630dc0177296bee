/* Paints a laid-out graph (VizLayout, in points) into the pane's cells: edges as lines of '|', '-',
 * '/', '\' sampled from Graphviz's splines with an arrowhead at the tip, fusion instances as
 * dotted frames titled with their id and pattern (and the prologue fold framed with them), node
 * boxes ('+-|') with the op name, inputs as (name); the selected box is drawn with '#' and '='.
 * Terminal text does not shrink with the drawing, so each box takes the first form whose cells
 * no other box holds: the whole box (3 rows or more), [label] on one row, or a single 'o' (the
 * selected box goes first and keeps its label): zoomed out, a crowded row shows markers, never
 * cut labels. From 100% up an edge carries its tensor's shape where the cells are empty (once
 * per tensor). Everything is clipped to the pane; boxes are drawn after the edges, which pass
 * under them. Also the overview map (tui_graph_map). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tui/internal.h"

typedef struct Clip {
    TuiGrid *g;
    int x, y, w, h;
    unsigned char *taken; /* [w*h]: a box holds the cell */
} Clip;

static bool inside(const Clip *c, int cx, int cy)
{
    return cx >= c->x && cy >= c->y && cx < c->x + c->w && cy < c->y + c->h && cx >= 0 && cy >= 0 &&
           cx < c->g->w && cy < c->g->h;
}

static void cell(const Clip *c, int cx, int cy, char ch, int attr)
{
    if (inside(c, cx, cy)) c->g->c[cy * c->g->w + cx] = (TuiCell){ch, (unsigned char)attr};
}

static void text(const Clip *c, int cx, int cy, int maxw, const char *s, int attr)
{
    for (int i = 0; s[i] && i < maxw; i++) {
        char ch = (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f ? s[i] : '?';
        cell(c, cx + i, cy, ch, attr);
    }
}

/* Is the rectangle free of boxes (cells outside the pane count as free)? */
static bool free_rect(const Clip *c, int x0, int y0, int w, int h)
{
    for (int y = y0; y < y0 + h; y++)
        for (int x = x0; x < x0 + w; x++)
            if (inside(c, x, y) && c->taken[(y - c->y) * c->w + (x - c->x)]) return false;
    return true;
}

static void take(const Clip *c, int x0, int y0, int w, int h)
{
    for (int y = y0; y < y0 + h; y++)
        for (int x = x0; x < x0 + w; x++)
            if (inside(c, x, y)) c->taken[(y - c->y) * c->w + (x - c->x)] = 1;
}

static int col(const TuiGraphPaint *p, double px)
{
    return p->x + (int)floor((px - p->ox) / p->sx);
}

static int row(const TuiGraphPaint *p, double py)
{
    return p->y + (int)floor((py - p->oy) / p->sy);
}

/* A straight run of cells from (x0,y0) to (x1,y1), the character by its slope. */
static void line(const Clip *c, int x0, int y0, int x1, int y1, int attr)
{
    int dx = x1 - x0, dy = y1 - y0;
    int steps = abs(dx) > abs(dy) ? abs(dx) : abs(dy);
    char ch = dy == 0                 ? '-'
              : dx == 0               ? '|'
              : abs(dx) > 2 * abs(dy) ? '-'
              : abs(dy) > 2 * abs(dx) ? '|'
              : (dx > 0) == (dy > 0)  ? '\\'
                                      : '/';
    for (int i = 0; i <= steps; i++) {
        int cx = steps ? x0 + (dx * i + (dx > 0 ? steps / 2 : -(steps / 2))) / steps : x0;
        int cy = steps ? y0 + (dy * i + (dy > 0 ? steps / 2 : -(steps / 2))) / steps : y0;
        cell(c, cx, cy, ch, attr);
    }
}

/* Point u (0..1) of cubic segment q (4 control points). */
static void bezier(const double *q, double u, double *x, double *y)
{
    double v = 1 - u;
    *x = v * v * v * q[0] + 3 * v * v * u * q[2] + 3 * v * u * u * q[4] + u * u * u * q[6];
    *y = v * v * v * q[1] + 3 * v * v * u * q[3] + 3 * v * u * u * q[5] + u * u * u * q[7];
}

/* The spline's control points without the arrow tip (1 + 3k of them). */
static int controls(const VizEdge *e)
{
    return e->npts > 1 && (e->npts - 1) % 3 != 0 ? e->npts - 1 : e->npts;
}

static void edge(const Clip *c, const TuiGraphPaint *p, const VizEdge *e)
{
    int nctrl = controls(e), tip = nctrl < e->npts;
    int px = col(p, e->pts[0]), py = row(p, e->pts[1]);
    int lx = px, ly = py, pdx = 0, pdy = 1;
    for (int s = 0; s + 3 < nctrl; s += 3) {
        for (int k = 1; k <= 12; k++) {
            double bx, by;
            bezier(e->pts + 2 * s, k / 12.0, &bx, &by);
            int nx = col(p, bx), ny = row(p, by);
            if (nx == lx && ny == ly) continue;
            line(c, lx, ly, nx, ny, TA_DIM);
            pdx = nx - lx, pdy = ny - ly;
            lx = nx, ly = ny;
        }
    }
    if (tip) {
        int nx = col(p, e->pts[2 * nctrl]), ny = row(p, e->pts[2 * nctrl + 1]);
        if (nx != lx || ny != ly) {
            line(c, lx, ly, nx, ny, TA_DIM);
            pdx = nx - lx, pdy = ny - ly;
            lx = nx, ly = ny;
        }
    }
    char head = abs(pdy) >= abs(pdx) ? (pdy >= 0 ? 'v' : '^') : pdx > 0 ? '>' : '<';
    cell(c, lx, ly, head, TA_DIM);
}

/* The tensor an edge carries: the consumer's first input made by the producer (or the graph
 * input the edge starts at); -1. */
static int edge_tensor(const VizLayout *l, const Graph *g, const VizEdge *e)
{
    const VizBox *a = &l->box[e->from], *b = &l->box[e->to];
    if (b->node < 0) return -1;
    if (a->node < 0) return a->tensor;
    const Node *n = &g->nodes[b->node];
    for (int i = 0; i < n->nin; i++)
        if (g->tensors[n->in[i]].producer == a->node) return n->in[i];
    return -1;
}

/* Are the cells [x-1, x+n] of row y blank, in the pane and held by no box? */
static bool room(const Clip *c, int x, int y, int n)
{
    for (int i = -1; i <= n; i++)
        if (!inside(c, x + i, y) || c->g->c[y * c->g->w + x + i].ch != ' ' ||
            c->taken[(y - c->y) * c->w + (x + i - c->x)])
            return false;
    return true;
}

/* The edge's tensor shape beside its spline, at the point nearest its middle where a blank row
 * segment takes it (right of the line, else left). */
static void edge_shape(const Clip *c, const TuiGraphPaint *p, const VizEdge *e, int tensor)
{
    enum { SAMPLES = 8, MAXPT = 64 };
    int nseg = (controls(e) - 1) / 3, npt = 0, px[MAXPT], py[MAXPT];
    for (int s = 0; s < nseg && npt < MAXPT; s++)
        for (int k = 0; k < SAMPLES && npt < MAXPT; k++) {
            double bx, by;
            bezier(e->pts + 2 * 3 * s, (k + 0.5) / SAMPLES, &bx, &by);
            px[npt] = col(p, bx), py[npt++] = row(p, by);
        }
    char sh[128];
    tensor_describe(&p->g->tensors[tensor], sh, sizeof sh); /* f32[2,16,32,32]: not a [label] */
    int n = (int)strlen(sh);
    for (int d = 0; d < npt; d++) { /* from the middle outwards */
        int i = npt / 2 + (d % 2 ? -(d + 1) / 2 : d / 2);
        if (i < 0 || i >= npt) continue;
        int x = room(c, px[i] + 2, py[i], n)       ? px[i] + 2
                : room(c, px[i] - n - 1, py[i], n) ? px[i] - n - 1
                                                   : -1;
        if (x < 0) continue;
        text(c, x, py[i], n, sh, TA_DIM);
        take(c, x - 1, py[i], n + 2, 1);
        return;
    }
}

static void frame(const Clip *c, const TuiGraphPaint *p, const VizCluster *k, bool title_only)
{
    const Fusion *f = &p->g->fusions[k->fusion];
    int a = f->enabled ? TA_COLOR(TC_MAGENTA) : TA_DIM;
    int x0 = col(p, k->x0), x1 = col(p, k->x1), y0 = row(p, k->y0), y1 = row(p, k->y1);
    if (x1 - x0 < 2) x1 = x0 + 2;
    if (y1 - y0 < 2) y1 = y0 + 2;
    if (!title_only)
        for (int x = x0; x <= x1; x++)
            cell(c, x, y0, '.', a), cell(c, x, y1, '.', a);
    for (int y = y0 + 1; y < y1 && !title_only; y++)
        cell(c, x0, y, ':', a), cell(c, x1, y, ':', a);
    char title[160];
    viz_cluster_title(p->g, k->fusion, title, sizeof title);
    text(c, x0 + 1, y0, x1 - x0 - 1, title, a | TA_BOLD);
}

/* One box in the first form that fits among the boxes drawn: whole, [label] on one row, 'o'. */
static void box(const Clip *c, const TuiGraphPaint *p, const VizBox *b, int attr, bool sel)
{
    int len = (int)strlen(b->label), cx = col(p, b->x), cy = row(p, b->y);
    int bw = (int)lround(b->w / p->sx), bh = (int)lround(b->h / p->sy);
    if (bw < len + 2) bw = len + 2;             /* the label whole */
    if (bw > 2 * (len + 2)) bw = 2 * (len + 2); /* stretched across: not wider than twice that */
    int x0 = cx - bw / 2, y0 = cy - bh / 2;
    if (b->node >= 0 && bh >= 3 && free_rect(c, x0, y0, bw, bh)) {
        for (int y = y0; y < y0 + bh; y++)
            for (int x = x0; x < x0 + bw; x++) {
                bool top = y == y0 || y == y0 + bh - 1, side = x == x0 || x == x0 + bw - 1;
                cell(c, x, y,
                     top && side ? (sel ? '#' : '+')
                     : top       ? (sel ? '=' : '-')
                     : side      ? (sel ? '#' : '|')
                                 : ' ',
                     attr);
            }
        text(c, x0 + 1 + (bw - 2 - len) / 2, y0 + bh / 2, bw - 2, b->label, attr);
        take(c, x0, y0, bw, bh);
        return;
    }
    x0 = cx - (len + 2) / 2;
    if (sel || free_rect(c, x0, cy, len + 2, 1)) { /* [label], (input) */
        cell(c, x0, cy, sel ? '#' : b->node < 0 ? '(' : '[', attr);
        text(c, x0 + 1, cy, len, b->label, attr);
        cell(c, x0 + len + 1, cy, sel ? '#' : b->node < 0 ? ')' : ']', attr);
        take(c, x0, cy, len + 2, 1);
        return;
    }
    if (free_rect(c, cx, cy, 1, 1)) {
        cell(c, cx, cy, 'o', attr);
        take(c, cx, cy, 1, 1);
    }
}

void tui_graph_paint(Tui *t, const TuiGraphPaint *p)
{
    Clip c = {&t->grid, p->x,
              p->y,     p->w,
              p->h,     calloc((size_t)(p->w > 0 ? p->w : 1) * (size_t)(p->h > 0 ? p->h : 1), 1)};
    if (!c.taken) return;
    const VizLayout *l = p->l;
    for (int i = 0; i < l->ncl; i++)
        frame(&c, p, &l->cl[i], false);
    for (int i = 0; i < l->nedge; i++)
        edge(&c, p, &l->edge[i]);
    for (int i = 0; i < l->ncl; i++)
        frame(&c, p, &l->cl[i], true); /* titles over the edges */
    if (p->sel_box >= 0) {             /* first: it keeps its label */
        int a = p->box_attr ? p->box_attr[p->sel_box] : 0;
        box(&c, p, &l->box[p->sel_box], (a & ~TA_DIM) | TA_REV | TA_BOLD, true);
    }
    for (int i = 0; i < l->nbox; i++)
        if (i != p->sel_box) box(&c, p, &l->box[i], p->box_attr ? p->box_attr[i] : 0, false);
    bool *done = p->shapes ? calloc((size_t)p->g->ntensors + 1, 1) : NULL;
    for (int i = 0; done && i < l->nedge; i++) {
        int ten = edge_tensor(l, p->g, &l->edge[i]);
        if (ten < 0 || done[ten]) continue;
        done[ten] = true;
        edge_shape(&c, p, &l->edge[i], ten);
    }
    free(done);
    free(c.taken);
}

/* The map's viewport line through an empty cell (nodes stay visible). */
static void mark(const Clip *c, int x, int y, char ch)
{
    if (inside(c, x, y) && c->g->c[y * c->g->w + x].ch == ' ')
        cell(c, x, y, ch, TA_BOLD | TA_COLOR(TC_YELLOW));
}

/* The map's size for a drawing in a pane of pw x ph cells (0 x 0: no room), and its scale in
 * points per cell across (down: twice that, a cell being twice as tall as wide): at most a
 * quarter of the pane across and all of it down. */
static int map_size(const VizLayout *l, int pw, int ph, int *h, double *s)
{
    int mw = pw / 4 < 40 ? pw / 4 : 40, mh = ph;
    *h = 0;
    if (mw < 9 || mh < 5 || l->w <= 0 || l->h <= 0) return 0;
    *s = fmax(l->w / (mw - 3), l->h / (2.0 * (mh - 3))); /* a cell to spare for rounding */
    int w = (int)ceil(l->w / *s) + 2;
    *h = (int)ceil(l->h / (2 * *s)) + 2;
    if (*h > mh) *h = mh;
    return w < 9 ? 9 : w > mw ? mw : w; /* room for the title */
}

int tui_graph_map_width(const VizLayout *l, int pw, int ph)
{
    int h;
    double s;
    return map_size(l, pw, ph, &h, &s);
}

void tui_graph_map(Tui *t, const TuiGraphPaint *p, int x, int y, int pw, int ph)
{
    const VizLayout *l = p->l;
    int h;
    double s;
    int w = map_size(l, pw, ph, &h, &s);
    if (!w) return;
    TuiGrid *g = &t->grid;
    tui_fill(g, x, y, w, h, ' ', 0);
    tui_box(g, x, y, w, h, "map", false);
    Clip c = {g, x + 1, y + 1, w - 2, h - 2, NULL};
    for (int i = 0; i < l->nbox; i++) {
        const VizBox *b = &l->box[i];
        int a = i == p->sel_box ? TA_REV | TA_BOLD : p->box_attr ? p->box_attr[i] : 0;
        cell(&c, x + 1 + (int)(b->x / s), y + 1 + (int)(b->y / (2 * s)),
             i == p->sel_box ? '#' : 'o', a);
    }
    /* the viewport: the part of the drawing the pane shows */
    int v0 = x + 1 + (int)floor(p->ox / s), v1 = x + 1 + (int)floor((p->ox + p->w * p->sx) / s);
    int u0 = y + 1 + (int)floor(p->oy / (2 * s)),
        u1 = y + 1 + (int)floor((p->oy + p->h * p->sy) / (2 * s));
    v0 = v0 < c.x ? c.x : v0, u0 = u0 < c.y ? c.y : u0;
    v1 = v1 >= c.x + c.w ? c.x + c.w - 1 : v1, u1 = u1 >= c.y + c.h ? c.y + c.h - 1 : u1;
    for (int xx = v0; xx <= v1; xx++)
        mark(&c, xx, u0, '-'), mark(&c, xx, u1, '-');
    for (int yy = u0 + 1; yy < u1; yy++)
        mark(&c, v0, yy, '|'), mark(&c, v1, yy, '|');
}
