#include "runtime/cpu/cpu_kernels.h"

void bcast_strides(const int64_t *in, int rin, const int64_t *out, int rout, int64_t *strides)
{
    int64_t s = 1;
    for (int i = rout - 1; i >= 0; i--) {
        int j = i - (rout - rin);
        if (j < 0) {
            strides[i] = 0;
            continue;
        }
        strides[i] = (in[j] == 1 && out[i] != 1) ? 0 : s;
        s *= in[j];
    }
}

int64_t bcast_offset(int64_t i, const int64_t *out, int rout, const int64_t *st)
{
    int64_t off = 0;
    for (int d = rout - 1; d >= 0; d--) {
        int64_t q = i % out[d];
        i /= out[d];
        off += q * st[d];
    }
    return off;
}
