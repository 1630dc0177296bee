/* binary: out = a OP b elementwise with NumPy broadcasting (add, sub, rsub, mul, div with its
 * rounding modes, pow; comparisons eq/ne/lt/le/gt/ge and logical and/or/not with a bool result
 * stored as 0/1 in the compute dtype, which is how bool tensors live on the NPU), and the fused
 * add_relu (relu after the add) and silu_mul (silu of one operand times the other). Computed over
 * the logical output shape; every operand is addressed with its own physical strides (0 on
 * broadcast dims), so channel-padded operands work too.
 *
 * Stems: `binary`, `add_relu`, `silu_mul` bind {a, b, out}; `binary_s` binds {a, out} for a
 * scalar second operand (attr `other` / `exponent`) or when both operands are one tensor (a
 * fused group lists a shared input once). Push BinaryPush (shaders/abi.h BINARY_PUSH): the
 * code BN_* (explicit numbers: a .npubin must not depend on ops.def) with the BF_* flags. */
#include "compiler/lower/kernels.h"

#include <string.h>

#define BIN_WG 256

bool kc_bcast_strides6(const PlanTensor *t, const PlanTensor *out, int64_t st[6])
{
    int64_t phys[NPU_MAX_RANK];
    kc_strides(t, phys);
    if (t->rank > out->rank) return false;
    for (int d = 0; d < KERNEL_DIMS; d++)
        st[d] = 0;
    for (int d = 0; d < out->rank; d++) {
        int td = d - (out->rank - t->rank);
        if (td < 0) continue;
        if (t->shape[td] != out->shape[d] && t->shape[td] != 1) return false;
        st[KERNEL_DIMS - out->rank + d] = t->shape[td] == 1 ? 0 : phys[td];
    }
    return true;
}

/* Is st the dense row-major stride vector of out's logical shape (size-1 dims ignored)? */
static bool dense_like(const int64_t st[KERNEL_DIMS], const PlanTensor *out)
{
    int64_t s = 1;
    for (int d = out->rank - 1; d >= 0; d--) {
        int64_t got = st[KERNEL_DIMS - out->rank + d];
        if (out->shape[d] != 1 && got != s) return false;
        s *= out->shape[d];
    }
    return true;
}

/* The code of each op the kernel computes (0: not one); logical_not is x == 0 (the scalar operand
 * is 0), a division's code follows its rounding mode. */
static const uint32_t binary_codes[OP_COUNT] = {
    [OP_ADD] = BN_ADD,        [OP_SUB] = BN_SUB,         [OP_RSUB] = BN_RSUB,     [OP_MUL] = BN_MUL,
    [OP_DIV] = BN_DIV,        [OP_POW] = BN_POW,         [OP_EQ] = BN_EQ,         [OP_NE] = BN_NE,
    [OP_LT] = BN_LT,          [OP_LE] = BN_LE,           [OP_GT] = BN_GT,         [OP_GE] = BN_GE,
    [OP_LOGICAL_NOT] = BN_EQ, [OP_LOGICAL_AND] = BN_AND, [OP_LOGICAL_OR] = BN_OR,
};

static uint32_t op_code(const KernelCtx *c, const Node *n, Status *st)
{
    uint32_t code = n->op >= 0 && n->op < OP_COUNT ? binary_codes[n->op] : 0;
    if (!code) {
        *st = kc_error(c, "%s is not a binary kernel op", op_short_name(n->op));
        return 0;
    }
    if (n->op != OP_DIV || !attr_present(n, "rounding_mode")) return code;
    const char *rm = attr_str(n, "rounding_mode", "");
    if (strcmp(rm, "trunc") == 0) return BN_DIV_TRUNC;
    if (strcmp(rm, "floor") == 0) return BN_DIV_FLOOR;
    *st = kc_error(c, "rounding_mode '%s' is not 'trunc' or 'floor'", rm);
    return 0;
}

