// index_copy's index logic, shared by index_copy.comp and rope_cache.comp: which cache row a
// source slice writes and which source slice a cache row takes. A repeated index keeps the LAST
// source slice, as the CPU reference's sequential loop does; indices outside [-size, size) are
// refused on upload, and here they match nothing.
// The including shader declares the int buffer `idx` (m indices) and push words pc.size (the
// cache's size along the dim) and pc.m.
#ifndef NPU_INDEX_COPY_GLSL
#define NPU_INDEX_COPY_GLSL

int ic_norm(uint j)
{
    int v = idx[j];
    return v < 0 ? v + int(pc.size) : v;
}

// The row source slice j writes, or -1 (out of range, or a later slice writes that row).
int ic_target(uint j)
{
    int at = ic_norm(j);
    if (at < 0 || at >= int(pc.size)) return -1;
    for (uint k = j + 1u; k < pc.m; k++)
        if (ic_norm(k) == at) return -1; // a later slice wins
    return at;
}

// The last source slice that writes row `at`, or -1 (the row keeps self).
int ic_source(uint at)
{
    for (uint k = pc.m; k > 0u; k--)
        if (ic_norm(k - 1u) == int(at)) return int(k - 1u);
    return -1;
}

#endif
