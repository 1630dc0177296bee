/* The character grid every view draws into, and the line lists the list views fill. The grid is
 * what term.c flushes to ncurses and what headless runs dump as text, so a golden screen is
 * exactly what a person sees (less the colours). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "common/grow.h"
#include "tui/internal.h"

void tui_grid_resize(TuiGrid *g, int w, int h)
{
    if (w < 1) w = 1;
    if (h < 1) h = 1;
    if (w != g->w || h != g->h || !g->c) {
        free(g->c);
        g->c = calloc((size_t)w * (size_t)h, sizeof *g->c);
        g->w = g->c ? w : 0;
        g->h = g->c ? h : 0;
    }
    tui_grid_clear(g);
}

void tui_grid_free(TuiGrid *g)
{
    free(g->c);
    memset(g, 0, sizeof *g);
}

void tui_grid_clear(TuiGrid *g)
{
    for (int i = 0; i < g->w * g->h; i++)
        g->c[i] = (TuiCell){' ', 0};
}

/* Writes at most maxw characters of s (non-printables as '?'); returns how many. */
int tui_put(TuiGrid *g, int x, int y, int maxw, int attr, const char *s)
{
    if (y < 0 || y >= g->h) return 0;
    int n = 0;
    for (; s && *s && n < maxw && x + n < g->w; s++, n++) {
        if (x + n < 0) continue;
        char ch = (unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7f ? *s : '?';
        if (*s == '\t') ch = ' ';
        g->c[y * g->w + x + n] = (TuiCell){ch, (unsigned char)attr};
    }
    return n;
}

int tui_putf(TuiGrid *g, int x, int y, int maxw, int attr, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return tui_put(g, x, y, maxw, attr, buf);
}

void tui_fill(TuiGrid *g, int x, int y, int w, int h, char ch, int attr)
{
    for (int r = y; r < y + h; r++)
        for (int c = x; c < x + w; c++)
            if (r >= 0 && r < g->h && c >= 0 && c < g->w)
                g->c[r * g->w + c] = (TuiCell){ch, (unsigned char)attr};
}

void tui_box(TuiGrid *g, int x, int y, int w, int h, const char *title, bool focused)
{
    int a = focused ? TA_BOLD | TA_COLOR(TC_CYAN) : TA_DIM;
    tui_fill(g, x, y, w, 1, '-', a);
    tui_fill(g, x, y + h - 1, w, 1, '-', a);
    tui_fill(g, x, y, 1, h, '|', a);
    tui_fill(g, x + w - 1, y, 1, h, '|', a);
    tui_fill(g, x, y, 1, 1, '+', a);
    tui_fill(g, x + w - 1, y, 1, 1, '+', a);
    tui_fill(g, x, y + h - 1, 1, 1, '+', a);
    tui_fill(g, x + w - 1, y + h - 1, 1, 1, '+', a);
    if (title && w > 6) tui_putf(g, x + 2, y, w - 4, a | TA_BOLD, focused ? "[%s]" : " %s ", title);
}

void tui_grid_dump(const TuiGrid *g, FILE *f)
{
    for (int y = 0; y < g->h; y++) {
        int end = g->w;
        while (end > 0 && g->c[y * g->w + end - 1].ch == ' ')
            end--;
        for (int x = 0; x < end; x++)
            fputc(g->c[y * g->w + x].ch, f);
        fputc('\n', f);
    }
}

static void add(TuiLines *l, int attr, int id, char *text)
{
    if (!text) return;
    TuiLine *v = grow_array(l->v, l->n, &l->cap, sizeof *v, 64);
    if (!v) {
        free(text);
        return;
    }
    l->v = v;
    l->v[l->n++] = (TuiLine){text, attr, id};
}

void tui_lines_add(TuiLines *l, int attr, int id, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    add(l, attr, id, strdup(buf));
}

void tui_lines_text(TuiLines *l, int attr, const char *text)
{
    for (const char *p = text; p && *p;) {
        size_t n = strcspn(p, "\n");
        char *s = malloc(n + 1);
        if (s) {
            memcpy(s, p, n);
            s[n] = 0;
        }
        add(l, attr, -1, s);
        p += n;
        if (*p) p++;
    }
}

void tui_lines_wrap(TuiLines *l, int attr, int id, const char *head, int indent, int width,
                    const char *text)
{
    char line[2048];
    int hl = (int)strlen(head);
    snprintf(line, sizeof line, "%s%*s", head, hl < indent ? indent - hl : 0, "");
    if (hl > indent && text && *text) { /* the head overflows its column: text on the next row */
        tui_lines_wrap(l, attr, id, "", 0, width, head);
        snprintf(line, sizeof line, "%*s", indent, "");
    }
    int room = width - indent > 8 ? width - indent : 8; /* at least some words per row */
    for (const char *p = text ? text : ""; *p;) {
        while (*p == ' ')
            p++;
        int n = (int)strlen(p);
        if (n > room) { /* the last blank that fits (a double blank, which parts pairs such as
                         * "p profile", in the room's second half first), else the word is cut */
            int cut = room, pair = room;
            while (cut > 0 && p[cut] != ' ')
                cut--;
            while (pair > room / 2 && !(p[pair] == ' ' && p[pair - 1] == ' '))
                pair--;
            n = pair > room / 2 ? pair : cut > 0 ? cut : room;
        }
        size_t u = strlen(line);
        snprintf(line + u, sizeof line - u, "%.*s", n, p);
        tui_lines_add(l, attr, id, "%s", line);
        snprintf(line, sizeof line, "%*s", indent, "");
        p += n;
    }
    if ((!text || !*text) && hl <= width)
        tui_lines_add(l, attr, id, "%s", head);
    else if (!text || !*text)
        tui_lines_wrap(l, attr, id, "", 0, width, head);
}

void tui_lines_reset(TuiLines *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->v[i].text);
    free(l->v);
    memset(l, 0, sizeof *l);
}
