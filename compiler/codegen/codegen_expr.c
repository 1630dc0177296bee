/* The expression DAG of a generated kernel and its simplifier (codegen.h).
 *
 * Nodes are hash-consed: asking twice for the same (op, type, operands, constant) returns the
 * same id, so building the DAG is common-subexpression elimination, and ids are a topological
 * order. Every builder simplifies before it interns: constants fold (float results rounded to
 * float32 as the CPU reference rounds), identities drop (x*1, x+0, where(true, a, b)), and int
 * index arithmetic is kept as an affine form `sum coef*atom + k` over atoms (gid, x/k, x%k,
 * min, max, loads). On affine forms of non-negative values:
 *   (q*m*a + r)/m = q*a + r/m and (q*m*a + r)%m = r%m; r/m = 0 and r%m = r when 0 <= r < m;
 *   (x/n)/m = x/(n*m); (x%(n*m))%n = x%n; (x%(n*m))/n = (x/n)%m;
 *   c*(x%n) + c*n*((x/n)%m) = c*(x%(n*m));  c*(x%n) + c*n*(x/n) = c*x.
 * The last two undo the unravelling of an index over a shape, so a dense operand of the
 * output's shape is read at `gid`, and a broadcast or a reshape costs only the divisions it
 * really needs. */
#include "compiler/codegen/codegen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/hash.h"

#define AFF_MAX 24

static const char *const op_names[CG_OP_COUNT] = {
    [CG_CONST] = "const",
    [CG_GID] = "gid",
    [CG_LOAD] = "load",
    [CG_ADD] = "add",
    [CG_SUB] = "sub",
    [CG_MUL] = "mul",
    [CG_DIV] = "div",
    [CG_IDIV] = "idiv",
    [CG_IMOD] = "imod",
    [CG_MIN] = "min",
    [CG_MAX] = "max",
    [CG_NEG] = "neg",
    [CG_ABS] = "abs",
    [CG_EXP] = "exp",
    [CG_LOG] = "log",
    [CG_SQRT] = "sqrt",
    [CG_RSQRT] = "rsqrt",
    [CG_COS] = "cos",
    [CG_SIN] = "sin",
    [CG_TANH] = "tanh",
    [CG_SIGMOID] = "sigmoid",
    [CG_RELU] = "relu",
    [CG_GELU] = "gelu",
    [CG_GELU_TANH] = "gelu_tanh",
    [CG_SILU] = "silu",
    [CG_HARDSWISH] = "hardswish",
    [CG_HARDSIGMOID] = "hardsigmoid",
    [CG_CLAMP] = "clamp",
    [CG_POW] = "pow",
    [CG_DIV_TRUNC] = "div_trunc",
    [CG_DIV_FLOOR] = "div_floor",
    [CG_EQ] = "eq",
    [CG_NE] = "ne",
    [CG_LT] = "lt",
    [CG_LE] = "le",
    [CG_GT] = "gt",
    [CG_GE] = "ge",
    [CG_AND] = "and",
    [CG_OR] = "or",
    [CG_NOT] = "not",
    [CG_WHERE] = "where",
    [CG_CAST] = "cast",
};

const char *cg_op_name(CgOp op)
{
    return op >= 0 && op < CG_OP_COUNT ? op_names[op] : "?";
}

void cg_init(Cg *g, int64_t numel)
{
    memset(g, 0, sizeof *g);
    g->numel = numel;
}

void cg_free(Cg *g)
{
    free(g->n);
    free(g->slot);
    memset(g, 0, sizeof *g);
}

static int fail(Cg *g, const char *why)
{
    if (!g->err) g->err = why;
    return -1;
}

/* ---- interning ---------------------------------------------------------------------------- */

static uint64_t node_hash(const CgNode *n)
{
    uint64_t h = HASH64_INIT;
    int key[6] = {n->op, n->type, n->na, n->a[0], n->a[1], n->a[2]};
    h = hash64_update(h, key, sizeof key);
    return hash64_update(h, &n->c, sizeof n->c);
}

static bool node_eq(const CgNode *a, const CgNode *b)
{
    return a->op == b->op && a->type == b->type && a->na == b->na && a->a[0] == b->a[0] &&
           a->a[1] == b->a[1] && a->a[2] == b->a[2] && memcmp(&a->c, &b->c, sizeof a->c) == 0;
}

