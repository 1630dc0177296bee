/* partition: mark each node NPU or CPU by the support check (op, attributes, shapes, dtypes),
 * keep on the host the views of host-side data that the host reads or made, hoist the CPU nodes
 * that read nothing the NPU makes ahead of the rest, and group consecutive nodes of the same
 * placement into numbered partitions.
 *
 * Host-side data: graph inputs, weights, constants and what host-only nodes (on the CPU, reading
 * only host-side data) make from them: arange/cumsum positions, integer comparisons for masks.
 * A view the NPU could run stays on the CPU when it reads only host-side data and that data was
 * made on the host (it stays with it), or when a CPU node reads it and the NPU would run it as a
 * kernel (a slice, select, expand or transpose: a dispatch whose output comes straight back; a
 * reshape-like view of an input or weight is an alias there, which the CPU reads on the host
 * without either). A static-cache decode's select of cache_position, added to aranges on the
 * CPU, would otherwise split the step into cpu, npu, cpu, npu, ... partitions, 4-byte transfers
 * between them. The host-only nodes then move ahead of the rest, every other order kept, so they
 * form one CPU partition before the NPU work (gpt_block: cpu, npu instead of cpu, npu, cpu, npu:
 * one submit); fuse-elementwise hoists again after it takes nodes onto the NPU. */
#include <string.h>
#include "compiler/pass.h"
#include "compiler/support.h"

/* Does node n read only host-side data (host[] of its producers)? *made: some of it was made on
 * the host by a node (not a graph input, weight or constant). */
static bool reads_host_only(const Graph *g, const Node *n, const bool *host, bool *made)
{
    bool only = true;
    *made = false;
    for (int k = 0; k < n->nin; k++) {
        int p = g->tensors[n->in[k]].producer;
        *made |= p >= 0 && host[p];
        only &= p < 0 || host[p];
    }
    return only;
}

/* Does a live CPU node read an output of n? */
static bool read_on_cpu(const Graph *g, const Node *n)
{
    for (int k = 0; k < n->nout; k++) {
        const GTensor *t = &g->tensors[n->out[k]];
        for (int c = 0; c < t->nconsumers; c++) {
            const Node *r = &g->nodes[t->consumers[c]];
            if (!r->dead && r->place == PLACE_CPU) return true;
        }
    }
    return false;
}

/* host[i] for every node: on the CPU and reading only host-side data (graph order is
 * topological, so producers are decided first). */
static void mark_host(const Graph *g, bool *host)
{
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = &g->nodes[i];
        bool made;
        host[i] = !n->dead && n->place == PLACE_CPU && reads_host_only(g, n, host, &made);
    }
}

Status graph_hoist_host(Graph *g, Arena *scratch)
{
    bool *host = arena_alloc(scratch, (size_t)g->nnodes + 1);
    if (!host) return ST_NOMEM;
    mark_host(g, host);
    bool seen_npu = false, late = false;
    for (int i = 0; i < g->nnodes; i++) {
        late |= host[i] && seen_npu;
        seen_npu |= !g->nodes[i].dead && g->nodes[i].place == PLACE_NPU;
    }
    Status st = late ? graph_move_first(g, host) : ST_OK;
    if (st == ST_OK) graph_number_parts(g);
    return st;
}

/* Views of host-side data that stay on the host (see the top). A moved view can make its own
 * producer view read on the CPU, so the rule runs until nothing moves (each round moves a node
 * NPU -> CPU, so it ends; view chains are short). */
static void keep_host_views(Graph *g, bool *host)
{
    for (bool moved = true; moved;) {
        moved = false;
        for (int i = 0; i < g->nnodes; i++) {
            Node *n = &g->nodes[i];
            bool made;
            bool only = !n->dead && reads_host_only(g, n, host, &made);
            if (only && n->place == PLACE_NPU && (op_info[n->op].flags & OPF_VIEW) &&
                (made || (!op_keeps_order(n->op) && read_on_cpu(g, n)))) {
                n->place = PLACE_CPU;
                n->why_cpu = made ? "a view of host-made data stays on the host with it"
                                  : "a view of host-side data that the CPU reads runs there";
                moved = true;
            }
            host[i] = only && n->place == PLACE_CPU;
        }
    }
}

Status pass_partition(Graph *g, PassCtx *c)
{
    bool *host = arena_alloc(c->scratch, (size_t)g->nnodes + 1);
    if (!host) return ST_NOMEM;
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = &g->nodes[i];
        if (n->dead) continue;
        const char *why = NULL;
        bool ok = npu_supports(g, n, &why);
        if (ok && compile_forced_cpu(c->opt, n)) {
            ok = false;
            why = "forced onto the CPU (--cpu-op)";
        }
        n->place = ok ? PLACE_NPU : PLACE_CPU;
        n->why_cpu = ok ? NULL : why;
    }
    keep_host_views(g, host);
    return graph_hoist_host(g, c->scratch);
}
