/* partition: mark each node NPU or CPU by the support check (op, attributes, shapes, dtypes) and
 * group consecutive nodes of the same placement into numbered partitions. */
#include "pass.h"
#include "support.h"

Status pass_partition(Graph *g, PassCtx *c)
{
    int part = -1;
    Placement prev = PLACE_CPU;
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
        if (part < 0 || n->place != prev) part++;
        prev = n->place;
        n->part = part;
    }
    g->nparts = part + 1;
    return ST_OK;
}
