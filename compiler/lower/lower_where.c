/* where: out = cond ? a : b elementwise with NumPy broadcasting (aten.where.self, .ScalarOther,
 * .ScalarSelf) and masked_fill(x, mask, value) = where(mask, value, x). The condition is a bool
 * tensor, which lives on the device as 0/1 in the compute dtype (compiler/lower/lower.c); nonzero
 * (NaN included) selects a. Every operand is addressed with its own physical strides (0 on
 * broadcast dims) over the logical output shape; the output is dense (bool operands are never
 * channel padded, so the layout pass never pads a where).
 *
 * Stems: `where` binds {cond, a, b, out}; `where_s` binds {cond, t, out} with one operand a
 * scalar push word (flag bit 0: a is the scalar, t is b; bit 1: b is the scalar, t is a).
 * Push WherePush (shaders/abi.h WHERE_PUSH). where.Scalar (both operands scalars) stays on the
 * CPU (support.c). */
#include "compiler/lower/kernels.h"

#include <string.h>

#define WHERE_WG 256

Status lower_where(const KernelCtx *c, PlanKernel *k)
{
    const Node *n = c->anchor;
    const PlanTensor *out = kc_out(k, c->p);
    if (out->rank > KERNEL_DIMS) return kc_error(c, "where kernel: rank %d above 6", out->rank);
    if (out->padded) return kc_error(c, "where kernel: the output is channel padded");
    uint32_t flags = 0;
    double as = 0, bs = 0;
    int args[4], nin = 0;
    if (n->op == OP_MASKED_FILL) {
        if (k->nin != 2 || !attr_number(n, "value", &as))
            return kc_error(c, "masked_fill needs inputs x and mask and a numeric `value`");
        args[nin++] = k->args[1]; /* cond = mask, a = value, b = x */
        args[nin++] = k->args[0];
        flags = WF_A_SCALAR;
    } else if (k->nin == 3) {
        for (int i = 0; i < 3; i++)
            args[nin++] = k->args[i];
    } else if (k->nin == 2 && attr_number(n, "other", &bs)) {
        args[nin++] = k->args[0];
        args[nin++] = k->args[1];
        flags = WF_B_SCALAR;
    } else if (k->nin == 2 && attr_number(n, "self", &as)) {
        args[nin++] = k->args[0];
        args[nin++] = k->args[1];
        flags = WF_A_SCALAR;
    } else {
        return kc_error(c,
                        "%s with %d tensor inputs: the where kernel needs two tensor operands "
                        "or one and a numeric `self`/`other`",
                        n->aten, k->nin);
    }
    int outk = k->args[k->nargs - 1];
    args[nin] = outk;
    for (int i = 0; i < nin + 1; i++) {
        const PlanTensor *t = &c->p->tensors[args[i]];
        if (!dtype_is_float(t->dtype) && t->dtype != DT_BOOL)
            return kc_error(c, "where kernel: tensor %s is %s (integers run on the CPU)", t->name,
                            dtype_name(t->dtype));
    }
    if (c->p->tensors[args[0]].dtype != DT_BOOL)
        return kc_error(c, "where kernel: condition %s is not bool", c->p->tensors[args[0]].name);
    memcpy(k->args, args, sizeof(int) * (size_t)(nin + 1)); /* the same count or fewer */
    k->nin = nin;
    k->nargs = nin + 1;
    Status ps = kc_pick(c, k, (KernelKey){.kind = KK_where, .flags = flags ? KF_SCALAR : 0});
    if (ps != ST_OK) return ps;

    int64_t st[3][KERNEL_DIMS] = {{0}}, shape[KERNEL_DIMS];
    for (int i = 0; i < nin; i++)
        if (!kc_bcast_strides6(kc_arg(k, c->p, i), out, st[i]))
            return kc_error(c, "where kernel: %s does not broadcast to the output shape",
                            kc_arg(k, c->p, i)->name);
    if (flags == WF_A_SCALAR) { /* the tensor operand is b: its strides go to b's words */
        memcpy(st[2], st[1], sizeof st[1]);
        memset(st[1], 0, sizeof st[1]);
    }
    for (int d = 0; d < KERNEL_DIMS; d++) {
        int od = d - (KERNEL_DIMS - out->rank);
        shape[d] = od < 0 ? 1 : out->shape[od];
    }
    int64_t total = kc_numel(out);
    KcWords w = {0};
    WherePush pw = {
        .n = kc_word(&w, total), .flags = flags, .sa_val = (float)as, .sb_val = (float)bs};
    KC_WORDS(&w, pw.shape, shape);
    KC_WORDS(&w, pw.sc, st[0]);
    KC_WORDS(&w, pw.sa, st[1]);
    KC_WORDS(&w, pw.sb, st[2]);
    Status s = kc_words_ok(c, k, &w);
    if (s == ST_OK) s = kc_push_block(c, k, &pw, sizeof pw);
    if (s == ST_OK) s = kc_spec(c, k, WHERE_WG);
    kc_grid(k, total, WHERE_WG);
    return s;
}
