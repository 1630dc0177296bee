/* Keys: one actions table drives the key bindings, the help screen, the footer of each pane,
 * the first screen's hint of the main keys, which keys act while a job runs, and the `:`
 * prompt's words (an action's `cmd` typed at the prompt runs the action itself, so `:profile`
 * fills the kernels table as p does); other `:` lines run as session commands. The graph
 * drawing and the source view take their pan/scroll keys themselves (view_graph.c,
 * view_source.c); their help and footers are rows of the table too. Also the `:` prompt and `/`
 * search line editing, and the headless key-script reader. */
#include <stdlib.h>
#include <string.h>
#include "tui/internal.h"

static TuiLines *lines(Tui *t, int p)
{
    return p == P_LOG ? &t->log : p == P_BISECT ? &t->bisect : &t->lines[p];
}

static void focus(Tui *t, int p)
{
    if (p == P_GRAPH && t->focus != P_GRAPH) t->graph_sync = true;
    t->focus = p;
    if (p >= P_IR && p <= P_BISECT) t->main_pane = p;
}

static void search(Tui *t, int dir)
{
    TuiLines *l = lines(t, t->focus);
    if (!t->search[0] || !l->n) return;
    int start = t->pane[t->focus].sel;
    for (int k = 1; k <= l->n; k++) {
        int i = ((start + dir * k) % l->n + l->n) % l->n;
        if (strstr(l->v[i].text, t->search)) {
            t->pane[t->focus].sel = i;
            return;
        }
    }
    snprintf(t->status, sizeof t->status, "not found: %s", t->search);
}

static void goto_pass(Tui *t, int i)
{
    char line[32];
    snprintf(line, sizeof line, "pass goto %d", i);
    tui_exec(t, line, false, NULL);
}

static void move(Tui *t, int delta, bool abs)
{
    if (t->focus == P_PASSES) {
        TuiLines *l = &t->lines[P_PASSES];
        int r = abs ? delta : t->pane[P_PASSES].sel + delta;
        if (r >= l->n) r = l->n - 1;
        if (r < 0) r = 0;
        if (l->n && l->v[r].id != t->s.cursor) goto_pass(t, l->v[r].id);
        return;
    }
    TuiPane *p = &t->pane[t->focus];
    p->sel = abs ? delta : p->sel + delta;
    int n = lines(t, t->focus)->n;
    if (p->sel >= n) p->sel = n - 1;
    if (p->sel < 0) p->sel = 0;
}

static int selected_id(Tui *t)
{
    TuiLines *l = lines(t, t->focus);
    int s = t->pane[t->focus].sel;
    return s >= 0 && s < l->n ? l->v[s].id : -1;
}

/* q: quits, or asks first when results held only in this session would be lost. */
static void ask_quit(Tui *t)
{
    if (!t->s.prof.have && !t->s.bisect.have) {
        t->quit = true;
        return;
    }
    t->confirm_quit = true;
    snprintf(t->status, sizeof t->status,
             "quit? the %s%s%s would be lost: q or y quits, any other key stays",
             t->s.prof.have ? "profile" : "", t->s.prof.have && t->s.bisect.have ? " and " : "",
             t->s.bisect.have ? "bisect" : "");
}

/* Esc outside overlays: back to where Enter on "computed by kernel N" jumped from, or to the
 * main pane from details or the log; never quits. */
static void back_out(Tui *t)
{
    if (t->zoomed)
        t->zoomed = false;                                /* the zoomed pane back in its place */
    else if (t->focus == P_KERNELS && t->jump_back > 0) { /* back from "computed by kernel N" */
        focus(t, t->jump_back - 1);
        t->jump_back = 0;
    } else if (t->focus == P_DETAILS || t->focus == P_LOG)
        focus(t, t->main_pane);
    else
        snprintf(t->status, sizeof t->status, "Esc backs out of help, prompts and panes; q quits");
}

static void a_help(Tui *t, int key)
{
    (void)key;
    t->help = true;
    t->help_top = 0;
}

static void a_quit(Tui *t, int key)
{
    (void)key;
    ask_quit(t);
}