static bool rehash(Cg *g, int nslot)
{
    int *s = calloc((size_t)nslot, sizeof *s);
    if (!s) return false;
    for (int i = 0; i < g->count; i++) {
        size_t h = (size_t)node_hash(&g->n[i]) & (size_t)(nslot - 1);
        while (s[h])
            h = (h + 1) & (size_t)(nslot - 1);
        s[h] = i + 1;
    }
    free(g->slot);
    g->slot = s;
    g->nslot = nslot;
    return true;
}

static int intern(Cg *g, CgNode nn)
{
    if (g->err) return -1;
    for (int i = nn.na; i < 3; i++)
        nn.a[i] = -1;
    if (nn.type != CGT_I32) nn.lo = nn.hi = 0;
    /* an int whose range is one value is that constant (gid of a one-element output, x % 1) */
    if (nn.type == CGT_I32 && nn.op != CG_CONST && nn.op != CG_LOAD && nn.lo == nn.hi)
        return cg_iconst(g, nn.lo);
    if (g->nslot == 0 && !rehash(g, 256)) return fail(g, "out of memory");
    size_t mask = (size_t)(g->nslot - 1), h = (size_t)node_hash(&nn) & mask;
    while (g->slot[h]) {
        int id = g->slot[h] - 1;
        if (node_eq(&g->n[id], &nn)) return id;
        h = (h + 1) & mask;
    }
    if (g->count >= CG_MAX_NODES) return fail(g, "the kernel's expression has too many nodes");
    CgNode *n = grow_array(g->n, g->count, &g->cap, sizeof *n, 256);
    if (!n) return fail(g, "out of memory");
    g->n = n;
    int id = g->count++;
    g->n[id] = nn;
    g->slot[h] = id + 1;
    if (2 * g->count > g->nslot && !rehash(g, 2 * g->nslot)) return fail(g, "out of memory");
    return id;
}

static bool is_const(const Cg *g, int id)
{
    return id >= 0 && g->n[id].op == CG_CONST;
}

static double cval(const Cg *g, int id)
{
    return g->n[id].c;
}

/* ---- constants ---------------------------------------------------------------------------- */

int cg_fconst(Cg *g, double v)
{
    CgNode n = {.op = CG_CONST, .type = CGT_F32, .c = (double)(float)v};
    if (v != v) n.c = NAN; /* one NaN */
    return intern(g, n);
}

int cg_iconst(Cg *g, int64_t v)
{
    if (v > INT32_MAX || v < INT32_MIN) return fail(g, "an index beyond int32");
    return intern(g, (CgNode){.op = CG_CONST, .type = CGT_I32, .c = (double)v, .lo = v, .hi = v});
}

int cg_bconst(Cg *g, bool v)
{
    return intern(g, (CgNode){.op = CG_CONST, .type = CGT_BOOL, .c = v ? 1 : 0});
}

int cg_gid(Cg *g)
{
    if (g->numel < 1 || g->numel > INT32_MAX) return fail(g, "output size beyond int32");
    return intern(g, (CgNode){.op = CG_GID, .type = CGT_I32, .lo = 0, .hi = g->numel - 1});
}

int cg_load(Cg *g, int binding, CgType t, int offset)
{
    if (offset < 0) return -1;
    CgNode n = {.op = CG_LOAD, .type = t, .na = 1, .a = {offset}, .c = binding};
    n.lo = INT32_MIN;
    n.hi = INT32_MAX;
    return intern(g, n);
}

/* ---- int index arithmetic: affine forms --------------------------------------------------- */

typedef struct Aff {
    int n;
    int atom[AFF_MAX];
    int64_t coef[AFF_MAX];
    int64_t k;
} Aff;

static bool mul_ok(Cg *g, int64_t a, int64_t b, int64_t *r)
{
    if (__builtin_mul_overflow(a, b, r)) return fail(g, "an index beyond int32"), false;
    return true;
}

static void aff_term(Cg *g, Aff *a, int atom, int64_t c)
{
    for (int i = 0; i < a->n; i++)
        if (a->atom[i] == atom) {
            a->coef[i] += c;
            return;
        }
    if (a->n == AFF_MAX) {
        fail(g, "an index expression with too many terms");
        return;
    }
    a->atom[a->n] = atom;
    a->coef[a->n++] = c;
}

