/* Matrix products (LINEAR ADDMM MATMUL BMM MM), ATen-exact, all through cpu_gemm: shapes are
 * checked and reduced to one GEMM per batch matrix (or one GEMM when the batch folds into M);
 * transposes are strides, never copies. */
#include "runtime/cpu/cpu_gemm.h"
#include "runtime/cpu/cpu_kernels.h"

static const char *in_name(const CpuCall *c, int i)
{
    return node_input(c->g, c->node, i)->name;
}

static Status mismatch(const CpuCall *c, const char *tensor, const char *what)
{
    return diag_error(c->diag, c->file, c->node->name, tensor, "%s: %s", op_short_name(c->node->op),
                      what);
}

/* The declared output must have exactly the computed shape. */
static Status check_out(const CpuCall *c, int rank, const int64_t *shape)
{
    const HTensor *y = c->out[0];
    int ok = y->rank == rank;
    for (int i = 0; ok && i < rank; i++)
        ok = y->shape[i] == shape[i];
    if (ok) return ST_OK;
    char want[128], got[128];
    shape_str(shape, rank, want, sizeof want);
    shape_str(y->shape, y->rank, got, sizeof got);
    return diag_error(c->diag, c->file, c->node->name, node_output(c->g, c->node, 0)->name,
                      "%s: output declared %s but the inputs give %s", op_short_name(c->node->op),
                      got, want);
}

static Status check_f32(const CpuCall *c)
{
    for (int i = 0; i < c->nin; i++)
        if (c->in[i]->dtype != DT_F32)
            return mismatch(c, in_name(c, i), "only floating tensors are supported");
    if (c->out[0]->dtype != DT_F32)
        return mismatch(c, node_output(c->g, c->node, 0)->name, "output must be floating");
    return ST_OK;
}

/* Strides that broadcast a bias of rank <= 2 over [m, n]; false if it does not broadcast. */
static int bias_strides(const HTensor *b, int64_t m, int64_t n, int64_t *rs, int64_t *cs)
{
    if (b->rank > 2) return 0;
    int64_t bm = b->rank == 2 ? b->shape[0] : 1, bn = b->rank >= 1 ? b->shape[b->rank - 1] : 1;
    if ((bm != m && bm != 1) || (bn != n && bn != 1)) return 0;
    *cs = bn == 1 ? 0 : 1;
    *rs = bm == 1 ? 0 : bn;
    return 1;
}

static Status run_gemm(const CpuCall *c, const CpuGemm *g)
{
    Status st = cpu_gemm(g);
    if (st != ST_OK)
        return diag_add(c->diag, DIAG_ERROR, st, c->file, c->node->name, NULL,
                        "%s: out of memory for GEMM scratch", op_short_name(c->node->op));
    return ST_OK;
}

/* x [..., K] @ W[N, K]^T + b[N] */
static Status linear(const CpuCall *c)
{
    const HTensor *x = c->in[0], *w = c->in[1], *b = c->nin > 2 ? c->in[2] : NULL;
    if (x->rank < 1) return mismatch(c, in_name(c, 0), "input must have at least one dim");
    if (w->rank != 2) return mismatch(c, in_name(c, 1), "weight must be 2-D [N, K]");
    int64_t k = x->shape[x->rank - 1], n = w->shape[0];
    if (w->shape[1] != k) return mismatch(c, in_name(c, 1), "weight's K differs from input's");
    int64_t shape[NPU_MAX_RANK];
    for (int i = 0; i < x->rank - 1; i++)
        shape[i] = x->shape[i];
    shape[x->rank - 1] = n;
    Status st = check_out(c, x->rank, shape);
    if (st != ST_OK) return st;
    int64_t m = k ? x->numel / k : shape_numel(x->shape, x->rank - 1);
    CpuGemm g = {.m = m,
                 .n = n,
                 .k = k,
                 .a = x->data,
                 .a_rs = k,
                 .a_cs = 1,
                 .b = w->data,
                 .b_rs = 1,
                 .b_cs = k,
                 .c = c->out[0]->data,
                 .c_rs = n,
                 .alpha = 1.0,
                 .beta = 1.0};
    if (b) {
        if (!bias_strides(b, m, n, &g.bias_rs, &g.bias_cs))
            return mismatch(c, in_name(c, 2), "bias does not broadcast to [N]");
        g.bias = b->data;
    }
    return run_gemm(c, &g);
}

