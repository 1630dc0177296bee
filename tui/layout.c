/* The frame: header (model, pass i/n, fusions on/total, last verdict), the panes placed for the
 * terminal's size (passes and details on the left, the main pane with its tabs on the right, the
 * log below), the footer of keys for the focused pane, the help overlay and the prompt line. Lists
 * are drawn by one function that keeps the selection visible. */
#include <string.h>
#include "tui/internal.h"

static const char *names[P_COUNT] = {
    [P_PASSES] = "passes",   [P_IR] = "ir",         [P_GRAPH] = "graph", [P_KERNELS] = "kernels",
    [P_FUSIONS] = "fusions", [P_BISECT] = "bisect", [P_LOG] = "log",     [P_DETAILS] = "details",
};

const char *tui_pane_name(int p)
{
    return p >= 0 && p < P_COUNT ? names[p] : "?";
}

static void draw_list(Tui *t, int p, int x, int y, int w, int h, int ind_y)
{
    TuiLines *l = &t->lines[p];
    TuiPane *pn = &t->pane[p];
    bool focused = t->focus == p;
    if (pn->sel >= l->n) pn->sel = l->n - 1;
    if (pn->sel < 0) pn->sel = 0;
    if (pn->top > pn->sel) pn->top = pn->sel;
    if (pn->sel >= pn->top + h) pn->top = pn->sel - h + 1;
    if (pn->top > l->n - h) pn->top = l->n - h;
    if (pn->top < 0) pn->top = 0;
    int widest = 0;
    for (int r = 0; r < h && pn->top + r < l->n; r++) {
        int n = (int)strlen(l->v[pn->top + r].text);
        if (n > widest) widest = n;
    }
    if (pn->left > widest - (w - 1)) pn->left = widest - (w - 1);
    if (pn->left < 0) pn->left = 0;
    for (int r = 0; r < h && pn->top + r < l->n; r++) {
        const TuiLine *ln = &l->v[pn->top + r];
        int len = (int)strlen(ln->text);
        bool sel = pn->top + r == pn->sel && p != P_LOG;
        int a = ln->attr;
        if (sel && focused) a = (a & ~TA_DIM) | TA_REV;
        if (sel && focused) tui_fill(&t->grid, x, y + r, w, 1, ' ', a);
        tui_put(&t->grid, x, y + r, 1, a, sel ? ">" : " ");
        tui_put(&t->grid, x + 1, y + r, w - 1, a, ln->text + (pn->left < len ? pn->left : len));
    }
    if ((l->n > h || pn->left > 0) &&
        w > 20) { /* where we are, at the right end of the title row */
        char pos[48], col[24] = "";
        if (pn->left > 0) snprintf(col, sizeof col, "col %d, ", pn->left + 1);
        int n = snprintf(pos, sizeof pos, " %s%d/%d ", col, pn->sel + 1, l->n);
        tui_put(&t->grid, x + w - n - 1, ind_y, n, TA_DIM, pos);
    }
}

static void pane(Tui *t, int p, int x, int y, int w, int h, const char *title)
{
    if (w < 4 || h < 3) return;
    tui_box(&t->grid, x, y, w, h, title, t->focus == p);
    draw_list(t, p, x + 1, y + 1, w - 2, h - 2, y);
}

static void header(Tui *t)
{
    TuiGrid *g = &t->grid;
    const Session *s = &t->s;
    tui_fill(g, 0, 0, g->w, 1, ' ', TA_REV);
    int en = 0, nf = s->pipe.g ? s->pipe.g->nfusions : 0;
    for (int i = 0; i < nf; i++)
        en += s->pipe.g->fusions[i].enabled;
    const char *pass = s->pipe.nsnaps ? s->pipe.snaps[s->cursor].pass : "-";
    int x = 0;
    if (s->opt.break_id) { /* a deliberate fault: never look like a real result; where it lands */
        char b[160];
        tui_break_banner(t, b, sizeof b);
        x = tui_putf(g, 0, 0, g->w / 2, TA_REV | TA_BOLD | TA_COLOR(TC_RED), " %s ", b);
    }
    bool old = t->verdict[0] && t->verdict_gen != s->gen;
    tui_putf(g, x, 0, g->w - x, TA_REV | TA_BOLD, "%s%s | pass %d/%d %s | fusions %d/%d | %s%s",
             g->w >= 100 ? " npu-explore " : " ",
             s->model.g && s->model.g->model_name ? s->model.g->model_name : "?", s->cursor,
             s->pipe.nsnaps - 1, pass, en, nf, t->verdict[0] ? t->verdict : "not verified",
             old ? " (earlier plan)" : "");
}

