/* The fusion pattern registry (priority order) and its match functions (the attention patterns'
 * in fuse_attention.c, what they share in fuse_match.h). Every match requires
 * that intermediate tensors have exactly one consumer and are not graph outputs, that all
 * members run on the NPU and are not taken, and that shapes fit the fused kernel. The fused
 * kernel runs at the position of the last member, where every outside input is ready (a
 * linear_concat instance, whose parts are read right after each member, at the first one:
 * its inputs are ready there; fuse_concat.c). */
#include "compiler/fusion.h"
#include "compiler/fuse_match.h"
#include "common/cmp.h"
#include "compiler/act.h"
#include "compiler/strided.h"
#include "compiler/codegen/codegen_build.h"

#include <stdlib.h>
#include <string.h>

#include "common/half.h"

bool fuse_usable(const Graph *g, int node, const bool *taken)
{
    const Node *n = &g->nodes[node];
    return !n->dead && !taken[node] && n->place == PLACE_NPU;
}

bool fuse_add(FuseMatch *m, int node)
{
    if (m->n >= FUSE_MAX_NODES) return false;
    m->nodes[m->n++] = node;
    return true;
}

bool fuse_same_shape(const GTensor *a, const GTensor *b)
{
    return shape_equal(a->rank, a->shape, b->rank, b->shape);
}

int fuse_next_op(const Graph *g, int t, OpId op, const bool *taken)
{
    int c = graph_only_consumer(g, t);
    if (c < 0 || g->nodes[c].op != op || !fuse_usable(g, c, taken)) return -1;
    return c;
}

bool fuse_plain_binary(const Node *n)
{
    return n->nin == 2 && attr_float(n, "alpha", 1.0) == 1.0;
}

/* Is v exactly a half-precision value? (hardtanh's bounds travel to the conv epilogue as two
 * halves of one push word: lower_conv2d.c) */
static bool half_exact(double v)
{
    return (double)f16_to_f32(f32_to_f16((float)v)) == v;
}

/* The activation the conv epilogue applies after the (conv + add) output t: any of
 * compiler/act.c's table, hardtanh only with half-exact bounds. Its row and node, or NULL. */
static const EpiAct *conv_act(const Graph *g, int t, const bool *taken, int *node, const char **why)
{
    int c = graph_only_consumer(g, t);
    if (c < 0 || !fuse_usable(g, c, taken)) return NULL;
    const Node *n = &g->nodes[c];
    const EpiAct *a = epi_act(n);
    if (a && a->op == OP_HARDTANH &&
        (!half_exact(attr_float(n, "min_val", -1.0)) ||
         !half_exact(attr_float(n, "max_val", 1.0)))) {
        *why = "hardtanh bounds are not exact in half precision (the conv epilogue's push word)";
        return NULL;
    }
    if (a) *node = c;
    return a;
}

/* The conv epilogue's members after conv `node` appended to m: a plain add of a same-shape tensor
 * (*add, -1 when none), then an activation of compiler/act.c's table (returned; NULL when none,
 * *why saying why not when one is there but cannot join). */
static const EpiAct *conv_epilogue(const Graph *g, int node, const bool *taken, FuseMatch *m,
                                   int *add, const char **why)
{
    int out = g->nodes[node].out[0];
    int a = fuse_next_op(g, out, OP_ADD, taken);
    *add = -1;
    if (a >= 0 && fuse_plain_binary(&g->nodes[a])) {
        const Node *an = &g->nodes[a];
        int other = an->in[0] == out ? an->in[1] : an->in[0];
        if (fuse_same_shape(&g->tensors[other], &g->tensors[out])) {
            fuse_add(m, a);
            out = an->out[0];
            *add = a;
        }
    }
    int r = -1;
    const EpiAct *act = conv_act(g, out, taken, &r, why);
    if (act) fuse_add(m, r);
    return act;
}

/* conv2d (+ residual add) (+ an activation of compiler/act.c's table) */
static bool match_conv(const Graph *g, int node, const bool *taken, FuseMatch *m, const char **why)
{
    const Node *conv = &g->nodes[node];
    fuse_add(m, node);
    const char *act_why = NULL;
    int a;
    const EpiAct *act = conv_epilogue(g, node, taken, m, &a, &act_why);
    if (m->n == 1) {
        *why = act_why                                   ? act_why
               : g->tensors[conv->out[0]].nconsumers > 1 ? "conv output has several consumers"
                                                         : NULL;
        return false;
    }
    m->variant = !act ? "conv_add" : a >= 0 ? act->conv_add : act->conv;
    return true;
}

bool fuse_scale_operands(const Graph *g, const Node *mul, int *x, int *s, const char **why)
{
    const GTensor *p = node_output(g, mul, 0);
    if (mul->op != OP_MUL || mul->nin != 2 || (p->rank != 3 && p->rank != 4)) return false;
    int k = fuse_same_shape(node_input(g, mul, 0), p) ? 0 : 1;
    const GTensor *xt = node_input(g, mul, k), *st = node_input(g, mul, 1 - k);
    if (!fuse_same_shape(xt, p) || fuse_same_shape(st, p)) return false; /* no broadcast */
    /* s right-aligned to x: the channel dim C, 1 below it, the batch N or 1 (or absent) */
    int o = p->rank - st->rank, c = p->rank - 3;
    bool fits = o >= 0 && o <= c;
    for (int d = 0; d < st->rank && fits; d++) {
        int64_t e = st->shape[d], want = p->shape[d + o];
        fits = d + o == c ? e == want : e == 1 || (d + o < c && e == want);
    }
    if (!fits) {
        if (why) *why = "the multiply's broadcast operand is not one scale per (image, channel)";
        return false;
    }
    if (xt->dtype != p->dtype || st->dtype != p->dtype || !dtype_is_float(p->dtype)) {
        if (why) *why = "the scale, x and their product differ in dtype";
        return false;
    }
    *x = mul->in[k];
    *s = mul->in[1 - k];
    return true;
}

