/* unary: out = f(in) elementwise over the physical buffer (input and output share one layout,
 * so padded channels are computed too and never read). Push UnaryPush (shaders/abi.h
 * UNARY_PUSH): the code UN_* (explicit numbers, so a .npubin does not depend on the order of
 * ops.def) and its parameters a, b. */
#include "compiler/lower/kernels.h"

#include <math.h>
#include <string.h>

/* The code of each op the kernel computes (0: not one); gelu's is UN_GELU_TANH for its tanh
 * approximation. */
static const uint32_t unary_codes[OP_COUNT] = {
    [OP_RELU] = UN_RELU,
    [OP_RELU6] = UN_RELU6,
    [OP_HARDTANH] = UN_HARDTANH,
    [OP_HARDSWISH] = UN_HARDSWISH,
    [OP_HARDSIGMOID] = UN_HARDSIGMOID,
    [OP_SIGMOID] = UN_SIGMOID,
    [OP_TANH] = UN_TANH,
    [OP_GELU] = UN_GELU_ERF,
    [OP_SILU] = UN_SILU,
    [OP_NEG] = UN_NEG,
    [OP_EXP] = UN_EXP,
    [OP_LOG] = UN_LOG,
    [OP_ABS] = UN_ABS,
    [OP_SQRT] = UN_SQRT,
    [OP_RSQRT] = UN_RSQRT,
    [OP_COS] = UN_COS,
    [OP_SIN] = UN_SIN,
    [OP_CLAMP] = UN_CLAMP,
    [OP_LEAKY_RELU] = UN_LEAKY_RELU,
};

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
    uint32_t code = n->op >= 0 && n->op < OP_COUNT ? unary_codes[n->op] : 0;
    if (!code) return kc_error(c, "%s is not a unary kernel op", op_short_name(n->op));
    double a = 0, b = 0;
    if (n->op == OP_HARDTANH) {
        a = attr_float(n, "min_val", -1.0);
        b = attr_float(n, "max_val", 1.0);
    } else if (n->op == OP_GELU) {
        if (strcmp(attr_str(n, "approximate", "none"), "tanh") == 0) code = UN_GELU_TANH;
    } else if (n->op == OP_CLAMP) {
        /* an absent bound is infinite (clamp_min and clamp_max name one) */
        a = attr_present(n, "min") ? attr_float(n, "min", 0) : -INFINITY;
        b = attr_present(n, "max") ? attr_float(n, "max", 0) : INFINITY;
    } else if (n->op == OP_LEAKY_RELU) {
        a = attr_float(n, "negative_slope", 0.01);
    }
    KcWords w = {0};
    UnaryPush pu = {.n = kc_word(&w, total), .code = code, .a = (float)a, .b = (float)b};
    Status st = kc_words_ok(c, k, &w);
    if (st == ST_OK) st = kc_push_block(c, k, &pu, sizeof pu);
    if (st == ST_OK) st = kc_spec(c, k, 256);
    kc_grid(k, total, 256);
    return st;
}
