/* Binding values to a graph's tensors: weights from safetensors (through weight_name_mapping) or
 * generated deterministically, graph inputs from an I/O file or generated, and the reference
 * outputs to compare against. Values are kept in the CPU reference's dtypes (f32, i64, bool),
 * indexed by tensor id, ready for ref_run and for upload by a device backend. */
#ifndef NPU_BIND_H
#define NPU_BIND_H

#include <stdint.h>
#include "common/diag.h"
#include "compiler/graph.h"
#include "runtime/compare.h"
#include "runtime/htensor.h"
#include "runtime/safetensors.h"

typedef struct Binding {
    int ntensors;
    HTensor *vals; /* [ntensors]: weights, inputs, constants */
    HTensor *ref;  /* [g->noutputs]: expected outputs; data NULL where none */
    int noutputs;
    int nref;          /* how many outputs have a reference */
    ArgmaxSrc *argmax; /* [noutputs] or NULL: for an output an argmax produces, its input's
                        * reference value (owned) and the node's dim and NaN rule, for the
                        * tie-aware check (bind_argmax_sources); x.data NULL elsewhere */
    char *weights_from, *inputs_from, *ref_from; /* file names, or a "random (seed N)" note */
    int stored_bf16; /* some weight was stored as bf16 (picks the compute dtype) */
    int fold_evals;  /* nodes the fold recipes ran on the CPU reference (bind_apply_recipes),
                      * over the binding's life: runs never add to it */
    int stored_f16;
} Binding;

Status bind_init(const Graph *g, Binding *b);
void bind_free(Binding *b);
/* Binds every weight placeholder from a safetensors file or sharded index. A weight the file
 * lacks takes the values the IR carries for it (a lifted tensor's, GTensor.const_data); without
 * them it is an error naming both (and explaining lifted_tensor_* buffers). */
Status bind_weights_file(const Graph *g, const char *path, Binding *b, DiagList *d);
/* Deterministic weights for architecture-only IRs (a weight whose values the IR carries takes
 * them): shaped like real ones (norm weights near 1, running variances positive, matrices
 * scaled by 1/sqrt(fan_in)). */
Status bind_weights_random(const Graph *g, uint64_t seed, Binding *b);
/* Binds every graph input from a safetensors file (names as the IR names them, optionally with
 * a "prefix."); a model-state input (GTensor.state) the file lacks keeps the value its weight or
 * constant bound. */
Status bind_inputs_file(const Graph *g, const char *path, const char *prefix, Binding *b,
                        DiagList *d);
/* The same from a file already open (path names it in diagnostics): many prefixed cases of one
 * file without parsing its header again (tests/test_opinfo.c). */
Status bind_inputs_st(const Graph *g, const SafeTensors *st, const char *path, const char *prefix,
                      Binding *b, DiagList *d);
/* Deterministic random inputs (model state keeps its weight's or constant's value): floats in
 * [-1, 1], integer inputs in range for their consumers (embedding ids below the vocabulary
 * size, index_copy indices inside the dim). */
Status bind_inputs_random(const Graph *g, uint64_t seed, Binding *b);
/* Binds expected outputs from a file when it holds tensors named as the graph outputs; a file
 * with none of them is not an error (nref stays 0). A present tensor of the wrong shape is. */
Status bind_reference_file(const Graph *g, const char *path, const char *prefix, Binding *b,
                           DiagList *d);
/* bind_reference_file from a file already open. */
Status bind_reference_st(const Graph *g, const SafeTensors *st, const char *path,
                         const char *prefix, Binding *b, DiagList *d);
/* Fills b->argmax for every output of g an argmax produces whose input `vals` (a reference run
 * of g, by tensor id, [nvals]) holds and b->argmax lacks: a copy of that value with the node's
 * dim and skip_nan. *missing (may be NULL) counts argmax outputs left without one. */
Status bind_argmax_sources(const Graph *g, const HTensor *vals, int nvals, Binding *b,
                           int *missing);
/* Grows the binding to a graph with more tensors (a compiled snapshot). */
Status bind_extend(const Graph *g, Binding *b);
/* Computes recipe outputs from the bound source weights: the values fold-constants computes at
 * load first (each node once, on the CPU reference), then batch-norm folds and linear_concat's
 * concatenated weights. An error names the node and the folded value. */
Status bind_apply_recipes(const Graph *g, Binding *b, DiagList *d);
/* Constants carried by the IR, and the first value of model state made from one. */
Status bind_constants(const Graph *g, Binding *b);

#endif