static void a_zoom_pane(Tui *t, int key)
{
    (void)key;
    t->zoomed = !t->zoomed;
}

static void a_back(Tui *t, int key)
{
    (void)key;
    back_out(t);
}

static void a_focus(Tui *t, int key)
{
    if (key != TK_TAB) {
        focus(t, key - '1');
        return;
    }
    static const int ring[] = {P_PASSES, -1, P_DETAILS, P_LOG};
    int i = 0;
    while (i < 4 && (ring[i] == -1 ? t->focus != t->main_pane : ring[i] != t->focus))
        i++;
    int nx = ring[(i + 1) % 4];
    focus(t, nx < 0 ? t->main_pane : nx);
}

static void a_pass(Tui *t, int key)
{
    tui_exec(t, key == TK_LEFT || key == '[' ? "pass prev" : "pass next", false, NULL);
}

static void a_move(Tui *t, int key)
{
    int page = t->grid.h / 2;
    switch (key) {
    case TK_UP:
    case 'k':
        move(t, -1, false);
        break;
    case TK_DOWN:
    case 'j':
        move(t, 1, false);
        break;
    case TK_PGUP:
        move(t, -page, false);
        break;
    case TK_PGDN:
        move(t, page, false);
        break;
    case TK_HOME:
        move(t, 0, true);
        break;
    default:
        move(t, 1 << 30, true);
        break;
    }
}

static void a_enter(Tui *t, int key)
{
    (void)key;
    int id = selected_id(t);
    if (t->focus == P_DETAILS && id >= 0 && t->sel_kernel < 0) { /* "computed by kernel N" */
        t->jump_back = t->main_pane + 1;
        t->goto_kernel = id + 1;
        t->pane[P_DETAILS] = (TuiPane){0, 0, 0}; /* the kernel's details from their top */
        focus(t, P_KERNELS);
    } else if (t->focus == P_PASSES) {
        focus(t, P_IR);
    } else if (t->focus != P_LOG && t->focus != P_DETAILS) {
        focus(t, P_DETAILS);
    }
}

static void a_toggle(Tui *t, int key)
{
    (void)key;
    if (t->main_pane == P_FUSIONS && t->focus == P_FUSIONS)
        tui_toggle_fusion(t, selected_id(t));
    else
        snprintf(t->status, sizeof t->status, "Space toggles a fusion in pane 5");
}

static void a_undo(Tui *t, int key)
{
    (void)key;
    tui_undo(t);
}

static void a_diff(Tui *t, int key)
{
    (void)key;
    t->full_ir = !t->full_ir;
    focus(t, P_IR);
}

static void a_hide(Tui *t, int key)
{
    (void)key;
    t->hide_unchanged = !t->hide_unchanged;
}

static void a_sort(Tui *t, int key)
{
    (void)key;
    t->sort_col = (t->sort_col + 1) % 5;
}

static void a_timeline(Tui *t, int key)
{
    (void)key;
    t->timeline = !t->timeline;
    focus(t, P_KERNELS);
    if (t->timeline && !tui_profile_result(t))
        snprintf(t->status, sizeof t->status, "timeline: %s",
                 tui_profile_kept(t) ? "the profile measured an earlier plan: p profiles this one"
                                     : "p profiles the plan, then the timeline shows it");
}

static void a_zoom(Tui *t, int key)
{
    if (t->focus == P_KERNELS && t->timeline)
        tui_timeline_zoom(t, key == '-' ? -1 : 1);
    else
        snprintf(t->status, sizeof t->status,
                 "+ - zoom the timeline (4, t) and the graph drawing (3)");
}

static void a_verify(Tui *t, int key)
{
    (void)key;
    tui_verify(t);
}

static void a_profile(Tui *t, int key)
{
    (void)key;
    tui_profile(t);
}

static void a_tune(Tui *t, int key)
{
    (void)key;
    tui_tune(t);
}

static void a_bisect(Tui *t, int key)
{
    (void)key;
    tui_bisect(t);
}

static void a_source(Tui *t, int key)
{
    (void)key;
    tui_source_open(t);
}

