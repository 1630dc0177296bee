#include "compiler/ops.h"

#include <string.h>
#include <stdio.h>
#include "common/strmap.h"

const OpInfo op_info[OP_COUNT] = {
#define X(id, nm, mn, mx, fl, kind, cls, shape, dt, dc)                                            \
    [OP_##id] = {#id, nm, mn, mx, fl, KK_##kind, OC_##cls, dc},
#include "compiler/ops.def"
#undef X
};

/* Names are split once into this static buffer; the map points into it. */
static char name_buf[8192];
static char canon[OP_COUNT][64];
static char shortn[OP_COUNT][40];
static StrMap name_map;
static int built;

static void build(void)
{
    size_t used = 0;
    strmap_init(&name_map);
    for (int op = 0; op < OP_COUNT; op++) {
        const char *s = op_info[op].names;
        int first = 1;
        while (*s) {
            const char *bar = strchr(s, '|');
            size_t n = bar ? (size_t)(bar - s) : strlen(s);
            if (used + n + 1 > sizeof name_buf) break;
            char *k = name_buf + used;
            memcpy(k, s, n);
            k[n] = 0;
            used += n + 1;
            strmap_put(&name_map, k, (void *)(long)(op + 1));
            if (first) {
                snprintf(canon[op], sizeof canon[op], "%s", k);
                /* "aten.max_pool2d.default" -> "max_pool2d", "npu.depad" -> "depad" */
                const char *a = strncmp(k, "aten.", 5) == 0  ? k + 5
                                : strncmp(k, "npu.", 4) == 0 ? k + 4
                                                             : k;
                const char *dot = strchr(a, '.');
                size_t m = dot ? (size_t)(dot - a) : strlen(a);
                if (m >= sizeof shortn[op]) m = sizeof shortn[op] - 1;
                memcpy(shortn[op], a, m);
                shortn[op][m] = 0;
                first = 0;
            }
            s += n;
            if (*s == '|') s++;
        }
    }
    built = 1;
}

OpId op_lookup(const char *aten)
{
    if (!built) build();
    long v = (long)strmap_get(&name_map, aten);
    return v ? (OpId)(v - 1) : OP_INVALID;
}

const char *op_canonical_name(OpId op)
{
    if (!built) build();
    return op >= 0 && op < OP_COUNT ? canon[op] : "?";
}

const char *op_short_name(OpId op)
{
    if (!built) build();
    if (op == OP_GETITEM) return "getitem";
    return op >= 0 && op < OP_COUNT ? shortn[op] : "?";
}
