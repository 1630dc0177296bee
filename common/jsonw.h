/* Writing JSON text to a FILE: the pieces the JSON outputs (describe --json, generate --json, the
 * session's replies) print by hand, written once. Any layer may use them. */
#ifndef NPU_JSONW_H
#define NPU_JSONW_H

#include <stdint.h>
#include <stdio.h>

/* s as a JSON string literal, quotes, backslashes and control characters escaped (NULL: ""). */
void jw_str(FILE *f, const char *s);
/* Arrays of n numbers: [1,2,3]; the floats with `decimals` digits after the point. */
void jw_ints(FILE *f, const int *v, int n);
void jw_i64s(FILE *f, const int64_t *v, int n);
void jw_floats(FILE *f, const float *v, int n, int decimals);

#endif