static void aff_collect(Cg *g, int id, int64_t scale, Aff *a)
{
    if (id < 0 || g->err) {
        fail(g, "an index expression failed");
        return;
    }
    const CgNode *n = &g->n[id];
    int64_t v;
    if (n->op == CG_CONST) {
        if (mul_ok(g, (int64_t)n->c, scale, &v)) a->k += v;
    } else if (n->op == CG_ADD) {
        aff_collect(g, n->a[0], scale, a);
        aff_collect(g, n->a[1], scale, a);
    } else if (n->op == CG_SUB) {
        aff_collect(g, n->a[0], scale, a);
        aff_collect(g, n->a[1], -scale, a);
    } else if (n->op == CG_MUL && is_const(g, n->a[1])) {
        if (mul_ok(g, (int64_t)cval(g, n->a[1]), scale, &v)) aff_collect(g, n->a[0], v, a);
    } else {
        aff_term(g, a, id, scale);
    }
}

static void aff_remove(Aff *a, int i)
{
    a->n--;
    a->atom[i] = a->atom[a->n];
    a->coef[i] = a->coef[a->n];
}

static int64_t lo_of(const Cg *g, int id)
{
    return g->n[id].lo;
}

static int64_t hi_of(const Cg *g, int id)
{
    return g->n[id].hi;
}

/* Range of an affine form (saturating well past int32, which the builders then refuse). */
static void aff_range(const Cg *g, const Aff *a, int64_t *lo, int64_t *hi)
{
    double l = (double)a->k, h = (double)a->k;
    for (int i = 0; i < a->n; i++) {
        double c = (double)a->coef[i], x = (double)lo_of(g, a->atom[i]),
               y = (double)hi_of(g, a->atom[i]);
        l += c > 0 ? c * x : c * y;
        h += c > 0 ? c * y : c * x;
    }
    const double big = 4e18;
    *lo = l < -big ? (int64_t)-big : (int64_t)l;
    *hi = h > big ? (int64_t)big : (int64_t)h;
}

/* Every term non-negative: the div/mod rewrites hold. */
static bool aff_nonneg(const Cg *g, const Aff *a)
{
    if (a->k < 0) return false;
    for (int i = 0; i < a->n; i++)
        if (a->coef[i] < 0 || lo_of(g, a->atom[i]) < 0) return false;
    return true;
}

static int raw_int(Cg *g, CgOp op, int x, int y, int64_t lo, int64_t hi)
{
    if (x < 0 || y < 0) return -1;
    CgNode n = {.op = op, .type = CGT_I32, .na = 2, .a = {x, y}, .lo = lo, .hi = hi};
    return intern(g, n);
}

static int aff_build(Cg *g, Aff *a);

static int const_of(const Cg *g, int id)
{
    return (int)cval(g, id);
}

/* c*(x%n) + c*n*((x/n)%m) -> c*(x%(n*m)); c*(x%n) + c*n*(x/n) -> c*x. One rewrite per call. */
static bool aff_combine(Cg *g, Aff *a)
{
    for (int i = 0; i < a->n; i++) {
        const CgNode *mi = &g->n[a->atom[i]];
        if (mi->op != CG_IMOD) continue;
        int x = mi->a[0];
        int64_t n = const_of(g, mi->a[1]), c = a->coef[i], cn;
        if (__builtin_mul_overflow(c, n, &cn)) continue;
        for (int j = 0; j < a->n; j++) {
            if (j == i || a->coef[j] != cn) continue;
            const CgNode *mj = &g->n[a->atom[j]];
            int64_t m = 0;
            bool whole = false;
            if (mj->op == CG_IMOD) {
                const CgNode *y = &g->n[mj->a[0]];
                if (y->op != CG_IDIV || y->a[0] != x || const_of(g, y->a[1]) != n) continue;
                m = const_of(g, mj->a[1]);
            } else if (mj->op == CG_IDIV && mj->a[0] == x && const_of(g, mj->a[1]) == n) {
                whole = true;
            } else {
                continue;
            }
            int hi = i > j ? i : j, lo = i > j ? j : i;
            aff_remove(a, hi);
            aff_remove(a, lo);
            int t = whole ? x : cg_imod(g, x, n * m);
            aff_collect(g, t, c, a);
            return true;
        }
    }
    return false;
}

static int cmp_term(const void *pa, const void *pb)
{
    const int *a = pa, *b = pb;
    return (a[0] > b[0]) - (a[0] < b[0]);
}

