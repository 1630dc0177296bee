/* qsort and bsearch comparators, written once. */
#ifndef NPU_CMP_H
#define NPU_CMP_H

#include <string.h>

/* ascending ints (no overflow: compares rather than subtracts) */
static inline int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* bsearch's comparator for a table sorted by strcmp on its rows' first member, a name: the key
 * is the name looked for (const char *). */
static inline int cmp_name_row(const void *key, const void *row)
{
    return strcmp((const char *)key, *(const char *const *)row);
}

#endif
