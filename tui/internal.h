/* Shared by the files of tui/ only: the explorer state (views over one Session), the character
 * grid every view draws into (flushed to ncurses by term.c or dumped as text when headless), the
 * line lists the list views build each frame, and the prototypes between the tui files. */
#ifndef NPU_TUI_INTERNAL_H
#define NPU_TUI_INTERNAL_H

#include <stdbool.h>
#include <stdio.h>
#include "app/attrib.h"
#include "app/kernel_source.h"
#include "app/session.h"
#include "compiler/plan.h"
#include "viz/viz.h"

/* cell attributes: low bits are styles, bits 3..5 a colour */
enum { TA_DIM = 1, TA_BOLD = 2, TA_REV = 4 };
#define TA_COLOR(c) ((c) << 3)
enum { TC_RED = 1, TC_GREEN, TC_YELLOW, TC_BLUE, TC_MAGENTA, TC_CYAN };
#define TA_GETCOLOR(a) (((a) >> 3) & 7)

typedef struct TuiCell {
    char ch;
    unsigned char attr;
} TuiCell;

typedef struct TuiGrid {
    int w, h;
    TuiCell *c; /* [w*h], owned */
} TuiGrid;

typedef struct TuiLine {
    char *text; /* owned */
    int attr;
    int id; /* the entity the row stands for (pass, node, kernel, fusion), -1 none */
} TuiLine;

typedef struct TuiLines {
    TuiLine *v;
    int n, cap;
} TuiLines;

/* keys: printable ASCII as themselves, the rest from here */
enum {
    TK_NONE = -1,
    TK_ESC = 27,
    TK_ENTER = '\n',
    TK_TAB = '\t',
    TK_LEFT = 0x100,
    TK_RIGHT,
    TK_UP,
    TK_DOWN,
    TK_PGUP,
    TK_PGDN,
    TK_HOME,
    TK_END,
    TK_BS,
    TK_F1,
    TK_RESIZE,
    TK_BTAB,
    TK_CTRL_U = 21, /* clears the prompt line */
    TK_DUMP,        /* headless script only: write the screen */
};

typedef enum TuiPaneId {
    P_PASSES,
    P_IR,
    P_GRAPH,
    P_KERNELS,
    P_FUSIONS,
    P_BISECT,
    P_LOG,
    P_DETAILS,
    P_COUNT
} TuiPaneId;

typedef struct TuiPane {
    int sel, top;
    int left; /* first column shown (< and > scroll sideways) */
} TuiPane;

typedef struct TuiProfRow {
    int index;        /* kernel index; for a transfer its index among the transfers */
    bool xfer;        /* a transfer between partitions (profile's "transfer" lines): `kernel`
                       * holds the direction, `from` the tensor and cast, gpu_us the time */
    int first_kernel; /* transfer: the kernel it runs before (its partition's first) */
    char kernel[32], target[8], fusion[16], output[96], from[160], verdict[16];
    double gpu_us, cpu_us, rel_l2, speedup;  /* rel_l2 -1: none (an argmax's: its rows say it) */
    long long am_rows, am_differ, am_beyond; /* an argmax kernel's rows (am_rows 0: not one) */
    bool pending; /* a running profile's row whose error is still to come */
} TuiProfRow;

#define TUI_MAX_UNDO 128
#define TUI_HIST 32  /* `:` prompt lines remembered */
#define TUI_MIN_W 40 /* the smallest screen the layout fits; below it a message */
#define TUI_MIN_H 12
#define TUI_LOG_MAX 20000      /* log lines kept (whole outputs; the oldest dropped first) */
#define TUI_GRAPH_MAX_DRAW 300 /* live nodes: larger graphs keep the node list */

typedef struct TuiGraphView TuiGraphView; /* view_graph.c: layout cache, zoom, pan, colours */
typedef struct TuiSource TuiSource;       /* view_source.c: a kernel's source and SPIR-V */