static void a_dot(Tui *t, int key)
{
    (void)key;
    char line[300];
    snprintf(t->dot_file, sizeof t->dot_file, "npu-explore-%s.svg",
             t->s.pipe.snaps[t->s.cursor].pass);
    snprintf(line, sizeof line, "dot %s", t->dot_file);
    if (tui_exec(t, line, false, NULL) == ST_OK)
        snprintf(t->status, sizeof t->status, "wrote %s", t->dot_file);
}

static void a_sideways(Tui *t, int key)
{
    TuiPane *p = &t->pane[t->focus];
    p->left += key == '>' ? 8 : -8; /* draw_list keeps it within the widest line shown */
    if (p->left < 0) p->left = 0;
}

static void a_prompt(Tui *t, int key)
{
    t->prompting = key == ':';
    t->searching = key == '/';
    t->input_len = 0;
    t->input[0] = 0;
    t->hist_at = t->nhist;
}

static void a_next(Tui *t, int key)
{
    search(t, key == 'n' ? 1 : -1);
}

/* the panes whose footer shows an action, and the views that own their keys */
#define PB(p) (1u << (p))
#define ALL_PANES (PB(P_COUNT) - 1)
#define V_GRAPH PB(P_COUNT)      /* the graph pane's drawing (view_graph.c takes these keys) */
#define V_SOURCE PB(P_COUNT + 1) /* the source view (view_source.c) */

/* One row per user action: the keys (as help shows them, and their codes), the footer's key
 * and word, the command it runs or the prompt word that runs it, help, the panes (and views)
 * whose footer shows it (in table order: help, quit and zoom first, so a narrow footer keeps
 * them), what it does, and whether it only touches the UI. Rows without codes are the keys a
 * view owns: their help and footer. */
typedef struct Action {
    const char *keys;
    int code[12];             /* 0-terminated */
    const char *fkey, *label; /* footer: "p profile"; NULL: not in footers */
    const char *cmd; /* the session command it runs ("-" none); a bare word here also runs the
                      * action from the `:` prompt */
    const char *help;
    unsigned panes;
    void (*fn)(Tui *t, int key);
    bool ui; /* acts on the UI alone (runs while a job does: tui_key_ui) */
} Action;