/* conv_scale: x * s -> conv2d (+ residual add) (+ activation), s one value per (image, channel)
 * of x (squeeze-excite's sigmoid or hardsigmoid of the excite conv): the conv kernel scales x as
 * it loads it (shaders/conv2d_common.glsl CONV_SCALE) and the product is never written. */
static bool match_conv_scale(const Graph *g, int node, const bool *taken, FuseMatch *m,
                             const char **why)
{
    const Node *conv = &g->nodes[node];
    int pt = conv->in[0], mul = g->tensors[pt].producer, x, s;
    if (mul < 0 || g->nodes[mul].op != OP_MUL || !fuse_usable(g, mul, taken)) return false;
    if (!fuse_scale_operands(g, &g->nodes[mul], &x, &s, why)) return false;
    if (graph_only_consumer(g, pt) != node)
        return (*why = "the scaled input has other consumers (or is a graph output)"), false;
    const GTensor *xt = &g->tensors[x], *wt = node_input(g, conv, 1);
    if (xt->shape[xt->rank - 1] == 1 && xt->shape[xt->rank - 2] == 1 && wt->rank == 4 &&
        wt->shape[2] == 1 && wt->shape[3] == 1 && attr_int(conv, "groups", 1) == 1)
        return (*why = "a pointwise conv over a 1x1 map runs as a matrix-vector product "
                       "(conv2d_gemv, conv2d_mv), which takes no input scale"),
               false;
    fuse_add(m, mul);
    fuse_add(m, node);
    const char *act_why = NULL;
    int a;
    conv_epilogue(g, node, taken, m, &a, &act_why);
    m->variant = a >= 0 ? "conv_scale_add" : "conv_scale";
    return true;
}

/* Does add n read a batch norm left on the NPU (one that did not fold into a conv) that only it
 * reads? fuse-elementwise then computes the norm, the add and the relu in one generated kernel,
 * where add_relu would leave the norm a kernel of its own. */
static bool reads_batchnorm(const Graph *g, const Node *n)
{
    for (int k = 0; k < n->nin; k++) {
        const GTensor *t = node_input(g, n, k);
        const char *why;
        if (t->producer < 0 || t->nconsumers != 1 || t->is_output) continue;
        const Node *p = &g->nodes[t->producer];
        if (p->op == OP_BATCH_NORM && p->place == PLACE_NPU && cg_node_supported(g, p, &why))
            return true;
    }
    return false;
}

/* add + relu */
static bool match_add_relu(const Graph *g, int node, const bool *taken, FuseMatch *m,
                           const char **why)
{
    const Node *n = &g->nodes[node];
    if (!fuse_plain_binary(n)) return false;
    int r = fuse_next_op(g, n->out[0], OP_RELU, taken);
    if (r < 0) {
        const GTensor *o = &g->tensors[n->out[0]];
        if (o->nconsumers > 1)
            for (int k = 0; k < o->nconsumers; k++)
                if (g->nodes[o->consumers[k]].op == OP_RELU)
                    *why = "add output has several consumers";
        return false;
    }
    if (reads_batchnorm(g, n)) {
        *why = "an operand is a batch norm's: one generated kernel computes norm, add and relu";
        return false;
    }
    fuse_add(m, node);
    fuse_add(m, r);
    m->variant = "add_relu";
    return true;
}

/* RMSNorm: pow(x,2) -> mean(-1, keepdim) -> fuse_add(eps) -> rsqrt -> mul(x, .) -> mul(w, .) */
static bool match_rmsnorm(const Graph *g, int node, const bool *taken, FuseMatch *m,
                          const char **why)
{
    const Node *p = &g->nodes[node];
    if (p->nin != 1 || attr_float(p, "exponent", 0) != 2.0) return false;
    int x = p->in[0];
    int rank = g->tensors[x].rank;
    int mean = fuse_next_op(g, p->out[0], OP_MEAN, taken);
    if (mean < 0) return (*why = "pow output does not feed a single mean"), false;
    int64_t dims[NPU_MAX_RANK];
    const Node *mn = &g->nodes[mean];
    if (attr_ints(mn, "dim", dims, NPU_MAX_RANK) != 1 || norm_dim(dims[0], rank) != rank - 1 ||
        !attr_bool(mn, "keepdim", false))
        return (*why = "mean is not over the last dim with keepdim"), false;
    int eps = fuse_next_op(g, mn->out[0], OP_ADD, taken);
    if (eps < 0 || g->nodes[eps].nin != 1) return (*why = "no add of eps after the mean"), false;
    int rs = fuse_next_op(g, g->nodes[eps].out[0], OP_RSQRT, taken);
    if (rs < 0) return (*why = "no rsqrt after the eps add"), false;
    int m1 = fuse_next_op(g, g->nodes[rs].out[0], OP_MUL, taken);
    if (m1 < 0 || g->nodes[m1].nin != 2) return (*why = "rsqrt does not feed a single mul"), false;
    const Node *mu = &g->nodes[m1];
    int other = mu->in[0] == g->nodes[rs].out[0] ? mu->in[1] : mu->in[0];
    if (other != x) return (*why = "the normalised tensor is not the pow's input"), false;
    int m2 = fuse_next_op(g, mu->out[0], OP_MUL, taken);
    if (m2 < 0 || g->nodes[m2].nin != 2) return (*why = "no weight multiply after the norm"), false;
    const Node *mw = &g->nodes[m2];
    int w = mw->in[0] == mu->out[0] ? mw->in[1] : mw->in[0];
    const GTensor *wt = &g->tensors[w];
    if (wt->rank != 1 || wt->shape[0] != g->tensors[x].shape[rank - 1])
        return (*why = "the weight is not a vector over the last dim"), false;
    int seq[] = {node, mean, eps, rs, m1, m2};
    for (int i = 0; i < 6; i++)
        fuse_add(m, seq[i]);
    m->variant = "rmsnorm";
    return true;
}

