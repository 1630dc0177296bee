#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "compiler/ir_json.h"
#include "compiler/lower/lower.h"
#include "compiler/model_src.h"
#include "compiler/pass.h"
#include "compiler/shape/shape.h"

/* The pipeline, in order (DESIGN.md "Compiler passes"). */
const Pass pass_table[] = {
    {"import", "IR JSON to graph; producers and consumers resolved; shapes checked", false, NULL},
    {"canonicalize", "drop assertions; in-place to out-of-place; identities and dead nodes removed",
     false, pass_canonicalize},
    {"fold-constants",
     "values computed from weights and constants only are computed once, at load, and read as "
     "weights",
     true, pass_fold_constants},
    {"fold-batchnorm", "conv followed by batch_norm folds into the conv's weights and bias", true,
     pass_fold_batchnorm},
    {"partition", "each node marked NPU or CPU by op, attributes and shapes", false,
     pass_partition},
    {"fuse", "fusion patterns in priority order; each match an instance that can be switched off",
     true, pass_fuse},
    {"fuse-elementwise",
     "maximal chains/trees of elementwise and view ops become one generated kernel each", true,
     pass_fuse_elementwise},
    {"cat-in-place",
     "cat inputs written in place into the cat's storage by their producers; such cats run no "
     "kernel",
     true, pass_cat_in_place},
    {"layout", "NPU conv-family tensors padded to the channel tile; explicit depad conversions",
     true, pass_layout},
    {"pack-inputs",
     "large float inputs uploaded as the host holds them (f32, dense); a pack kernel casts them",
     true, pass_pack_inputs},
    {"views", "reshape-like ops and size-1 transposes become aliases of their input", true,
     pass_views},
    {"plan-memory", "liveness-based reuse of one device arena", false, pass_plan_memory},
    {"lower", "kernels with shader, bindings, dispatch size, provenance, fusion id, levels", false,
     NULL},
};
const int pass_count = (int)(sizeof pass_table / sizeof pass_table[0]);

int pass_find(const char *name)
{
    for (int i = 0; i < pass_count; i++)
        if (strcmp(pass_table[i].name, name) == 0) return i;
    char *end;
    long v = strtol(name, &end, 10);
    if (*name && !*end && v >= 0 && v < pass_count) return (int)v;
    return -1;
}

const char *pass_names(char *buf, size_t n, bool disable_only)
{
    size_t at = 0;
    if (n) buf[0] = 0;
    for (int i = 0; i < pass_count && at < n; i++) {
        if (disable_only && !pass_table[i].can_disable) continue;
        int w = snprintf(buf + at, n - at, "%s%s", at ? ", " : "", pass_table[i].name);
        at += w > 0 ? (size_t)w : n;
    }
    return buf;
}

