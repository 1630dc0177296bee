/* Prologue folds: an rmsnorm or silu_mul instance computed inside the GEMVs that read its output
 * (shaders/gemv.glsl GEMV_PRO), so its kernel and its dependent level disappear from the decode.
 * A fold is an instance of its own (pattern rmsnorm_linear / silu_mul_linear, recorded by the
 * fuse pass after the pattern walk) over the members of the instance it folds, its "base"; the
 * base stays as it is, so switching the fold off gives back exactly the base's kernel. While
 * both are enabled the base is `folded`: it runs no kernel, its output is never written, and
 * every kernel reading that output reads the base's operands instead (graph_kernel_inputs):
 *   rmsnorm_linear:  y[n] = r * sum_k x[k] * gamma[k] * W[n, k] (+ bias, act, residual),
 *                    r = 1 / sqrt(mean_k x[k]^2 + eps), the sum of squares accumulated in the
 *                    loop that loads x;
 *   silu_mul_linear: y[n] = sum_k silu(gate[k]) * up[k] * W[n, k] (+ ...).
 * The match requires what makes lowering take the gemv path: every reader a linear on the NPU
 * reading the output as its input (the weight [N, K] contiguous along K), at most 4 rows and K a
 * multiple of 8 (the 16-byte vectors of 16-bit storage, and of f32). The tiled matmul (prefill)
 * has no prologue: more rows are a near miss. The CPU backend runs the base's members before
 * each reader kernel (they join its provenance), the CPU reference the ATen nodes. */
#include "compiler/fusion.h"
#include "compiler/pass.h"

#include <string.h>

/* (A fold runs no kernel: its kind is KK_NONE.) */
static bool is_rmsnorm(const Fusion *f)
{
    return f->kernel == KK_rmsnorm;
}

static bool is_silu_mul(const Fusion *f)
{
    return f->kernel == KK_silu_mul;
}

static const Node *member(const Graph *g, const Fusion *f, OpId op)
{
    for (int i = 0; i < f->nnodes; i++)
        if (g->nodes[f->nodes[i]].op == op) return &g->nodes[f->nodes[i]];
    return NULL;
}

static bool inside(const Fusion *f, int node)
{
    for (int i = 0; i < f->nnodes; i++)
        if (f->nodes[i] == node) return true;
    return false;
}

bool fuse_fold_operands(const Graph *g, const Fusion *base, int *a, int *b, double *eps)
{
    *a = *b = -1;
    *eps = 0.0;
    if (is_rmsnorm(base)) {
        const Node *pw = member(g, base, OP_POW), *add = member(g, base, OP_ADD);
        /* the weight multiply writes the instance's output; the weight is its operand that no
         * member produces */
        const Node *mw = NULL;
        for (int i = 0; i < base->nnodes; i++) {
            const Node *n = &g->nodes[base->nodes[i]];
            if (n->op == OP_MUL && n->nout == 1 && n->out[0] == base->out && n->nin == 2) mw = n;
        }
        if (!pw || !add || !mw || !attr_present(add, "other")) return false;
        for (int s = 0; s < 2; s++)
            if (!inside(base, g->tensors[mw->in[s]].producer)) *b = mw->in[s];
        *a = pw->in[0];
        *eps = attr_float(add, "other", 0.0) * attr_float(add, "alpha", 1.0);
        return *b >= 0;
    }
    if (is_silu_mul(base)) {
        const Node *s = member(g, base, OP_SILU), *m = member(g, base, OP_MUL);
        if (!s || !m || m->nin != 2) return false;
        *a = s->in[0];
        *b = m->in[0] == s->out[0] ? m->in[1] : m->in[0];
        return true;
    }
    return false;
}