static const Action actions[] = {
    {"?  F1",
     {'?', TK_F1},
     "?",
     "help",
     "help",
     "this help (keys, then every session command; Up/Down PgUp/PgDn Home/End scroll it)",
     ALL_PANES,
     a_help,
     true},
    {"q",
     {'q'},
     "q",
     "quit",
     "quit",
     "quit (asks first when a profile or bisect would be lost)",
     ALL_PANES,
     a_quit,
     false},
    {"Z",
     {'Z'},
     "Z",
     "full",
     "zoom",
     "zoom: the focused pane takes the whole screen, as tmux's zoom (Z or Esc restores; focusing "
     "another pane zooms that one)",
     ALL_PANES,
     a_zoom_pane,
     true},
    {"Space",
     {' '},
     "Space",
     "toggle",
     "fusion off|on ID",
     "toggle the selected fusion instance (pane 5)",
     PB(P_FUSIONS),
     a_toggle,
     false},
    {"z",
     {'z'},
     "z",
     "undo",
     "fusion on|off ID",
     "undo the last toggle",
     PB(P_FUSIONS),
     a_undo,
     false},
    {"o",
     {'o'},
     "o",
     "source",
     "source K",
     "the selected kernel's source and SPIR-V side by side (o/Esc close)",
     PB(P_KERNELS),
     a_source,
     false},
    {"p",
     {'p'},
     "p",
     "profile",
     "profile",
     "profile every kernel of the plan (profile 5: GPU, CPU reference, error; the rows fill in as "
     "measured)",
     PB(P_KERNELS),
     a_profile,
     false},
    {"s",
     {'s'},
     "s",
     "sort",
     "-",
     "sort the profiled kernels by the next column",
     PB(P_KERNELS),
     a_sort,
     true},
    {"t",
     {'t'},
     "t",
     "timeline",
     "timeline",
     "the profiled step as a timeline: kernels by level on lanes, bars scaled to GPU time (t: the "
     "table again)",
     PB(P_KERNELS),
     a_timeline,
     true},
    {"+ -",
     {'+', '=', '-'},
     "+/-",
     "zoom",
     "-",
     "zoom the timeline around the selected kernel, or the graph drawing",
     V_GRAPH,
     a_zoom,
     true},
    {"b",
     {'b'},
     "b",
     "bisect",
     "bisect",
     "find the fusion that breaks the outputs (the steps show as they are judged)",
     PB(P_FUSIONS) | PB(P_BISECT),
     a_bisect,
     false},
    {"v",
     {'v'},
     "v",
     "verify",
     "check",
     "verify: run and compare the outputs with the reference",
     PB(P_KERNELS) | PB(P_FUSIONS),
     a_verify,
     false},
    {"T",
     {'T'},
     "T",
     "tune",
     "tune K",
     "tune the selected kernel: search its knobs on the device, each configuration timed alone "
     "and checked against the defaults; the winner is cached and the plan compiled with it",
     PB(P_KERNELS),
     a_tune,
     false},
    {"d",
     {'d'},
     "d",
     "diff/full",
     "pass show / dump",
     "changes of the pass vs the full graph after it",
     PB(P_IR),
     a_diff,
     true},
    {"h",
     {'h'},
     "h",
     "hide",
     "-",
     "hide / show passes that changed nothing",
     PB(P_PASSES),
     a_hide,
     true},
    {"Left Right  [ ]",
     {TK_LEFT, TK_RIGHT, '[', ']'},
     "Left/Right",
     "pass",
     "pass prev / pass next",
     "previous / next pass ([ ] also in the drawn graph)",
     PB(P_PASSES) | PB(P_IR) | PB(P_GRAPH),
     a_pass,
     false},
    {"Up Down PgUp PgDn Home End",
     {TK_UP, TK_DOWN, TK_PGUP, TK_PGDN, TK_HOME, TK_END, 'k', 'j'},
     "Up/Dn",
     "move",
     "-",
     "move, also k j (in passes: pass goto N)",
     PB(P_PASSES) | PB(P_GRAPH) | PB(P_BISECT) | PB(P_LOG),
     a_move,
     true},
    {"Enter",
     {TK_ENTER},
     "Enter",
     "details",
     "pass goto N",
     "drill in: a pass opens its changes, a row its details; on \"computed by kernel N\" go there "
     "(Esc back)",
     PB(P_PASSES) | PB(P_IR) | PB(P_GRAPH) | PB(P_KERNELS) | PB(P_FUSIONS),
     a_enter,
     true},
    {"g",
     {'g'},
     "g",
     "svg",
     "dot npu-explore-PASS.svg",
     "render the current pass's graph with Graphviz",
     PB(P_IR) | PB(P_GRAPH),
     a_dot,
     false},
    {"<  >",
     {'<', '>'},
     "<>",
     "sideways",
     "-",
     "scroll the focused pane sideways, 8 columns (long lines are cut, not wrapped)",
     PB(P_IR) | PB(P_KERNELS) | PB(P_BISECT) | PB(P_LOG) | PB(P_DETAILS),
     a_sideways,
     true},
    {"/  n  N",
     {'/'},
     "/",
     "search",
     "-",
     "search the focused pane, next, previous",
     PB(P_IR) | PB(P_GRAPH) | PB(P_KERNELS) | PB(P_LOG),
     a_prompt,
     true},
    {"", {'n', 'N'}, NULL, NULL, "-", NULL, 0, a_next, true},
    {"Tab  1..8",
     {TK_TAB, '1', '2', '3', '4', '5', '6', '7', '8'},
     "Tab",
     "pane",
     "-",
     "focus a pane: 1 passes 2 ir 3 graph 4 kernels 5 fusions 6 bisect 7 log 8 details",
     PB(P_PASSES) | PB(P_LOG) | PB(P_DETAILS),
     a_focus,
     true},
    {":",
     {':'},
     ":",
     "cmd",
     "any command below",
     "command prompt: the --batch language (:profile, :bisect, :check, :zoom, :quit run the keys' "
     "actions; Up/Down history, Ctrl-U clears)",
     PB(P_PASSES) | PB(P_LOG) | PB(P_DETAILS),
     a_prompt,
     false},
    {"Esc",
     {TK_ESC},
     NULL,
     NULL,
     "-",
     "back out: close help, prompt, search or source; unzoom; leave details or the log; never "
     "quits",
     0,
     a_back,
     false},
    {"Esc (busy)",
     {0},
     NULL,
     NULL,
     "-",
     "cancel the running profile, bisect or check (meanwhile the keys that only move, scroll, "
     "focus, zoom or search act; the others are dropped)",
     0,
     NULL,
     false},
    /* the graph pane's drawing (3) */
    {"arrows", {0}, "arrows", "pan", "-", "graph drawing: pan", V_GRAPH, NULL, true},
    {"j k",
     {0},
     "j/k",
     "node",
     "-",
     "graph drawing: select the next / previous node (Enter: its details)",
     V_GRAPH,
     NULL,
     true},
    {"f",
     {0},
     "f",
     "follow",
     "-",
     "graph drawing: follow the selection on/off",
     V_GRAPH,
     NULL,
     true},
    {"c",
     {0},
     "c",
     "colour",
     "-",
     "graph drawing: colour by partition, then by the profile's GPU time, then its error (a heat "
     "map)",
     V_GRAPH,
     NULL,
     true},
    {"0",
     {0},
     "0",
     "fit",
     "-",
     "graph drawing: fit the pane again (the default: the width spanned, the whole height when it "
     "fits at 50%; from 100% up the edges carry their shapes)",
     V_GRAPH,
     NULL,
     true},
    {"m",
     {0},
     "m",
     "map",
     "-",
     "graph drawing: show / hide the overview map (the whole graph, the part shown marked; shown "
     "when the drawing does not fit)",
     V_GRAPH,
     NULL,
     true},
    {"[ ]", {0}, "[ ]", "pass", "-", NULL, V_GRAPH, NULL, true},
    {"Enter", {0}, "Enter", "details", "-", NULL, V_GRAPH, NULL, true},
    /* the source view (o) */
    {"Up Down PgUp PgDn Home End",
     {0},
     "Up/Dn/PgUp/PgDn",
     "scroll",
     "-",
     "source view: scroll the side in focus",
     V_SOURCE,
     NULL,
     true},
    {"Left Right  Tab",
     {0},
     "Left/Right",
     "side",
     "-",
     "source view: the source or the SPIR-V side",
     V_SOURCE,
     NULL,
     true},
    {"o  Esc", {0}, "o/Esc", "close", "-", "source view: close", V_SOURCE, NULL, true},
};
#define NACTIONS ((int)(sizeof actions / sizeof actions[0]))