typedef struct Tui {
    Session s;
    TuiGrid grid;
    TuiPane pane[P_COUNT];
    TuiLines lines[P_COUNT]; /* rebuilt every frame */
    int focus, main_pane;
    bool hide_unchanged, full_ir, help, stable, no_color, quit, headless;
    bool timeline;     /* the kernels pane draws the profiled step as a timeline (t) */
    int tl_zoom;       /* the timeline's zoom: 2^tl_zoom x the whole step across the pane */
    bool confirm_quit; /* q asked "quit?": the next key answers */
    bool prompting, searching;
    char input[512];
    int input_len;
    char search[512];
    char hist[TUI_HIST][512]; /* the `:` lines run, oldest first (Up/Down in the prompt) */
    int nhist, hist_at;       /* hist_at: the line shown while browsing, nhist: a new one */
    char status[600];
    char verdict[64];
    unsigned verdict_gen; /* the plan generation the verdict is about */
    char undo_id[TUI_MAX_UNDO][32];
    bool undo_was_on[TUI_MAX_UNDO];
    int nundo;
    TuiProfRow *prof; /* the session's profile of its current plan (tui_prof_sync), else none */
    int nprof, sort_col;
    unsigned prof_gen, prof_seq; /* the session's gen and prof_seq t->prof was built from */
    char prof_summary[256];
    TuiLines bisect; /* the session's last bisect, as lines (tui_bisect_sync) */
    unsigned bisect_gen, bisect_seq;
    /* a job on the worker thread (interactive runs): the frame is drawn meanwhile from what
     * the job leaves alone; t->prof and t->bisect then hold its rows and steps so far */
    const Command *busy; /* the job's command row, NULL: none */
    const char *busy_line;
    bool prof_kept;              /* the session kept a profile when the job started */
    bool prof_live, bisect_live; /* t->prof / t->bisect hold a running job's rows so far */
    unsigned live_seq;           /* the session's live_seq they were built from */
    bool zoomed;                 /* the focused pane takes the whole body (Z) */
    TuiLines log;                /* each action as its batch command, then its output */
    char sel_node[256];
    int sel_kernel;  /* plan kernel index, -1 */
    int goto_kernel; /* kernel + 1 to select in pane 4 at the next frame (Enter on "computed by
                      * kernel N"), 0: none */
    int jump_back;   /* pane + 1 that Esc in pane 4 returns to after that jump, 0: none */
    int spin, help_top;
    char dot_file[256];
    TuiGraphView *gv;    /* owned; NULL until the graph pane is first shown */
    bool graph_sync;     /* focus just moved to the graph: select the IR/kernel selection's node */
    const char *keys_at; /* headless: the key script's cursor (Esc typed ahead cancels work) */
    TuiSource *src;      /* the source view (o), NULL when closed; owned */
} Tui;

