/* The details pane: the selected node (op, ATen name, attributes, input/output shapes, dtypes,
 * physical layout, placement and why, fusion instance, near misses = why not fused, the kernel
 * that computes it) or the selected kernel (shader, target, fusion, dispatch, provenance,
 * profile numbers and error). */
#include <string.h>
#include "app/report.h"
#include "tui/internal.h"

static void attr_text(const Attr *a, char *buf, size_t n)
{
    size_t u = 0;
    switch (a->kind) {
    case ATTR_NONE:
        snprintf(buf, n, "None");
        return;
    case ATTR_INT:
        snprintf(buf, n, "%lld", (long long)a->i);
        return;
    case ATTR_FLOAT:
        snprintf(buf, n, "%g", a->f);
        return;
    case ATTR_BOOL:
        snprintf(buf, n, "%s", a->i ? "True" : "False");
        return;
    case ATTR_STR:
    case ATTR_OTHER:
        snprintf(buf, n, "%s", a->s ? a->s : "");
        return;
    case ATTR_INTS:
    case ATTR_FLOATS:
        buf[u++] = '[';
        for (int i = 0; i < a->n && u + 24 < n; i++) {
            int w = a->kind == ATTR_INTS
                        ? snprintf(buf + u, n - u, "%s%lld", i ? "," : "", (long long)a->ints[i])
                        : snprintf(buf + u, n - u, "%s%g", i ? "," : "", a->floats[i]);
            if (w > 0) u += (size_t)w;
        }
        snprintf(buf + u, n - u, "]");
        return;
    }
}

int tui_breaks(const Tui *t, BreakSite *out)
{
    const Plan *p = t->s.pipe.plan;
    return p && t->s.opt.break_id ? attrib_breaks(p, t->s.opt.break_id, out, TUI_MAX_BREAKS) : 0;
}

void tui_break_banner(const Tui *t, char *buf, size_t n)
{
    BreakSite b[TUI_MAX_BREAKS];
    int nb = tui_breaks(t, b);
    size_t u = (size_t)snprintf(buf, n, "BREAK");
    for (int i = 0; i < nb && u < n; i++) {
        char one[96];
        attrib_break_short(t->s.pipe.plan, &b[i], one, sizeof one);
        u += (size_t)snprintf(buf + u, n - u, "%s %s", i ? "," : "", one);
    }
    if (!nb && u < n) snprintf(buf + u, n - u, " %s", t->s.opt.break_id);
}

bool tui_break_row(const BreakSite *b, int nb, int k, const Plan *p, char *buf, size_t n)
{
    for (int i = 0; i < nb; i++) {
        if (b[i].corrupt != k || b[i].kernel < 0) continue;
        const PlanKernel *h = &p->kernels[b[i].kernel];
        snprintf(buf, n, "--break %s: rewrites kernel %d's output %s%s", b[i].id, b[i].kernel,
                 h->nargs > h->nin ? p->tensors[h->args[h->nargs - 1]].name : "",
                 b[i].own ? "" : " (its ops run there)");
        return true;
    }
    return false;
}

/* The --break sentences about kernel k (the one a break corrupts, or its corrupt kernel) or,
 * with k < 0, about the instance holding node `node`. */
static void break_lines(const Tui *t, TuiLines *out, int width, int k, const char *node)
{
    BreakSite b[TUI_MAX_BREAKS];
    int nb = tui_breaks(t, b);
    const Plan *p = t->s.pipe.plan;
    for (int i = 0; i < nb; i++) {
        bool about = k >= 0 ? b[i].kernel == k || b[i].corrupt == k : false;
        for (int j = 0; k < 0 && node && j < p->fusions[b[i].fusion].nnodes; j++)
            about |= strcmp(p->fusions[b[i].fusion].nodes[j], node) == 0;
        if (!about) continue;
        char text[512];
        int u = snprintf(text, sizeof text, "--break %s: ", b[i].id);
        attrib_break_text(p, &b[i], text + u, sizeof text - (size_t)u);
        tui_lines_wrap(out, TA_BOLD | TA_COLOR(TC_RED), -1, "", 0, width, text);
    }
}

void tui_kernel_of_node(const Tui *t, const char *node, int *kernel)
{
    *kernel = -1;
    const Plan *p = t->s.pipe.plan;
    for (int k = 0; p && k < p->nkernels && *kernel < 0; k++)
        for (int i = 0; i < p->kernels[k].nprov; i++)
            if (strcmp(p->kernels[k].prov[i], node) == 0) *kernel = k;
}