static void footer(Tui *t)
{
    static const char spin[] = "|/-\\";
    TuiGrid *g = &t->grid;
    int y = g->h - 1;
    tui_fill(g, 0, y, g->w, 1, ' ', TA_REV);
    if (t->prompting || t->searching) {
        tui_putf(g, 0, y, g->w, TA_REV | TA_BOLD, "%c%s_", t->prompting ? ':' : '/', t->input);
    } else if (t->busy) { /* the job's stage, run k of n or step k of ~n, elapsed */
        char prog[160];
        session_progress_text(&t->s, prog, sizeof prog);
        tui_putf(g, 0, y, g->w, TA_REV | TA_BOLD, " %c working: %s%s%s   (%s)", spin[t->spin++ % 4],
                 t->busy_line, prog[0] ? ": " : "", prog, t->status[0] ? t->status : "Esc: cancel");
    } else if (t->status[0]) {
        tui_put(g, 0, y, g->w, TA_REV | TA_COLOR(TC_YELLOW), t->status);
    } else {
        tui_put(g, 0, y, g->w, TA_REV, tui_footer(t));
    }
}

static void tabs(Tui *t, int x, int y, int w)
{
    static const int order[] = {P_IR, P_GRAPH, P_KERNELS, P_FUSIONS, P_BISECT};
    int cx = x;
    for (int i = 0; i < 5; i++) {
        int p = order[i];
        int a = p == t->main_pane ? TA_BOLD | TA_REV : TA_DIM;
        cx += tui_putf(&t->grid, cx, y, x + w - cx, a, "%d %s", p + 1, names[p]);
        cx += tui_put(&t->grid, cx, y, x + w - cx, 0, " ");
    }
}

/* The help overlay: every row wrapped to the screen's width (nothing cut), scrolled by
 * Up/Down PgUp/PgDn Home/End, where it is shown at the top right. */
static void help(Tui *t)
{
    TuiGrid *g = &t->grid;
    int w = g->w, h = g->h - 2;
    int x = 0, y = 1;
    TuiLines l = {0};
    tui_help_lines(&l, w - 4);
    tui_fill(g, x, y, w, h, ' ', 0);
    tui_box(g, x, y, w, h, "help: keys and commands (Esc closes)", true);
    if (t->help_top > l.n - (h - 2)) t->help_top = l.n - (h - 2);
    if (t->help_top < 0) t->help_top = 0;
    for (int r = 0; r < h - 2 && t->help_top + r < l.n; r++)
        tui_put(g, x + 2, y + 1 + r, w - 4, l.v[t->help_top + r].attr, l.v[t->help_top + r].text);
    if (l.n > h - 2 && w > 50) {
        char pos[64];
        int end = t->help_top + h - 2 < l.n ? t->help_top + h - 2 : l.n;
        int n = snprintf(pos, sizeof pos, " rows %d-%d of %d, Up/Down PgUp/PgDn ", t->help_top + 1,
                         end, l.n);
        tui_put(g, x + w - n - 1, y + h - 1, n, TA_BOLD, pos);
    }
    tui_lines_reset(&l);
}

/* The left column's width on a screen w columns wide. */
static int left_width(int w)
{
    return w < 100 ? 34 : w < 140 ? 40 : 46;
}

