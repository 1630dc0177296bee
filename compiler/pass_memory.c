/* plan-memory: one device arena for activations, graph inputs and outputs. The kernel order is
 * decided first (compiler/schedule.h: each NPU run ordered by level, Node.slot); each tensor
 * that owns storage lives from the slot of the first kernel that writes it (its producer, or one
 * writing a view into it) to the slot of its last reader (through aliases); graph inputs from the
 * start, graph outputs to the end. First-fit placement over that order reuses dead tensors' bytes,
 * and only across slots: a tensor written in the slot where another is last read never takes its
 * bytes, so reuse adds no barrier. Reports the arena size against one buffer per tensor. Weights
 * get their own buffers (offset -1). Tensors inside an enabled fused kernel take no memory.
 * CompileOptions.no_reuse keeps every tensor alive to the end (for per-kernel comparisons). */
#include <stdlib.h>
#include "compiler/pass.h"
#include "compiler/schedule.h"

typedef struct Live {
    int t;
    int def, last;
    int64_t bytes, off;
} Live;

static int by_def(const void *a, const void *b)
{
    const Live *x = a, *y = b;
    if (x->def != y->def) return x->def - y->def;
    return x->t - y->t;
}

/* Is tensor t written to memory? Intermediates of an enabled fusion are not. */
static bool materialised(const Graph *g, int t)
{
    const GTensor *x = &g->tensors[t];
    if (x->kind != TK_ACT) return x->kind == TK_INPUT;
    if (x->alias_of >= 0) return false;
    if (x->producer < 0) { /* the combined output of a linear_concat instance */
        for (int f = 0; f < g->nfusions; f++)
            if (g->fusions[f].enabled && g->fusions[f].out == t) return true;
        return false;
    }
    const Node *p = &g->nodes[x->producer];
    if (p->fusion >= 0 && g->fusions[p->fusion].enabled &&
        (g->fusions[p->fusion].out != t || g->fusions[p->fusion].folded))
        return false; /* inside the kernel, or computed in its readers' (a fold) */
    return true;
}

/* The slot where t is written: its producer's, or its fusion anchor's for the output of an
 * instance that no member produces (linear_concat). */
static int def_slot(const Graph *g, int t)
{
    const GTensor *x = &g->tensors[t];
    if (x->producer >= 0) return g->nodes[x->producer].slot;
    for (int f = 0; f < g->nfusions; f++)
        if (g->fusions[f].enabled && g->fusions[f].out == t)
            return g->nodes[g->fusions[f].anchor].slot;
    return -1;
}

Status pass_plan_memory(Graph *g, PassCtx *c)
{
    int align = c->opt->arena_align > 0 ? c->opt->arena_align : 256;
    Status st = graph_schedule(g);
    if (st != ST_OK) return st;
    Live *lv = arena_alloc(c->scratch, sizeof(Live) * (size_t)(g->ntensors + 1));
    int *idx = arena_alloc(c->scratch, sizeof(int) * (size_t)(g->ntensors + 1));
    if (!lv || !idx) return ST_NOMEM;
    int n = 0;
    for (int t = 0; t < g->ntensors; t++) {
        idx[t] = -1;
        g->tensors[t].offset = -1;
        g->tensors[t].bytes = 0;
        if (!materialised(g, t)) continue;
        const GTensor *x = &g->tensors[t];
        int64_t numel = 1;
        for (int i = 0; i < x->rank; i++)
            numel *= x->pshape[i];
        int64_t bytes =
            (numel * (int64_t)dtype_size(compile_tensor_storage(c->opt, x)) + align - 1) / align *
            align;
        if (bytes == 0) bytes = align;
        int def = x->kind == TK_INPUT ? -1 : def_slot(g, t);
        idx[t] = n;
        lv[n++] = (Live){t, def, def, bytes, -1};
    }
    /* a storage lives from its first write: kernels write views into it before its own producer
     * runs (the parts of a cat in place, whose cat runs no kernel: slot -1) */
    for (int t = 0; t < g->ntensors; t++) {
        const GTensor *x = &g->tensors[t];
        int b = x->alias_of;
        if (b < 0 || idx[b] < 0 || g->tensors[b].kind != TK_ACT || x->producer < 0) continue;
        int s = g->nodes[x->producer].slot;
        Live *l = &lv[idx[b]];
        if (s < 0 || (l->def >= 0 && s >= l->def)) continue;
        if (l->last < s) l->last = s;
        l->def = s;
    }
    /* last use, through aliases, in slots (fused members run in their anchor's); a view
     * reads nothing itself, its readers count for its base */
    int end = 0;
    for (int i = 0; i < g->nnodes; i++)
        if (g->nodes[i].slot >= end) end = g->nodes[i].slot + 1;
    for (int i = 0; i < g->nnodes; i++) {
        const Node *nd = &g->nodes[i];
        if (nd->dead || nd->slot < 0) continue;
        int at = nd->slot;
        for (int k = 0; k < nd->nin; k++) {
            int t = nd->in[k];
            if (g->tensors[t].alias_of >= 0) t = g->tensors[t].alias_of;
            if (idx[t] >= 0 && lv[idx[t]].last < at) lv[idx[t]].last = at;
        }
    }
    for (int i = 0; i < g->noutputs; i++) {
        int t = g->outputs[i];
        if (g->tensors[t].alias_of >= 0) t = g->tensors[t].alias_of;
        if (idx[t] >= 0) lv[idx[t]].last = end;
    }
    /* no_reuse (profiling, bisect): every tensor keeps its bytes to the end, so each kernel's
     * output can be read after one run; the kernels themselves are the same */
    if (c->opt->no_reuse)
        for (int i = 0; i < n; i++)
            lv[i].last = end;
    qsort(lv, (size_t)n, sizeof *lv, by_def);
    int64_t arena = 0, naive = 0;
    for (int i = 0; i < n; i++) {
        naive += lv[i].bytes;
        /* first fit among the placements still alive at lv[i].def */
        int64_t off = 0;
        for (bool moved = true; moved;) {
            moved = false;
            for (int j = 0; j < i; j++) {
                if (lv[j].last < lv[i].def && lv[j].def != lv[i].def) continue; /* dead */
                if (off < lv[j].off + lv[j].bytes && lv[j].off < off + lv[i].bytes) {
                    off = lv[j].off + lv[j].bytes;
                    moved = true;
                }
            }
        }
        lv[i].off = off;
        if (off + lv[i].bytes > arena) arena = off + lv[i].bytes;
        g->tensors[lv[i].t].offset = off;
        g->tensors[lv[i].t].bytes = lv[i].bytes;
    }
    for (int t = 0; t < g->ntensors; t++) {
        GTensor *x = &g->tensors[t];
        if (x->alias_of >= 0) { /* a view: its base's bytes (view_off says where it starts) */
            x->offset = g->tensors[x->alias_of].offset;
            x->bytes = g->tensors[x->alias_of].bytes;
        }
    }
    g->arena_bytes = arena;
    g->naive_bytes = naive;
    return ST_OK;
}
