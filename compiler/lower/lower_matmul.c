/* matmul: the matrix-product family (linear, addmm, matmul, bmm, mm, the linear_act fusions
 * linear_relu ... linear_hardswish and the residual fusions linear_add, linear_add_relu). Every
 * op is reduced, as runtime/cpu/cpu_matmul.c does, to a batch of M x N products over K with
 * broadcast batch strides, an optional bias with its own strides, alpha, beta, an activation code,
 * an optional residual tensor (dense, Y's shape) and a relu after it. Three paths:
 *  - gemv (shaders/gemv.glsl) when M <= 4, B is contiguous along K (b_ks = 1), K is a multiple
 *    of the 16-byte vector (8 f16/bf16, 4 f32) and every row start of A and B is provably
 *    16-byte aligned (binding offsets: arena offsets, pass_memory.c, or 0 for own buffers);
 *  - the scalar vector path of shaders/matmul.glsl when M == 1 otherwise;
 *  - the tiled path of shaders/matmul.glsl for everything else.
 * The kernel's key says which of bias and residual are bound (KF_BIAS, KF_RES: the runtime binds
 * exactly the kernel's tensors) and the path (KI_BASE, KI_GEMV; KF_RMSNORM, KF_SILU_MUL for a
 * GEMV prologue); its row of shaders/kernels.def names it. Bindings A, B, [bias], [residual], Y
 * (addmm's reordered).
 * Push: MatmulPush (shaders/abi.h MATMUL_PUSH; activation codes ACT_*: explicit numbers, so a
 * .npubin does not depend on the order of ops.def). Spec: matmul {WG, vector, TM, TN, TK}; gemv
 * {WG, R, MR, NV, U, G} (gemv_spec). linear_glu (fuse_concat.c) is the product over the gate's and
 * up's weights interleaved, with act(gate) * up in the epilogue (KF_GLU): the tiled path, or the
 * tensor-core matmul (lower_matmul_cm.c), never the GEMV or the vector path. */
#include "compiler/act.h"
#include "compiler/fusion.h"
#include "compiler/lower/kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MM_BATCH_DIMS 4 /* MatmulPush.bdim */

/* The reduced problem. */
typedef struct MmDesc {
    int64_t m, n, k, b_ks, b_ns, nbatch;
    int64_t bdim[MM_BATCH_DIMS], sa[MM_BATCH_DIMS], sb[MM_BATCH_DIMS];
    int a_arg, b_arg, bias_arg; /* kernel arguments of A, B and the bias (-1 for none) */
    int res_arg;                /* kernel argument of the residual, -1 for none */
    /* a prologue fold (fuse_fold.c): 0 none, 1 rmsnorm_linear, 2 silu_mul_linear; A is then
     * x or gate and pro_arg the argument of gamma or up */
    int pro, pro_arg;
    double eps;
    int64_t bias_ms, bias_ns;
    double alpha, beta;
    uint32_t act, post; /* activation before the residual, after it (ACT_NONE or ACT_RELU) */
    /* linear_glu: B is the gate's and up's weights interleaved (N = 2F) and Y [.., M, F] is
     * act(gate) * up (shaders/matmul_glu.glsl); act is the gate's activation */
    bool glu;
} MmDesc;

/* The kernel argument bound to input j of product node p. A single node binds its inputs as they
 * are (an operand given twice is bound twice); a fused kernel binds the group's outside inputs in
 * member order without duplicates, so positions are looked up by tensor. */
static int arg_of(const KernelCtx *c, const PlanKernel *k, const Node *p, int j, const MmDesc *d)
{
    /* linear_concat binds {x, concatenated weight, concatenated bias}: a linear's own order */
    if (!d->pro) {
        if (!c->fusion || c->fusion->nkin) return j < k->nin ? j : -1;
        return kc_arg_of(c, k, p->in[j]);
    }
    /* a prologue's operands replace the folded tensor among the inputs: by tensor */
    int t = c->fusion && c->fusion->nkin ? (j < c->fusion->nkin ? c->fusion->kin[j] : -1)
                                         : (j < p->nin ? p->in[j] : -1);
    if (t < 0) return -1;
    int base = fuse_folded_at(c->g, t), x, other;
    double eps;
    if (base >= 0 && fuse_fold_operands(c->g, &c->g->fusions[base], &x, &other, &eps)) t = x;
    return kc_arg_of(c, k, t);
}

