/* Cases that both the lone elementwise kernels (test_vk_elt.c) and the generated ones
 * (test_vk_gen.c) are checked on, so the two suites cover the same broadcasts and binary ops. */
#ifndef NPU_TESTS_ELT_CASES_H
#define NPU_TESTS_ELT_CASES_H

#include <stdbool.h>

#include "tests/testutil.h"
#include "tests/vk_check.h"

/* Operand shapes and their broadcast output: same shape, dims of 1 on both sides, rank 1 against
 * rank 4 both ways, a per-channel bias either side, a one-element operand, rank 6. */
typedef struct EltShapes {
    TuSpec a, b, out;
} EltShapes;
extern const EltShapes elt_shapes[];
extern const int elt_nshapes;

/* Binary ops and their attributes: elt_binary_ops with two tensor operands, elt_scalar_ops with a
 * scalar one (alpha, the division modes, pow's exponents). `safe`: the operands must be kept away
 * from 0 (the divisor, pow's base for a negative exponent), which the suites' graphs arrange. */
typedef struct EltOp {
    const char *aten, *attrs;
    bool safe;
} EltOp;
extern const EltOp elt_binary_ops[];
extern const int elt_nbinary_ops;
extern const EltOp elt_scalar_ops[];
extern const int elt_nscalar_ops;

/* The tolerances (fp32, fp16, bf16) of div with a rounding mode: discontinuous, so inputs rounded
 * to 16 bits move a few quotients across an integer, each off by 1 (measured: 0.01 in fp16, 0.06
 * in bf16; a wrong mode is off by 1 on a third of the elements: 0.2 to 0.35). */
extern const double elt_mode_tols[3];

#endif
