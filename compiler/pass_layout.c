/* layout: NPU conv-family tensors (4-D outputs of conv, pools, batch_norm, and same-shape
 * elementwise ops over padded inputs) get dim 1 padded to the target's channel tile. Where a
 * padded tensor meets a consumer that reads dense memory (a view, a linear, the CPU, a graph
 * output), an explicit depad conversion is inserted: never a silent misread. Batch
 * size > 1 is correct because the padded shape is [N, Cpad, H, W], not a padded flat buffer. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "compiler/fusion.h"
#include "compiler/pass.h"
#include "compiler/strided.h"

static bool conv_family(OpId op)
{
    return op == OP_CONV2D || op == OP_MAX_POOL2D || op == OP_AVG_POOL2D ||
           op == OP_ADAPTIVE_AVG_POOL2D || op == OP_BATCH_NORM;
}

static bool same_shape(const GTensor *a, const GTensor *b)
{
    return shape_equal(a->rank, a->shape, b->rank, b->shape);
}

/* Elementwise over tensors of one shape: reads padded memory as well as dense. */
static bool layout_agnostic(const Graph *g, const Node *n)
{
    if (!(op_info[n->op].flags & OPF_ELTWISE) || n->op == OP_TO_DTYPE) return false;
    const GTensor *o = node_output(g, n, 0);
    for (int k = 0; k < n->nin; k++)
        if (!same_shape(node_input(g, n, k), o)) return false;
    return true;
}

/* Does c run alone as a kernel that addresses its operand t with t's own physical strides over
 * the logical output shape (lower_binary.c, lower_where.c: any operand, a broadcast one included,
 * as the squeeze-excite scale's padded [N, C, 1, 1] times a padded [N, C, H, W]; lower_copy.c:
 * the gather of a permute, slice, expand, pad or roll along dims walks its input so, and a permute
 * of a padded tensor is never a view: pass_views.c)? A member of an enabled fusion runs as its
 * instance's kernel instead. */
static bool strided_kernel(const Graph *g, const Node *c, int t)
{
    if (c->fusion >= 0 && g->fusions[c->fusion].enabled) return false;
    KernelKind k = op_info[c->op].kernel;
    if (k == KK_transpose || k == KK_slice || k == KK_expand) return c->in[0] == t;
    /* pad and roll walk their input by its strides per dim; a roll of the flattened tensor
     * does not */
    int64_t d[NPU_MAX_RANK];
    if (k == KK_pad)
        return c->in[0] == t && (c->op != OP_ROLL || attr_ints(c, "dims", d, NPU_MAX_RANK) > 0);
    return k == KK_binary || k == KK_where;
}

/* Is t an intermediate of an enabled fusion that c belongs to? The fused kernel never writes
 * such a tensor to memory, so c does not read it from memory in any layout. */
static bool fused_internal(const Graph *g, const Node *c, int t)
{
    int p = g->tensors[t].producer;
    if (c->fusion < 0 || p < 0 || g->nodes[p].fusion != c->fusion) return false;
    return g->fusions[c->fusion].enabled;
}

/* Are the rows of layernorm_t instance f found over its x as padded now? */
static bool layernorm_t_reads_padded(const Graph *g, const Fusion *f)
{
    for (int i = 0; i < f->nnodes; i++) {
        if (g->nodes[f->nodes[i]].op != OP_LAYER_NORM) continue;
        SvRows r;
        const char *why = NULL;
        return sv_norm_rows(g, f->nodes, f->nnodes, f->nodes[i], &r, &why);
    }
    return false;
}

/* Is c a member of an enabled instance of pattern `family` (its registry name)? */
static bool member_of(const Graph *g, const Node *c, const char *family)
{
    const Fusion *f = c->fusion >= 0 ? &g->fusions[c->fusion] : NULL;
    return f && f->enabled && f->family && strcmp(f->family, family) == 0;
}