/* The canonical node of an affine form: terms by atom id, the constant last. */
static int aff_build(Cg *g, Aff *a)
{
    if (g->err) return -1;
    while (aff_combine(g, a)) {
        if (g->err) return -1;
    }
    int order[AFF_MAX][2], n = 0;
    for (int i = 0; i < a->n; i++)
        if (a->coef[i] != 0) {
            order[n][0] = a->atom[i];
            order[n++][1] = i;
        }
    qsort(order, (size_t)n, sizeof order[0], cmp_term);
    int acc = -1;
    int64_t lo = 0, hi = 0;
    for (int t = 0; t < n; t++) {
        int atom = order[t][0];
        int64_t c = a->coef[order[t][1]], m = c < 0 ? -c : c;
        int64_t tl = lo_of(g, atom), th = hi_of(g, atom), p, q;
        if (!mul_ok(g, tl, m, &p) || !mul_ok(g, th, m, &q)) return -1;
        tl = p;
        th = q;
        int term = atom;
        if (m != 1 && !(acc < 0 && c < 0)) term = raw_int(g, CG_MUL, atom, cg_iconst(g, m), tl, th);
        if (acc < 0 && c < 0) {
            acc = raw_int(g, CG_MUL, atom, cg_iconst(g, c), -th, -tl);
            lo = -th;
            hi = -tl;
        } else if (acc < 0) {
            acc = term;
            lo = tl;
            hi = th;
        } else if (c < 0) {
            lo -= th;
            hi -= tl;
            acc = raw_int(g, CG_SUB, acc, term, lo, hi);
        } else {
            lo += tl;
            hi += th;
            acc = raw_int(g, CG_ADD, acc, term, lo, hi);
        }
    }
    if (acc < 0) return cg_iconst(g, a->k);
    if (a->k == 0) return acc;
    return raw_int(g, CG_ADD, acc, cg_iconst(g, a->k), lo + a->k, hi + a->k);
}

static int aff_of_node(Cg *g, int id, Aff *a)
{
    memset(a, 0, sizeof *a);
    aff_collect(g, id, 1, a);
    return g->err ? -1 : 0;
}

static bool is_int(const Cg *g, int id)
{
    return id >= 0 && g->n[id].type == CGT_I32;
}

int cg_iadd(Cg *g, int x, int y)
{
    if (x < 0 || y < 0) return -1;
    if (!is_int(g, x) || !is_int(g, y)) return fail(g, "int add of a non-int");
    Aff a;
    memset(&a, 0, sizeof a);
    aff_collect(g, x, 1, &a);
    aff_collect(g, y, 1, &a);
    return aff_build(g, &a);
}

int cg_imul(Cg *g, int x, int64_t k)
{
    if (x < 0) return -1;
    if (!is_int(g, x)) return fail(g, "int multiply of a non-int");
    Aff a;
    memset(&a, 0, sizeof a);
    aff_collect(g, x, k, &a);
    return aff_build(g, &a);
}

/* (x/n)/m, (x%M)/m for a lone atom r with 0 <= r. */
static int div_atom(Cg *g, int r, int64_t m)
{
    const CgNode *rn = &g->n[r];
    if (rn->op == CG_IDIV) return cg_idiv(g, rn->a[0], (int64_t)const_of(g, rn->a[1]) * m);
    if (rn->op == CG_IMOD && const_of(g, rn->a[1]) % m == 0)
        return cg_imod(g, cg_idiv(g, rn->a[0], m), const_of(g, rn->a[1]) / m);
    int64_t lo = lo_of(g, r), hi = hi_of(g, r);
    return raw_int(g, CG_IDIV, r, cg_iconst(g, m), lo >= 0 ? lo / m : lo / m, hi / m);
}