void tui_help_lines(TuiLines *out, int width)
{
    bool wide = width >= 100; /* keys, command and what side by side; else what below */
    int ind = wide ? 55 : 4;
    tui_lines_wrap(out, TA_BOLD, -1,
                   wide ? "keys                        session command            what"
                        : "keys             session command, then what",
                   0, width, NULL);
    char head[128];
    for (int i = 0; i < NACTIONS; i++) {
        if (!actions[i].help) continue;
        if (wide) {
            snprintf(head, sizeof head, "%-27s %s", actions[i].keys, actions[i].cmd);
            tui_lines_wrap(out, 0, -1, head, ind, width, actions[i].help);
        } else {
            bool cmd = strcmp(actions[i].cmd, "-") != 0;
            snprintf(head, sizeof head, "%-16s %s", actions[i].keys, cmd ? actions[i].cmd : "");
            tui_lines_wrap(out, 0, -1, head, 0, width, NULL);
            tui_lines_wrap(out, TA_DIM, -1, "", ind, width, actions[i].help);
        }
    }
    tui_lines_add(out, 0, -1, "%s", "");
    tui_lines_wrap(out, TA_BOLD, -1, "commands (the : prompt and --batch scripts)", 0, width, NULL);
    for (int i = 0; i < session_command_count; i++) {
        snprintf(head, sizeof head, "%s %s", session_commands[i].name, session_commands[i].args);
        tui_lines_wrap(out, 0, -1, head, wide ? 35 : 4, width, session_commands[i].help);
    }
}