/* The columns of text a pane's rows get (inside its box, after the selection mark). */
static int text_width(const Tui *t, int p)
{
    int w = t->grid.w;
    if (t->zoomed && (t->focus == p || (t->focus == t->main_pane && p == t->main_pane)))
        return w - 3;
    return (p == P_LOG                        ? w
            : p == P_PASSES || p == P_DETAILS ? left_width(w)
                                              : w - left_width(w)) -
           3;
}

static void build(Tui *t)
{
    tui_prof_sync(t);
    tui_bisect_sync(t);
    for (int p = 0; p < P_COUNT; p++)
        if (p != P_LOG && p != P_BISECT) tui_lines_reset(&t->lines[p]);
    tui_view_passes(t, &t->lines[P_PASSES]);
    if (t->main_pane == P_IR) tui_view_ir(t, &t->lines[P_IR], text_width(t, P_IR));
    if (t->main_pane == P_GRAPH) tui_view_graph(t, &t->lines[P_GRAPH]);
    if (t->main_pane == P_KERNELS) tui_view_kernels(t, &t->lines[P_KERNELS]);
    if (t->main_pane == P_FUSIONS) tui_view_fusions(t, &t->lines[P_FUSIONS]);
    /* the log and bisect panes show lists kept elsewhere: borrow them */
    t->lines[P_LOG] = t->log;
    t->lines[P_BISECT] = t->bisect;
    if (t->bisect.n == 0) {
        static char none[] = "(b runs the session's bisect; try --break F3)";
        static TuiLine one = {none, TA_DIM, -1};
        t->lines[P_BISECT] = (TuiLines){&one, 1, 1};
    }
    if (t->goto_kernel > 0 && t->main_pane == P_KERNELS) { /* the jump from "computed by" */
        for (int i = 0; i < t->lines[P_KERNELS].n; i++)
            if (t->lines[P_KERNELS].v[i].id == t->goto_kernel - 1) t->pane[P_KERNELS].sel = i;
        t->goto_kernel = 0;
    }
    /* follow the selection of the focused list into the details */
    int p = t->focus == P_DETAILS || t->focus == P_LOG || t->focus == P_PASSES ? -1 : t->focus;
    if (p >= 0 && t->lines[p].n) {
        int sel = t->pane[p].sel < t->lines[p].n ? t->pane[p].sel : t->lines[p].n - 1;
        if (sel < 0) sel = 0;
        int id = t->lines[p].v[sel].id;
        const Graph *g = t->s.pipe.nsnaps ? t->s.pipe.snaps[t->s.cursor].g : NULL;
        if ((p == P_IR || p == P_GRAPH) && g && id >= 0 && id < g->nnodes) {
            snprintf(t->sel_node, sizeof t->sel_node, "%s", g->nodes[id].name);
            t->sel_kernel = -1;
        } else if (p == P_KERNELS && id >= 0) {
            t->sel_kernel = id;
            t->sel_node[0] = 0;
        } else if (p == P_FUSIONS && t->s.pipe.g && id >= 0 && id < t->s.pipe.g->nfusions) {
            const Fusion *f = &t->s.pipe.g->fusions[id];
            snprintf(t->sel_node, sizeof t->sel_node, "%s", t->s.pipe.g->nodes[f->anchor].name);
            t->sel_kernel = -1;
        }
    }
    tui_view_details(t, &t->lines[P_DETAILS], text_width(t, P_DETAILS));
}

/* Below the smallest layout (TUI_MIN_W x TUI_MIN_H) only a message, never a broken frame. */
static bool too_small(Tui *t)
{
    TuiGrid *g = &t->grid;
    if (g->w >= TUI_MIN_W && g->h >= TUI_MIN_H) return false;
    char msg[96];
    snprintf(msg, sizeof msg, "terminal too small: %dx%d, needs %dx%d (q quits)", g->w, g->h,
             TUI_MIN_W, TUI_MIN_H);
    int n = (int)strlen(msg), y = g->h / 2;
    for (int i = 0; n > 0 && y < g->h; i++, y++) { /* wrapped to the width */
        tui_put(g, 0, y, g->w, TA_BOLD, msg + i * g->w);
        n -= g->w;
    }
    return true;
}