/* The longest chains layernorm_t follows on either side of its layer_norm. */

static bool moves_data(const Graph *g, int node)
{
    return op_class(g->nodes[node].op) == OC_permute && !sv_permute_keeps_order(g, &g->nodes[node]);
}

int fuse_in_chain(const Graph *g, int t, const bool *taken, int *chain, int *move, const char **why)
{
    int n = 0;
    *move = 0;
    for (;;) {
        int p = g->tensors[t].producer;
        if (p < 0 || n == FUSE_PERMUTE_CHAIN || !sv_chain_op(g, &g->nodes[p]) ||
            !fuse_usable(g, p, taken))
            return n;
        if (graph_only_consumer(g, t) < 0) {
            for (int k = 0; k < FUSE_PERMUTE_CHAIN && p >= 0 && sv_chain_op(g, &g->nodes[p]); k++) {
                if (moves_data(g, p)) {
                    *why = "the permuted input has other readers (its copy stays)";
                    break;
                }
                p = g->tensors[g->nodes[p].in[0]].producer;
            }
            return n;
        }
        chain[n++] = p;
        if (moves_data(g, p)) *move = n;
        t = g->nodes[p].in[0];
    }
}

/* The permutes and reshapes reading tensor t, each the only reader of the one before, up to the
 * last that moves data (the reshapes after it stay views of the kernel's output): into chain[]
 * in order, their count (0 when none moves data). */
static int ln_out_chain(const Graph *g, int t, const bool *taken, int *chain)
{
    int n = 0, move = 0;
    for (;;) {
        int c = graph_only_consumer(g, t);
        if (c < 0 || n == FUSE_PERMUTE_CHAIN || !sv_chain_op(g, &g->nodes[c]) ||
            !fuse_usable(g, c, taken))
            return move;
        chain[n++] = c;
        if (moves_data(g, c)) move = n;
        t = g->nodes[c].out[0];
    }
}

/* layer_norm read through the permutes (and reshapes) making its input and/or written through
 * those reading its output, each side kept only when a permute on it moves data: ConvNeXt's
 * NCHW -> NHWC before the norm over channels and NHWC -> NCHW after it, Swin V2's window
 * reversal. The kernel reads x where the input chain's first node reads it (channel padding
 * included, pass_layout.c) and writes the output chain's last tensor (lower_norm.c). Reshapes
 * before the input side's farthest permute join when the strides allow (they let a padded x be
 * read in place), else the side starts at that permute. */
static bool match_layernorm_t(const Graph *g, int node, const bool *taken, FuseMatch *m,
                              const char **why)
{
    const Node *ln = &g->nodes[node];
    if (ln->nin < 1 || ln->nin > 3 || ln->nout != 1) return false;
    int in[FUSE_PERMUTE_CHAIN], out[FUSE_PERMUTE_CHAIN], move;
    const char *in_why = NULL;
    int nin = fuse_in_chain(g, ln->in[0], taken, in, &move, &in_why);
    int nout = ln_out_chain(g, ln->out[0], taken, out);
    if (!move && !nout) return (*why = in_why), false;
    /* the members in graph order: the input side from its farthest node, ln, the output side;
     * the input side whole, from its farthest permute, or (with an output side) none */
    int cuts[3] = {nin, move, 0};
    for (int c = 0; c < 3; c++) {
        int cut = move ? cuts[c] : 0;
        if ((c > 0 && cut == (move ? cuts[c - 1] : 0)) || (!cut && !nout)) continue;
        m->n = 0;
        for (int i = cut - 1; i >= 0; i--)
            fuse_add(m, in[i]);
        fuse_add(m, node);
        for (int i = 0; i < nout; i++)
            fuse_add(m, out[i]);
        SvRows r;
        if (sv_norm_rows(g, m->nodes, m->n, node, &r, why)) {
            m->variant = "layernorm_t";
            *why = NULL;
            return true;
        }
    }
    m->n = 0;
    return false;
}

/* silu(gate) * up, in either node order */
static bool match_silu_mul(const Graph *g, int node, const bool *taken, FuseMatch *m,
                           const char **why)
{
    const Node *s = &g->nodes[node];
    int mu = fuse_next_op(g, s->out[0], OP_MUL, taken);
    if (mu < 0) {
        if (g->tensors[s->out[0]].nconsumers > 1) *why = "silu output has several consumers";
        return false;
    }
    const Node *mn = &g->nodes[mu];
    if (mn->nin != 2) return false;
    int other = mn->in[0] == s->out[0] ? mn->in[1] : mn->in[0];
    if (!fuse_same_shape(&g->tensors[other], &g->tensors[s->out[0]]))
        return (*why = "the multiplier is broadcast"), false;
    fuse_add(m, node);
    fuse_add(m, mu);
    m->variant = "silu_mul";
    return true;
}

