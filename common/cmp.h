/* qsort comparators, written once. */
#ifndef NPU_CMP_H
#define NPU_CMP_H

/* ascending ints (no overflow: compares rather than subtracts) */
static inline int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

#endif
