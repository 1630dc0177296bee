/* Shared by the files of viz/ only: the process's one Graphviz context. libgvc 2.42's pango
 * plugin caches a pointer into a context's font dictionary across contexts, so a second context
 * in one process reads freed memory (ASan: heap-use-after-free in textspan_size); every layout
 * and render uses this one context, freed at exit. */
#ifndef NPU_VIZ_INTERNAL_H
#define NPU_VIZ_INTERNAL_H

#include <gvc.h>

GVC_t *viz_gvc(void);

#endif