/* fuse_add(scores, mask) -> softmax(last dim); the mask may broadcast */
static bool match_masked_softmax(const Graph *g, int node, const bool *taken, FuseMatch *m,
                                 const char **why)
{
    const Node *a = &g->nodes[node];
    if (!fuse_plain_binary(a)) return false;
    int sm = fuse_next_op(g, a->out[0], OP_SOFTMAX, taken);
    if (sm < 0) return false;
    const GTensor *o = &g->tensors[a->out[0]];
    if (!fuse_same_shape(&g->tensors[a->in[0]], o))
        return (*why = "the scores are broadcast (only the mask may be)"), false;
    if (norm_dim(attr_int(&g->nodes[sm], "dim", -1), o->rank) != o->rank - 1)
        return (*why = "softmax is not over the last dim"), false;
    fuse_add(m, node);
    fuse_add(m, sm);
    m->variant = "masked_softmax";
    return true;
}

/* slice of x's last dim: returns true with start/end */
static bool last_dim_slice(const Graph *g, int node, int *x, int64_t *start, int64_t *end)
{
    const Node *n = &g->nodes[node];
    if (n->op != OP_SLICE || attr_int(n, "step", 1) != 1) return false;
    const GTensor *in = node_input(g, n, 0);
    if (norm_dim(attr_int(n, "dim", 0), in->rank) != in->rank - 1) return false;
    int64_t size = in->shape[in->rank - 1];
    int64_t s = attr_int(n, "start", 0), e = attr_int(n, "end", INT64_MAX);
    if (s < 0) s += size;
    if (e < 0) e += size;
    if (e > size) e = size;
    *x = n->in[0];
    *start = s;
    *end = e;
    return true;
}

/* The transpose or permute that makes the rotated tensor x, when the rope kernel can read its
 * input instead (prefill's [B, T, H, D] -> [B, H, T, D] then costs no copy): the last dim stays,
 * and x's only readers are the chain's two slices and x*cos (`readers`). Else -1. */
static int rope_transpose(const Graph *g, int x, const int readers[3], const bool *taken)
{
    const GTensor *xt = &g->tensors[x];
    int tp = xt->producer, perm[NPU_MAX_RANK];
    if (tp < 0 || (g->nodes[tp].op != OP_TRANSPOSE && g->nodes[tp].op != OP_PERMUTE) ||
        !fuse_usable(g, tp, taken) || xt->is_output || xt->nconsumers != 3 ||
        node_input(g, &g->nodes[tp], 0)->rank != xt->rank ||
        !node_perm(&g->nodes[tp], xt->rank, perm) || perm[xt->rank - 1] != xt->rank - 1)
        return -1;
    for (int c = 0; c < 3; c++)
        if (xt->consumers[c] != readers[0] && xt->consumers[c] != readers[1] &&
            xt->consumers[c] != readers[2])
            return -1;
    return tp;
}

/* The RoPE chain x*cos + cat(-x[..., h:], x[..., :h]) * sin ending at add `node`: its member
 * nodes in members[] (slice, neg, slice, cat, mul, mul, add, and the transpose making x when
 * rope_transpose finds one); the count, 0 for no match. */
static int rope_chain(const Graph *g, int node, const bool *taken, int members[8], const char **why)
{
    const Node *ad = &g->nodes[node];
    if (!fuse_plain_binary(ad)) return false;
    for (int order = 0; order < 2; order++) {
        int pa = g->tensors[ad->in[order]].producer, pb = g->tensors[ad->in[1 - order]].producer;
        if (pa < 0 || pb < 0 || g->nodes[pa].op != OP_MUL || g->nodes[pb].op != OP_MUL) continue;
        const Node *mb = &g->nodes[pb], *ma = &g->nodes[pa];
        if (mb->nin != 2 || ma->nin != 2) continue;
        for (int k = 0; k < 2; k++) {
            int pc = g->tensors[mb->in[k]].producer;
            if (pc < 0 || g->nodes[pc].op != OP_CAT || g->nodes[pc].nin != 2) continue;
            const Node *cat = &g->nodes[pc];
            int pn = g->tensors[cat->in[0]].producer, ps2 = g->tensors[cat->in[1]].producer;
            if (pn < 0 || ps2 < 0 || g->nodes[pn].op != OP_NEG) continue;
            int ps1 = g->tensors[g->nodes[pn].in[0]].producer;
            int x1, x2;
            int64_t s1, e1, s2, e2;
            if (ps1 < 0 || !last_dim_slice(g, ps1, &x1, &s1, &e1) ||
                !last_dim_slice(g, ps2, &x2, &s2, &e2) || x1 != x2)
                continue;
            const GTensor *xt = &g->tensors[x1];
            int64_t d = xt->shape[xt->rank - 1];
            if (d % 2 || s1 != d / 2 || e1 != d || s2 != 0 || e2 != d / 2) {
                *why = "the slices are not the two halves of the last dim";
                continue;
            }
            if (ma->in[0] != x1 && ma->in[1] != x1) {
                *why = "x*cos does not multiply the rotated tensor";
                continue;
            }
            int seq[] = {ps1, pn, ps2, pc, pb, pa, node};
            bool ok = true;
            for (int i = 0; i < 7 && ok; i++) {
                int nd = seq[i];
                ok = fuse_usable(g, nd, taken);
                if (ok && nd != node) ok = graph_only_consumer(g, g->nodes[nd].out[0]) >= 0;
            }
            if (!ok) {
                *why = "an intermediate of the rotation has other consumers";
                continue;
            }
            memcpy(members, seq, sizeof seq);
            int readers[3] = {ps1, ps2, pa}, tp = rope_transpose(g, x1, readers, taken);
            if (tp < 0) return 7;
            members[7] = tp;
            return 8;
        }
    }
    return 0;
}

