/* The CPU reference executor: runs a graph node by node with the kernels of cpu_kernels.h and
 * keeps every tensor's value by tensor id, so the profiler and the bisect can compare any
 * intermediate against it. It defines what the right answer is. Called by the session (app/) and
 * by tests; it never prints. */
#ifndef NPU_CPU_REF_H
#define NPU_CPU_REF_H

#include "common/diag.h"
#include "compiler/graph.h"
#include "runtime/htensor.h"

typedef struct RefRun {
    int ntensors;
    HTensor *vals;   /* [ntensors]; inputs/weights are borrowed views of the bound values */
    double *node_us; /* [nnodes] wall time of each node's kernel */
    double total_us;
} RefRun;

typedef struct RefOptions {
    bool keep_all;           /* keep every intermediate (else free each after its last use) */
    bool keep_argmax_inputs; /* with keep_all false, keep argmax nodes' inputs too: the check of
                              * an argmax output reads them (compare.h cmp_output) */
    int first_node;          /* run nodes [first_node, last_node); last_node 0 = all */
    int last_node;
} RefOptions;

/* Runs g. `bound` holds a value for every graph input, weight and constant, indexed by tensor id
 * (other slots ignored; the values are borrowed, never freed here). On success r owns the
 * computed tensors; release with ref_free. Errors name `file`, the node and the tensor. */
Status ref_run(const Graph *g, const HTensor *bound, const RefOptions *opt, RefRun *r, DiagList *d);
void ref_free(RefRun *r);
/* The value of tensor t that no node produces but other tensors view at offsets (the combined
 * output of a linear_concat kernel): their values in vals[] copied into a new *out (caller frees;
 * elements no view covers are NaN). */
Status ref_assemble(const Graph *g, int t, const HTensor *vals, HTensor *out);
/* Runs one node given its input values; allocates outputs (caller frees). */
Status ref_run_node(const Graph *g, int node, const HTensor *const *in, HTensor *out, DiagList *d);

#endif