/* The footer: the focused pane's actions in table order; a view that owns its keys (the source
 * view, the graph drawing) shows the actions of every pane, then its own. */
const char *tui_footer(const Tui *t)
{
    static char buf[512];
    unsigned view = t->src ? V_SOURCE : t->focus == P_GRAPH && tui_graph_key_hint(t) ? V_GRAPH : 0;
    size_t u = 0;
    buf[0] = 0;
    for (int i = 0; i < NACTIONS && u < sizeof buf; i++) {
        unsigned pn = actions[i].panes;
        if (actions[i].label &&
            (view ? pn == ALL_PANES || (pn & view) : (pn & PB(t->focus)) != 0)) {
            int w = snprintf(buf + u, sizeof buf - u, " %s %s ", actions[i].fkey, actions[i].label);
            if (w > 0) u += (size_t)w;
        }
    }
    return buf;
}

const char *tui_keys_hint(void)
{
    static char buf[256];
    static void (*const main_keys[])(Tui *, int) = {a_pass,   a_enter,     a_focus, a_profile,
                                                    a_bisect, a_zoom_pane, a_help,  a_quit};
    size_t u = 0;
    buf[0] = 0;
    for (size_t k = 0; k < sizeof main_keys / sizeof main_keys[0]; k++)
        for (int i = 0; i < NACTIONS && u < sizeof buf; i++)
            if (actions[i].fn == main_keys[k] && actions[i].label) {
                int w = snprintf(buf + u, sizeof buf - u, "%s%s %s", u ? "  " : "", actions[i].fkey,
                                 actions[i].label);
                if (w > 0) u += (size_t)w;
                break;
            }
    return buf;
}

static const Action *action_of_key(int key)
{
    for (int i = 0; i < NACTIONS; i++)
        for (int k = 0; k < 12 && actions[i].code[k]; k++)
            if (actions[i].code[k] == key) return &actions[i];
    return NULL;
}

/* The action a `:` line names by its word ("profile", "quit"; also "q"), or NULL. */
static const Action *action_of_word(const char *w)
{
    if (strcmp(w, "q") == 0) w = "quit";
    for (int i = 0; i < NACTIONS; i++)
        if (actions[i].fn && strcmp(actions[i].cmd, w) == 0) return &actions[i];
    return NULL;
}

static void edit(Tui *t, int key)
{
    if (key == TK_ESC) {
        t->prompting = t->searching = false;
        return;
    }
    if (key == TK_BS) {
        if (t->input_len > 0) t->input[--t->input_len] = 0;
        return;
    }
    if (key == TK_CTRL_U) {
        t->input_len = 0;
        t->input[0] = 0;
        return;
    }
    if (t->prompting && (key == TK_UP || key == TK_DOWN)) { /* the prompt's history */
        int at = t->hist_at + (key == TK_UP ? -1 : 1);
        if (at < 0 || at > t->nhist) return;
        t->hist_at = at;
        snprintf(t->input, sizeof t->input, "%s", at < t->nhist ? t->hist[at] : "");
        t->input_len = (int)strlen(t->input);
        return;
    }
    if (key == TK_ENTER) {
        bool was_prompt = t->prompting;
        t->prompting = t->searching = false;
        if (was_prompt && t->input[0]) { /* remembered, oldest dropped */
            if (t->nhist == TUI_HIST)
                memmove(t->hist, t->hist + 1, sizeof t->hist[0] * (TUI_HIST - 1)), t->nhist--;
            snprintf(t->hist[t->nhist++], sizeof t->hist[0], "%s", t->input);
        }
        const Action *a = was_prompt ? action_of_word(t->input) : NULL;
        if (!was_prompt) {
            snprintf(t->search, sizeof t->search, "%s", t->input);
            search(t, 1);
        } else if (a) {
            a->fn(t, a->code[0]);
        } else if (t->input[0]) {
            tui_exec(t, t->input, false, NULL);
        }
        return;
    }
    if (key >= 0x20 && key < 0x7f && t->input_len + 1 < (int)sizeof t->input) {
        t->input[t->input_len++] = (char)key;
        t->input[t->input_len] = 0;
    }
}