/* RoPE: x*cos + cat(-x[..., h:], x[..., :h]) * sin */
static bool match_rope(const Graph *g, int node, const bool *taken, FuseMatch *m, const char **why)
{
    int members[8], nm = rope_chain(g, node, taken, members, why);
    if (!nm) return false;
    for (int i = 0; i < nm; i++)
        fuse_add(m, members[i]);
    m->variant = "rope";
    return true;
}

/* RoPE whose output is the source of an index_copy (the new rows of a KV cache): the rotated
 * rows are written straight into the cache (lower_rope.c). The rope chain's own near misses are
 * rope's to report. Prefill's many positions fuse too (a repeated index keeps the last row). */
static bool match_rope_cache(const Graph *g, int node, const bool *taken, FuseMatch *m,
                             const char **why)
{
    int members[8];
    const char *chain_why = NULL;
    int nm = rope_chain(g, node, taken, members, &chain_why);
    if (!nm) return false;
    const GTensor *r = &g->tensors[g->nodes[node].out[0]];
    int ic = -1;
    for (int c = 0; c < r->nconsumers; c++) {
        const Node *cn = &g->nodes[r->consumers[c]];
        if (cn->op == OP_INDEX_COPY && cn->nin == 3 && cn->in[2] == g->nodes[node].out[0])
            ic = r->consumers[c];
    }
    if (ic < 0) return false; /* a rope whose output is not stored into a cache (q) */
    if (r->nconsumers != 1 || r->is_output)
        return (*why = "the rope output has other readers than the index_copy"), false;
    const Node *n = &g->nodes[ic];
    if (!fuse_usable(g, ic, taken)) return (*why = "the index_copy runs on the CPU"), false;
    if (n->in[0] == n->in[2] || n->in[1] == n->in[2])
        return (*why = "the rope output is also the cache or the index"), false;
    if (r->rank > 4) return (*why = "more than 3 dims before the rotated dim"), false;
    int dim = norm_dim(attr_int(n, "dim", 0), r->rank);
    if (dim < 0 || dim == r->rank - 1)
        return (*why = "the index_copy is along the rotated (last) dim"), false;
    if (node_input(g, n, 1)->rank != 1) return (*why = "the index is not a vector"), false;
    for (int i = 0; i < nm; i++)
        fuse_add(m, members[i]);
    fuse_add(m, ic);
    m->variant = "rope_cache";
    return true;
}

bool fuse_rope_operands(const Graph *g, const Fusion *f, int *x, int *cos, int *sin, int *tp)
{
    *x = *cos = *sin = *tp = -1;
    const Node *sl = NULL, *cat = NULL;
    for (int i = 0; i < f->nnodes; i++) {
        const Node *n = &g->nodes[f->nodes[i]];
        if (n->op == OP_SLICE && !sl) sl = n;
        if (n->op == OP_CAT && !cat) cat = n;
    }
    if (!sl || !cat || cat->nout != 1) return false;
    int xt = sl->in[0], cat_out = cat->out[0], p = g->tensors[xt].producer;
    for (int i = 0; i < f->nnodes; i++) {
        const Node *m = &g->nodes[f->nodes[i]];
        if (f->nodes[i] == p) *tp = p;
        if (m->op != OP_MUL || m->nin != 2) continue;
        if (m->in[0] == cat_out || m->in[1] == cat_out)
            *sin = m->in[0] == cat_out ? m->in[1] : m->in[0];
        else
            *cos = m->in[0] == xt ? m->in[1] : m->in[0];
    }
    *x = xt;
    return *cos >= 0 && *sin >= 0;
}

/* index_copy whose source is a transpose (prefill's v [B, T, Hkv, D] -> [B, Hkv, T, D] stored
 * into the cache along T): the kernel reads the transpose's input with permuted strides, so
 * the copy is never made. The source's dims before the index_copy dim must collapse to one
 * stride and the dims after it stay contiguous (index_copy.comp's geometry). */
static bool match_index_copy_t(const Graph *g, int node, const bool *taken, FuseMatch *m,
                               const char **why)
{
    const Node *ic = &g->nodes[node];
    if (ic->nin != 3) return false;
    int tp = g->tensors[ic->in[2]].producer, perm[NPU_MAX_RANK];
    if (tp < 0 || (g->nodes[tp].op != OP_TRANSPOSE && g->nodes[tp].op != OP_PERMUTE) ||
        !fuse_usable(g, tp, taken) || graph_only_consumer(g, ic->in[2]) != node)
        return false;
    const GTensor *x = &g->tensors[ic->in[2]], *y = node_input(g, &g->nodes[tp], 0);
    int r = x->rank, dim = norm_dim(attr_int(ic, "dim", 0), r);
    if (y->rank != r || dim < 0 || !node_perm(&g->nodes[tp], r, perm) || ic->in[0] == ic->in[2] ||
        x->shape[dim] < 2) /* one position (decode): that transpose is a view */
        return false;
    /* x's strides: y's dense strides, permuted */
    int64_t sy[NPU_MAX_RANK], sx[NPU_MAX_RANK], acc = 1, so;
    for (int d = r - 1; d >= 0; d--) {
        sy[d] = acc;
        acc *= y->shape[d];
    }
    for (int d = 0; d < r; d++)
        sx[d] = sy[perm[d]];
    if (!strides_outer_m_inner(r, x->shape, sx, dim, &so, why)) return false;
    fuse_add(m, tp);
    fuse_add(m, node);
    m->variant = "index_copy_t";
    return true;
}