static void tensor_rows(const Graph *g, TuiLines *out, const char *what, const int *ids, int n)
{
    char d[128], ps[128];
    for (int i = 0; i < n; i++) {
        const GTensor *ten = &g->tensors[ids[i]];
        tensor_describe(ten, d, sizeof d);
        ps[0] = 0;
        if (ten->padded) shape_str(ten->pshape, ten->rank, ps, sizeof ps);
        tui_lines_add(out, 0, -1, "%s %s %s%s%s", what, ten->name, d, ps[0] ? " phys " : "", ps);
    }
}

/* A profile row's error: "rel_l2 X" (prec digits), or an argmax kernel's rows. */
static void error_text(const TuiProfRow *r, int prec, char *buf, size_t n)
{
    if (r->am_rows > 0)
        report_argmax_note(&(CmpStats){.argmax = true,
                                       .am_rows = r->am_rows,
                                       .am_differ = r->am_differ,
                                       .am_beyond = r->am_beyond},
                           buf, n);
    else
        snprintf(buf, n, "rel_l2 %.*e", prec, r->rel_l2);
}

static void node_details(const Tui *t, TuiLines *out, int width)
{
    const Graph *g = t->s.pipe.snaps[t->s.cursor].g;
    int ni = graph_find_node(g, t->sel_node);
    if (ni < 0) {
        tui_lines_add(out, TA_DIM, -1, "node %s: not in this pass's graph", t->sel_node);
        return;
    }
    const Node *n = &g->nodes[ni];
    tui_lines_add(out, TA_BOLD, -1, "node %s%s", n->name, n->dead ? " (removed)" : "");
    tui_lines_add(out, 0, -1, "op %s (%s)", op_short_name(n->op), n->aten ? n->aten : "");
    tensor_rows(g, out, "in ", n->in, n->nin);
    tensor_rows(g, out, "out", n->out, n->nout);
    char buf[512];
    for (int i = 0; i < n->nattrs; i++) {
        attr_text(&n->attrs[i], buf, sizeof buf);
        tui_lines_add(out, TA_DIM, -1, "  %s = %s", n->attrs[i].key, buf);
    }
    tui_lines_add(out, n->place == PLACE_CPU ? TA_COLOR(TC_YELLOW) : 0, -1,
                  "placed on %s (partition %d)%s%s", n->place == PLACE_CPU ? "cpu" : "npu", n->part,
                  n->why_cpu ? ": " : "", n->why_cpu ? n->why_cpu : "");
    if (n->fusion >= 0 && n->fusion < g->nfusions)
        tui_lines_add(out, TA_COLOR(TC_CYAN), -1, "fusion %s %s (%s)", g->fusions[n->fusion].id,
                      g->fusions[n->fusion].pattern, g->fusions[n->fusion].enabled ? "on" : "off");
    else
        tui_lines_add(out, TA_DIM, -1, "not fused");
    for (int i = 0; i < g->nmisses; i++)
        if (g->misses[i].node == ni)
            tui_lines_add(out, TA_COLOR(TC_YELLOW), -1, "why not %s: %s", g->misses[i].pattern,
                          g->misses[i].reason);
    int k;
    tui_kernel_of_node(t, n->name, &k);
    if (k >= 0) {
        const PlanKernel *kn = &t->s.pipe.plan->kernels[k];
        tui_lines_add(out, TA_COLOR(TC_MAGENTA), k, "computed by kernel %d (%s)", k, kn->shader);
        const TuiProfRow *r = tui_prof_row(t, k);
        char err[96];
        if (r) error_text(r, 2, err, sizeof err);
        if (r)
            tui_lines_add(out, 0, -1, "gpu %.1f us, cpu %.1f us, %s %s", r->gpu_us, r->cpu_us, err,
                          r->verdict);
    } else {
        tui_lines_add(out, TA_DIM, -1, "no kernel computes it (view, folded or removed)");
    }
    break_lines(t, out, width, -1, n->name);
}

