/* pack-inputs: a float graph input whose device form differs from what the host holds (f32,
 * dense, row-major) is uploaded as it comes, one memcpy of the host bytes into an f32 device
 * tensor (GTensor.host_form), and a `pack` kernel, the first to read it, converts it to the device
 * form the rest of the plan reads (the compute dtype; the layout the consumers were compiled for).
 * The host then does no per-element work for it: cast one element at a time, ResNet's
 * 1x3x224x224 input cost the H100 host 1.06 ms of a 1.50 ms run (bench/NOTES.md "Inputs packed
 * on the GPU").
 *
 * Taken only where it pays: at least PACK_INPUTS_MIN elements (a dispatch and a barrier level
 * cost the GPU a few microseconds; the host casts ~1-2 ns per element), every reader on the NPU
 * (a CPU reader reads the host value anyway), and not the `self` of an index_copy (a KV cache
 * updated in place is state that the runtime carries from run to run in its device form).
 * Integer inputs are not taken: the host narrows i64 to i32 with a range check that names the
 * element out of range. Nothing changes when the compute dtype is f32 (device form = host form),
 * nor for a dense f16 input: the host's vector conversion (F16C) writes the device form into
 * mapped memory as fast as it would copy the f32 bytes, and half as many cross the bus
 * (bench/NOTES.md, the host's part of a run). So bf16 inputs and padded ones are what it packs.
 * Switched off (--disable pack-inputs), the plan is the one of before: the host packs. */
#include <stdio.h>
#include <string.h>
#include "compiler/pass.h"

/* Does any live node write t in place (index_copy's self, fused or not)? */
static bool written_in_place(const Graph *g, int t)
{
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = &g->nodes[i];
        if (!n->dead && n->op == OP_INDEX_COPY && n->nin > 0 && n->in[0] == t) return true;
    }
    return false;
}

static bool worth_packing(const Graph *g, const PassCtx *c, int t)
{
    const GTensor *x = &g->tensors[t];
    if (!dtype_is_float(x->dtype) || x->is_output || x->host_form || x->nconsumers == 0)
        return false;
    /* dense f32 is the host form; dense f16 the host converts as it copies (runtime/hostxf.c,
     * F16C: half the bytes over the bus and no kernel) */
    DType st = compile_storage(c->opt, x->dtype);
    if ((st == DT_F32 || st == DT_F16) && !x->padded) return false;
    int64_t min = c->opt->pack_min > 0 ? c->opt->pack_min : PACK_INPUTS_MIN;
    if (tensor_numel(x) < min) return false;
    for (int k = 0; k < x->nconsumers; k++)
        if (g->nodes[x->consumers[k]].place != PLACE_NPU) return false;
    return !written_in_place(g, t);
}

/* Where node i runs in kernel order: a fused member runs at its instance's anchor. */
static int run_pos(const Graph *g, int i)
{
    const Node *n = &g->nodes[i];
    return n->fusion >= 0 && g->fusions[n->fusion].enabled ? g->fusions[n->fusion].anchor : i;
}

Status pass_pack_inputs(Graph *g, PassCtx *c)
{
    for (int i = 0; i < g->ninputs; i++) {
        int t = g->inputs[i];
        if (!worth_packing(g, c, t)) continue;
        /* right before the first kernel that reads it */
        int pos = g->nnodes;
        for (int k = 0; k < g->tensors[t].nconsumers; k++) {
            int p = run_pos(g, g->tensors[t].consumers[k]);
            int q = g->tensors[t].consumers[k];
            if (p < pos) pos = p;
            if (q < pos) pos = q;
        }
        char *name = arena_printf(&g->arena, "%s@device", g->tensors[t].name);
        if (!name) return ST_NOMEM;
        int dev = graph_add_tensor(g, name, g->tensors[t].dtype, g->tensors[t].rank,
                                   g->tensors[t].shape, TK_ACT);
        if (dev < 0) return ST_NOMEM;
        GTensor *x = &g->tensors[t], *y = &g->tensors[dev];
        /* the device form keeps the layout the consumers were compiled for; the host form is
         * dense */
        memcpy(y->pshape, x->pshape, sizeof y->pshape);
        y->padded = x->padded;
        x->padded = 0;
        memcpy(x->pshape, x->shape, sizeof x->pshape);
        x->host_form = true;
        graph_replace_uses(g, t, dev);
        for (int f = 0; f < g->nfusions; f++)
            for (int k = 0; k < g->fusions[f].nkin; k++)
                if (g->fusions[f].kin[k] == t) g->fusions[f].kin[k] = dev;
        char *nname = arena_printf(&g->arena, "pack_%s", g->tensors[t].name);
        int in[1] = {t}, out[1] = {dev};
        if (!nname || graph_insert_node(g, pos, nname, OP_PACK, in, 1, out, 1) < 0) return ST_NOMEM;
        Node *pn = &g->nodes[pos];
        pn->place = PLACE_NPU;
        pn->fusion = -1;
        pn->own = true;
    }
    graph_number_parts(g);
    return graph_link(g);
}