/* The activation that fuses after linear `node` (its single consumer, one of the table, and not
 * a silu feeding a single multiply: silu_mul has priority there), or -1; *variant its pattern. */
static int linear_act_node(const Graph *g, int node, const bool *taken, const char **variant)
{
    int c = graph_only_consumer(g, g->nodes[node].out[0]);
    if (c < 0 || !fuse_usable(g, c, taken)) return -1;
    if (g->nodes[c].op == OP_SILU) {
        int m2 = graph_only_consumer(g, g->nodes[c].out[0]);
        if (m2 >= 0 && g->nodes[m2].op == OP_MUL) return -1;
    }
    const EpiAct *a = epi_act(&g->nodes[c]);
    if (!a || !a->linear) return -1;
    *variant = a->linear;
    return c;
}

/* linear (with its bias) + activation */
static bool match_linear_act(const Graph *g, int node, const bool *taken, FuseMatch *m,
                             const char **why)
{
    (void)why;
    const char *variant = NULL;
    int c = linear_act_node(g, node, taken, &variant);
    if (c < 0) return false;
    fuse_add(m, node);
    fuse_add(m, c);
    m->variant = variant;
    return true;
}

/* Why the weights of linears a and b cannot be concatenated, or NULL. */
static const char *weight_mismatch(const Graph *g, int a, int b)
{
    const Node *na = &g->nodes[a], *nb = &g->nodes[b];
    const GTensor *wa = node_input(g, na, 1), *wb = node_input(g, nb, 1);
    if (wb->kind != TK_WEIGHT || wb->rank != 2) return "a weight is computed, not loaded";
    if (nb->nin > 2 && (node_input(g, nb, 2)->kind != TK_WEIGHT || node_input(g, nb, 2)->rank != 1))
        return "a bias is computed, not loaded";
    if (wb->shape[1] != wa->shape[1]) return "the weights differ in K";
    if (wb->dtype != wa->dtype) return "the weights differ in dtype";
    if ((na->nin > 2) != (nb->nin > 2)) return "one has a bias and another has none";
    return NULL;
}

/* Why linear c cannot be a part of an instance with linear `node` (c == node: whether node can
 * be a part at all), or NULL. */
static const char *concat_mismatch(const Graph *g, int node, int c, const bool *taken)
{
    const Node *b = &g->nodes[c];
    const char *w = weight_mismatch(g, node, c);
    if (w) return w;
    const char *va = NULL, *vb = NULL;
    int xa = linear_act_node(g, node, taken, &va), xb = linear_act_node(g, c, taken, &vb);
    if ((xa < 0) != (xb < 0) || (xa >= 0 && strcmp(va, vb) != 0) ||
        (xa >= 0 && strcmp(attr_str(&g->nodes[xa], "approximate", "none"),
                           attr_str(&g->nodes[xb], "approximate", "none")) != 0))
        return "the activations after them differ";
    int out = xb >= 0 ? g->nodes[xb].out[0] : b->out[0];
    if (g->tensors[out].is_output) return "a part's output is a graph output";
    return NULL;
}

/* Linear nodes reading one activation with weights of one K and dtype (all with a bias or none,
 * the same activation after each or none) become one matmul over the weights concatenated
 * along N (a load-time recipe); the parts are views of the combined output (fuse_concat.c). */
static bool match_linear_concat(const Graph *g, int node, const bool *taken, FuseMatch *m,
                                const char **why)
{
    const Node *n = &g->nodes[node];
    if (n->nin < 2) return false;
    const GTensor *x = &g->tensors[n->in[0]];
    int sib[64], ns = 0, fused = -1;
    for (int k = 0; k < x->nconsumers && ns < 64; k++) {
        int c = x->consumers[k];
        const Node *cn = &g->nodes[c];
        if (c == node || cn->dead || cn->op != OP_LINEAR || cn->nin < 2 || cn->in[0] != n->in[0])
            continue;
        bool dup = false;
        for (int j = 0; j < ns; j++)
            dup |= sib[j] == c;
        if (dup) continue;
        if (c > node && fuse_usable(g, c, taken))
            sib[ns++] = c;
        else if (taken[c])
            fused = c;
    }
    if (ns == 0) {
        /* left out of an instance of its siblings: say why */
        if (fused >= 0) *why = weight_mismatch(g, fused, node);
        if (fused >= 0 && !*why) *why = "the other linears on this input are fused without it";
        return false;
    }
    qsort(sib, (size_t)ns, sizeof(int), cmp_int);
    int64_t rows = 1;
    for (int i = 0; i + 1 < x->rank; i++)
        rows *= x->shape[i];
    if (rows != 1) return (*why = "more than one row (prefill): the parts would be strided"), false;
    const char *bad = concat_mismatch(g, node, node, taken);
    if (bad) return (*why = bad), false;
    int part[CONCAT_MAX_PARTS], np = 0;
    part[np++] = node;
    for (int i = 0; i < ns && np < CONCAT_MAX_PARTS; i++) {
        const char *r = concat_mismatch(g, node, sib[i], taken);
        /* the next part starts where the last one ends: aligned only after aligned parts */
        if (!r && node_input(g, &g->nodes[part[np - 1]], 1)->shape[0] % CONCAT_ALIGN != 0)
            r = "a part would not start at a multiple of 32 columns";
        if (r) {
            bad = r;
            continue;
        }
        part[np++] = sib[i];
    }
    if (np < 2) return (*why = bad), false;
    for (int i = 0; i < np; i++) {
        const char *variant = NULL;
        int act = linear_act_node(g, part[i], taken, &variant);
        fuse_add(m, part[i]);
        if (act >= 0) fuse_add(m, act);
    }
    m->variant = "linear_concat";
    m->parts = true;
    m->finish = fuse_concat_finish;
    return true;
}

