/* The terminal: the only file that includes ncurses. Opens the screen, flushes the grid with
 * colours (none under NO_COLOR), and reads keys with a timeout (the spinner's tick). */
#define _XOPEN_SOURCE_EXTENDED 1
#include <curses.h>
#include <locale.h>
#include <stdlib.h>
#include "tui/internal.h"

int tui_term_open(bool *no_color)
{
    setlocale(LC_ALL, "");
    if (!initscr()) return -1;
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    curs_set(0);
    /* how long an ESC waits for the rest of an arrow key's sequence: 25 ms split arrows on a
     * loaded machine (or over ssh) into Esc, '[' (pass prev) and a letter; 100 ms still feels
     * immediate for Esc itself */
    set_escdelay(100);
    const char *nc = getenv("NO_COLOR");
    *no_color = (nc && *nc) || !has_colors();
    if (!*no_color) {
        start_color();
        use_default_colors();
        short map[7] = {-1,         COLOR_RED,     COLOR_GREEN, COLOR_YELLOW,
                        COLOR_BLUE, COLOR_MAGENTA, COLOR_CYAN};
        for (short i = 1; i < 7; i++)
            init_pair(i, map[i], -1);
    }
    return 0;
}

void tui_term_close(void)
{
    endwin();
}

void tui_term_size(int *w, int *h)
{
    getmaxyx(stdscr, *h, *w);
}

void tui_term_flush(const TuiGrid *g, bool no_color)
{
    for (int y = 0; y < g->h; y++) {
        move(y, 0);
        for (int x = 0; x < g->w; x++) {
            TuiCell c = g->c[y * g->w + x];
            attr_t a = 0;
            if (c.attr & TA_DIM) a |= A_DIM;
            if (c.attr & TA_BOLD) a |= A_BOLD;
            if (c.attr & TA_REV) a |= A_REVERSE;
            if (!no_color && TA_GETCOLOR(c.attr)) a |= COLOR_PAIR(TA_GETCOLOR(c.attr));
            if (y == g->h - 1 && x == g->w - 1) break; /* writing the last cell scrolls */
            addch((chtype)(unsigned char)c.ch | a);
        }
    }
    refresh();
}

int tui_term_key(int timeout_ms)
{
    timeout(timeout_ms);
    int k = getch();
    switch (k) {
    case ERR:
        return TK_NONE;
    case KEY_LEFT:
        return TK_LEFT;
    case KEY_RIGHT:
        return TK_RIGHT;
    case KEY_UP:
        return TK_UP;
    case KEY_DOWN:
        return TK_DOWN;
    case KEY_PPAGE:
        return TK_PGUP;
    case KEY_NPAGE:
        return TK_PGDN;
    case KEY_HOME:
        return TK_HOME;
    case KEY_END:
        return TK_END;
    case KEY_BACKSPACE:
    case 127:
    case 8:
        return TK_BS;
    case KEY_F(1):
        return TK_F1;
    case KEY_RESIZE:
        return TK_RESIZE;
    case KEY_BTAB:
        return TK_BTAB;
    case KEY_ENTER:
    case '\r':
        return TK_ENTER;
    default:
        return k >= 0 && k < 0x100 ? k : TK_NONE;
    }
}
