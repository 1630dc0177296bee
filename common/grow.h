/* Arrays that grow by doubling: the append idiom of every growable array in the tool, written
 * once. Any layer may call it. */
#ifndef NPU_GROW_H
#define NPU_GROW_H

#include <stddef.h>

/* Room for element n of the array p (elements of elt bytes, *cap of them allocated): p itself
 * while n < *cap, else p reallocated to twice *cap elements (first when *cap is 0) and *cap
 * updated. NULL when out of memory; p is then unchanged and still the caller's. */
void *grow_array(void *p, int n, int *cap, size_t elt, int first);

#endif