/* The gated MLP around linear `node`, the gate's or the up's: silu(x Wg^T) * (x Wu^T), each
 * intermediate read once. Its nodes, or false (*why set when it is one but cannot fuse). */
static bool glu_nodes(const Graph *g, int node, const bool *taken, int *gl, int *ul, int *si,
                      int *mu, const char **why)
{
    int out = g->nodes[node].out[0], c = graph_only_consumer(g, out);
    if (c < 0 || !fuse_usable(g, c, taken)) return false;
    int other;
    if (g->nodes[c].op == OP_SILU) {
        *gl = node, *si = c;
        *mu = fuse_next_op(g, g->nodes[c].out[0], OP_MUL, taken);
        if (*mu < 0 || g->nodes[*mu].nin != 2) return false;
        const Node *mn = &g->nodes[*mu];
        other = mn->in[0] == g->nodes[c].out[0] ? mn->in[1] : mn->in[0];
        *ul = g->tensors[other].producer;
    } else if (g->nodes[c].op == OP_MUL && g->nodes[c].nin == 2) {
        const Node *mn = &g->nodes[c];
        *ul = node, *mu = c;
        other = mn->in[0] == out ? mn->in[1] : mn->in[0];
        *si = g->tensors[other].producer;
        if (*si < 0 || g->nodes[*si].op != OP_SILU || !fuse_usable(g, *si, taken) ||
            graph_only_consumer(g, other) != c)
            return false;
        *gl = g->tensors[g->nodes[*si].in[0]].producer;
    } else {
        return false;
    }
    if (*gl < 0 || *ul < 0 || *gl == *ul || g->nodes[*gl].op != OP_LINEAR ||
        g->nodes[*ul].op != OP_LINEAR || g->nodes[*ul].out[0] != other ||
        graph_only_consumer(g, g->nodes[*gl].out[0]) != *si || graph_only_consumer(g, other) != *mu)
        return false;
    if (!fuse_usable(g, *gl, taken) || !fuse_usable(g, *ul, taken))
        return (*why = "the other linear is fused already or runs on the CPU"), false;
    return true;
}

/* silu(linear(x, Wg)) * linear(x, Wu) as one matmul over Wg and Wu interleaved in runs of
 * GLU_BLOCK rows (a load-time recipe) with the GLU in its epilogue (fuse_concat.c,
 * shaders/matmul_glu.glsl). Prefill only: at most 4 rows, the GEMVs take the linears (gate|up
 * as linear_concat where it fits) and silu_mul_linear folds the product into down's. */
static bool match_linear_glu(const Graph *g, int node, const bool *taken, FuseMatch *m,
                             const char **why)
{
    int gl, ul, si, mu;
    if (g->nodes[node].nin < 2 || !glu_nodes(g, node, taken, &gl, &ul, &si, &mu, why)) return false;
    const Node *a = &g->nodes[gl], *b = &g->nodes[ul];
    if (a->in[0] != b->in[0])
        return (*why = "the gate and up linears read different inputs"), false;
    const GTensor *wa = node_input(g, a, 1), *x = node_input(g, a, 0);
    const char *w = weight_mismatch(g, ul, gl);
    if (!w) w = weight_mismatch(g, gl, ul);
    if (w) return (*why = w), false;
    if (node_input(g, b, 1)->shape[0] != wa->shape[0])
        return (*why = "the gate and up weights differ in rows"), false;
    if (wa->shape[0] % GLU_BLOCK != 0)
        return (*why = "the weights' rows are not a multiple of 16 (runs of 16 interleave)"), false;
    int64_t rows = 1;
    for (int i = 0; i + 1 < x->rank; i++)
        rows *= x->shape[i];
    if (rows <= GEMV_MAX_ROWS)
        return (*why = "at most " ABI_STR(GEMV_MAX_ROWS) " rows: the GEMVs take the linears, "
                                                         "silu_mul_linear the product"),
               false;
    int seq[] = {gl, si, ul, mu};
    for (int i = 0; i < 4; i++)
        fuse_add(m, seq[i]);
    m->variant = "linear_glu";
    m->finish = fuse_glu_finish;
    return true;
}

/* matrix product (+ residual add) (+ relu): the add's other operand has the product's shape and
 * dtype (o_proj and down_proj + the residual stream). A relu after the add joins the kernel. */
static bool match_linear_add(const Graph *g, int node, const bool *taken, FuseMatch *m,
                             const char **why)
{
    int out = g->nodes[node].out[0];
    const GTensor *o = &g->tensors[out];
    int a = fuse_next_op(g, out, OP_ADD, taken);
    if (a < 0) {
        if (o->nconsumers > 1)
            for (int k = 0; k < o->nconsumers; k++)
                if (g->nodes[o->consumers[k]].op == OP_ADD)
                    *why = "product output has several consumers";
        return false;
    }
    const Node *an = &g->nodes[a];
    if (an->nin != 2) return false; /* a scalar add: not a residual */
    if (!fuse_plain_binary(an)) return (*why = "the add scales its second operand (alpha)"), false;
    if (an->in[0] == an->in[1]) return (*why = "the add reads the product twice"), false;
    const GTensor *r = &g->tensors[an->in[0] == out ? an->in[1] : an->in[0]];
    const GTensor *y = &g->tensors[an->out[0]];
    if (!fuse_same_shape(r, o) || !fuse_same_shape(y, o))
        return (*why = "the residual is broadcast (it must have the product's shape)"), false;
    if (r->dtype != o->dtype || y->dtype != o->dtype)
        return (*why = "the residual has another dtype"), false;
    /* masked_softmax has priority: an add feeding a softmax is a mask */
    int sm = graph_only_consumer(g, an->out[0]);
    if (sm >= 0 && g->nodes[sm].op == OP_SOFTMAX)
        return (*why = "the add feeds a softmax (masked_softmax takes it)"), false;
    fuse_add(m, node);
    fuse_add(m, a);
    int relu = fuse_next_op(g, an->out[0], OP_RELU, taken);
    if (relu >= 0) fuse_add(m, relu);
    m->variant = relu >= 0 ? "linear_add_relu" : "linear_add";
    return true;
}