Status lower_binary(const KernelCtx *c, PlanKernel *k)
{
    Status st = ST_OK;
    const Node *n = c->anchor;
    uint32_t flags = 0;
    if (c->kind == KK_add_relu) {
        n = kc_member(c, OP_ADD);
        flags |= BF_RELU;
    } else if (c->kind == KK_silu_mul) {
        const Node *s = kc_member(c, OP_SILU);
        n = kc_member(c, OP_MUL);
        if (!s || !n) return kc_error(c, "silu_mul kernel without a silu and a mul member");
        flags |= BF_SILU_A;
        /* the silu's input is operand a whichever order the members put the inputs in */
        if (k->nin == 2 && kc_arg_of(c, k, s->in[0]) == 1) {
            int t = k->args[0];
            k->args[0] = k->args[1];
            k->args[1] = t;
        } else if (k->nin == 2 && kc_arg_of(c, k, s->in[0]) != 0) {
            return kc_error(c, "silu_mul: the silu's input is not a kernel input");
        }
    }
    if (!n) return kc_error(c, "%s kernel without its binary member", k->shader);
    uint32_t code = op_code(c, n, &st);
    if (st != ST_OK) return st;

    const PlanTensor *out = kc_out(k, c->p);
    if (out->rank > KERNEL_DIMS) return kc_error(c, "binary kernel: rank %d above 6", out->rank);
    /* bools live in the compute dtype's storage as 0/1: floats to the kernel */
    for (int i = 0; i < k->nargs; i++)
        if (!dtype_is_float(kc_arg(k, c->p, i)->dtype) && kc_arg(k, c->p, i)->dtype != DT_BOOL)
            return kc_error(c, "binary kernel: tensor %s is not floating point or bool",
                            kc_arg(k, c->p, i)->name);

    double alpha = 1.0, scalar = 0.0;
    if (attr_present(n, "alpha") && !attr_number(n, "alpha", &alpha))
        return kc_error(c, "attribute `alpha` is not a number");
    /* One kernel input: a scalar operand (a single node with one input), or an operand shared by
     * both sides (a fused group lists it once). */
    bool one = k->nin == 1;
    if (one && n->op == OP_LOGICAL_NOT) {
        scalar = 0.0;
    } else if (one && n->nin == 1) {
        const char *key = n->op == OP_POW ? "exponent" : "other";
        if (!attr_number(n, key, &scalar))
            return kc_error(c, "%s has one tensor input and no numeric attribute `%s`", n->aten,
                            key);
    } else if (one) {
        flags |= BF_SELF;
    } else if (k->nin != 2) {
        return kc_error(c, "binary kernel with %d inputs", k->nin);
    }
    if (one) st = kc_pick(c, k, (KernelKey){.kind = KK_binary, .flags = KF_SCALAR});
    if (st != ST_OK) return st;

    int64_t sa[KERNEL_DIMS], sb[KERNEL_DIMS] = {0}, so[KERNEL_DIMS], shape[KERNEL_DIMS];
    const PlanTensor *a = kc_arg(k, c->p, 0);
    if (!kc_bcast_strides6(a, out, sa) || !kc_bcast_strides6(out, out, so) ||
        (!one && !kc_bcast_strides6(kc_arg(k, c->p, 1), out, sb)))
        return kc_error(c, "binary kernel: an operand does not broadcast to the output shape");
    for (int d = 0; d < KERNEL_DIMS; d++) {
        int od = d - (KERNEL_DIMS - out->rank);
        shape[d] = od < 0 ? 1 : out->shape[od];
    }
    if (dense_like(sa, out) && dense_like(so, out) && (one || dense_like(sb, out)))
        flags |= BF_DENSE;

    int64_t total = kc_numel(out);
    KcWords w = {0};
    BinaryPush pb = {.n = kc_word(&w, total),
                     .code = code | flags,
                     .alpha = (float)alpha,
                     .scalar = (float)scalar};
    KC_WORDS(&w, pb.shape, shape);
    KC_WORDS(&w, pb.sa, sa);
    KC_WORDS(&w, pb.sb, sb);
    KC_WORDS(&w, pb.so, so);
    st = kc_words_ok(c, k, &w);
    if (st == ST_OK) st = kc_push_block(c, k, &pb, sizeof pb);
    if (st == ST_OK) st = kc_spec(c, k, BIN_WG);
    kc_grid(k, total, BIN_WG);
    return st;
}