/* Sets d->pro, d->pro_arg and d->eps when product p's A is the output of a folded instance. */
static Status describe_prologue(const KernelCtx *c, const PlanKernel *k, const Node *p, MmDesc *d)
{
    d->pro = 0;
    d->pro_arg = -1;
    int base = p->op == OP_LINEAR ? fuse_folded_at(c->g, p->in[0]) : -1;
    if (base < 0) return ST_OK;
    const Fusion *b = &c->g->fusions[base];
    int x, other;
    if (!fuse_fold_operands(c->g, b, &x, &other, &d->eps))
        return kc_error(c, "matmul kernel: the folded %s does not name its operands", b->pattern);
    d->pro = b->kernel == KK_rmsnorm ? 1 : 2;
    d->pro_arg = kc_arg_of(c, k, other);
    if (d->pro_arg < 0) return kc_error(c, "matmul kernel: the prologue's operand is not bound");
    return ST_OK;
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
    for (int i = 0; i < n; i++)
        p *= v[i];
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
    for (int i = 0; i < MM_BATCH_DIMS; i++)
        d->bdim[i] = 1, d->sa[i] = 0, d->sb[i] = 0;
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

/* The code of an activation fused after the product: one the table lets follow a linear
 * (compiler/act.c; the push block has no clamp bounds), else ACT_NONE. */
static uint32_t act_code(const Node *n)
{
    const EpiAct *a = epi_act(n);
    double lo, hi;
    return a && a->linear ? epi_act_code(n, &lo, &hi) : ACT_NONE;
}

static bool is_product(OpId op)
{
    return op == OP_LINEAR || op == OP_ADDMM || op == OP_MATMUL || op == OP_BMM || op == OP_MM;
}

/* Fills d from the product node p: the reduced problem and the arguments of A, B and the bias
 * (glu: linear_glu's, Y with half the product's columns). */
static Status describe_product(const KernelCtx *c, PlanKernel *k, const Node *p, bool glu,
                               MmDesc *d)
{
    memset(d, 0, sizeof *d);
    d->glu = glu;
    d->alpha = 1.0;
    d->beta = 1.0;
    d->bias_arg = d->res_arg = -1;
    Status pst = describe_prologue(c, k, p, d);
    if (pst != ST_OK) return pst;
    int ia, ib, ibias = -1;
    if (p->op == OP_ADDMM) {
        ibias = arg_of(c, k, p, 0, d), ia = arg_of(c, k, p, 1, d), ib = arg_of(c, k, p, 2, d);
        d->alpha = attr_float(p, "alpha", 1.0);
        d->beta = attr_float(p, "beta", 1.0);
    } else {
        ia = arg_of(c, k, p, 0, d), ib = arg_of(c, k, p, 1, d);
        if (p->op == OP_LINEAR && p->nin > 2) ibias = arg_of(c, k, p, 2, d);
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
        for (int i = 0; i < MM_BATCH_DIMS; i++)
            d->bdim[i] = 1;
    } else if (p->op == OP_ADDMM) {
        if (a->rank != 2 || b->rank != 2 || b->shape[0] != a->shape[1])
            return kc_error(c, "addmm: needs mat1 [M, K] and mat2 [K, N]");
        d->m = a->shape[0], d->k = a->shape[1], d->n = b->shape[1];
        d->b_ks = d->n;
        d->b_ns = 1;
        d->nbatch = 1;
        for (int i = 0; i < MM_BATCH_DIMS; i++)
            d->bdim[i] = 1;
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
    if (glu && (p->op != OP_LINEAR || d->n % (2 * GLU_BLOCK) != 0))
        return kc_error(c, "linear_glu: the interleaved weight has %lld rows, not a multiple of %d",
                        (long long)d->n, 2 * GLU_BLOCK);
    int64_t ny = glu ? d->n / 2 : d->n;
    if (kc_numel(kc_out(k, c->p)) != d->nbatch * d->m * ny)
        return kc_error(c, "matmul kernel: output has %lld elements, the product %lld",
                        (long long)kc_numel(kc_out(k, c->p)), (long long)(d->nbatch * d->m * ny));
    d->a_arg = ia;
    d->b_arg = ib;
    return ST_OK;
}

/* The fused residual add (linear_add): its operand that is not the product's output must be a
 * dense tensor of Y's shape and storage. */
static Status describe_residual(const KernelCtx *c, const PlanKernel *k, const Node *p,
                                const Node *add, MmDesc *d)
{
    int po = p->out[0];
    if (add->nin != 2 || (add->in[0] != po && add->in[1] != po) || add->in[0] == add->in[1])
        return kc_error(
            c, "matmul kernel: the fused add does not read the product and another tensor");
    int ri = kc_arg_of(c, k, add->in[0] == po ? add->in[1] : add->in[0]);
    if (ri < 0) return kc_error(c, "matmul kernel: the residual tensor is not bound");
    const PlanTensor *r = kc_arg(k, c->p, ri), *y = kc_out(k, c->p);
    bool same = r->rank == y->rank && dense(r) && r->storage == y->storage;
    for (int i = 0; same && i < r->rank; i++)
        same = r->shape[i] == y->shape[i];
    if (!same)
        return kc_error(c, "matmul kernel: the residual is not a dense tensor of the output's "
                           "shape and dtype");
    d->res_arg = ri;
    return ST_OK;
}

/* Rebinds k to A, B, [bias], [residual], Y; the same tensor may be bound twice (read-only). */
static Status bind_operands(const KernelCtx *c, PlanKernel *k, const MmDesc *d)
{
    int args[6], na = 0;
    args[na++] = k->args[d->a_arg];
    args[na++] = k->args[d->b_arg];
    if (d->pro) args[na++] = k->args[d->pro_arg];
    if (d->bias_arg >= 0) args[na++] = k->args[d->bias_arg];
    if (d->res_arg >= 0) args[na++] = k->args[d->res_arg];
    args[na] = k->args[k->nargs - 1];
    /* a fused group binds each outside tensor once: an operand taken twice needs more room */
    if (na + 1 > k->nargs) return kc_set_args(c, k, args, na, na + 1);
    k->nin = na;
    k->nargs = na + 1;
    for (int i = 0; i <= na; i++)
        k->args[i] = args[i];
    return ST_OK;
}

/* Can 16-byte vectors read this product's operands along K (shaders/gemv.glsl, the staging of
 * shaders/matmul_cm.glsl)? A, B and Y share a float storage, B is contiguous along K, and every
 * vector index A[b, m, k..k+v), B[b, n, k..k+v) starts on a 16-byte boundary. Elements per
 * vector in *vn. */
static bool vec16_fits(const KernelCtx *c, const PlanKernel *k, const MmDesc *d, int64_t *vn)
{
    const PlanTensor *a = kc_arg(k, c->p, d->a_arg), *b = kc_arg(k, c->p, d->b_arg);
    const PlanTensor *y = kc_out(k, c->p);
    if (d->b_ks != 1 || !dtype_is_float(y->storage) || a->storage != y->storage ||
        b->storage != y->storage)
        return false;
    int64_t v = 16 / (int64_t)dtype_size(y->storage);
    bool ok = d->k % v == 0 && (d->n == 1 || d->b_ns % v == 0) &&
              kc_binding_offset(c->p, a) % 16 == 0 && kc_binding_offset(c->p, b) % 16 == 0;
    for (int i = 0; ok && i < MM_BATCH_DIMS; i++)
        ok = d->sa[i] % v == 0 && d->sb[i] % v == 0;
    *vn = v;
    return ok;
}

/* Can the 16-byte-load GEMV (shaders/gemv.glsl) take this product? (M <= 4, and a prologue's
 * operand aligned as well.) */
static bool gemv_fits(const KernelCtx *c, const PlanKernel *k, const MmDesc *d, int64_t *vn)
{
    if (d->m < 1 || d->m > GEMV_MAX_ROWS || !vec16_fits(c, k, d, vn)) return false;
    if (d->pro) {
        const PlanTensor *o = kc_arg(k, c->p, d->pro_arg), *y = kc_out(k, c->p);
        return o->storage == y->storage && dense(o) && kc_binding_offset(c->p, o) % 16 == 0;
    }
    return true;
}

/* Smallest of 16, 32, 64 covering v. */
static int64_t tile_for(int64_t v)
{
    return v <= 16 ? 16 : v <= 32 ? 32 : 64;
}

/* The gemv parameters (shaders/gemv.glsl) {WG, R, MR, NV, U, G}, chosen by measurement on the
 * H100 (bench/NOTES.md "GEMV"). Short rows (K <= 4096 bf16, 512 chunks): subgroup rows, one
 * weight row per subgroup, G = 4 per workgroup of 128, U about half a row's chunks over 32
 * lanes; long rows (down_proj, K = 8960): 256 lanes split K over 2 weight rows, 2 chunks per
 * trip. At most 16 vectors loaded per trip, U * (R + MR). The knobs gemv.* (short rows) and
 * gemv.long.* replace any of WG, R, U and G; a workgroup-wide row (G 0) needs WG >= R * M and
 * WG * R * M <= 4096, else the kernel keeps its own four. */
static void gemv_spec(const KernelCtx *c, const MmDesc *d, int64_t vn, uint32_t spec[6])
{
    int64_t nv = d->k / vn;
    bool sub = nv <= 512;
    int64_t wg = sub ? 128 : 256, r = sub || d->m > 2 ? 1 : 2, g = sub ? 4 : 0;
    int64_t u = sub ? (nv + 63) / 64 : 2;
    if (u * (r + d->m) > 16) u = 16 / (r + d->m);
    u = u < 1 ? 1 : u > 8 ? 8 : u;
    static const TuneId knobs[2][4] = {
        {TUNE_GEMV_LONG_WG, TUNE_GEMV_LONG_R, TUNE_GEMV_LONG_U, TUNE_GEMV_LONG_G},
        {TUNE_GEMV_WG, TUNE_GEMV_R, TUNE_GEMV_U, TUNE_GEMV_G}};
    int64_t v[4] = {wg, r, u, g};
    for (int i = 0; i < 4; i++) {
        int64_t t = kc_tune(c, knobs[sub][i]);
        if (t != TUNE_AUTO) v[i] = t;
    }
    if (v[3] > 0 || (v[0] >= v[1] * d->m && v[0] * v[1] * d->m <= 4096))
        wg = v[0], r = v[1], u = v[2], g = v[3];
    if (r > d->n) r = d->n;
    spec[0] = (uint32_t)wg;
    spec[1] = (uint32_t)r;
    spec[2] = (uint32_t)d->m;
    spec[3] = (uint32_t)nv;
    spec[4] = (uint32_t)u;
    spec[5] = (uint32_t)g;
}

/* The push words of product d (shaders/abi.h MATMUL_PUSH). */
static Status matmul_push(const KernelCtx *c, const PlanKernel *k, const MmDesc *d, MatmulPush *mp)
{
    KcWords w = {0};
    *mp = (MatmulPush){
        .M = kc_word(&w, d->m),
        .N = kc_word(&w, d->n),
        .K = kc_word(&w, d->k),
        .b_ks = kc_word(&w, d->b_ks),
        .b_ns = kc_word(&w, d->b_ns),
        .nbatch = kc_word(&w, d->nbatch),
        .bias_ms = kc_word(&w, d->bias_ms),
        .bias_ns = kc_word(&w, d->bias_ns),
        .act = d->act,
        .alpha = (float)d->alpha,
        .beta = (float)d->beta,
        .post = d->post,
    };
    for (int i = 0; i < MM_BATCH_DIMS; i++) {
        mp->bdim[i] = kc_word(&w, d->bdim[i]);
        mp->sa[i] = kc_word(&w, d->sa[i]);
        mp->sb[i] = kc_word(&w, d->sb[i]);
    }
    return kc_words_ok(c, k, &w);
}

/* The GEMV's specialization constants 0..5 (gemv_spec) and grid, after its push block. */
static Status gemv_dispatch(const KernelCtx *c, PlanKernel *k, const MmDesc *d, int64_t vn)
{
    uint32_t spec[6];
    gemv_spec(c, d, vn, spec);
    uint32_t rows = spec[1] * (spec[5] ? spec[5] : 1);
    kc_grid(k, d->nbatch * ((d->n + rows - 1) / rows), 1);
    Status st = ST_OK;
    for (size_t i = 0; st == ST_OK && i < sizeof spec / sizeof spec[0]; i++)
        st = kc_spec(c, k, spec[i]);
    return st;
}

Status lower_matmul(const KernelCtx *c, PlanKernel *k)
{
    const Node *p = NULL, *act = NULL, *add = NULL, *post = NULL;
    bool glu = c->fusion && strcmp(c->fusion->family, "linear_glu") == 0;
    if (glu) {
        /* one product over both weights (f->kin): the gate's node describes it, the silu is the
         * gate's activation and the mul the epilogue's */
        int gl, ul;
        fuse_glu_linears(c->g, c->fusion, &gl, &ul);
        if (gl < 0 || ul < 0 || c->fusion->nkin < 2)
            return kc_error(c, "linear_glu kernel without its gate and up linears");
        p = &c->g->nodes[gl];
        for (int i = 0; i < c->fusion->nnodes; i++) {
            const Node *n = &c->g->nodes[c->fusion->nodes[i]];
            if (n->op == OP_SILU) act = n;
        }
    } else if (c->fusion) {
        for (int i = 0; i < c->fusion->nnodes; i++) {
            const Node *n = &c->g->nodes[c->fusion->nodes[i]];
            if (is_product(n->op))
                p = n;
            else if (n->op == OP_ADD)
                add = n;
            else if (add)
                post = n; /* members are in graph order: a relu after the residual add */
            else
                act = n;
        }
    } else if (is_product(c->anchor->op)) {
        p = c->anchor;
    }
    if (!p) return kc_error(c, "matmul kernel without a matrix-product node");
    MmDesc d;
    Status st = describe_product(c, k, p, glu, &d);
    if (st == ST_OK && add) st = describe_residual(c, k, p, add, &d);
    if (st != ST_OK) return st;
    if (act) {
        d.act = act_code(act);
        if (d.act == ACT_NONE)
            return kc_error(c, "matmul kernel: %s is not a fusable activation",
                            op_short_name(act->op));
    }
    if (post) {
        d.post = act_code(post);
        if (d.post != ACT_RELU)
            return kc_error(c, "matmul kernel: only a relu may follow the residual add, not %s",
                            op_short_name(post->op));
    }
    int64_t vn = 0;
    bool fast = !d.glu && gemv_fits(c, k, &d, &vn);
    /* the fold's match (fuse_fold.c) requires what the gemv path needs but the binding offsets,
     * which are 16-byte aligned unless a test shrinks the arena alignment */
    if (d.pro && !fast)
        return kc_error(c,
                        "the GEMV cannot take this product (an operand's binding offset is "
                        "not 16-byte aligned), so the %s prologue cannot run: switch it off "
                        "(--no-fuse %s)",
                        d.pro == 1 ? "rmsnorm_linear" : "silu_mul_linear",
                        d.pro == 1 ? "rmsnorm_linear" : "silu_mul_linear");
    st = bind_operands(c, k, &d);
    if (st != ST_OK) return st;
    /* a module's bindings are fixed: one kernel per (path, prologue, bias, residual, GLU); the
     * tensor-core path picks its own (lower_matmul_cm.c) */
    unsigned flags = (d.bias_arg >= 0 ? KF_BIAS : 0) | (d.res_arg >= 0 ? KF_RES : 0) |
                     (d.glu ? KF_GLU : 0) |
                     (d.pro == 1   ? KF_RMSNORM
                      : d.pro == 2 ? KF_SILU_MUL
                                   : 0);
    st = kc_pick(c, k,
                 (KernelKey){.kind = KK_matmul, .impl = fast ? KI_GEMV : KI_BASE, .flags = flags});
    if (st != ST_OK) return st;
    MatmulPush mp;
    st = matmul_push(c, k, &d, &mp);
    if (st != ST_OK) return st;
    /* offsets are 32-bit in the shader */
    int64_t ea = d.nbatch * d.m * d.k, eb = d.k * d.n, ey = d.nbatch * d.m * d.n;
    if (ea > UINT32_MAX || eb > UINT32_MAX || ey > UINT32_MAX)
        return kc_error(c, "matmul kernel: operands past 2^32 elements");

    if (fast) {
        st = kc_push_block(c, k, &mp, sizeof mp);
        if (st == ST_OK) st = gemv_dispatch(c, k, &d, vn);
        if (st == ST_OK && d.pro == 1) { /* spec 6: eps, a float constant's bits */
            float e = (float)d.eps;
            uint32_t bits;
            memcpy(&bits, &e, sizeof bits);
            st = kc_spec(c, k, bits);
        }
        return st;
    }
    bool vec = d.m == 1 && !d.glu; /* the GLU pairs columns of a tile */
    int64_t wg, tm = 0, tn, tk = 16;
    CmProduct cm = {.m = d.m,
                    .n = d.n,
                    .k = d.k,
                    .nbatch = d.nbatch,
                    .kmajor = d.b_ks == 1,
                    .bias = d.bias_arg >= 0,
                    .res = d.res_arg >= 0,
                    .glu = d.glu};
    /* cm.vec=0 keeps the one-element staging loads */
    cm.vec = cm.kmajor && vec16_fits(c, k, &d, &vn) && vn == 8 && kc_tune(c, TUNE_CM_VEC);
    if (vec) {
        /* contiguous weight rows: 32 lanes along K for each of 4 columns; a [K, N] operand:
         * 32 adjacent columns, 4 K slices (KS = wg / tn must be a power of two) */
        wg = 128;
        tn = d.b_ks == 1 ? 4 : 32;
        kc_grid(k, d.nbatch * ((d.n + tn - 1) / tn), 1);
    } else if (matmul_cm_applies(c, k, &cm)) {
        return lower_matmul_cm(c, k, &cm, &mp);
    } else {
        /* 4 x 4 per invocation; the smallest tile that covers small M or N (TK * (TM + TN) fits
         * the shader's 2048 shared floats) */
        tm = tile_for(d.m);
        tn = tile_for(d.n); /* linear_glu: N >= 32, so 32 or 64 (shaders/matmul.glsl MM_GLU) */
        wg = (tm / 4) * (tn / 4);
        kc_grid(k, d.nbatch * ((d.m + tm - 1) / tm) * ((d.n + tn - 1) / tn), 1);
    }
    st = kc_push_block(c, k, &mp, sizeof mp);
    uint32_t spec[] = {(uint32_t)wg, vec ? 1u : 0u, (uint32_t)(tm ? tm : 64), (uint32_t)tn,
                       (uint32_t)tk};
    for (size_t i = 0; st == ST_OK && i < sizeof spec / sizeof spec[0]; i++)
        st = kc_spec(c, k, spec[i]);
    return st;
}

/* conv2d_mv: the vector path's workgroup, KS lanes along K per output channel (the power of two
 * in 1..MV_KS_MAX covering K: a squeeze-excite's expanding conv has K of 4 to 48, and the lanes
 * past K would idle) and TN = MV_WG / KS channels per workgroup. */
enum { MV_WG = 128, MV_KS_MAX = 32 };

Status lower_conv_matvec(const KernelCtx *c, PlanKernel *k, const ConvMatvec *cv)
{
    if (k->nin != 2 + cv->bias) return kc_error(c, "conv2d kernel: unexpected inputs");
    MmDesc d = {
        .m = 1,
        .n = cv->cout,
        .k = cv->cin,
        .b_ks = 1,
        .b_ns = cv->cin,
        .nbatch = cv->n,
        .a_arg = 0,
        .b_arg = 1,
        .bias_arg = cv->bias ? 2 : -1,
        .res_arg = -1,
        .pro_arg = -1,
        .bias_ns = 1,
        .alpha = 1.0,
        .beta = 1.0,
        .act = cv->act,
    };
    /* one batch matrix (one row) per image, A's rows the input's padded channels apart */
    for (int i = 0; i < MM_BATCH_DIMS; i++)
        d.bdim[i] = 1;
    d.bdim[MM_BATCH_DIMS - 1] = cv->n;
    d.sa[MM_BATCH_DIMS - 1] = cv->xcp;
    if (cv->n * cv->xcp > UINT32_MAX || cv->n * cv->ycp > UINT32_MAX ||
        cv->cin * cv->cout > UINT32_MAX)
        return kc_error(c, "conv2d kernel: operands past 2^32 elements");
    int64_t vn = 0;
    bool fast = gemv_fits(c, k, &d, &vn);
    Status st = kc_pick(c, k,
                        (KernelKey){.kind = KK_conv2d,
                                    .impl = fast ? KI_GEMV : KI_MV,
                                    .flags = cv->bias ? KF_BIAS : 0});
    MatmulConvPush cp = {.act_lim = cv->act_lim};
    if (st == ST_OK) st = matmul_push(c, k, &d, &cp.mm);
    KcWords w = {0};
    cp.y_bs = kc_word(&w, cv->ycp);
    if (st == ST_OK) st = kc_words_ok(c, k, &w);
    if (st == ST_OK) st = kc_push_block(c, k, &cp, sizeof cp);
    if (st != ST_OK) return st;
    if (fast) return gemv_dispatch(c, k, &d, vn);
    int64_t ks = 1;
    while (ks < d.k && ks < MV_KS_MAX)
        ks *= 2;
    int64_t tn = MV_WG / ks;
    kc_grid(k, d.nbatch * ((d.n + tn - 1) / tn), 1);
    uint32_t spec[] = {MV_WG, 1, 64, (uint32_t)tn, 16}; /* shaders/matmul.glsl: vector path */
    for (size_t i = 0; st == ST_OK && i < sizeof spec / sizeof spec[0]; i++)
        st = kc_spec(c, k, spec[i]);
    return st;
}