const FusePattern fuse_patterns[] = {
    {"conv_scale", OP_CONV2D, match_conv_scale,
     "x * s (s one value per image and channel: squeeze-excite's scale) -> conv2d(+bias)(+residual "
     "add)(+activation): the conv scales x as it loads it; switched off: the conv pattern",
     "conv", KK_conv2d},
    {"conv", OP_CONV2D, match_conv,
     "conv2d(+bias)(+residual add)(+relu|relu6|hardtanh|hardswish|hardsigmoid|silu|sigmoid|gelu|"
     "tanh)",
     NULL, KK_conv2d},
    {"add_relu", OP_ADD, match_add_relu, "add then relu", NULL, KK_add_relu},
    {"rmsnorm", OP_POW, match_rmsnorm, "pow, mean, add eps, rsqrt, mul x, mul weight", NULL,
     KK_rmsnorm},
    {"layernorm_t", OP_LAYER_NORM, match_layernorm_t,
     "layer_norm reading its input through the permutes (and reshapes) making it and/or writing "
     "its output through those after it (channels last and back, channel padding read in place)",
     NULL, KK_layernorm},
    {"silu_mul", OP_SILU, match_silu_mul, "silu(gate) * up (gated MLP), either node order", NULL,
     KK_silu_mul},
    {"masked_softmax", OP_ADD, match_masked_softmax, "add mask (broadcast) then softmax", NULL,
     KK_masked_softmax},
    {"index_copy_t", OP_INDEX_COPY, match_index_copy_t,
     "index_copy of a transposed source (prefill's v into the cache): the source read in place",
     NULL, KK_index_copy},
    {"rope_cache", OP_ADD, match_rope_cache,
     "rope whose output is stored into a KV cache by index_copy: the rotated rows written in place",
     "rope", KK_rope_cache},
    {"rope", OP_ADD, match_rope,
     "x*cos + rotate_half(x)*sin (the 7-op chain; a transpose making x is read through)", NULL,
     KK_rope},
    {"decode_attention", OP_TRANSPOSE, fuse_match_decode_attention,
     "one-query attention reading the KV cache directly, grouped-query heads, no repeat copy", NULL,
     KK_decode_attention},
    {"attention", OP_TRANSPOSE, fuse_match_attention,
     "decode_attention's kernel over several query rows (prefill), one workgroup per row, the mask "
     "per row; switched off: masked_softmax and the chain's own kernels",
     "masked_softmax", KK_decode_attention},
    {"linear_glu", OP_LINEAR, match_linear_glu,
     "silu(linear(x, Wg)) * linear(x, Wu) with more than 4 rows as one matmul over Wg and Wu "
     "interleaved, the GLU in its epilogue",
     "silu_mul", KK_matmul},
    {"linear_concat", OP_LINEAR, match_linear_concat,
     "linears on one input (q|k|v, gate|up) as one matmul over concatenated weights", NULL,
     KK_matmul},
    {"linear_act", OP_LINEAR, match_linear_act, "linear (with bias) then an activation", NULL,
     KK_matmul},
    {"linear_add", OP_LINEAR, match_linear_add, "linear then a residual add (same shape), relu",
     NULL, KK_matmul},
    {"linear_add", OP_ADDMM, match_linear_add, "addmm then a residual add (same shape), relu", NULL,
     KK_matmul},
    {"linear_add", OP_MATMUL, match_linear_add, "matmul then a residual add (same shape), relu",
     NULL, KK_matmul},
    {"linear_add", OP_BMM, match_linear_add, "bmm then a residual add (same shape), relu", NULL,
     KK_matmul},
    {"linear_add", OP_MM, match_linear_add, "mm then a residual add (same shape), relu", NULL,
     KK_matmul},
};
const int fuse_pattern_count = (int)(sizeof fuse_patterns / sizeof fuse_patterns[0]);

bool fuse_selected(const char *spec, const Fusion *f)
{
    /* a registry name selects its variants: "conv" selects conv_relu and conv_add_relu,
     * "linear_act" linear_relu ... linear_hardswish; a pattern's fallback selects it too ("rope"
     * selects rope_cache) and an extension's name its fallback forms (a rope_cache
     * switched off, now a rope: `fusion on F4` after `fusion off rope_cache` turns it back on);
     * the pass's name selects its instances (and turns the pass off:
     * pass_fuse_elt.c) */
    return strcmp(spec, "all") == 0 || strcmp(spec, f->id) == 0 || strcmp(spec, f->pattern) == 0 ||
           (f->family && strcmp(spec, f->family) == 0) || (f->base && strcmp(spec, f->base) == 0) ||
           (f->fell_back_from && strcmp(spec, f->fell_back_from) == 0) ||
           (strcmp(spec, "fuse-elementwise") == 0 && strcmp(f->pattern, FUSE_ELEMENTWISE) == 0);
}
