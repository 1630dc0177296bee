/* pool2d family: MAX_POOL2D, AVG_POOL2D and ADAPTIVE_AVG_POOL2D, one invocation per logical
 * output element, or LANES of them for a wide window (shaders/pool2d.comp); a global pool (one
 * window, the whole input) is a reduction per (n, c) row (shaders/pool2d_global.comp). Window
 * geometry, output sizes, divisors and the ceil_mode rule follow runtime/cpu/cpu_conv.c (ATen)
 * exactly. */
#include "compiler/lower/kernels.h"
#include "compiler/shape/shape.h"

#include <string.h>

/* The codes the shader switches on are shaders/abi.h POOL_* (explicit numbers: a .npubin must
 * not depend on ops.def); the push block PoolPush (POOL2D_PUSH). */
/* A window of WIDE_MIN or more elements is spread over LANES invocations: the largest power of
 * two up to its size, at most LANES_MAX: a wide window's few outputs would otherwise leave the
 * GPU idle, each invocation walking the whole window (measured: bench/NOTES.md, the wide pool;
 * global pools have their own kernel since). */
enum { POOL_WG = 64, WIDE_MIN = 16, LANES_MAX = 32 };
/* A global pool: GLOBAL_WG invocations per workgroup; a row gets lanes enough for at most
 * GLOBAL_PER_LANE loads each (one trip of the shader's U loads in flight), at most the
 * workgroup. */
enum { GLOBAL_WG = 256, GLOBAL_PER_LANE = 4 };

typedef struct PoolGeom {
    int64_t kh, kw, sh, sw, ph, pw, dh, dw, oh, ow;
} PoolGeom;

/* kernel_size, stride (absent, null or [] = kernel), padding, dilation (max only). */
static Status window(const KernelCtx *c, const Node *n, int64_t h, int64_t w, PoolGeom *g)
{
    int64_t v[2];
    if (!attr_present(n, "kernel_size") || !attr_ints_n(n, "kernel_size", v, 2, 1) || v[0] < 1 ||
        v[1] < 1)
        return kc_error(c, "pool2d: kernel_size must be one or two positive ints");
    g->kh = v[0], g->kw = v[1];
    const Attr *s = node_attr(n, "stride");
    if (s && s->kind == ATTR_INTS && s->n == 0) s = NULL;
    if (!s || s->kind == ATTR_NONE) {
        g->sh = g->kh, g->sw = g->kw;
    } else {
        if (!attr_ints_n(n, "stride", v, 2, 1) || v[0] < 1 || v[1] < 1)
            return kc_error(c, "pool2d: stride must be one or two positive ints");
        g->sh = v[0], g->sw = v[1];
    }
    if (!attr_ints_n(n, "padding", v, 2, 0) || v[0] < 0 || v[1] < 0)
        return kc_error(c, "pool2d: padding must be one or two non-negative ints");
    g->ph = v[0], g->pw = v[1];
    g->dh = g->dw = 1;
    if (n->op == OP_MAX_POOL2D &&
        (!attr_ints_n(n, "dilation", v, 2, 1) || (g->dh = v[0]) < 1 || (g->dw = v[1]) < 1))
        return kc_error(c, "pool2d: dilation must be one or two positive ints");
    bool ceil = attr_bool(n, "ceil_mode", false);
    g->oh = shape_pool_out(h, g->kh, g->ph, g->sh, g->dh, ceil);
    g->ow = shape_pool_out(w, g->kw, g->pw, g->sw, g->dw, ceil);
    return ST_OK;
}

/* Is the one output window the whole input, each element once (no padding, no dilation)? */
static bool global_window(uint32_t code, const PoolGeom *g, int64_t h, int64_t w)
{
    if (g->oh != 1 || g->ow != 1) return false;
    return code == POOL_ADAPTIVE ||
           (g->kh == h && g->kw == w && g->ph == 0 && g->pw == 0 && g->dh == 1 && g->dw == 1);
}

/* The global pool's kernel: rows of h * w elements, read as 16-byte vectors when every row
 * start is 16-byte aligned (h * w a multiple of the vector, x's binding offset too). */
static Status lower_global(const KernelCtx *c, PlanKernel *k, const PlanTensor *x, int64_t rows,
                           int64_t len)
{
    int64_t vec = 16 / (int64_t)dtype_size(x->storage);
    if (len % vec != 0 || kc_binding_offset(c->p, x) % 16 != 0) vec = 1;
    int64_t units = len / vec;
    uint32_t tpr = kc_lanes_for((units + GLOBAL_PER_LANE - 1) / GLOBAL_PER_LANE, GLOBAL_WG);
    Status st = kc_pick(c, k, (KernelKey){.kind = KK_pool2d, .impl = KI_GLOBAL});
    if (st == ST_OK) st = kc_spec(c, k, GLOBAL_WG);
    if (st == ST_OK) st = kc_spec(c, k, tpr);
    if (st == ST_OK) st = kc_spec(c, k, (uint32_t)vec);
    kc_grid(k, rows, GLOBAL_WG / tpr);
    return st;
}

