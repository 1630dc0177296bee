/* unary: out = f(in) elementwise over the physical buffer (input and output share one layout,
 * so padded channels are computed too and never read). Push UnaryPush (shaders/abi.h
 * UNARY_PUSH): the code UN_* (explicit numbers, so a .npubin does not depend on the order of
 * ops.def) and its parameters a, b. */
#include "compiler/lower/kernels.h"

#include <math.h>
#include <string.h>

Status lower_unary(const KernelCtx *c, PlanKernel *k)
{
    const Node *n = c->anchor;
    const PlanTensor *in = kc_arg(k, c->p, 0), *out = kc_out(k, c->p);
    if (k->nin != 1 || in->rank != out->rank)
        return kc_error(c, "unary kernel needs one input of the output's shape");
    int64_t total = 1;
    for (int i = 0; i < out->rank; i++) {
        if (in->pshape[i] != out->pshape[i])
            return kc_error(c, "unary kernel: input and output layouts differ");
        total *= out->pshape[i];
    }
    double a = 0, b = 0;
    uint32_t code = 0;
    switch (n->op) {
    case OP_RELU:
        code = UN_RELU;
        break;
    case OP_RELU6:
        code = UN_RELU6;
        break;
    case OP_HARDTANH:
        code = UN_HARDTANH;
        a = attr_float(n, "min_val", -1.0);
        b = attr_float(n, "max_val", 1.0);
        break;
    case OP_HARDSWISH:
        code = UN_HARDSWISH;
        break;
    case OP_HARDSIGMOID:
        code = UN_HARDSIGMOID;
        break;
    case OP_SIGMOID:
        code = UN_SIGMOID;
        break;
    case OP_TANH:
        code = UN_TANH;
        break;
    case OP_GELU:
        code = strcmp(attr_str(n, "approximate", "none"), "tanh") == 0 ? UN_GELU_TANH : UN_GELU_ERF;
        break;
    case OP_SILU:
        code = UN_SILU;
        break;
    case OP_NEG:
        code = UN_NEG;
        break;
    case OP_EXP:
        code = UN_EXP;
        break;
    case OP_LOG:
        code = UN_LOG;
        break;
    case OP_ABS:
        code = UN_ABS;
        break;
    case OP_SQRT:
        code = UN_SQRT;
        break;
    case OP_RSQRT:
        code = UN_RSQRT;
        break;
    case OP_COS:
        code = UN_COS;
        break;
    case OP_SIN:
        code = UN_SIN;
        break;
    case OP_CLAMP:
        /* an absent bound is infinite (clamp_min and clamp_max name one) */
        code = UN_CLAMP;
        a = attr_present(n, "min") ? attr_float(n, "min", 0) : -INFINITY;
        b = attr_present(n, "max") ? attr_float(n, "max", 0) : INFINITY;
        break;
    case OP_LEAKY_RELU:
        code = UN_LEAKY_RELU;
        a = attr_float(n, "negative_slope", 0.01);
        break;
    default:
        return kc_error(c, "%s is not a unary kernel op", op_short_name(n->op));
    }
    KcWords w = {0};
    UnaryPush pu = {.n = kc_word(&w, total), .code = code, .a = (float)a, .b = (float)b};
    Status st = kc_words_ok(c, k, &w);
    if (st == ST_OK) st = kc_push_block(c, k, &pu, sizeof pu);
    if (st == ST_OK) st = kc_spec(c, k, 256);
    kc_grid(k, total, 256);
    return st;
}
