/* Paints a laid-out graph (VizLayout, in points) into the pane's cells: edges as lines of '|', '-',
 * '/', '\' sampled from Graphviz's splines with an arrowhead at the tip, fusion instances as
 * dotted frames titled with their id and pattern, node boxes ('+-|') with the op name, inputs as
 * (name); the selected box is drawn with '#' and '='. Everything is clipped to the pane; boxes are drawn last so edges pass under them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

typedef struct Clip {
    TuiGrid *g;
    int x, y, w, h;
} Clip;

static void cell(const Clip *c, int cx, int cy, char ch, int attr)
{
    if (cx < c->x || cy < c->y || cx >= c->x + c->w || cy >= c->y + c->h) return;
    if (cx < 0 || cy < 0 || cx >= c->g->w || cy >= c->g->h) return;
    c->g->c[cy * c->g->w + cx] = (TuiCell){ch, (unsigned char)attr};
}

static void text(const Clip *c, int cx, int cy, int maxw, const char *s, int attr)
{
    for (int i = 0; s[i] && i < maxw; i++) {
        char ch = (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f ? s[i] : '?';
        cell(c, cx + i, cy, ch, attr);
    }
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
    char ch = dy == 0 ? '-' : dx == 0 ? '|' : abs(dx) > 2 * abs(dy) ? '-'
              : abs(dy) > 2 * abs(dx) ? '|' : (dx > 0) == (dy > 0) ? '\\' : '/';
    for (int i = 0; i <= steps; i++) {
        int cx = steps ? x0 + (dx * i + (dx > 0 ? steps / 2 : -(steps / 2))) / steps : x0;
        int cy = steps ? y0 + (dy * i + (dy > 0 ? steps / 2 : -(steps / 2))) / steps : y0;
        cell(c, cx, cy, ch, attr);
    }
}

static void edge(const Clip *c, const TuiGraphPaint *p, const VizEdge *e)
{
    int nctrl = e->npts, tip = 0;
    if (nctrl > 1 && (nctrl - 1) % 3 != 0) nctrl--, tip = 1;
    int px = col(p, e->pts[0]), py = row(p, e->pts[1]);
    int lx = px, ly = py, pdx = 0, pdy = 1;
    for (int s = 0; s + 3 < nctrl; s += 3) {
        const double *q = e->pts + 2 * s;
        for (int k = 1; k <= 12; k++) {
            double u = k / 12.0, v = 1 - u;
            double bx = v * v * v * q[0] + 3 * v * v * u * q[2] + 3 * v * u * u * q[4] + u * u * u * q[6];
            double by = v * v * v * q[1] + 3 * v * v * u * q[3] + 3 * v * u * u * q[5] + u * u * u * q[7];
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

static void frame(Tui *t, const Clip *c, const TuiGraphPaint *p, const VizCluster *k, bool title_only)
{
    const Graph *g = t->s.pipe.snaps[t->s.cursor].g;
    const Fusion *f = &g->fusions[k->fusion];
    int a = f->enabled ? TA_COLOR(TC_MAGENTA) : TA_DIM;
    int x0 = col(p, k->x0), x1 = col(p, k->x1), y0 = row(p, k->y0), y1 = row(p, k->y1);
    if (x1 - x0 < 2) x1 = x0 + 2;
    if (y1 - y0 < 2) y1 = y0 + 2;
    if (!title_only)
        for (int x = x0; x <= x1; x++) cell(c, x, y0, '.', a), cell(c, x, y1, '.', a);
    for (int y = y0 + 1; y < y1 && !title_only; y++) cell(c, x0, y, ':', a), cell(c, x1, y, ':', a);
    char title[96];
    snprintf(title, sizeof title, "%s %s%s", f->id, f->pattern, f->enabled ? "" : " (off)");
    text(c, x0 + 1, y0, x1 - x0 - 1, title, a | TA_BOLD);
}

static void box(const Clip *c, const TuiGraphPaint *p, const VizBox *b, int attr, bool sel)
{
    int len = (int)strlen(b->label);
    int bw = (int)lround(b->w / p->sx), bh = (int)lround(b->h / p->sy);
    if (b->node < 0) { /* a graph input: one row */
        bw = len + 2 < bw || bw < 3 ? len + 2 : bw;
        int x0 = col(p, b->x) - bw / 2, y0 = row(p, b->y);
        for (int i = 0; i < bw; i++) cell(c, x0 + i, y0, ' ', attr);
        cell(c, x0, y0, '(', attr);
        cell(c, x0 + bw - 1, y0, ')', attr);
        text(c, x0 + 1, y0, bw - 2, b->label, attr);
        return;
    }
    if (bw < len + 2 && p->sx <= 6.0) bw = len + 2; /* the label fits from 100% zoom up */
    if (bw < 3) bw = 3;
    int x0 = col(p, b->x) - bw / 2;
    if (bh < 3) { /* zoomed out: [label] on one row */
        int y0 = row(p, b->y);
        cell(c, x0, y0, sel ? '#' : '[', attr);
        for (int i = 1; i < bw - 1; i++) cell(c, x0 + i, y0, ' ', attr);
        cell(c, x0 + bw - 1, y0, sel ? '#' : ']', attr);
        text(c, x0 + 1, y0, bw - 2, b->label, attr);
        return;
    }
    int y0 = row(p, b->y) - bh / 2;
    for (int y = y0; y < y0 + bh; y++)
        for (int x = x0; x < x0 + bw; x++) {
            bool top = y == y0 || y == y0 + bh - 1, side = x == x0 || x == x0 + bw - 1;
            cell(c, x, y, top && side ? (sel ? '#' : '+') : top ? (sel ? '=' : '-') : side ? (sel ? '#' : '|') : ' ', attr);
        }
    text(c, x0 + 1 + (bw - 2 - len > 0 ? (bw - 2 - len) / 2 : 0), y0 + bh / 2, bw - 2, b->label, attr);
}

void tui_graph_paint(Tui *t, const TuiGraphPaint *p)
{
    Clip c = {&t->grid, p->x, p->y, p->w, p->h};
    const VizLayout *l = p->l;
    for (int i = 0; i < l->ncl; i++) frame(t, &c, p, &l->cl[i], false);
    for (int i = 0; i < l->nedge; i++) edge(&c, p, &l->edge[i]);
    for (int i = 0; i < l->ncl; i++) frame(t, &c, p, &l->cl[i], true); /* titles over the edges */
    for (int i = 0; i < l->nbox; i++) {
        int a = p->box_attr ? p->box_attr[i] : 0;
        if (i == p->sel_box) a = (a & ~TA_DIM) | TA_REV | TA_BOLD;
        box(&c, p, &l->box[i], a, i == p->sel_box);
    }
}
