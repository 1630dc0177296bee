/* partition: mark each node NPU or CPU by the support check (op, attributes, shapes, dtypes),
 * hoist the CPU nodes that read nothing the NPU makes (tensor sources and what is built from
 * them and the graph inputs: arange/cumsum positions, integer comparisons for masks, and the
 * views of such data, which stay on the host with it) ahead of
 * the rest, keeping every other order, so they form one CPU partition before the NPU work rather
 * than splitting it (gpt_block: cpu, npu instead of cpu, npu, cpu, npu: one submit), and group
 * consecutive nodes of the same placement into numbered partitions. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/pass.h"
#include "compiler/support.h"

/* Moves the host-only nodes (host[i]) to the front in their order; the rest keep theirs.
 * Nothing to do when no such node follows an NPU node. */
static Status hoist_host_nodes(Graph *g, const bool *host)
{
    bool seen_npu = false, late = false;
    for (int i = 0; i < g->nnodes; i++) {
        late |= host[i] && seen_npu;
        seen_npu |= !g->nodes[i].dead && g->nodes[i].place == PLACE_NPU;
    }
    if (!late) return ST_OK;
    int *order = malloc(sizeof(int) * (size_t)(g->nnodes + 1));
    Node *moved = malloc(sizeof(Node) * (size_t)(g->nnodes + 1));
    if (!order || !moved) {
        free(order);
        free(moved);
        return ST_NOMEM;
    }
    int k = 0;
    for (int i = 0; i < g->nnodes; i++)
        if (host[i]) order[k++] = i;
    for (int i = 0; i < g->nnodes; i++)
        if (!host[i]) order[k++] = i;
    for (int i = 0; i < g->nnodes; i++)
        moved[i] = g->nodes[order[i]];
    memcpy(g->nodes, moved, sizeof(Node) * (size_t)g->nnodes);
    free(order);
    free(moved);
    if (!graph_index_nodes(g, 0)) return ST_NOMEM;
    return graph_link(g);
}

Status pass_partition(Graph *g, PassCtx *c)
{
    bool *host = arena_alloc(c->scratch, (size_t)g->nnodes + 1);
    if (!host) return ST_NOMEM;
    memset(host, 0, (size_t)g->nnodes + 1);
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
        /* host-only: on the CPU and reading only graph inputs, weights, constants and other
         * host-only nodes; a view (reshape, unsqueeze, ...) of host-made data stays with it */
        bool from_host = false, only_host = true;
        for (int k = 0; k < n->nin; k++) {
            int p = g->tensors[n->in[k]].producer;
            from_host |= p >= 0 && host[p];
            only_host &= p < 0 || host[p];
        }
        if (ok && only_host && from_host && (op_info[n->op].flags & OPF_VIEW)) {
            n->place = PLACE_CPU;
            n->why_cpu = "a view of host-made data stays on the host with it";
        }
        host[i] = n->place == PLACE_CPU && only_host;
    }
    Status st = hoist_host_nodes(g, host);
    if (st != ST_OK) return st;
    graph_number_parts(g);
    return ST_OK;
}