/* Does consumer node c read input tensor t in t's padded layout? */
static bool reads_padded(const Graph *g, const Node *c, int t)
{
    /* A depad between two members of one fused kernel would read a tensor that kernel never
     * writes: conv_add whose residual is dense (it came from the CPU) hit this. The fused
     * kernel takes each outside operand's own layout, so the member needs no conversion. */
    if (fused_internal(g, c, t)) return true;
    if (c->place != PLACE_NPU) return false;
    /* a generated kernel (fuse-elementwise) addresses each outside operand with its own
     * physical strides, padding included */
    if (c->fusion >= 0 && g->fusions[c->fusion].enabled &&
        strcmp(g->fusions[c->fusion].pattern, FUSE_ELEMENTWISE) == 0)
        return true;
    /* a layernorm_t instance reads its x through the strides of its members' permutes
     * (lower_norm.c): padded too where the chain allows it (compiler/strided.h) */
    if (member_of(g, c, "layernorm_t")) return layernorm_t_reads_padded(g, &g->fusions[c->fusion]);
    /* a conv_scale instance's multiply: the conv kernel reads x and the scale at their own
     * channel pitch (lower_conv2d.c) */
    if (c->op == OP_MUL && member_of(g, c, "conv_scale")) return true;
    if (conv_family(c->op)) return c->in[0] == t; /* data input, not weights */
    if (strided_kernel(g, c, t)) return true;
    if (layout_agnostic(g, c)) {
        for (int k = 0; k < c->nin; k++)
            if (!g->tensors[c->in[k]].padded) return false;
        return true;
    }
    return false;
}

Status pass_layout(Graph *g, PassCtx *c)
{
    int tile = c->opt->channel_tile > 0 ? c->opt->channel_tile : 32;
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = &g->nodes[i];
        if (n->dead || n->place != PLACE_NPU || n->nout != 1) continue;
        GTensor *o = &g->tensors[n->out[0]];
        /* a view inside another tensor's storage (a cat's part: compiler/pass_cat.c) keeps the
         * layout of its place there, dense */
        if (o->rank != 4 || !dtype_is_float(o->dtype) || o->alias_of >= 0) continue;
        bool pad = conv_family(n->op);
        if (!pad && layout_agnostic(g, n) && n->nin > 0) {
            pad = true;
            for (int k = 0; k < n->nin; k++)
                pad &= g->tensors[n->in[k]].padded != 0;
        }
        if (!pad) continue;
        int64_t cp = (o->shape[1] + tile - 1) / tile * tile;
        if (cp == o->shape[1] && !conv_family(n->op)) continue;
        o->padded = cp != o->shape[1];
        o->pshape[1] = cp;
    }
    /* conversions: every padded tensor read densely by some consumer gets one depad node right
     * after its producer; those consumers are rewired to the dense copy */
    for (int t = 0; t < g->ntensors; t++) {
        GTensor *x = &g->tensors[t];
        if (!x->padded || x->producer < 0) continue;
        bool need = x->is_output;
        for (int k = 0; k < x->nconsumers && !need; k++)
            need = !reads_padded(g, &g->nodes[x->consumers[k]], t);
        if (!need) continue;
        char *name = arena_printf(&g->arena, "%s@dense", x->name);
        int dense = graph_add_tensor(g, name, g->tensors[t].dtype, g->tensors[t].rank,
                                     g->tensors[t].shape, TK_ACT);
        if (dense < 0) return ST_NOMEM;
        x = &g->tensors[t];
        int producer = x->producer;
        /* rewire dense readers first (the list changes once the node is inserted) */
        int ncons = x->nconsumers;
        int cons[256];
        if (ncons > 256) ncons = 256;
        for (int k = 0; k < ncons; k++)
            cons[k] = x->consumers[k];
        for (int k = 0; k < ncons; k++) {
            Node *cn = &g->nodes[cons[k]];
            if (reads_padded(g, cn, t)) continue;
            for (int a = 0; a < cn->nin; a++)
                if (cn->in[a] == t) cn->in[a] = dense;
        }
        if (x->is_output) {
            /* the graph output keeps its name: the padded producer writes a renamed tensor */
            for (int i = 0; i < g->noutputs; i++)
                if (g->outputs[i] == t) g->outputs[i] = dense;
            const char *orig = x->name;
            if (!graph_name_tensor(g, t, arena_printf(&g->arena, "%s@padded", orig)) ||
                !graph_name_tensor(g, dense, orig))
                return ST_NOMEM;
        }
        char *nname = arena_printf(&g->arena, "depad_%s", g->tensors[t].name);
        int in[1] = {t}, out[1] = {dense};
        if (graph_insert_node(g, producer + 1, nname, OP_DEPAD, in, 1, out, 1) < 0) return ST_NOMEM;
        Node *dn = &g->nodes[producer + 1];
        dn->place = PLACE_NPU;
        dn->part = g->nodes[producer].part;
        dn->fusion = -1;
        dn->own = true;
    }
    return graph_link(g);
}
