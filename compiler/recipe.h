/* Weight recipes: weights the compiler derives from the model's (batch-norm folding into a
 * conv, concatenated projections, values computed from weights and constants only), computed
 * when the weights are bound. The graph records them
 * and the plan carries them (graph.h, plan.h). */
#ifndef NPU_RECIPE_H
#define NPU_RECIPE_H

/* A weight recipe: derived weights computed at load time (recorded in the plan, not as data).
 * bn_fold: out_w, out_b from the conv's weight and bias and the batch_norm parameters.
 * concat: out_w = src[0] | src[1] | ... along dim 0 (linear_concat's weight or bias); with a
 * block of B rows, the sources interleaved in runs of B rows: src[0][0:B] | src[1][0:B] | ... |
 * src[0][B:2B] | src[1][B:2B] | ... (every source has the same rows, a multiple of B;
 * linear_glu's gate|up weight and bias).
 * fold: out_w = the value the nodes `nodes` (graph order) compute from weights and constants,
 * run on the CPU reference (fold-constants, compiler/pass_constfold.c; those nodes are dead in
 * the compiled graph). */
typedef enum RecipeKind { RECIPE_BN_FOLD, RECIPE_CONCAT, RECIPE_FOLD, RECIPE_KINDS } RecipeKind;
#define RECIPE_MAX_SRC 8
typedef struct Recipe {
    RecipeKind kind;
    int out_w, out_b;           /* tensor ids of the derived weight and bias (-1: none) */
    int conv_w, conv_b;         /* conv weight and bias (-1: none) */
    int gamma, beta, mean, var; /* batch_norm parameters (-1: absent = 1 / 0) */
    double eps;
    int nsrc, src[RECIPE_MAX_SRC]; /* concat: the parts, in order */
    int block;                     /* concat: rows per source and run, 0 = each source whole */
    int *nodes, nnodes;            /* fold: node indices, in graph order (the graph's arena) */
} Recipe;

#endif