int cg_idiv(Cg *g, int x, int64_t m)
{
    if (x < 0) return -1;
    if (!is_int(g, x) || m <= 0) return fail(g, "int division by a non-positive constant");
    if (m == 1) return x;
    if (lo_of(g, x) >= 0 && hi_of(g, x) < m) return cg_iconst(g, 0);
    if (m > INT32_MAX) return fail(g, "an index beyond int32");
    Aff a;
    if (aff_of_node(g, x, &a) < 0) return -1;
    if (!aff_nonneg(g, &a))
        return raw_int(g, CG_IDIV, x, cg_iconst(g, m), lo_of(g, x) / m, hi_of(g, x) / m);
    Aff q, r;
    memset(&q, 0, sizeof q);
    memset(&r, 0, sizeof r);
    for (int i = 0; i < a.n; i++) {
        if (a.coef[i] / m) aff_term(g, &q, a.atom[i], a.coef[i] / m);
        if (a.coef[i] % m) aff_term(g, &r, a.atom[i], a.coef[i] % m);
    }
    q.k = a.k / m;
    r.k = a.k % m;
    int64_t rl, rh;
    aff_range(g, &r, &rl, &rh);
    if (rh < m) return aff_build(g, &q);
    int inner;
    if (r.n == 1 && r.coef[0] == 1 && r.k == 0)
        inner = div_atom(g, r.atom[0], m);
    else {
        int rr = aff_build(g, &r);
        if (rr < 0) return -1;
        inner = raw_int(g, CG_IDIV, rr, cg_iconst(g, m), lo_of(g, rr) / m, hi_of(g, rr) / m);
    }
    if (inner < 0) return -1;
    aff_term(g, &q, inner, 1);
    return aff_build(g, &q);
}

int cg_imod(Cg *g, int x, int64_t m)
{
    if (x < 0) return -1;
    if (!is_int(g, x) || m <= 0) return fail(g, "int modulo by a non-positive constant");
    if (m == 1) return cg_iconst(g, 0);
    if (lo_of(g, x) >= 0 && hi_of(g, x) < m) return x;
    if (m > INT32_MAX) return fail(g, "an index beyond int32");
    Aff a;
    if (aff_of_node(g, x, &a) < 0) return -1;
    if (!aff_nonneg(g, &a)) return raw_int(g, CG_IMOD, x, cg_iconst(g, m), -(m - 1), m - 1);
    Aff r;
    memset(&r, 0, sizeof r);
    for (int i = 0; i < a.n; i++)
        if (a.coef[i] % m) aff_term(g, &r, a.atom[i], a.coef[i] % m);
    r.k = a.k % m;
    int rr = aff_build(g, &r);
    if (rr < 0) return -1;
    if (hi_of(g, rr) < m) return rr;
    const CgNode *rn = &g->n[rr];
    if (rn->op == CG_IMOD && const_of(g, rn->a[1]) % m == 0) return cg_imod(g, rn->a[0], m);
    int64_t hi = hi_of(g, rr) < m - 1 ? hi_of(g, rr) : m - 1;
    return raw_int(g, CG_IMOD, rr, cg_iconst(g, m), 0, hi);
}

int cg_imin(Cg *g, int x, int64_t k)
{
    if (x < 0) return -1;
    if (!is_int(g, x)) return fail(g, "int min of a non-int");
    if (hi_of(g, x) <= k) return x;
    if (lo_of(g, x) >= k) return cg_iconst(g, k);
    return raw_int(g, CG_MIN, x, cg_iconst(g, k), lo_of(g, x), k);
}

int cg_imax(Cg *g, int x, int64_t k)
{
    if (x < 0) return -1;
    if (!is_int(g, x)) return fail(g, "int max of a non-int");
    if (lo_of(g, x) >= k) return x;
    if (hi_of(g, x) <= k) return cg_iconst(g, k);
    return raw_int(g, CG_MAX, x, cg_iconst(g, k), k, hi_of(g, x));
}

/* ---- values ------------------------------------------------------------------------------- */

static double f32(double v)
{
    return (double)(float)v;
}

static double clampn(double v, double lo, double hi)
{
    if (v != v) return v;
    return v < lo ? (lo > hi ? hi : lo) : (v > hi ? hi : v);
}

