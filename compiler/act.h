/* The activations a kernel's epilogue applies (the conv2d family's and the matmul family's): one
 * table of the activation ops, read by the fusion patterns (which activation joins a conv or a
 * linear, and the instance's variant name) and by lowering (the code, shaders/abi.h ACT_*, that
 * the shaders' npu_activate switches on: shaders/activation.glsl). Read-only data. */
#ifndef NPU_ACT_H
#define NPU_ACT_H

#include <stdint.h>

#include "compiler/graph.h"

typedef struct EpiAct {
    OpId op;
    uint32_t code;               /* abi.h ACT_*; gelu's tanh form is ACT_GELU_TANH (epi_act_code) */
    const char *conv, *conv_add; /* the conv pattern's variants: conv_ACT, conv_add_ACT */
    const char *linear;          /* linear_act's variant, NULL: it does not fuse after a product */
} EpiAct;

/* The row of activation node n, or NULL when n is none. hardtanh(0, 6), as torchvision exports
 * ReLU6, is relu6's row. */
const EpiAct *epi_act(const Node *n);
/* n's code (abi.h ACT_*; ACT_NONE when n is no activation of the table) and, for ACT_CLAMP
 * (relu6, hardtanh), its bounds in *lo and *hi. */
uint32_t epi_act_code(const Node *n, double *lo, double *hi);

#endif