bool tui_key_ui(Tui *t, int key)
{
    if (t->confirm_quit || t->prompting) return false;
    t->status[0] = 0;
    if (t->searching || t->help) { /* editing the search line, scrolling help */
        tui_key(t, key);
        return true;
    }
    if (tui_source_key(t, key) || (t->focus == P_GRAPH && tui_graph_key(t, key))) return true;
    const Action *a = action_of_key(key);
    /* moving in the passes pane runs `pass goto` */
    if (!a || !a->fn || !a->ui || (a->fn == a_move && t->focus == P_PASSES)) return false;
    a->fn(t, key);
    return true;
}

void tui_key(Tui *t, int key)
{
    if (key == TK_NONE || key == TK_RESIZE) return;
    t->status[0] = 0;
    if (t->confirm_quit) { /* the answer to ask_quit */
        t->confirm_quit = false;
        if (key == 'q' || key == 'y')
            t->quit = true;
        else
            snprintf(t->status, sizeof t->status, "not quitting");
        return;
    }
    if (t->prompting || t->searching)
        edit(t, key);
    else if (t->help) { /* layout.c's help() keeps help_top within the rows */
        if (key == TK_ESC || key == 'q' || key == '?' || key == TK_F1)
            t->help = false;
        else if (key == TK_DOWN || key == 'j')
            t->help_top++;
        else if (key == TK_UP || key == 'k')
            t->help_top--;
        else if (key == TK_PGDN || key == ' ')
            t->help_top += t->grid.h / 2;
        else if (key == TK_PGUP)
            t->help_top -= t->grid.h / 2;
        else if (key == TK_HOME)
            t->help_top = 0;
        else if (key == TK_END)
            t->help_top = 1 << 20;
    } else if (!tui_source_key(t, key) && !(t->focus == P_GRAPH && tui_graph_key(t, key))) {
        const Action *a = action_of_key(key);
        if (a && a->fn) a->fn(t, key);
    }
}

/* Reads the next key of a script: a character is its key, `<Name>` a special key (Left Right Up
 * Down PgUp PgDn Home End Enter Tab BTab Esc Space BS F1 lt C-u), `<Dump>` writes the screen,
 * `<Size WxH>` resizes; newlines are skipped. TK_NONE at the end. */
int tui_script_key(const char **pp, int *w, int *h)
{
    static const struct {
        const char *name;
        int key;
    } named[] = {
        {"Left", TK_LEFT},   {"Right", TK_RIGHT}, {"Up", TK_UP},     {"Down", TK_DOWN},
        {"PgUp", TK_PGUP},   {"PgDn", TK_PGDN},   {"Home", TK_HOME}, {"End", TK_END},
        {"Enter", TK_ENTER}, {"Tab", TK_TAB},     {"BTab", TK_BTAB}, {"Esc", TK_ESC},
        {"Space", ' '},      {"BS", TK_BS},       {"F1", TK_F1},     {"lt", '<'},
        {"Dump", TK_DUMP},   {"C-u", TK_CTRL_U},
    };
    const char *p = *pp;
    while (*p == '\n' || *p == '\r')
        p++;
    if (!*p) {
        *pp = p;
        return TK_NONE;
    }
    if (*p == '<') {
        const char *e = strchr(p, '>');
        if (e) {
            size_t n = (size_t)(e - p - 1);
            *pp = e + 1;
            for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
                if (strlen(named[i].name) == n && strncmp(named[i].name, p + 1, n) == 0)
                    return named[i].key;
            if (sscanf(p + 1, "Size %dx%d", w, h) == 2) return TK_RESIZE;
            return 0; /* unknown names are skipped (key 0 does nothing) */
        }
    }
    *pp = p + 1;
    return (unsigned char)*p;
}