/* Constant folding, as runtime/cpu/cpu_eltwise.c computes (one float32 rounding per op). */
static double fold_unary(CgOp op, double v)
{
    switch (op) {
    case CG_NEG:
        return -v;
    case CG_ABS:
        return fabs(v);
    case CG_EXP:
        return exp(v);
    case CG_LOG:
        return log(v);
    case CG_SQRT:
        return sqrt(v);
    case CG_RSQRT:
        return 1 / f32(sqrt(v));
    case CG_COS:
        return cos(v);
    case CG_SIN:
        return sin(v);
    case CG_TANH:
        return tanh(v);
    case CG_SIGMOID:
        return 1 / (1 + exp(-v));
    case CG_RELU:
        return (v > 0 || v != v) ? v : 0;
    case CG_GELU:
        return 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
    case CG_GELU_TANH:
        return 0.5 * v * (1.0 + tanh(sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
    case CG_SILU:
        return v / (1 + exp(-v));
    case CG_HARDSWISH:
        return v * clampn(v + 3, 0, 6) / 6;
    case CG_HARDSIGMOID:
        return clampn(v + 3, 0, 6) / 6;
    case CG_NOT:
        return v == 0;
    default:
        return v;
    }
}

static double div_floor_f(double a64, double b64)
{
    float a = (float)a64, b = (float)b64;
    if (b == 0) return (double)(a / b);
    float mod = fmodf(a, b);
    float dv = (a - mod) / b;
    if (mod != 0 && (b < 0) != (mod < 0)) dv -= 1;
    if (dv == 0) return copysignf(0, a / b);
    float fd = floorf(dv);
    if (dv - fd > 0.5f) fd += 1.0f;
    return fd;
}

static double fold_binary(CgOp op, double a, double b)
{
    switch (op) {
    case CG_ADD:
        return a + b;
    case CG_SUB:
        return a - b;
    case CG_MUL:
        return a * b;
    case CG_DIV:
        return a / b;
    case CG_DIV_TRUNC:
        return trunc(f32(a / b));
    case CG_DIV_FLOOR:
        return div_floor_f(a, b);
    case CG_POW:
        return pow(a, b);
    case CG_EQ:
        return a == b;
    case CG_NE:
        return a != b;
    case CG_LT:
        return a < b;
    case CG_LE:
        return a <= b;
    case CG_GT:
        return a > b;
    case CG_GE:
        return a >= b;
    case CG_AND:
        return a != 0 && b != 0;
    case CG_OR:
        return a != 0 || b != 0;
    default:
        return 0;
    }
}

static int konst(Cg *g, CgType t, double v)
{
    if (t == CGT_F32) return cg_fconst(g, v);
    if (t == CGT_BOOL) return cg_bconst(g, v != 0);
    if (v != v || v > INT32_MAX || v < INT32_MIN) return fail(g, "an int constant beyond int32");
    return cg_iconst(g, (int64_t)v);
}

int cg_cast(Cg *g, CgType t, int x)
{
    if (x < 0) return -1;
    const CgNode *n = &g->n[x];
    if (n->type == t) return x;
    if (n->op == CG_CONST) {
        double v = n->c;
        if (t == CGT_I32) v = v != v ? 0 : trunc(v);
        return konst(g, t, v);
    }
    CgNode c = {.op = CG_CAST, .type = t, .na = 1, .a = {x}};
    if (t == CGT_I32) {
        c.lo = n->type == CGT_BOOL ? 0 : INT32_MIN;
        c.hi = n->type == CGT_BOOL ? 1 : INT32_MAX;
    }
    return intern(g, c);
}

static CgType promote(const Cg *g, int x, int y)
{
    CgType a = g->n[x].type, b = g->n[y].type;
    if (a == CGT_F32 || b == CGT_F32) return CGT_F32;
    if (a == CGT_I32 || b == CGT_I32) return CGT_I32;
    return CGT_BOOL;
}

int cg_unary(Cg *g, CgOp op, int x)
{
    if (x < 0) return -1;
    CgType t = CGT_F32;
    if (op == CG_NOT)
        t = CGT_BOOL;
    else if ((op == CG_NEG || op == CG_ABS) && g->n[x].type == CGT_I32)
        t = CGT_I32;
    x = cg_cast(g, t, x);
    if (x < 0) return -1;
    const CgNode *n = &g->n[x];
    if (n->op == CG_CONST) return konst(g, t, fold_unary(op, n->c));
    if (op == CG_NEG && n->op == CG_NEG) return n->a[0];
    if (op == CG_NOT && n->op == CG_NOT) return n->a[0];
    if (t == CGT_I32 && op == CG_NEG) return cg_imul(g, x, -1);
    CgNode u = {.op = op, .type = t, .na = 1, .a = {x}};
    if (t == CGT_I32) {
        u.lo = op == CG_ABS ? 0 : INT32_MIN;
        u.hi = INT32_MAX;
    }
    return intern(g, u);
}

static bool is_cmp(CgOp op)
{
    return op >= CG_EQ && op <= CG_GE;
}

int cg_binary(Cg *g, CgOp op, int x, int y)
{
    if (x < 0 || y < 0) return -1;
    CgType opt = promote(g, x, y), t = opt;
    if (is_cmp(op)) {
        t = CGT_BOOL;
        if (opt == CGT_BOOL) opt = CGT_I32;
    } else if (op == CG_AND || op == CG_OR) {
        opt = t = CGT_BOOL;
    } else if (op == CG_DIV || op == CG_POW || op == CG_DIV_TRUNC || op == CG_DIV_FLOOR) {
        opt = t = CGT_F32; /* true division and pow of ints give floats (a float output) */
    } else if (opt == CGT_BOOL) {
        opt = t = CGT_I32;
    }
    x = cg_cast(g, opt, x);
    y = cg_cast(g, opt, y);
    if (x < 0 || y < 0) return -1;
    if (opt == CGT_I32 && (op == CG_ADD || op == CG_SUB)) {
        if (op == CG_SUB) y = cg_imul(g, y, -1);
        return cg_iadd(g, x, y);
    }
    if (opt == CGT_I32 && op == CG_MUL && (is_const(g, x) || is_const(g, y)))
        return is_const(g, y) ? cg_imul(g, x, (int64_t)cval(g, y))
                              : cg_imul(g, y, (int64_t)cval(g, x));
    if (is_const(g, x) && is_const(g, y)) {
        double a = cval(g, x), b = cval(g, y), r = fold_binary(op, a, b);
        if (opt == CGT_I32 && op == CG_MUL) r = (double)((int64_t)a * (int64_t)b);
        return konst(g, t, r);
    }
    /* identities that hold for every float, NaN included */
    if (t == CGT_F32 && is_const(g, y)) {
        double b = cval(g, y);
        if ((op == CG_MUL || op == CG_DIV) && b == 1) return x;
        if ((op == CG_ADD || op == CG_SUB) && b == 0 && !signbit(b)) return x;
        if (op == CG_POW && b == 1) return x;
        if (op == CG_POW && b == 2) return cg_binary(g, CG_MUL, x, x);
        if (op == CG_POW && b == 0.5) return cg_unary(g, CG_SQRT, x);
        if (op == CG_POW && b == -0.5) return cg_unary(g, CG_RSQRT, x);
    }
    if (t == CGT_F32 && op == CG_MUL && is_const(g, x) && cval(g, x) == 1) return y;
    if (t == CGT_F32 && op == CG_ADD && is_const(g, x) && cval(g, x) == 0 && !signbit(cval(g, x)))
        return y;
    if ((op == CG_ADD || op == CG_MUL || op == CG_EQ || op == CG_NE || op == CG_AND ||
         op == CG_OR) &&
        x > y) {
        int s = x; /* commutative: operands in id order, so a*b and b*a are one node */
        x = y;
        y = s;
    }
    CgNode n = {.op = op, .type = t, .na = 2, .a = {x, y}};
    if (t == CGT_I32) {
        n.lo = INT32_MIN;
        n.hi = INT32_MAX;
    }
    return intern(g, n);
}

int cg_clamp(Cg *g, int x, double lo, double hi)
{
    x = cg_cast(g, CGT_F32, x);
    if (x < 0) return -1;
    lo = f32(lo);
    hi = f32(hi);
    if (is_const(g, x)) return cg_fconst(g, clampn(cval(g, x), lo, hi));
    if (isinf(lo) && lo < 0 && isinf(hi) && hi > 0) return x;
    int l = cg_fconst(g, lo), h = cg_fconst(g, hi);
    if (l < 0 || h < 0) return -1;
    return intern(g, (CgNode){.op = CG_CLAMP, .type = CGT_F32, .na = 3, .a = {x, l, h}});
}

int cg_where(Cg *g, int c, int x, int y)
{
    if (c < 0 || x < 0 || y < 0) return -1;
    c = cg_cast(g, CGT_BOOL, c);
    if (c < 0) return -1;
    if (is_const(g, c)) return cval(g, c) != 0 ? x : y;
    CgType t = promote(g, x, y);
    x = cg_cast(g, t, x);
    y = cg_cast(g, t, y);
    if (x < 0 || y < 0) return -1;
    if (x == y) return x;
    CgNode n = {.op = CG_WHERE, .type = t, .na = 3, .a = {c, x, y}};
    if (t == CGT_I32) {
        n.lo = lo_of(g, x) < lo_of(g, y) ? lo_of(g, x) : lo_of(g, y);
        n.hi = hi_of(g, x) > hi_of(g, y) ? hi_of(g, x) : hi_of(g, y);
    }
    return intern(g, n);
}
