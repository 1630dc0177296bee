/* Hand-made graphs for linear_concat and linear_glu tests (tests/test_fuse_concat.c,
 * tests/test_vk_matmul.c, tests/test_vk_glu.c): n linears on one or two inputs, each part read
 * by a neg (the graph outputs); silu(gate) * up; in the exporter's JSON format with the weights
 * as state-dict weights (the recipes need them). */
#ifndef NPU_CONCAT_GRAPH_H
#define NPU_CONCAT_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ConcatSpec {
    int64_t rows, k;     /* x is [1, rows, k]: rows > 1 is a prefill-like input */
    int n;               /* linears */
    int64_t cols[8];     /* N of each linear */
    bool bias[8];        /* each with a bias */
    const char *act[8];  /* ATen activation after it (NULL: none) */
    int input[8];        /* 0: reads x, 1: reads x2 (also [1, rows, k2]) */
    int64_t k2;          /* K of x2 (0: k) */
    bool part_is_output; /* part 0's output is also a graph output */
} ConcatSpec;

/* The JSON text (malloc'd; the caller frees). */
char *concat_graph_json(const ConcatSpec *s);

/* The gated MLP's first half for linear_glu tests (tests/test_fuse_concat.c, test_vk_glu.c):
 * x [1, rows, k] -> gate = linear(x, wg [f, k] (, bg)), up = linear(x or x2, wu [f, k] (, bu)),
 * h = silu(gate) * up, the graph output (read by a neg when neg). */
typedef struct GluSpec {
    int64_t rows, k, f;
    bool bias, bias_up; /* a bias on the gate (bg [f]), on the up (bu [f]) */
    bool up_first;      /* mul(up, silu(gate)) instead of mul(silu(gate), up) */
    bool up_node_first; /* the up linear before the gate linear in the node list */
    bool up_reads_x2;   /* up reads another input x2 [1, rows, k] */
    bool neg;           /* h read by a neg (the graph output o) */
} GluSpec;
char *glu_graph_json(const GluSpec *s);

#endif
