/* matmul: the matrix-product family (linear, addmm, matmul, bmm, mm, and the linear_act fusions
 * linear_relu ... linear_hardswish). Every op is reduced, as runtime/cpu_matmul.c does, to a batch
 * of M x N products over K with broadcast batch strides, an optional bias with its own strides,
 * alpha, beta and an activation code; shaders/matmul.comp computes it on one of two paths chosen
 * here: a vector path when M == 1 (decode GEMV: K split across a workgroup) and a tiled path
 * otherwise. Two stems that differ only in their bindings: `matmul` (A, B, bias, Y; addmm's inputs
 * are reordered to that) and `matmul_nb` when there is no bias term (A, B, Y).
 * Push: {M, N, K, b_ks, b_ns, nbatch, bdim[4], sa[4], sb[4], bias_ms, bias_ns, act, alpha, beta}.
 * Spec: {WG, vector, TM, TN, TK}. */
#include "kernels.h"

#include <string.h>

/* Activation codes the shader switches on (shaders/matmul.comp activate()): explicit numbers,
 * so a .npubin does not depend on the order of ops.def. */
enum { ACT_NONE = 0, ACT_RELU, ACT_GELU_ERF, ACT_GELU_TANH, ACT_SILU, ACT_SIGMOID, ACT_TANH,
       ACT_HARDSWISH };

#define MM_BATCH_DIMS 4

/* The reduced problem. */
typedef struct MmDesc {
    int64_t m, n, k, b_ks, b_ns, nbatch;
    int64_t bdim[MM_BATCH_DIMS], sa[MM_BATCH_DIMS], sb[MM_BATCH_DIMS];
    int bias_arg; /* kernel argument of the bias, -1 for none */
    int64_t bias_ms, bias_ns;
    double alpha, beta;
    uint32_t act;
} MmDesc;

/* The kernel argument bound to input j of product node p. A single node binds its inputs as they
 * are (an operand given twice is bound twice); a fused kernel binds the group's outside inputs in
 * member order without duplicates, so positions are looked up by tensor. */
static int arg_of(const KernelCtx *c, const PlanKernel *k, const Node *p, int j)
{
    if (!c->fusion) return j < k->nin ? j : -1;
    const char *name = c->g->tensors[p->in[j]].name;
    for (int i = 0; i < k->nin; i++)
        if (strcmp(kc_arg(k, c->p, i)->name, name) == 0) return i;
    return -1;
}

static bool dense(const PlanTensor *t)
{
    for (int i = 0; i < t->rank; i++)
        if (t->pshape[i] != t->shape[i]) return false;
    return true;
}

/* Strides that broadcast a bias of rank <= 2 over [m, n] (cpu_matmul.c bias_strides). */
static bool bias_strides(const PlanTensor *b, int64_t m, int64_t n, int64_t *ms, int64_t *ns)
{
    if (b->rank > 2) return false;
    int64_t bm = b->rank == 2 ? b->shape[0] : 1, bn = b->rank >= 1 ? b->shape[b->rank - 1] : 1;
    if ((bm != m && bm != 1) || (bn != n && bn != 1)) return false;
    *ns = bn == 1 ? 0 : 1;
    *ms = bm == 1 ? 0 : bn;
    return true;
}

static int64_t prod(const int64_t *v, int n)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++) p *= v[i];
    return p;
}

/* torch.matmul / bmm / mm: 1-D operands promoted, batch dims broadcast right-aligned. The batch
 * is kept in at most MM_BATCH_DIMS dims: size-1 dims dropped, mergeable neighbours merged. */
