#include "common/grow.h"

#include <stdlib.h>

void *grow_array(void *p, int n, int *cap, size_t elt, int first)
{
    if (n < *cap) return p;
    int c = *cap ? 2 * *cap : first;
    void *q = realloc(p, elt * (size_t)c);
    if (q) *cap = c;
    return q;
}