Status lower_pool2d(const KernelCtx *c, PlanKernel *k)
{
    const Node *n = c->anchor;
    const PlanTensor *x = kc_arg(k, c->p, 0), *y = kc_out(k, c->p);
    if (k->nin != 1 || (x->rank != 3 && x->rank != 4) || y->rank != x->rank)
        return kc_error(c, "pool2d kernel needs one 3-D or 4-D input of the output's rank");
    int o = x->rank - 3;
    int64_t nb = o ? x->shape[0] : 1, ch = x->shape[o], h = x->shape[o + 1], w = x->shape[o + 2];
    if (y->shape[o] != ch || (o && y->shape[0] != nb))
        return kc_error(c, "pool2d kernel: output batch or channels differ from the input");
    PoolGeom g = {.kh = 1, .kw = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1};
    uint32_t code;
    int64_t include_pad = 1, divisor = 0;
    Status st = ST_OK;
    switch (n->op) {
    case OP_MAX_POOL2D:
    case OP_AVG_POOL2D:
        code = n->op == OP_MAX_POOL2D ? POOL_MAX : POOL_AVG;
        if ((st = window(c, n, h, w, &g)) != ST_OK) return st;
        if (g.oh != y->shape[o + 1] || g.ow != y->shape[o + 2])
            return kc_error(c,
                            "pool2d kernel: the attributes give %lldx%lld, the output is "
                            "%lldx%lld",
                            (long long)g.oh, (long long)g.ow, (long long)y->shape[o + 1],
                            (long long)y->shape[o + 2]);
        if (n->op == OP_AVG_POOL2D) {
            include_pad = attr_bool(n, "count_include_pad", true);
            if (attr_present(n, "divisor_override")) {
                divisor = attr_int(n, "divisor_override", 0);
                if (divisor == 0) return kc_error(c, "pool2d: divisor_override must not be zero");
            }
        }
        break;
    case OP_ADAPTIVE_AVG_POOL2D:
        /* output_size may hold nulls: the declared output is the truth (as the CPU reference) */
        code = POOL_ADAPTIVE;
        g.oh = y->shape[o + 1];
        g.ow = y->shape[o + 2];
        break;
    default:
        return kc_error(c, "%s is not a pool2d kernel op", op_short_name(n->op));
    }
    if (g.oh < 1 || g.ow < 1) return kc_error(c, "pool2d kernel: empty output");
    int64_t total = nb * ch * g.oh * g.ow;
    KcWords wd = {0};
    PoolPush pp = {
        .n = kc_word(&wd, nb),
        .c = kc_word(&wd, ch),
        .h = kc_word(&wd, h),
        .w = kc_word(&wd, w),
        .oh = kc_word(&wd, g.oh),
        .ow = kc_word(&wd, g.ow),
        .kh = kc_word(&wd, g.kh),
        .kw = kc_word(&wd, g.kw),
        .sh = kc_word(&wd, g.sh),
        .sw = kc_word(&wd, g.sw),
        .ph = kc_word(&wd, g.ph),
        .pw = kc_word(&wd, g.pw),
        .dh = kc_word(&wd, g.dh),
        .dw = kc_word(&wd, g.dw),
        .xcp = kc_word(&wd, x->pshape[o]),
        .ycp = kc_word(&wd, y->pshape[o]),
        .code = kc_word(&wd, code),
        .include_pad = kc_word(&wd, include_pad),
        .divisor = kc_word(&wd, divisor),
        .total = kc_word(&wd, total),
    };
    if (st == ST_OK) st = kc_words_ok(c, k, &wd);
    if (st == ST_OK) st = kc_push_block(c, k, &pp, sizeof pp);
    if (st == ST_OK && x->storage == y->storage && dtype_is_float(x->storage) && h * w >= 1 &&
        global_window(code, &g, h, w))
        return lower_global(c, k, x, total, h * w);
    /* the widest window: adaptive windows span at most ceil(in / out) + 1 rows (columns) */
    int64_t win = code != POOL_ADAPTIVE ? g.kh * g.kw
                                        : ((h + g.oh - 1) / g.oh + 1) * ((w + g.ow - 1) / g.ow + 1);
    int64_t lanes = 1;
    if (win >= WIDE_MIN && total <= UINT32_MAX / LANES_MAX)
        while (lanes * 2 <= win && lanes < LANES_MAX)
            lanes *= 2;
    if (st == ST_OK) st = kc_spec(c, k, POOL_WG);
    if (st == ST_OK) st = kc_spec(c, k, (uint32_t)lanes);
    kc_grid(k, total * lanes, POOL_WG);
    return st;
}