static Status desc_matmul(const KernelCtx *c, const PlanTensor *a, const PlanTensor *b, MmDesc *d)
{
    int ra = a->rank, rb = b->rank;
    if (ra < 1 || rb < 1) return kc_error(c, "matmul: an operand is a scalar");
    d->m = ra == 1 ? 1 : a->shape[ra - 2];
    d->k = a->shape[ra - 1];
    int64_t kb = rb == 1 ? b->shape[0] : b->shape[rb - 2];
    d->n = rb == 1 ? 1 : b->shape[rb - 1];
    if (kb != d->k) return kc_error(c, "matmul: inner dimensions differ");
    d->b_ks = rb == 1 ? 1 : d->n;
    d->b_ns = rb == 1 ? 0 : 1;
    int na = ra > 2 ? ra - 2 : 0, nb = rb > 2 ? rb - 2 : 0, no = na > nb ? na : nb;
    int64_t ob[NPU_MAX_RANK], sa[NPU_MAX_RANK], sb[NPU_MAX_RANK];
    int64_t amat = d->m * d->k, bmat = d->k * d->n, ra_acc = amat, rb_acc = bmat;
    for (int i = no - 1; i >= 0; i--) {
        int ia = i - (no - na), ib = i - (no - nb);
        int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return kc_error(c, "matmul: batch dimensions do not broadcast");
        ob[i] = da == 1 ? db : da;
        sa[i] = da == 1 ? 0 : ra_acc;
        sb[i] = db == 1 ? 0 : rb_acc;
        ra_acc *= da;
        rb_acc *= db;
    }
    d->nbatch = prod(ob, no);
    for (int i = 0; i < MM_BATCH_DIMS; i++) d->bdim[i] = 1, d->sa[i] = 0, d->sb[i] = 0;
    if (prod(b->shape, nb) == 1) {
        /* b is one matrix: a's batch (dense, never broadcast then) folds into the rows */
        d->m *= d->nbatch;
        d->nbatch = 1;
        return ST_OK;
    }
    /* compact: drop size-1 dims, merge i into the next kept dim when both strides chain */
    int64_t cd[NPU_MAX_RANK], ca[NPU_MAX_RANK], cb[NPU_MAX_RANK];
    int nc = 0;
    for (int i = 0; i < no; i++) {
        if (ob[i] == 1) continue;
        if (nc > 0 && ca[nc - 1] == sa[i] * ob[i] && cb[nc - 1] == sb[i] * ob[i]) {
            cd[nc - 1] *= ob[i];
            ca[nc - 1] = sa[i];
            cb[nc - 1] = sb[i];
            continue;
        }
        cd[nc] = ob[i], ca[nc] = sa[i], cb[nc] = sb[i];
        nc++;
    }
    if (nc > MM_BATCH_DIMS)
        return kc_error(c, "matmul: %d batch dimensions that do not merge (the kernel takes %d)",
                        nc, MM_BATCH_DIMS);
    for (int i = 0; i < nc; i++) {
        int j = MM_BATCH_DIMS - nc + i;
        d->bdim[j] = cd[i], d->sa[j] = ca[i], d->sb[j] = cb[i];
    }
    return ST_OK;
}

static uint32_t act_code(const Node *n)
{
    switch (n->op) {
    case OP_RELU: return ACT_RELU;
    case OP_GELU:
        return strcmp(attr_str(n, "approximate", "none"), "tanh") == 0 ? ACT_GELU_TANH
                                                                       : ACT_GELU_ERF;
    case OP_SILU: return ACT_SILU;
    case OP_SIGMOID: return ACT_SIGMOID;
    case OP_TANH: return ACT_TANH;
    case OP_HARDSWISH: return ACT_HARDSWISH;
    default: return ACT_NONE;
    }
}

static bool is_product(OpId op)
{
    return op == OP_LINEAR || op == OP_ADDMM || op == OP_MATMUL || op == OP_BMM || op == OP_MM;
}

/* Fills d from the product node p (and the fused activation), reordering k's inputs to
 * A, B, [bias]. */
