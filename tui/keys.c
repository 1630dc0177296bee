/* Keys: the binding table (each key names the session command it runs, so help is generated
 * from it and from the session's command table), the dispatch of a key to a session command or a
 * view change, the `:` prompt and `/` search line editing, and the headless key-script reader. */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

typedef struct KeyRow {
    const char *keys, *command, *help;
} KeyRow;

static const KeyRow bindings[] = {
    {"?  F1", "help", "this help (keys, then every session command)"},
    {"q", NULL, "quit (asks first when profile or bisect results would be lost)"},
    {"Esc", NULL, "back out: close help, prompt, search or source; leave details/log; never quits"},
    {"Tab  1..8", NULL, "focus a pane: 1 passes 2 ir 3 graph 4 kernels 5 fusions 6 bisect 7 log 8 details"},
    {"Left Right  [ ]", "pass prev / pass next", "previous / next pass ([ ] also in the drawn graph)"},
    {"Up Down PgUp PgDn Home End", NULL, "move (in passes: pass goto N)"},
    {"Enter", "pass goto N", "drill in: a pass opens its changes, a row its details"},
    {"Space", "fusion off|on ID", "toggle the selected fusion instance (pane 5)"},
    {"z", "fusion on|off ID", "undo the last toggle"},
    {"d", "pass show / dump", "changes of the pass vs the full graph after it"},
    {"h", NULL, "hide / show passes that changed nothing"},
    {"s", NULL, "sort the profiled kernels by the next column"},
    {"v", "check", "verify: run and compare the outputs with the reference"},
    {"p", "profile 5", "profile every kernel (GPU, CPU reference, error)"},
    {"b", "bisect", "find the fusion that breaks the outputs"},
    {"g", "dot npu-explore-PASS.svg", "render the current pass's graph with Graphviz"},
    {"o", "source K", "the selected kernel's source and SPIR-V side by side (o/Esc close)"},
    {"arrows  + -", NULL, "graph pane (3): pan the drawing, zoom in / out (j k move the selection)"},
    {"f  c", NULL, "graph pane: follow the selection on/off, colour by partition / GPU time / error"},
    {"Esc (busy)", NULL, "cancel a running profile, bisect or command script"},
    {":", "any command below", "command prompt: the --batch language"},
    {"/  n  N", NULL, "search the focused pane, next, previous"},
};

void tui_help_lines(TuiLines *out)
{
    tui_lines_add(out, TA_BOLD, -1, "keys                        session command            what");
    for (size_t i = 0; i < sizeof bindings / sizeof bindings[0]; i++)
        tui_lines_add(out, 0, -1, "%-27s %-26s %s", bindings[i].keys, bindings[i].command ? bindings[i].command : "-",
                      bindings[i].help);
    tui_lines_add(out, 0, -1, "%s", "");
    tui_lines_add(out, TA_BOLD, -1, "commands (the : prompt and --batch scripts)");
    for (int i = 0; i < session_command_count; i++) {
        char nm[96];
        snprintf(nm, sizeof nm, "%s %s", session_commands[i].name, session_commands[i].args);
        tui_lines_add(out, 0, -1, "%-34s %s", nm, session_commands[i].help);
    }
}

const char *tui_footer(const Tui *t)
{
    switch (t->focus) {
    case P_PASSES: return " Up/Dn/Left/Right pass  Enter changes  h hide  Tab pane  : cmd  ? help  q quit";
    case P_IR: return " d diff/full  Left/Right pass  / search  Enter details  g svg  ? help  q quit";
    case P_GRAPH:
        return tui_graph_key_hint(t) ? " arrows pan  +/- zoom  f follow  c colour  j/k node  [ ] pass  Enter details  ? help"
                                              : " Up/Dn node  Enter details  Left/Right pass  / search  g svg  ? help  q quit";
    case P_KERNELS:
        return t->src ? " Up/Dn/PgUp/PgDn scroll  Left/Right side  o/Esc close  ? help  q quit"
                      : " o source  p profile  s sort  v verify  Enter details  / search  ? help  q quit";
    case P_FUSIONS: return " Space toggle  z undo  b bisect  v verify  Enter details  ? help  q quit";
    case P_BISECT: return " b bisect  Space/z in 5 fusions  ? help  q quit";
    default: return " Tab pane  : command  ? help  q quit";
    }
}

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
    snprintf(t->status, sizeof t->status, "quit? the %s%s%s would be lost: q or y quits, any other key stays",
             t->s.prof.have ? "profile" : "", t->s.prof.have && t->s.bisect.have ? " and " : "",
             t->s.bisect.have ? "bisect" : "");
}