void compile_defaults(CompileOptions *o)
{
    memset(o, 0, sizeof *o);
    o->channel_tile = 32;
    o->compute = DT_F16;
    o->arena_align = 256;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static bool same_ints(const int *a, int na, const int *b, int nb)
{
    return na == nb && (na == 0 || memcmp(a, b, sizeof(int) * (size_t)na) == 0);
}

/* Is tensor t a cat's output (the storage cat-in-place writes parts into)? */
static bool in_cat_storage(const Graph *g, int t)
{
    int p = g->tensors[t].producer;
    return p >= 0 && g->nodes[p].op == OP_CAT;
}

/* The change list of a pass: node-by-node difference between two snapshots. */
static Status diff(const Graph *before, Snapshot *s)
{
    const Graph *after = s->g;
    int cap = after->nnodes + 1;
    s->changes = calloc((size_t)cap, sizeof *s->changes);
    if (!s->changes) return ST_NOMEM;
    for (int i = 0; i < after->nnodes; i++) {
        const Node *a = &after->nodes[i];
        /* names are unique and indexed (graph_verify): the node at the same index under the
         * same name is this node, as most are */
        int bi = i < before->nnodes && before->nodes[i].name == a->name
                     ? i
                     : graph_find_node(before, a->name);
        const Node *b = bi >= 0 ? &before->nodes[bi] : NULL;
        Change ch = {CH_REWRITTEN, i, NULL};
        if (!b) {
            if (a->dead) continue;
            ch.kind = CH_ADDED;
            ch.what = "added";
            s->added++;
        } else if (!b->dead && a->dead) {
            ch.kind = CH_REMOVED;
            ch.what = "removed";
            s->removed++;
        } else if (a->dead) {
            continue;
        } else if (b->dead) {
            continue;
        } else if (a->op == OP_CAT && graph_cat_in_place(after, i) &&
                   !graph_cat_in_place(before, bi)) {
            ch.what = "in place: its producers write its inputs into its storage, no kernel";
        } else if (!same_ints(a->in, a->nin, b->in, b->nin) ||
                   !same_ints(a->out, a->nout, b->out, b->nout)) {
            ch.what = "inputs or outputs rewired";
        } else if (a->fusion != b->fusion) {
            ch.what = a->fusion >= 0 ? after->fusions[a->fusion].id : "unfused";
        } else if (a->place != b->place || a->part != b->part) {
            ch.what = a->place == PLACE_CPU ? "placed on the CPU" : "placed on the NPU";
            if (before->nparts == 0 && a->place == PLACE_NPU) continue; /* default placement */
        } else if (strcmp(a->aten, b->aten) != 0) {
            ch.what = "made out-of-place";
        } else if (a->nout && b->nout && a->out[0] < before->ntensors) {
            const GTensor *ta = &after->tensors[a->out[0]], *tb = &before->tensors[b->out[0]];
            if (ta->padded != tb->padded)
                ch.what = "output channel-padded";
            else if (ta->alias_of != tb->alias_of)
                ch.what = ta->alias_of >= 0 && in_cat_storage(after, ta->alias_of)
                              ? "output written in place into a cat's storage"
                              : "output became a view";
            else if (ta->offset != tb->offset)
                ch.what = "output placed in the arena";
            else
                continue;
        } else {
            continue;
        }
        if (ch.kind == CH_REWRITTEN) s->rewritten++;
        s->changes[s->nchanges++] = ch;
    }
    return ST_OK;
}

static bool disabled(const CompileOptions *o, const Pass *p)
{
    for (int i = 0; i < o->n_disable; i++)
        if (strcmp(o->disable[i], p->name) == 0) return p->can_disable;
    return false;
}

Status pipeline_run_graph(Graph *g, const CompileOptions *o, Pipeline *p, DiagList *d)
{
    memset(p, 0, sizeof *p);
    CompileOptions def;
    if (!o) {
        compile_defaults(&def);
        o = &def;
    }
    p->snaps = calloc((size_t)pass_count, sizeof *p->snaps);
    if (!p->snaps) {
        graph_free(g);
        return ST_NOMEM;
    }
    Arena scratch;
    arena_init(&scratch, 64 * 1024);
    PassCtx ctx = {o, d, &scratch};
    double t0 = now_ms();
    Status st = o->edit ? o->edit(g, o->edit_ctx, d) : ST_OK;
    if (st == ST_OK) st = shape_check_graph(g, d);
    p->snaps[0] = (Snapshot){.pass = pass_table[0].name, .g = g, .ms = now_ms() - t0};
    p->nsnaps = 1;
    p->g = g;
    for (int i = 1; i < pass_count && st == ST_OK; i++) {
        const Pass *ps = &pass_table[i];
        if (cancel_requested(o->cancel)) {
            st = diag_add(d, DIAG_ERROR, ST_CANCELLED, NULL, NULL, NULL, "cancelled before pass %s",
                          ps->name);
            break;
        }
        Graph *next = graph_clone(p->g);
        if (!next) {
            st = ST_NOMEM;
            break;
        }
        double a = now_ms();
        bool skip = disabled(o, ps);
        if (!skip && ps->fn)
            st = ps->fn(next, &ctx);
        else if (!ps->fn)
            st = plan_build(next, o, &p->plan, d);
        if (st == ST_OK) st = graph_verify(next, d);
        Snapshot *s = &p->snaps[p->nsnaps];
        *s = (Snapshot){.pass = ps->name, .g = next, .ms = now_ms() - a, .skipped = skip};
        p->nsnaps++;
        if (st == ST_OK) st = diff(p->g, s);
        if (st == ST_OK) graph_share(next, p->g);
        p->g = next;
        arena_reset(&scratch);
    }
    arena_free(&scratch);
    p->total_ms = now_ms() - t0;
    return st;
}

Status pipeline_run(const char *path, const CompileOptions *o, Pipeline *p, DiagList *d)
{
    Graph *g = NULL;
    memset(p, 0, sizeof *p);
    double t0 = now_ms();
    ModelText src;
    Status st = model_src_open(path, &src, d);
    if (st == ST_OK) st = ir_read_buffer(path, src.text, src.len, &g, d);
    if (st != ST_OK) {
        model_src_close(&src);
        return st;
    }
    double read_ms = now_ms() - t0;
    CompileOptions co;
    if (o)
        co = *o;
    else
        compile_defaults(&co);
    co.ir_text = src.text;
    co.ir_len = src.len;
    co.ir_outlives = true;
    st = pipeline_run_graph(g, &co, p, d);
    p->src = src; /* closed by pipeline_free, after the plan that refers to it */
    if (p->nsnaps > 0) p->snaps[0].ms += read_ms;
    p->total_ms += read_ms;
    return st;
}

void pipeline_free(Pipeline *p)
{
    for (int i = 0; i < p->nsnaps; i++) {
        graph_free(p->snaps[i].g);
        free(p->snaps[i].changes);
    }
    free(p->snaps);
    plan_free(p->plan);
    model_src_close(&p->src);
    memset(p, 0, sizeof *p);
}