static Status describe_product(const KernelCtx *c, PlanKernel *k, const Node *p, MmDesc *d)
{
    memset(d, 0, sizeof *d);
    d->alpha = 1.0;
    d->beta = 1.0;
    d->bias_arg = -1;
    int ia, ib, ibias = -1;
    if (p->op == OP_ADDMM) {
        ibias = arg_of(c, k, p, 0), ia = arg_of(c, k, p, 1), ib = arg_of(c, k, p, 2);
        d->alpha = attr_float(p, "alpha", 1.0);
        d->beta = attr_float(p, "beta", 1.0);
    } else {
        ia = arg_of(c, k, p, 0), ib = arg_of(c, k, p, 1);
        if (p->op == OP_LINEAR && p->nin > 2) ibias = arg_of(c, k, p, 2);
    }
    bool has_bias = p->op == OP_ADDMM || (p->op == OP_LINEAR && p->nin > 2);
    if (ia < 0 || ib < 0 || (has_bias && ibias < 0))
        return kc_error(c, "matmul kernel: an operand of %s is not among its %d inputs",
                        op_short_name(p->op), k->nin);
    const PlanTensor *a = kc_arg(k, c->p, ia), *b = kc_arg(k, c->p, ib);
    const PlanTensor *bias = ibias >= 0 ? kc_arg(k, c->p, ibias) : NULL;
    if (!dense(a) || !dense(b) || (bias && !dense(bias)) || !dense(kc_out(k, c->p)))
        return kc_error(c, "matmul kernel: operands must be dense (a depad is missing)");

    Status st = ST_OK;
    if (p->op == OP_LINEAR) {
        if (a->rank < 1 || b->rank != 2 || b->shape[1] != a->shape[a->rank - 1])
            return kc_error(c, "linear: needs x [..., K] and weight [N, K]");
        d->k = a->shape[a->rank - 1];
        d->n = b->shape[0];
        d->m = prod(a->shape, a->rank - 1);
        d->b_ks = 1;
        d->b_ns = d->k;
        d->nbatch = 1;
        for (int i = 0; i < MM_BATCH_DIMS; i++) d->bdim[i] = 1;
    } else if (p->op == OP_ADDMM) {
        if (a->rank != 2 || b->rank != 2 || b->shape[0] != a->shape[1])
            return kc_error(c, "addmm: needs mat1 [M, K] and mat2 [K, N]");
        d->m = a->shape[0], d->k = a->shape[1], d->n = b->shape[1];
        d->b_ks = d->n;
        d->b_ns = 1;
        d->nbatch = 1;
        for (int i = 0; i < MM_BATCH_DIMS; i++) d->bdim[i] = 1;
    } else {
        st = desc_matmul(c, a, b, d);
    }
    if (st != ST_OK) return st;
    /* ATen drops the bias term when beta == 0 (even a NaN bias) */
    if (bias && d->beta != 0.0) {
        if (!bias_strides(bias, d->m, d->n, &d->bias_ms, &d->bias_ns))
            return kc_error(c, "%s: bias does not broadcast to [M, N]", op_short_name(p->op));
        d->bias_arg = ibias;
    }
    if (kc_numel(kc_out(k, c->p)) != d->nbatch * d->m * d->n)
        return kc_error(c, "matmul kernel: output has %lld elements, the product %lld",
                        (long long)kc_numel(kc_out(k, c->p)), (long long)(d->nbatch * d->m * d->n));
    /* bindings A, B, [bias], Y; the same tensor may be bound twice (read-only) */
    int args[4], na = 0, out = k->args[k->nargs - 1];
    args[na++] = k->args[ia];
    args[na++] = k->args[ib];
    if (d->bias_arg >= 0) args[na++] = k->args[ibias];
    if (na > k->nin) /* a fused group that deduplicated an operand: no room for the binding */
        return kc_error(c, "matmul kernel: a fused %s takes the same tensor twice",
                        op_short_name(p->op));
    k->nin = na;
    k->nargs = na + 1;
    for (int i = 0; i < na; i++) k->args[i] = args[i];
    k->args[na] = out;
    return ST_OK;
}

/* Smallest of 16, 32, 64 covering v. */
static int64_t tile_for(int64_t v)
{
    return v <= 16 ? 16 : v <= 32 ? 32 : 64;
}

