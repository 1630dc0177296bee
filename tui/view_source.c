/* The source view (key o on a selected kernel): Compiler Explorer's source -> assembly layout in
 * the main area, the kernel's GLSL on the left (generated, or the hand-written .comp with the
 * files it includes) and the SPIR-V disassembly on the right, each scrolled on its own: Up/Down
 * PgUp/PgDn Home End scroll the focused side, Left/Right (or Tab) pick the side, o or Esc close.
 * The text comes from app/kernel_source.h, the same that `source K` and `describe --source`
 * print; opening it logs that command. */
#include <stdlib.h>
#include <string.h>
#include "tui/internal.h"

typedef struct TuiSource {
    KernelSource ks;
    int kernel;
    int top[2]; /* first line shown: source, disassembly */
    int side;   /* 0 source, 1 disassembly */
} TuiSource;

static int count_lines(const char *s)
{
    int n = 0;
    for (; s && *s; s++)
        n += *s == '\n';
    return n + 1;
}

/* Line i of s (up to the newline) into buf. */
static const char *line_at(const char *s, int i, char *buf, size_t n)
{
    for (; s && *s && i > 0; s++)
        if (*s == '\n') i--;
    size_t k = 0;
    for (; s && *s && *s != '\n' && k + 1 < n; s++)
        buf[k++] = *s;
    buf[k] = 0;
    return buf;
}

void tui_source_close(Tui *t)
{
    if (!t->src) return;
    kernel_source_free(&t->src->ks);
    free(t->src);
    t->src = NULL;
}

void tui_source_open(Tui *t)
{
    const Plan *p = t->s.pipe.plan;
    if (!p || t->sel_kernel < 0 || t->sel_kernel >= p->nkernels) {
        snprintf(t->status, sizeof t->status, "o shows a kernel's source: select one in 4 kernels");
        return;
    }
    tui_source_close(t);
    TuiSource *s = calloc(1, sizeof *s);
    if (!s) return;
    DiagList d = {0};
    if (kernel_source_get(p, t->sel_kernel, &s->ks, &d) != ST_OK) {
        snprintf(t->status, sizeof t->status, "source: %s", d.count ? d.items[0].msg : "failed");
        diag_free(&d);
        free(s);
        return;
    }
    diag_free(&d);
    s->kernel = t->sel_kernel;
    t->src = s;
    tui_logf(t, TA_BOLD, "> source %d", s->kernel);
    tui_logf(t, 0, "%s", s->ks.title);
}

bool tui_source_key(Tui *t, int key)
{
    TuiSource *s = t->src;
    if (!s) return false;
    int page = t->grid.h / 2, *top = &s->top[s->side];
    int n = count_lines(s->side ? s->ks.disasm : s->ks.source);
    switch (key) {
    case 'o':
    case TK_ESC:
        tui_source_close(t);
        return true;
    case TK_LEFT:
    case TK_RIGHT:
    case TK_TAB:
    case TK_BTAB:
        s->side = !s->side;
        return true;
    case TK_UP:
    case 'k':
        (*top)--;
        break;
    case TK_DOWN:
    case 'j':
        (*top)++;
        break;
    case TK_PGUP:
        *top -= page;
        break;
    case TK_PGDN:
        *top += page;
        break;
    case TK_HOME:
        *top = 0;
        break;
    case TK_END:
        *top = n - 1;
        break;
    default:
        return false;
    }
    if (*top > n - 1) *top = n - 1;
    if (*top < 0) *top = 0;
    return true;
}

static void column(Tui *t, int x, int y, int w, int h, const char *title, const char *text, int top,
                   bool focused)
{
    tui_box(&t->grid, x, y, w, h, title, focused);
    int n = count_lines(text);
    char buf[1024];
    for (int r = 0; r < h - 2 && top + r < n; r++)
        tui_put(&t->grid, x + 1, y + 1 + r, w - 2, 0, line_at(text, top + r, buf, sizeof buf));
    if (w > 16) {
        char pos[32];
        int k = snprintf(pos, sizeof pos, " %d/%d ", top + 1, n);
        tui_put(&t->grid, x + w - k - 1, y, k, TA_DIM, pos);
    }
}

bool tui_source_draw(Tui *t, int x, int y, int w, int h)
{
    TuiSource *s = t->src;
    if (!s || w < 20 || h < 4) return false;
    tui_fill(&t->grid, x, y, w, h, ' ', 0);
    tui_put(&t->grid, x + 1, y, w - 2, TA_BOLD, s->ks.title);
    int lw = w / 2;
    column(t, x, y + 1, lw, h - 1, "source (GLSL)", s->ks.source, s->top[0], s->side == 0);
    char title[64];
    snprintf(title, sizeof title, "SPIR-V, %d words", s->ks.nwords);
    column(t, x + lw, y + 1, w - lw, h - 1, title, s->ks.disasm, s->top[1], s->side == 1);
    return true;
}