static const char *main_title(Tui *t, char *buf, size_t n)
{
    switch (t->main_pane) {
    case P_IR:
        return t->full_ir ? "graph text (d: diff)" : "changes (d: full)";
    case P_GRAPH:
        return tui_graph_title(t, buf, n);
    case P_KERNELS:
        if (t->prof_live) return "kernels, profiling: the rows fill in as measured (Esc cancels)";
        if (t->timeline)
            return t->nprof              ? "kernels: timeline of the profiled step (t: table)"
                   : tui_profile_kept(t) ? "kernels: timeline (profile stale: p)"
                                         : "kernels: timeline (p: profile)";
        return t->nprof              ? "kernels, profiled (s: sort, t: timeline)"
               : tui_profile_kept(t) ? "kernels (profile stale: p)"
                                     : "kernels (p: profile)";
    case P_FUSIONS:
        return "fusions (Space, z undo)";
    default:
        return t->bisect_live                            ? "bisect (running: the steps so far)"
               : !t->busy && session_bisect_stale(&t->s) ? "bisect (stale: b)"
                                                         : "bisect";
    }
}

/* The main pane (its tabs, then the list, the graph drawing, the timeline or the source view)
 * in the box at x, y, w, h. */
static void main_area(Tui *t, int x, int y, int w, int h)
{
    TuiGrid *g = &t->grid;
    if (t->src && tui_source_draw(t, x, y, w, h)) return;
    /* drawn first: the title says how (zoom, or the list instead of the drawing) */
    bool drawn = (t->main_pane == P_GRAPH && tui_graph_draw(t, x + 1, y + 2, w - 2, h - 3)) ||
                 (t->main_pane == P_KERNELS && t->timeline &&
                  tui_timeline_draw(t, x + 1, y + 2, w - 2, h - 3));
    char title[160];
    tui_box(g, x, y, w, h, main_title(t, title, sizeof title), t->focus == t->main_pane);
    tabs(t, x + 1, y + 1, w - 2);
    if (!drawn) draw_list(t, t->main_pane, x + 1, y + 2, w - 2, h - 3, y);
}

static const char *pane_title(int p)
{
    switch (p) {
    case P_PASSES:
        return "1 passes +-~ nodes, ms"; /* added, removed, rewritten; wall time */
    case P_DETAILS:
        return "8 details";
    default:
        return "7 log (each action as its --batch command)";
    }
}

void tui_render(Tui *t)
{
    TuiGrid *g = &t->grid;
    tui_grid_clear(g);
    if (too_small(t)) return;
    build(t);
    header(t);
    int body = g->h - 2;
    if (t->zoomed) { /* the focused pane alone (Z) */
        if (t->focus == t->main_pane)
            main_area(t, 0, 1, g->w, body);
        else
            pane(t, t->focus, 0, 1, g->w, body, pane_title(t->focus));
    } else {
        int logh = g->h <= 30 ? 6 : g->h / 5;
        int top = body - logh;
        int lw = left_width(g->w);
        int ph = t->lines[P_PASSES].n + 2;
        if (ph > top / 2 + 2 && top > 16) ph = top / 2 + 2;
        if (t->focus == P_DETAILS && top < 30) ph = 3; /* small screens: room for the details */
        if (ph > top - 3 && top > 6) ph = top - 3;     /* the details' title and a line at least */
        if (ph > top) ph = top;
        pane(t, P_PASSES, 0, 1, lw, ph, pane_title(P_PASSES));
        pane(t, P_DETAILS, 0, 1 + ph, lw, top - ph, pane_title(P_DETAILS));
        main_area(t, lw, 1, g->w - lw, top);
        pane(t, P_LOG, 0, 1 + top, g->w, logh, pane_title(P_LOG));
    }
    footer(t);
    if (t->help) help(t);
    t->lines[P_LOG] = (TuiLines){0};
    t->lines[P_BISECT] = (TuiLines){0};
}
