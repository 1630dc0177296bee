/* The epilogue activations (act.h). */
#include "compiler/act.h"

#include <string.h>

#include "shaders/abi.h"

static const EpiAct acts[] = {
    {OP_RELU, ACT_RELU, "conv_relu", "conv_add_relu", "linear_relu"},
    {OP_RELU6, ACT_CLAMP, "conv_relu6", "conv_add_relu6", NULL},
    {OP_HARDTANH, ACT_CLAMP, "conv_hardtanh", "conv_add_hardtanh", NULL},
    {OP_HARDSWISH, ACT_HARDSWISH, "conv_hardswish", "conv_add_hardswish", "linear_hardswish"},
    {OP_HARDSIGMOID, ACT_HARDSIGMOID, "conv_hardsigmoid", "conv_add_hardsigmoid", NULL},
    {OP_SILU, ACT_SILU, "conv_silu", "conv_add_silu", "linear_silu"},
    {OP_SIGMOID, ACT_SIGMOID, "conv_sigmoid", "conv_add_sigmoid", "linear_sigmoid"},
    {OP_GELU, ACT_GELU_ERF, "conv_gelu", "conv_add_gelu", "linear_gelu"},
    {OP_TANH, ACT_TANH, "conv_tanh", "conv_add_tanh", "linear_tanh"},
};

static bool is_relu6(const Node *n)
{
    return n->op == OP_HARDTANH && attr_float(n, "min_val", -1.0) == 0.0 &&
           attr_float(n, "max_val", 1.0) == 6.0;
}

const EpiAct *epi_act(const Node *n)
{
    OpId op = is_relu6(n) ? OP_RELU6 : n->op;
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++)
        if (acts[i].op == op) return &acts[i];
    return NULL;
}

uint32_t epi_act_code(const Node *n, double *lo, double *hi)
{
    const EpiAct *a = epi_act(n);
    *lo = *hi = 0;
    if (!a) return ACT_NONE;
    if (a->op == OP_RELU6) *lo = 0, *hi = 6;
    if (a->op == OP_HARDTANH) {
        *lo = attr_float(n, "min_val", -1.0);
        *hi = attr_float(n, "max_val", 1.0);
    }
    if (a->op == OP_GELU && strcmp(attr_str(n, "approximate", "none"), "tanh") == 0)
        return ACT_GELU_TANH;
    return a->code;
}
