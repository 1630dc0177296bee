/* The .npubin reader's first step (npubin_decode): the payload's msgpack structure, walked once
 * without allocating, before msgpack-c's unpacker is given it. */
#include <stdbool.h>
#include <stdint.h>

#include "compiler/npubin.h"

#define MAX_DEPTH 16 /* deepest nesting of arrays and maps a plan may have */

Status npubin_prescan(const char *path, const unsigned char *b, size_t n, DiagList *d)
{
    uint64_t left[MAX_DEPTH + 1];
    int top = 0;
    size_t pos = 0;
    left[0] = 1;
    while (top >= 0) {
        if (left[top] == 0) {
            top--;
            continue;
        }
        left[top]--;
        if (pos >= n) return diag_error(d, path, NULL, NULL, "payload ends inside an item");
        size_t at = pos;
        unsigned c = b[pos++];
        uint64_t skip = 0, kids = 0;
        int lenb = 0;  /* bytes of a length field that follows */
        int extra = 0; /* ext: one type byte after the length */
        bool map = false, arr = false;
        if (c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3) {
        } else if (c <= 0x8f) {
            kids = 2ull * (c & 0x0f);
        } else if (c <= 0x9f) {
            kids = c & 0x0f;
        } else if (c <= 0xbf) {
            skip = c & 0x1f;
        } else if (c >= 0xc4 && c <= 0xc6) {
            lenb = 1 << (c - 0xc4); /* bin 8/16/32 */
        } else if (c >= 0xc7 && c <= 0xc9) {
            lenb = 1 << (c - 0xc7); /* ext 8/16/32 */
            extra = 1;
        } else if (c == 0xca || c == 0xcb) {
            skip = c == 0xca ? 4 : 8;
        } else if (c >= 0xcc && c <= 0xcf) {
            skip = 1u << (c - 0xcc);
        } else if (c >= 0xd0 && c <= 0xd3) {
            skip = 1u << (c - 0xd0);
        } else if (c >= 0xd4 && c <= 0xd8) {
            skip = 1 + (1u << (c - 0xd4)); /* fixext: type + 1..16 bytes */
        } else if (c >= 0xd9 && c <= 0xdb) {
            lenb = 1 << (c - 0xd9); /* str 8/16/32 */
        } else if (c == 0xdc || c == 0xdd) {
            lenb = c == 0xdc ? 2 : 4;
            arr = true;
        } else if (c == 0xde || c == 0xdf) {
            lenb = c == 0xde ? 2 : 4;
            map = true;
        } else {
            return diag_error(d, path, NULL, NULL, "payload byte %zu: 0x%02x is not a msgpack type",
                              at, c);
        }
        if (lenb) {
            if ((size_t)lenb > n - pos)
                return diag_error(d, path, NULL, NULL, "payload ends inside an item");
            uint64_t v = 0;
            for (int i = 0; i < lenb; i++)
                v = v << 8 | b[pos + (size_t)i]; /* big-endian */
            pos += (size_t)lenb;
            if (arr)
                kids = v;
            else if (map)
                kids = 2 * v;
            else
                skip = v + (uint64_t)extra;
        }
        if (skip > n - pos)
            return diag_error(d, path, NULL, NULL,
                              "payload byte %zu: item of %llu bytes runs past the end (%zu left)",
                              at, (unsigned long long)skip, n - pos);
        pos += (size_t)skip;
        if (kids) {
            if (kids > n - pos)
                return diag_error(d, path, NULL, NULL,
                                  "payload byte %zu: container declares %llu items but only %zu "
                                  "bytes follow",
                                  at, (unsigned long long)kids, n - pos);
            if (top == MAX_DEPTH)
                return diag_error(d, path, NULL, NULL, "payload nests deeper than %d", MAX_DEPTH);
            left[++top] = kids;
        }
    }
    if (pos != n)
        return diag_error(d, path, NULL, NULL, "%zu stray bytes after the payload's map", n - pos);
    return ST_OK;
}
