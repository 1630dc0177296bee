#include "common/hash.h"

uint64_t hash64_update(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

uint64_t hash64(const void *data, size_t n)
{
    return hash64_update(HASH64_INIT, data, n);
}

uint64_t hash64_str(const char *s)
{
    uint64_t h = HASH64_INIT;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ULL;
    }
    return h;
}
