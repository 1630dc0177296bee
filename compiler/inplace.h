/* In-place ops of an imported graph made explicit (later reads redirected, zero_/fill_ of a
 * slice turned into npu.slice_fill of its base) or refused with a diagnostic; compiler/inplace.c
 * says which. The IR reader calls it once the nodes are read, before linking. */
#ifndef NPU_INPLACE_H
#define NPU_INPLACE_H

#include "common/diag.h"
#include "compiler/graph.h"

/* Rewrites g's in-place writes that later nodes see; ST_BAD_INPUT naming the node when one
 * cannot be expressed out of place. */
Status inplace_resolve(Graph *g, DiagList *d);

#endif