/* grid.c */
void tui_grid_resize(TuiGrid *g, int w, int h);
void tui_grid_free(TuiGrid *g);
void tui_grid_clear(TuiGrid *g);
int tui_put(TuiGrid *g, int x, int y, int maxw, int attr, const char *s);
int tui_putf(TuiGrid *g, int x, int y, int maxw, int attr, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
void tui_fill(TuiGrid *g, int x, int y, int w, int h, char ch, int attr);
void tui_box(TuiGrid *g, int x, int y, int w, int h, const char *title, bool focused);
void tui_grid_dump(const TuiGrid *g, FILE *f);
void tui_lines_add(TuiLines *l, int attr, int id, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void tui_lines_text(TuiLines *l, int attr, const char *text); /* one row per text line */
/* `head` (padded to `indent` columns; longer: a row of its own), then `text` word-wrapped to
 * `width` columns (at a double blank when one falls in a row's second half), its continuation
 * rows indented by `indent`. */
void tui_lines_wrap(TuiLines *l, int attr, int id, const char *head, int indent, int width,
                    const char *text);
void tui_lines_reset(TuiLines *l);

/* term.c: the only file that includes ncurses */
int tui_term_open(bool *no_color);
void tui_term_close(void);
void tui_term_size(int *w, int *h);
void tui_term_flush(const TuiGrid *g, bool no_color);
int tui_term_key(int timeout_ms);

/* exec.c */
Status tui_exec(Tui *t, const char *line, bool json, char **out);
void tui_logf(Tui *t, int attr, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Sets the header's verdict, about the current plan (shown as of an earlier one after a change). */
void tui_verdict(Tui *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tui_profile(Tui *t);
void tui_bisect(Tui *t);
/* Rebuild the kernels table / bisect lines from the session's data when it changed. */
void tui_prof_sync(Tui *t);
void tui_bisect_sync(Tui *t);
/* The session's profile of this plan for the views (NULL while a job runs: it may replace it). */
const ProfileResult *tui_profile_result(const Tui *t);
/* Does the session keep a profile (maybe of an earlier plan)? */
bool tui_profile_kept(const Tui *t);
/* Is the running job the session command `name`? */
bool tui_busy_with(const Tui *t, const char *name);
void tui_verify(Tui *t);
/* T: `tune K` of the selected kernel (pane 4); its table goes to the log. */
void tui_tune(Tui *t);
void tui_toggle_fusion(Tui *t, int fusion);
void tui_undo(Tui *t);
int tui_next_key(Tui *t);

/* main.c: frees everything of a Tui but its session */
void tui_free_views(Tui *t);

/* keys.c */
void tui_key(Tui *t, int key);
/* A key typed while a job runs: acts when it touches only the UI (scroll, focus, help, search,
 * zoom); false: dropped. */
bool tui_key_ui(Tui *t, int key);
int tui_script_key(const char **p, int *w, int *h);
/* The help screen's rows for a width: the actions (keys, command, what), then the session's
 * commands, the text wrapped to the width. */
void tui_help_lines(TuiLines *out, int width);
const char *tui_footer(const Tui *t);
/* The main keys in one line, from the actions table ("Left/Right pass  Enter details ..."). */
const char *tui_keys_hint(void);

/* layout.c */
void tui_render(Tui *t);
const char *tui_pane_name(int p);

/* views: each fills lines for its pane */
void tui_view_passes(Tui *t, TuiLines *out);
/* The IR pane's rows (width: the columns they get: the summary when a pass changed nothing
 * wraps to it). */
void tui_view_ir(Tui *t, TuiLines *out, int width);
void tui_view_graph(Tui *t, TuiLines *out);
/* view_graph.c: the drawing of the graph pane (false: show the node list instead) */
bool tui_graph_draw(Tui *t, int x, int y, int w, int h);
const char *tui_graph_title(const Tui *t, char *buf, size_t n);
bool tui_graph_key(Tui *t, int key);   /* true when the graph pane used the key */
bool tui_graph_key_hint(const Tui *t); /* the drawing is shown: arrows pan */
void tui_graph_free(Tui *t);
/* graph_draw.c: paints a laid-out graph into the grid (view in points: scale, origin) */
typedef struct TuiGraphPaint {
    const VizLayout *l;
    const Graph *g;      /* the graph laid out */
    int x, y, w, h;      /* the pane's cells */
    double sx, sy;       /* points per cell */
    double ox, oy;       /* the point at the pane's top-left cell */
    int sel_box;         /* box drawn reversed, -1 */
    const int *box_attr; /* [nbox] colours */
    bool shapes;         /* label the edges with their tensors' shapes where there is room */
} TuiGraphPaint;
void tui_graph_paint(Tui *t, const TuiGraphPaint *p);
/* The overview map at x, y (the top right corner of a pane of pw x ph cells): the whole
 * drawing small (a node a cell), p's viewport marked. */
void tui_graph_map(Tui *t, const TuiGraphPaint *p, int x, int y, int pw, int ph);
int tui_graph_map_width(const VizLayout *l, int pw, int ph); /* the columns it takes, 0: none */
void tui_view_kernels(Tui *t, TuiLines *out);
/* view_timeline.c: the kernels pane as a timeline of the profiled step (false: no profile of
 * this plan, the table shows instead); +/- zoom */
bool tui_timeline_draw(Tui *t, int x, int y, int w, int h);
void tui_timeline_zoom(Tui *t, int dir);
/* view_source.c: the selected kernel's source and SPIR-V side by side in the main area */
void tui_source_open(Tui *t);
void tui_source_close(Tui *t);
bool tui_source_key(Tui *t, int key); /* true when the open source view used the key */
bool tui_source_draw(Tui *t, int x, int y, int w, int h);
void tui_view_fusions(Tui *t, TuiLines *out);
/* The details of the selection (a node, a kernel; the pass when the passes pane is focused),
 * long lines wrapped to width. */
void tui_view_details(Tui *t, TuiLines *out, int width);
void tui_kernel_of_node(const Tui *t, const char *node, int *kernel);
#define TUI_MAX_BREAKS 8
/* Where the session's --break ids land in its plan (app/attrib.h); how many. */
int tui_breaks(const Tui *t, BreakSite *out);
/* A corrupt kernel's row text ("--break F8: rewrites kernel 12's output add_6"); false when k
 * is none of the sites' corrupt kernels. */
bool tui_break_row(const BreakSite *b, int nb, int k, const Plan *p, char *buf, size_t n);
/* The banner's text for them: "BREAK F8 in kernel 12 (F9)". */
void tui_break_banner(const Tui *t, char *buf, size_t n);
const TuiProfRow *tui_prof_row(const Tui *t, int kernel);
const char *tui_ms(const Tui *t, double ms, char *buf, size_t n);

#endif