/* beta * bias + alpha * (mat1 [M,K] @ mat2 [K,N]) */
static Status addmm(const CpuCall *c)
{
    const HTensor *bias = c->in[0], *a = c->in[1], *b = c->in[2];
    if (a->rank != 2) return mismatch(c, in_name(c, 1), "mat1 must be 2-D");
    if (b->rank != 2) return mismatch(c, in_name(c, 2), "mat2 must be 2-D");
    int64_t m = a->shape[0], k = a->shape[1], n = b->shape[1];
    if (b->shape[0] != k) return mismatch(c, in_name(c, 2), "mat2's rows differ from mat1's K");
    int64_t shape[2] = {m, n};
    Status st = check_out(c, 2, shape);
    if (st != ST_OK) return st;
    CpuGemm g = {.m = m,
                 .n = n,
                 .k = k,
                 .a = a->data,
                 .a_rs = k,
                 .a_cs = 1,
                 .b = b->data,
                 .b_rs = n,
                 .b_cs = 1,
                 .c = c->out[0]->data,
                 .c_rs = n,
                 .alpha = attr_float(c->node, "alpha", 1.0),
                 .bias = bias->data,
                 .beta = attr_float(c->node, "beta", 1.0)};
    if (!bias_strides(bias, m, n, &g.bias_rs, &g.bias_cs))
        return mismatch(c, in_name(c, 0), "bias does not broadcast to [M, N]");
    return run_gemm(c, &g);
}

/* torch.matmul (and mm, bmm with their stricter ranks): 1-D operands are promoted to matrices
 * and the added dim removed from the result; batch dims broadcast. */
static Status matmul(const CpuCall *c)
{
    const HTensor *a = c->in[0], *b = c->in[1];
    OpId op = c->node->op;
    int ra = a->rank, rb = b->rank;
    if (op == OP_MM && (ra != 2 || rb != 2))
        return mismatch(c, in_name(c, ra != 2 ? 0 : 1), "mm takes 2-D operands");
    if (op == OP_BMM && (ra != 3 || rb != 3))
        return mismatch(c, in_name(c, ra != 3 ? 0 : 1), "bmm takes 3-D operands");
    if (op == OP_BMM && a->shape[0] != b->shape[0])
        return mismatch(c, in_name(c, 1), "bmm batch sizes differ");
    if (ra < 1 || rb < 1) return mismatch(c, in_name(c, ra < 1 ? 0 : 1), "operand is a scalar");
    int64_t m = ra == 1 ? 1 : a->shape[ra - 2], k = a->shape[ra - 1];
    int64_t kb = rb == 1 ? b->shape[0] : b->shape[rb - 2], n = rb == 1 ? 1 : b->shape[rb - 1];
    if (kb != k) return mismatch(c, in_name(c, 1), "inner dimensions differ");
    /* Batch dims: a's leading ra-2, b's leading rb-2, broadcast right-aligned. */
    int na = ra > 2 ? ra - 2 : 0, nb = rb > 2 ? rb - 2 : 0, no = na > nb ? na : nb;
    int64_t ob[NPU_MAX_RANK], shape[NPU_MAX_RANK];
    for (int i = 0; i < no; i++) {
        int ia = i - (no - na), ib = i - (no - nb);
        int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return mismatch(c, in_name(c, 1), "batch dimensions do not broadcast");
        ob[i] = da == 1 ? db : da;
    }
    int ro = 0;
    for (int i = 0; i < no; i++)
        shape[ro++] = ob[i];
    if (ra > 1) shape[ro++] = m;
    if (rb > 1) shape[ro++] = n;
    Status st = check_out(c, ro, shape);
    if (st != ST_OK) return st;

    int64_t nbatch = shape_numel(ob, no), bnum = shape_numel(b->shape, nb);
    const float *ad = a->data, *bd = b->data;
    float *yd = c->out[0]->data;
    CpuGemm g = {.m = m,
                 .n = n,
                 .k = k,
                 .a_rs = k,
                 .a_cs = 1,
                 .b_rs = n,
                 .b_cs = 1,
                 .c_rs = n,
                 .alpha = 1.0};
    if (bnum == 1) {
        /* b is one matrix: a's batch (never broadcast then) folds into the rows. */
        g.m = m * nbatch;
        g.a = ad, g.b = bd, g.c = yd;
        return run_gemm(c, &g);
    }
    int64_t sa[NPU_MAX_RANK], sb[NPU_MAX_RANK];
    bcast_strides(a->shape, na, ob, no, sa);
    bcast_strides(b->shape, nb, ob, no, sb);
    for (int64_t i = 0; i < nbatch; i++) {
        g.a = ad + bcast_offset(i, ob, no, sa) * m * k;
        g.b = bd + bcast_offset(i, ob, no, sb) * k * n;
        g.c = yd + i * m * n;
        if ((st = run_gemm(c, &g)) != ST_OK) return st;
    }
    return ST_OK;
}

Status cpu_matmul(const CpuCall *c)
{
    Status st = check_f32(c);
    if (st != ST_OK) return st;
    OpId op = c->node->op;
    if (op == OP_LINEAR) return linear(c);
    if (op == OP_ADDMM) return addmm(c);
    if (op == OP_MATMUL || op == OP_BMM || op == OP_MM) return matmul(c);
    return diag_add(c->diag, DIAG_ERROR, ST_INTERNAL, c->file, c->node->name, NULL,
                    "cpu_matmul called for %s", op_short_name(op));
}
