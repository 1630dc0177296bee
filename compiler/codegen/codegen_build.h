/* The expression DAG of one fused group (codegen_build.c): what the fuse-elementwise pass may
 * put in a group, and the builder the `elementwise` kernel family (lower_gen.c) calls. */
#ifndef NPU_CODEGEN_BUILD_H
#define NPU_CODEGEN_BUILD_H

#include "compiler/codegen/codegen.h"
#include "compiler/lower/kernels.h"

/* Can node n be a member of a generated kernel (op, attributes, dtypes, sizes)? When not, *why
 * (static storage) says why. */
bool cg_node_supported(const Graph *g, const Node *n, const char **why);
/* Is op a data-movement op that a generated kernel turns into index arithmetic? */
bool cg_is_view(OpId op);
/* Builds the kernel of c->fusion (or of the single node c->anchor when c->fusion is NULL) bound
 * as k says (inputs, then the output): out->g, value, offset, bindings, storage. out->g is
 * initialised here; the caller frees it with cg_free, also on error. */
Status cg_build(const KernelCtx *c, const PlanKernel *k, CgKernel *out);

#endif