Status lower_matmul(const KernelCtx *c, PlanKernel *k)
{
    const Node *p = NULL, *act = NULL;
    if (c->fusion) {
        for (int i = 0; i < c->fusion->nnodes; i++) {
            const Node *n = &c->g->nodes[c->fusion->nodes[i]];
            if (is_product(n->op))
                p = n;
            else
                act = n;
        }
    } else if (is_product(c->anchor->op)) {
        p = c->anchor;
    }
    if (!p) return kc_error(c, "matmul kernel without a matrix-product node");
    MmDesc d;
    Status st = describe_product(c, k, p, &d);
    if (st != ST_OK) return st;
    /* a module's bindings are fixed: the bias-less product is its own stem (3 bindings) */
    if (d.bias_arg < 0) k->shader = "matmul_nb";
    if (act) {
        d.act = act_code(act);
        if (d.act == ACT_NONE)
            return kc_error(c, "matmul kernel: %s is not a fusable activation",
                            op_short_name(act->op));
    }
    int64_t words[] = {d.m, d.n, d.k, d.b_ks, d.b_ns, d.nbatch};
    for (size_t i = 0; st == ST_OK && i < sizeof words / sizeof words[0]; i++)
        st = kc_push_i(c, k, words[i]);
    for (int i = 0; st == ST_OK && i < MM_BATCH_DIMS; i++) st = kc_push_i(c, k, d.bdim[i]);
    for (int i = 0; st == ST_OK && i < MM_BATCH_DIMS; i++) st = kc_push_i(c, k, d.sa[i]);
    for (int i = 0; st == ST_OK && i < MM_BATCH_DIMS; i++) st = kc_push_i(c, k, d.sb[i]);
    if (st == ST_OK) st = kc_push_i(c, k, d.bias_ms);
    if (st == ST_OK) st = kc_push_i(c, k, d.bias_ns);
    if (st == ST_OK) st = kc_push_u(c, k, d.act);
    if (st == ST_OK) st = kc_push_f(c, k, d.alpha);
    if (st == ST_OK) st = kc_push_f(c, k, d.beta);
    if (st != ST_OK) return st;
    /* offsets are 32-bit in the shader */
    int64_t ea = d.nbatch * d.m * d.k, eb = d.k * d.n, ey = d.nbatch * d.m * d.n;
    if (ea > UINT32_MAX || eb > UINT32_MAX || ey > UINT32_MAX)
        return kc_error(c, "matmul kernel: operands past 2^32 elements");

    bool vec = d.m == 1;
    int64_t wg, tm = 0, tn, tk = 16;
    if (vec) {
        /* contiguous weight rows: 32 lanes along K for each of 4 columns; a [K, N] operand:
         * 32 adjacent columns, 4 K slices (KS = wg / tn must be a power of two) */
        wg = 128;
        tn = d.b_ks == 1 ? 4 : 32;
        kc_grid(k, d.nbatch * ((d.n + tn - 1) / tn), 1);
    } else if (matmul_cm_applies(c, k, d.m, d.n, d.k, d.bias_arg >= 0)) {
        return lower_matmul_cm(c, k, d.m, d.n, d.k, d.nbatch, d.b_ks == 1, d.bias_arg >= 0);
    } else {
        /* 4 x 4 per invocation; the smallest tile that covers small M or N (TK * (TM + TN) fits
         * the shader's 2048 shared floats) */
        tm = tile_for(d.m);
        tn = tile_for(d.n);
        wg = (tm / 4) * (tn / 4);
        kc_grid(k, d.nbatch * ((d.m + tm - 1) / tm) * ((d.n + tn - 1) / tn), 1);
    }
    uint32_t spec[] = {(uint32_t)wg, vec ? 1u : 0u, (uint32_t)(tm ? tm : 64), (uint32_t)tn,
                       (uint32_t)tk};
    for (size_t i = 0; st == ST_OK && i < sizeof spec / sizeof spec[0]; i++)
        st = kc_spec(c, k, spec[i]);
    return st;
}
