/* Hand-made graphs for linear_concat tests (tests/test_fuse_concat.c, tests/test_vk_matmul.c):
 * n linears on one or two inputs, each part read by a neg (the graph outputs), in the
 * exporter's JSON format with the weights as state-dict weights (the recipe needs them). */
#ifndef NPU_CONCAT_GRAPH_H
#define NPU_CONCAT_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ConcatSpec {
    int64_t rows, k;        /* x is [1, rows, k]: rows > 1 is a prefill-like input */
    int n;                  /* linears */
    int64_t cols[8];        /* N of each linear */
    bool bias[8];           /* each with a bias */
    const char *act[8];     /* ATen activation after it (NULL: none) */
    int input[8];           /* 0: reads x, 1: reads x2 (also [1, rows, k2]) */
    int64_t k2;             /* K of x2 (0: k) */
    bool part_is_output;    /* part 0's output is also a graph output */
} ConcatSpec;

/* The JSON text (malloc'd; the caller frees). */
char *concat_graph_json(const ConcatSpec *s);

#endif