static void kernel_details(const Tui *t, TuiLines *out, int width)
{
    const Plan *p = t->s.pipe.plan;
    const PlanKernel *k = &p->kernels[t->sel_kernel];
    tui_lines_add(out, TA_BOLD, -1, "kernel %d %s on %s", t->sel_kernel, k->shader,
                  k->target == KT_NPU ? "npu" : "cpu");
    break_lines(t, out, width, t->sel_kernel, NULL);
    if (k->fusion >= 0)
        tui_lines_add(out, TA_COLOR(TC_CYAN), -1, "fusion %s %s", p->fusions[k->fusion].id,
                      p->fusions[k->fusion].pattern);
    tui_lines_add(out, 0, -1, "dispatch %ux%ux%u, level %d, partition %d", k->groups[0],
                  k->groups[1], k->groups[2], k->level, k->part);
    if (k->tuned) /* a tuning-cache entry shaped it (T tunes it) */
        tui_lines_add(out, TA_COLOR(TC_GREEN), -1, "tuned %s", k->tuned);
    for (int i = 0; i < k->nargs; i++) {
        bool again = false; /* an output bound in two slots is listed once (describe.c) */
        for (int j = k->nin; i > k->nin && j < i; j++)
            again |= k->args[j] == k->args[i];
        if (again) continue;
        const PlanTensor *pt = &p->tensors[k->args[i]];
        char sh[128];
        shape_str(pt->shape, pt->rank, sh, sizeof sh);
        tui_lines_add(out, 0, -1, "%s %s %s%s %s", i < k->nin ? "in " : "out", pt->name,
                      dtype_short(pt->storage), sh, pt->padded ? "(padded)" : "");
    }
    for (int i = 0; i < k->nprov; i++)
        tui_lines_add(out, TA_COLOR(TC_MAGENTA), -1, "from IR node %s", k->prov[i]);
    const TuiProfRow *r = tui_prof_row(t, t->sel_kernel);
    if (r) {
        char sp[16];
        tui_lines_add(out, 0, -1, "gpu %.1f us  cpu %.1f us  speedup %s", r->gpu_us, r->cpu_us,
                      report_speedup(r->speedup, sp, sizeof sp));
        char err[96];
        error_text(r, 3, err, sizeof err);
        tui_lines_add(out, strcmp(r->verdict, "MISMATCH") == 0 ? TA_BOLD | TA_COLOR(TC_RED) : 0, -1,
                      "%s  verdict %s", err, r->verdict);
    } else {
        tui_lines_add(out, TA_DIM, -1, "(p profiles: times and error)");
    }
}

/* The selected pass: what it does, what it changed, whether it can be switched off. */
static void pass_details(const Tui *t, TuiLines *out, int width)
{
    int i = t->s.cursor;
    const Snapshot *sn = &t->s.pipe.snaps[i];
    const Pass *ps = i < pass_count ? &pass_table[i] : NULL;
    char buf[256], ms[16];
    tui_lines_add(out, TA_BOLD, -1, "pass %d %s", i, sn->pass);
    if (ps) tui_lines_wrap(out, 0, -1, "", 0, width, ps->summary);
    if (sn->added + sn->removed + sn->rewritten)
        snprintf(buf, sizeof buf,
                 "nodes: %d added, %d removed, %d rewritten (%s ms; Enter: the changes)", sn->added,
                 sn->removed, sn->rewritten, tui_ms(t, sn->ms, ms, sizeof ms));
    else
        snprintf(buf, sizeof buf, "%s (%s ms)",
                 sn->skipped ? "switched off" : "changed nothing in the graph",
                 tui_ms(t, sn->ms, ms, sizeof ms));
    tui_lines_wrap(out, 0, -1, "", 0, width, buf);
    if (ps && ps->can_disable) {
        snprintf(buf, sizeof buf, "--disable %s compiles without it", sn->pass);
        tui_lines_wrap(out, TA_DIM, -1, "", 0, width, buf);
    }
}

void tui_view_details(Tui *t, TuiLines *out, int width)
{
    if (t->focus == P_PASSES && t->s.pipe.nsnaps)
        pass_details(t, out, width);
    else if (t->s.pipe.plan && t->sel_kernel >= 0 && t->sel_kernel < t->s.pipe.plan->nkernels)
        kernel_details(t, out, width);
    else if (t->sel_node[0] && t->s.pipe.nsnaps)
        node_details(t, out, width);
    else
        tui_lines_add(out, TA_DIM, -1, "(select a node in 2/3, a kernel in 4 or a fusion in 5)");
}