const char *fuse_fold_match(const Graph *g, const Fusion *base, const char **why)
{
    *why = NULL;
    const char *name = is_rmsnorm(base)    ? "rmsnorm_linear"
                       : is_silu_mul(base) ? "silu_mul_linear"
                                           : NULL;
    if (!name) return NULL;
    const GTensor *y = &g->tensors[base->out];
    int a, b;
    double eps;
    if (!fuse_fold_operands(g, base, &a, &b, &eps))
        return (*why = "the members do not name the operands"), name;
    if (y->is_output) return (*why = "its output is a graph output"), name;
    if (y->nconsumers == 0) return (*why = "its output has no reader"), name;
    for (int c = 0; c < y->nconsumers; c++) {
        const Node *r = &g->nodes[y->consumers[c]];
        if (r->dead || r->op != OP_LINEAR || r->nin < 2 || r->in[0] != base->out)
            return (*why = "a reader is not a linear taking it as input (the prologue is the "
                           "GEMV's)"),
                   name;
        for (int k = 1; k < r->nin; k++)
            if (r->in[k] == base->out) return (*why = "a linear reads it as a weight"), name;
        if (r->place != PLACE_NPU) return (*why = "a reader runs on the CPU"), name;
        const GTensor *w = node_input(g, r, 1);
        if (w->rank != 2 || w->shape[1] != y->shape[y->rank - 1])
            return (*why = "a reader's weight is not [N, K]"), name;
    }
    if (y->rank < 1) return (*why = "its output is a scalar"), name;
    int64_t k = y->shape[y->rank - 1], rows = 1;
    for (int i = 0; i + 1 < y->rank; i++)
        rows *= y->shape[i];
    if (rows > GEMV_MAX_ROWS)
        return (*why =
                    "more than " ABI_STR(GEMV_MAX_ROWS) " rows: the tiled matmul has no prologue"),
               name;
    if (k % 8 != 0) return (*why = "K is not a multiple of 8 (the GEMV's 16-byte vectors)"), name;
    const GTensor *ta = &g->tensors[a], *tb = &g->tensors[b];
    if (ta->rank != y->rank || memcmp(ta->shape, y->shape, sizeof(int64_t) * (size_t)y->rank) ||
        (is_silu_mul(base) &&
         (tb->rank != y->rank || memcmp(tb->shape, y->shape, sizeof(int64_t) * (size_t)y->rank))))
        return (*why = "an operand is broadcast"), name;
    if (is_rmsnorm(base) && (tb->rank != 1 || tb->shape[0] != k))
        return (*why = "the weight is not a vector over the last dim"), name;
    return name;
}

int fuse_folded_at(const Graph *g, int t)
{
    for (int f = 0; f < g->nfusions; f++)
        if (g->fusions[f].folded && g->fusions[f].out == t) return f;
    return -1;
}

int fuse_fold_of(const Graph *g, int base)
{
    for (int f = 0; f < g->nfusions; f++)
        if (g->fusions[f].folds == base + 1) return f;
    return -1;
}

int graph_kernel_inputs(const Graph *g, int i, int *ins, int max)
{
    const Node *n = &g->nodes[i];
    int raw[64], nraw;
    if (n->fusion >= 0 && g->fusions[n->fusion].enabled) {
        nraw = fusion_inputs(g, &g->fusions[n->fusion], raw, 64);
    } else {
        nraw = n->nin < 64 ? n->nin : 64;
        memcpy(raw, n->in, sizeof(int) * (size_t)nraw);
    }
    int cnt = 0;
    for (int j = 0; j < nraw; j++) {
        int f = n->place == PLACE_NPU ? fuse_folded_at(g, raw[j]) : -1;
        if (f < 0) {
            if (cnt < max) ins[cnt++] = raw[j];
            continue;
        }
        /* the folded output: its operands instead, once each */
        int op[2];
        double eps;
        if (!fuse_fold_operands(g, &g->fusions[f], &op[0], &op[1], &eps)) continue;
        for (int s = 0; s < 2; s++) {
            bool dup = false;
            for (int q = 0; q < cnt; q++)
                dup |= ins[q] == op[s];
            if (!dup && cnt < max) ins[cnt++] = op[s];
        }
    }
    return cnt;
}