/* Esc outside overlays: back to the main pane from details or the log; never quits. */
static void back_out(Tui *t)
{
    if (t->focus == P_DETAILS || t->focus == P_LOG) focus(t, t->main_pane);
    else snprintf(t->status, sizeof t->status, "Esc backs out of help, prompts and panes; q quits");
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
    if (key == TK_ENTER) {
        bool was_prompt = t->prompting;
        t->prompting = t->searching = false;
        if (!was_prompt) {
            snprintf(t->search, sizeof t->search, "%s", t->input);
            search(t, 1);
        } else if (strcmp(t->input, "q") == 0 || strcmp(t->input, "quit") == 0) {
            ask_quit(t);
        } else if (strncmp(t->input, "profile", 7) == 0 && t->input[7] == 0) {
            tui_profile(t);
        } else if (strcmp(t->input, "bisect") == 0) {
            tui_bisect(t);
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

static void main_keys(Tui *t, int key)
{
    int page = t->grid.h / 2;
    if (tui_source_key(t, key)) return;
    if (t->focus == P_GRAPH && tui_graph_key(t, key)) return;
    switch (key) {
    case 'q': ask_quit(t); break;
    case TK_ESC: back_out(t); break;
    case '?': case TK_F1: t->help = true; t->help_top = 0; break;
    case TK_TAB: {
        static const int ring[] = {P_PASSES, -1, P_DETAILS, P_LOG};
        int i = 0;
        while (i < 4 && (ring[i] == -1 ? t->focus != t->main_pane : ring[i] != t->focus)) i++;
        int nx = ring[(i + 1) % 4];
        focus(t, nx < 0 ? t->main_pane : nx);
        break;
    }
    case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8': focus(t, key - '1'); break;
    case TK_LEFT: case '[': tui_exec(t, "pass prev", false, NULL); break;
    case TK_RIGHT: case ']': tui_exec(t, "pass next", false, NULL); break;
    case TK_UP: case 'k': move(t, -1, false); break;
    case TK_DOWN: case 'j': move(t, 1, false); break;
    case TK_PGUP: move(t, -page, false); break;
    case TK_PGDN: move(t, page, false); break;
    case TK_HOME: move(t, 0, true); break;
    case TK_END: move(t, 1 << 30, true); break;
    case TK_ENTER:
        if (t->focus == P_PASSES) focus(t, P_IR);
        else if (t->focus != P_LOG) focus(t, P_DETAILS);
        break;
    case ' ':
        if (t->main_pane == P_FUSIONS && t->focus == P_FUSIONS) tui_toggle_fusion(t, selected_id(t));
        else snprintf(t->status, sizeof t->status, "Space toggles a fusion in pane 5");
        break;
    case 'z': tui_undo(t); break;
    case 'd': t->full_ir = !t->full_ir; focus(t, P_IR); break;
    case 'h': t->hide_unchanged = !t->hide_unchanged; break;
    case 's': t->sort_col = (t->sort_col + 1) % 5; break;
    case 'v': tui_verify(t); break;
    case 'p': tui_profile(t); break;
    case 'b': tui_bisect(t); break;
    case 'o': tui_source_open(t); break;
    case 'g': {
        char line[300];
        snprintf(t->dot_file, sizeof t->dot_file, "npu-explore-%s.svg", t->s.pipe.snaps[t->s.cursor].pass);
        snprintf(line, sizeof line, "dot %s", t->dot_file);
        if (tui_exec(t, line, false, NULL) == ST_OK)
            snprintf(t->status, sizeof t->status, "wrote %s", t->dot_file);
        break;
    }
    case ':': t->prompting = true; t->input_len = 0; t->input[0] = 0; break;
    case '/': t->searching = true; t->input_len = 0; t->input[0] = 0; break;
    case 'n': search(t, 1); break;
    case 'N': search(t, -1); break;
    default: break;
    }
}

void tui_key(Tui *t, int key)
{
    if (key == TK_NONE || key == TK_RESIZE) return;
    t->status[0] = 0;
    if (t->confirm_quit) { /* the answer to ask_quit */
        t->confirm_quit = false;
        if (key == 'q' || key == 'y') t->quit = true;
        else snprintf(t->status, sizeof t->status, "not quitting");
        return;
    }
    if (t->prompting || t->searching) edit(t, key);
    else if (t->help) {
        if (key == TK_ESC || key == 'q' || key == '?' || key == TK_F1) t->help = false;
        else if (key == TK_DOWN) t->help_top++;
        else if (key == TK_UP) t->help_top--;
        else if (key == TK_PGDN) t->help_top += t->grid.h / 2;
        else if (key == TK_PGUP) t->help_top -= t->grid.h / 2;
    } else main_keys(t, key);
}

/* Reads the next key of a script: a character is its key, `<Name>` a special key (Left Right Up
 * Down PgUp PgDn Home End Enter Tab BTab Esc Space BS F1 lt), `<Dump>` writes the screen,
 * `<Size WxH>` resizes; newlines are skipped. TK_NONE at the end. */
int tui_script_key(const char **pp, int *w, int *h)
{
    static const struct { const char *name; int key; } named[] = {
        {"Left", TK_LEFT}, {"Right", TK_RIGHT}, {"Up", TK_UP}, {"Down", TK_DOWN}, {"PgUp", TK_PGUP},
        {"PgDn", TK_PGDN}, {"Home", TK_HOME}, {"End", TK_END}, {"Enter", TK_ENTER}, {"Tab", TK_TAB},
        {"BTab", TK_BTAB}, {"Esc", TK_ESC}, {"Space", ' '}, {"BS", TK_BS}, {"F1", TK_F1}, {"lt", '<'},
        {"Dump", TK_DUMP},
    };
    const char *p = *pp;
    while (*p == '\n' || *p == '\r') p++;
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
                if (strlen(named[i].name) == n && strncmp(named[i].name, p + 1, n) == 0) return named[i].key;
            if (sscanf(p + 1, "Size %dx%d", w, h) == 2) return TK_RESIZE;
            return 0; /* unknown names are skipped (key 0 does nothing) */
        }
    }
    *pp = p + 1;
    return (unsigned char)*p;
}
