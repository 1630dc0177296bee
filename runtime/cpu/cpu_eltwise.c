/* CPU reference for elementwise ops: unary activations and math, casts, binary arithmetic with
 * NumPy broadcasting, comparisons, logical ops, where and masked_fill.
 *
 * The declared output dtype picks the arithmetic: a float output computes in double on operands
 * first rounded to float32 (as torch promotes them), so +, -, *, / and x*x round exactly as
 * float32 does; an integer output computes in int64 with wrap-around; a bool output stores
 * x != 0. Comparisons and logical ops pick their arithmetic from the operands instead. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "common/half.h"
#include "runtime/cpu/cpu_kernels.h"

/* ---- element access ---- */

/* Double to int64 without undefined behaviour: truncates, NaN -> 0, saturates. */
static inline int64_t d2i(double v)
{
    if (!(v == v)) return 0;
    if (v >= 9.2233720368547758e18) return INT64_MAX;
    if (v <= -9.2233720368547758e18) return INT64_MIN;
    return (int64_t)v;
}

static inline void stf(HTensor *o, int64_t i, double v)
{
    switch (o->dtype) {
    case DT_F32:
        ((float *)o->data)[i] = (float)v;
        return;
    case DT_I64:
        ((int64_t *)o->data)[i] = d2i(v);
        return;
    case DT_BOOL:
        ((uint8_t *)o->data)[i] = v != 0;
        return;
    default:
        htensor_convert((char *)o->data + (size_t)i * dtype_size(o->dtype), o->dtype, &v, DT_F64,
                        1);
    }
}

static inline void sti(HTensor *o, int64_t i, int64_t v)
{
    switch (o->dtype) {
    case DT_I64:
        ((int64_t *)o->data)[i] = v;
        return;
    case DT_F32:
        ((float *)o->data)[i] = (float)v;
        return;
    case DT_BOOL:
        ((uint8_t *)o->data)[i] = v != 0;
        return;
    default:
        htensor_convert((char *)o->data + (size_t)i * dtype_size(o->dtype), o->dtype, &v, DT_I64,
                        1);
    }
}

static inline double f32r(double v)
{
    return (double)(float)v;
}

/* Wrap-around int64 arithmetic (cpu_wadd, cpu_kernels.h) */
static inline int64_t wsub(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a - (uint64_t)b);
}
static inline int64_t wmul(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a * (uint64_t)b);
}

/* ---- scalar attributes ---- */

typedef struct Scalar {
    bool is_int; /* int or bool literal */
    int64_t i;
    double f;
} Scalar;

/* Reads a number, bool or "inf"/"-inf"/"nan" string attribute; false when absent or null. */
static bool scalar_attr(const Node *n, const char *key, Scalar *s)
{
    if (!attr_number(n, key, &s->f)) return false;
    const Attr *a = node_attr(n, key);
    s->is_int = a->kind == ATTR_INT || a->kind == ATTR_BOOL;
    s->i = s->is_int ? a->i : d2i(s->f); /* an int exact beyond 2^53 */
    return true;
}

/* ---- broadcasting ---- */

/* An operand: a tensor viewed in the output shape, or a scalar (t == NULL). */
typedef struct Opnd {
    const HTensor *t;
    Scalar s;
} Opnd;

typedef struct BIter {
    int rank, nop;
    const int64_t *shape;
    int64_t st[3][NPU_MAX_RANK];
    int64_t idx[NPU_MAX_RANK];
    int64_t off[3];
} BIter;

static bool bcastable(const HTensor *in, const HTensor *out)
{
    return shape_bcasts_to(in->rank, in->shape, out->rank, out->shape);
}

/* Checks that every tensor operand broadcasts to out; reports the first that does not. */
static Status check_bcast(const CpuCall *c, const Opnd *ops, int nop, const HTensor *out)
{
    for (int k = 0; k < nop; k++) {
        if (!ops[k].t || bcastable(ops[k].t, out)) continue;
        char a[96], b[96];
        return diag_error(c->diag, c->file, c->node->name, NULL,
                          "operand %s does not broadcast to the output shape %s",
                          shape_str(ops[k].t->shape, ops[k].t->rank, a, sizeof a),
                          shape_str(out->shape, out->rank, b, sizeof b));
    }
    return ST_OK;
}

static void bi_init(BIter *it, const Opnd *ops, int nop, const HTensor *out)
{
    memset(it, 0, sizeof *it);
    it->rank = out->rank;
    it->nop = nop;
    it->shape = out->shape;
    for (int k = 0; k < nop; k++)
        if (ops[k].t)
            bcast_strides(ops[k].t->shape, ops[k].t->rank, out->shape, out->rank, it->st[k]);
}

/* Advances to the next output element, updating every operand's offset. */
static inline void bi_step(BIter *it)
{
    for (int d = it->rank - 1; d >= 0; d--) {
        for (int k = 0; k < it->nop; k++)
            it->off[k] += it->st[k][d];
        if (++it->idx[d] < it->shape[d]) return;
        for (int k = 0; k < it->nop; k++)
            it->off[k] -= it->st[k][d] * it->shape[d];
        it->idx[d] = 0;
    }
}

static inline double opf(const Opnd *o, int64_t off)
{
    return o->t ? cpu_ldf(o->t, off) : o->s.f;
}
static inline int64_t opi(const Opnd *o, int64_t off)
{
    return o->t ? cpu_ldi(o->t, off) : o->s.i;
}
static bool op_is_float(const Opnd *o)
{
    return o->t ? dtype_is_float(o->t->dtype) : !o->s.is_int;
}

/* ---- unary ---- */

static double gelu(double x, bool tanh_approx)
{
    if (tanh_approx) {
        double u = sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
        return 0.5 * x * (1.0 + tanh(u));
    }
    return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
}

/* clamp that propagates NaN, as torch.clamp does; absent bounds are +-inf. */
static inline double clampf(double x, double lo, double hi)
{
    if (x != x) return x;
    return x < lo ? (lo > hi ? hi : lo) : (x > hi ? hi : x);
}

/* clang-format off */
typedef enum Un {
    U_NONE, /* not a unary op */
    U_RELU, U_RELU6, U_HARDTANH, U_HARDSWISH, U_HARDSIGMOID, U_SIGMOID, U_TANH, U_GELU, U_SILU,
    U_NEG, U_EXP, U_LOG, U_ABS, U_SQRT, U_RSQRT, U_COS, U_SIN, U_CLAMP, U_NOT, U_CAST, U_LEAKY,
    U_ACOS, U_ASIN, U_ATAN, U_TAN, U_LOG1P, U_EXPM1, U_ERF, U_RECIPROCAL, U_SOFTPLUS, U_ELU,
    U_MISH, U_CEIL, U_FLOOR, U_ROUND, U_SIGN, U_SQUARE, U_ISNAN
} Un;

/* The ops cpu_unary computes. */
static const Un un_of[OP_COUNT] = {
    [OP_RELU] = U_RELU, [OP_RELU6] = U_RELU6, [OP_HARDTANH] = U_HARDTANH,
    [OP_HARDSWISH] = U_HARDSWISH, [OP_HARDSIGMOID] = U_HARDSIGMOID, [OP_SIGMOID] = U_SIGMOID,
    [OP_TANH] = U_TANH, [OP_GELU] = U_GELU, [OP_SILU] = U_SILU, [OP_NEG] = U_NEG, [OP_EXP] = U_EXP,
    [OP_LOG] = U_LOG, [OP_ABS] = U_ABS, [OP_SQRT] = U_SQRT, [OP_RSQRT] = U_RSQRT, [OP_COS] = U_COS,
    [OP_SIN] = U_SIN, [OP_CLAMP] = U_CLAMP, [OP_LOGICAL_NOT] = U_NOT, [OP_TO_DTYPE] = U_CAST,
    [OP_LEAKY_RELU] = U_LEAKY, [OP_ACOS] = U_ACOS, [OP_ASIN] = U_ASIN, [OP_ATAN] = U_ATAN,
    [OP_TAN] = U_TAN, [OP_LOG1P] = U_LOG1P, [OP_EXPM1] = U_EXPM1, [OP_ERF] = U_ERF,
    [OP_RECIPROCAL] = U_RECIPROCAL, [OP_SOFTPLUS] = U_SOFTPLUS, [OP_ELU] = U_ELU,
    [OP_MISH] = U_MISH, [OP_CEIL] = U_CEIL, [OP_FLOOR] = U_FLOOR, [OP_ROUND] = U_ROUND,
    [OP_SIGN] = U_SIGN, [OP_SQUARE] = U_SQUARE, [OP_ISNAN] = U_ISNAN,
};
/* clang-format on */

static Status unary_float(const CpuCall *c, Un u, const HTensor *x, HTensor *y)
{
    double lo = -INFINITY, hi = INFINITY;
    bool tanh_gelu = false;
    double slope = f32r(attr_float(c->node, "negative_slope", 0.01)); /* leaky_relu */
    double beta = attr_float(c->node, "beta", 1), thr = attr_float(c->node, "threshold", 20);
    double alpha = attr_float(c->node, "alpha", 1), escale = attr_float(c->node, "scale", 1);
    double iscale = attr_float(c->node, "input_scale", 1); /* elu */
    int64_t dec = attr_int(c->node, "decimals", 0);        /* round */
    double p10 = pow(10.0, (double)(dec < 0 ? -dec : dec));
    if (u == U_HARDTANH) {
        lo = f32r(attr_float(c->node, "min_val", -1.0));
        hi = f32r(attr_float(c->node, "max_val", 1.0));
    } else if (u == U_CLAMP) {
        Scalar s;
        if (scalar_attr(c->node, "min", &s)) lo = f32r(s.f);
        if (scalar_attr(c->node, "max", &s)) hi = f32r(s.f);
    } else if (u == U_GELU) {
        const char *ap = attr_str(c->node, "approximate", "none");
        if (!strcmp(ap, "tanh"))
            tanh_gelu = true;
        else if (strcmp(ap, "none"))
            return diag_error(c->diag, c->file, c->node->name, NULL,
                              "gelu approximate '%s' is not 'none' or 'tanh'", ap);
    }
    for (int64_t i = 0; i < y->numel; i++) {
        double v = f32r(cpu_ldf(x, i)), r = v;
        switch (u) {
        case U_RELU:
            r = (v > 0 || v != v) ? v : 0;
            break;
        case U_RELU6:
            r = clampf(v, 0, 6);
            break;
        case U_HARDTANH:
        case U_CLAMP:
            r = clampf(v, lo, hi);
            break;
        case U_HARDSWISH:
            r = v * clampf(v + 3, 0, 6) / 6;
            break;
        case U_HARDSIGMOID:
            r = clampf(v + 3, 0, 6) / 6;
            break;
        case U_SIGMOID:
            r = 1 / (1 + exp(-v));
            break;
        case U_TANH:
            r = tanh(v);
            break;
        case U_GELU:
            r = gelu(v, tanh_gelu);
            break;
        case U_SILU:
            r = v / (1 + exp(-v));
            break;
        case U_NEG:
            r = -v;
            break;
        case U_EXP:
            r = exp(v);
            break;
        case U_LOG:
            r = log(v);
            break;
        case U_ABS:
            r = fabs(v);
            break;
        case U_SQRT:
            r = sqrt(v);
            break;
        case U_RSQRT: /* 1.0f / sqrtf(x), two roundings as torch */
            r = 1 / f32r(sqrt(v));
            break;
        case U_COS:
            r = cos(v);
            break;
        case U_SIN:
            r = sin(v);
            break;
        case U_NOT:
            r = v == 0;
            break;
        case U_LEAKY:
            r = v > 0 ? v : v * slope;
            break;
        case U_ACOS:
            r = acos(v);
            break;
        case U_ASIN:
            r = asin(v);
            break;
        case U_ATAN:
            r = atan(v);
            break;
        case U_TAN:
            r = tan(v);
            break;
        case U_LOG1P:
            r = log1p(v);
            break;
        case U_EXPM1:
            r = expm1(v);
            break;
        case U_ERF:
            r = erf(v);
            break;
        case U_RECIPROCAL:
            r = 1 / v;
            break;
        case U_SOFTPLUS:
            r = v * beta > thr ? v : log1p(exp(v * beta)) / beta;
            break;
        case U_ELU:
            r = v > 0 ? v * escale : escale * alpha * expm1(v * iscale);
            break;
        case U_MISH:
            r = v * tanh(log1p(exp(v)));
            break;
        case U_CEIL:
            r = ceil(v);
            break;
        case U_FLOOR:
            r = floor(v);
            break;
        case U_ROUND:
            r = dec == 0  ? nearbyint(v)
                : dec > 0 ? nearbyint(v * p10) / p10
                          : nearbyint(v / p10) * p10;
            break;
        case U_SIGN:
            r = (v > 0) - (v < 0) + (v != v ? v : 0);
            break;
        case U_SQUARE:
            r = v * v;
            break;
        case U_ISNAN:
            r = v != v;
            break;
        case U_CAST:
        case U_NONE:
            break;
        }
        stf(y, i, r);
    }
    return ST_OK;
}

static void unary_int(const CpuCall *c, Un u, const HTensor *x, HTensor *y)
{
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    if (u == U_CLAMP) {
        Scalar s;
        if (scalar_attr(c->node, "min", &s)) lo = s.is_int ? s.i : d2i(ceil(s.f));
        if (scalar_attr(c->node, "max", &s)) hi = s.is_int ? s.i : d2i(floor(s.f));
    }
    for (int64_t i = 0; i < y->numel; i++) {
        int64_t v = cpu_ldi(x, i), r = v;
        if (u == U_NEG)
            r = wsub(0, v);
        else if (u == U_ABS)
            r = v < 0 ? wsub(0, v) : v;
        else if (u == U_CLAMP)
            r = v < lo ? (lo > hi ? hi : lo) : (v > hi ? hi : v);
        else if (u == U_NOT)
            r = ~v;
        else if (u == U_SIGN)
            r = (v > 0) - (v < 0);
        else if (u == U_SQUARE)
            r = wmul(v, v);
        else if (u == U_ISNAN)
            r = 0;
        /* ceil, floor and round of integers: the integers themselves */
        sti(y, i, r);
    }
}

Status cpu_unary(const CpuCall *c)
{
    const HTensor *x = c->in[0];
    HTensor *y = c->out[0];
    Un u = c->node->op >= 0 && c->node->op < OP_COUNT ? un_of[c->node->op] : U_NONE;
    if (u == U_NONE)
        return diag_add(c->diag, DIAG_ERROR, ST_INTERNAL, c->file, c->node->name, NULL,
                        "cpu_unary called for op %s", op_short_name(c->node->op));
    if (x->numel != y->numel)
        return diag_error(c->diag, c->file, c->node->name, NULL,
                          "input has %lld elements, the output %lld", (long long)x->numel,
                          (long long)y->numel);
    bool ints = !dtype_is_float(y->dtype) && !dtype_is_float(x->dtype);
    if (u == U_CAST) {
        /* type_as(x, other): other only names the dtype, which the output already has. */
        htensor_convert(y->data, y->dtype, x->data, x->dtype, y->numel);
        /* a cast to f16/bf16 rounds, though the reference keeps the result in f32 */
        DType want = node_output(c->g, c->node, 0)->dtype;
        if (y->dtype == DT_F32 && (want == DT_F16 || want == DT_BF16))
            for (int64_t i = 0; i < y->numel; i++) {
                float *v = &((float *)y->data)[i];
                *v = want == DT_F16 ? f16_to_f32(f32_to_f16(*v)) : bf16_to_f32(f32_to_bf16(*v));
            }
        return ST_OK;
    }
    /* bitwise_not of integers; logical_not (and bitwise_not of bool) goes through x == 0. */
    if (u == U_NOT && y->dtype != DT_BOOL && ints) {
        unary_int(c, u, x, y);
        return ST_OK;
    }
    if ((u == U_NEG || u == U_ABS || u == U_CLAMP || u == U_CEIL || u == U_FLOOR || u == U_ROUND ||
         u == U_SIGN || u == U_SQUARE || u == U_ISNAN) &&
        ints) {
        unary_int(c, u, x, y);
        return ST_OK;
    }
    return unary_float(c, u, x, y);
}

/* ---- binary ---- */

/* Float floor division as ATen's div_floor_floating computes it, in float32. */
static double div_floor_f(double a64, double b64)
{
    float a = (float)a64, b = (float)b64;
    if (b == 0) return (double)(a / b);
    float mod = fmodf(a, b);
    float div = (a - mod) / b;
    if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
    float fd;
    if (div != 0) {
        fd = floorf(div);
        if (div - fd > 0.5f) fd += 1.0f;
    } else {
        fd = copysignf(0, a / b);
    }
    return fd;
}

/* torch's pow special cases (PowKernel.cpp), rounded where its float32 kernels round. */
static double pow_f(double x, double e)
{
    if (e == 2) return x * x;
    if (e == 3) return f32r(x * x) * x;
    if (e == 0.5) return sqrt(x);
    if (e == -0.5) return 1 / f32r(sqrt(x));
    if (e == -1) return 1 / x;
    if (e == -2) return 1 / f32r(x * x);
    return pow(x, e);
}

static int64_t pow_i(int64_t b, int64_t e)
{
    if (e < 0) return b == 1 ? 1 : b == -1 ? (e % 2 ? -1 : 1) : 0;
    int64_t r = 1;
    while (e) {
        if (e & 1) r = wmul(r, b);
        b = wmul(b, b);
        e >>= 1;
    }
    return r;
}

/* clang-format off */
typedef enum Bn {
    B_NONE,                                    /* not a binary op */
    B_ADD, B_SUB, B_RSUB, B_MUL, B_DIV, B_POW, /* arithmetic */
    B_EQ, B_NE, B_LT, B_LE, B_GT, B_GE,        /* comparisons: bool out */
    B_AND, B_OR,                               /* logical (bool out) or bitwise (ints) */
    B_MAX, B_MIN, B_REM
} Bn;

/* The ops cpu_binary computes. */
static const Bn bn_of[OP_COUNT] = {
    [OP_ADD] = B_ADD, [OP_SUB] = B_SUB, [OP_RSUB] = B_RSUB, [OP_MUL] = B_MUL, [OP_DIV] = B_DIV,
    [OP_POW] = B_POW, [OP_EQ] = B_EQ, [OP_NE] = B_NE, [OP_LT] = B_LT, [OP_LE] = B_LE,
    [OP_GT] = B_GT, [OP_GE] = B_GE, [OP_LOGICAL_AND] = B_AND, [OP_LOGICAL_OR] = B_OR,
    [OP_MAXIMUM] = B_MAX, [OP_MINIMUM] = B_MIN, [OP_REMAINDER] = B_REM,
};
/* clang-format on */

typedef enum DivMode { DM_TRUE, DM_TRUNC, DM_FLOOR } DivMode;

typedef struct BinCtx {
    Bn op;
    double alpha_f;
    int64_t alpha_i;
    DivMode dm;
} BinCtx;

/* Float arithmetic on float32-valued operands; one rounding to float32 on store. */
static inline double bin_f(const BinCtx *k, double a, double b)
{
    switch (k->op) {
    case B_ADD:
        return a + k->alpha_f * b;
    case B_SUB:
        return a - k->alpha_f * b;
    case B_RSUB:
        return b - k->alpha_f * a;
    case B_MUL:
        return a * b;
    case B_DIV:
        if (k->dm == DM_FLOOR) return div_floor_f(a, b);
        if (k->dm == DM_TRUNC) return trunc(f32r(a / b));
        return a / b;
    case B_POW:
        return pow_f(a, b);
    case B_EQ:
        return a == b;
    case B_NE:
        return a != b;
    case B_LT:
        return a < b;
    case B_LE:
        return a <= b;
    case B_GT:
        return a > b;
    case B_GE:
        return a >= b;
    case B_AND:
        return a != 0 && b != 0;
    case B_OR:
        return a != 0 || b != 0;
    case B_MAX:
        return a != a || b != b ? a + b : a > b ? a : b; /* NaN propagates */
    case B_MIN:
        return a != a || b != b ? a + b : a < b ? a : b;
    case B_REM: { /* ATen's float remainder: fmod, moved to the divisor's sign */
        float m = fmodf((float)a, (float)b);
        if (m != 0 && ((b < 0) != (m < 0))) m += (float)b;
        return m;
    }
    case B_NONE:
        break;
    }
    return 0;
}

/* Integer arithmetic (wrapping); false on integer division by zero. */
static inline bool bin_i(const BinCtx *k, int64_t a, int64_t b, int64_t *r)
{
    switch (k->op) {
    case B_ADD:
        *r = cpu_wadd(a, wmul(k->alpha_i, b));
        return true;
    case B_SUB:
        *r = wsub(a, wmul(k->alpha_i, b));
        return true;
    case B_RSUB:
        *r = wsub(b, wmul(k->alpha_i, a));
        return true;
    case B_MUL:
        *r = wmul(a, b);
        return true;
    case B_POW:
        *r = pow_i(a, b);
        return true;
    case B_DIV:
        if (b == 0) return false;
        if (b == -1) {
            *r = wsub(0, a);
            return true;
        }
        *r = a / b;
        if (k->dm == DM_FLOOR && a % b != 0 && ((a < 0) != (b < 0))) *r -= 1;
        return true;
    case B_EQ:
        *r = a == b;
        return true;
    case B_NE:
        *r = a != b;
        return true;
    case B_LT:
        *r = a < b;
        return true;
    case B_LE:
        *r = a <= b;
        return true;
    case B_GT:
        *r = a > b;
        return true;
    case B_GE:
        *r = a >= b;
        return true;
    case B_AND:
        *r = a & b;
        return true;
    case B_OR:
        *r = a | b;
        return true;
    case B_MAX:
        *r = a > b ? a : b;
        return true;
    case B_MIN:
        *r = a < b ? a : b;
        return true;
    case B_REM:
        if (b == 0) return false;
        *r = b == -1 ? 0 : a % b;
        if (*r != 0 && ((*r < 0) != (b < 0))) *r += b;
        return true;
    case B_NONE:
        break;
    }
    *r = 0;
    return true;
}

/* Sets up the second operand and the op's attributes; reports bad ones. */
static Status bin_setup(const CpuCall *c, BinCtx *k, Opnd ops[2])
{
    const Node *n = c->node;
    k->op = n->op >= 0 && n->op < OP_COUNT ? bn_of[n->op] : B_NONE;
    if (k->op == B_NONE)
        return diag_add(c->diag, DIAG_ERROR, ST_INTERNAL, c->file, n->name, NULL,
                        "cpu_binary called for op %s", op_short_name(n->op));
    ops[0] = (Opnd){.t = c->in[0]};
    if (c->nin >= 2) {
        ops[1] = (Opnd){.t = c->in[1]};
    } else {
        const char *key = k->op == B_POW ? "exponent" : "other";
        ops[1] = (Opnd){0};
        if (!scalar_attr(n, key, &ops[1].s))
            return diag_error(c->diag, c->file, n->name, NULL,
                              "%s has one tensor input and no numeric attribute `%s`", n->aten,
                              key);
    }
    Scalar al = {.is_int = true, .i = 1, .f = 1};
    if (attr_present(n, "alpha") && !scalar_attr(n, "alpha", &al))
        return diag_error(c->diag, c->file, n->name, NULL, "attribute `alpha` is not a number");
    k->alpha_f = f32r(al.f);
    k->alpha_i = al.i;
    k->dm = DM_TRUE;
    if (!attr_present(n, "rounding_mode")) return ST_OK;
    const char *rm = attr_str(n, "rounding_mode", "");
    if (!strcmp(rm, "trunc"))
        k->dm = DM_TRUNC;
    else if (!strcmp(rm, "floor"))
        k->dm = DM_FLOOR;
    else
        return diag_error(c->diag, c->file, n->name, NULL,
                          "rounding_mode '%s' is not 'trunc' or 'floor'", rm);
    return ST_OK;
}

Status cpu_binary(const CpuCall *c)
{
    HTensor *y = c->out[0];
    BinCtx k;
    Opnd ops[2];
    Status st = bin_setup(c, &k, ops);
    if (st == ST_OK) st = check_bcast(c, ops, 2, y);
    if (st != ST_OK) return st;
    bool any_f = op_is_float(&ops[0]) || op_is_float(&ops[1]);
    bool use_f;
    if (k.op >= B_EQ && k.op <= B_GE)
        use_f = any_f; /* comparisons: the operands' common type */
    else if (k.op == B_AND || k.op == B_OR)
        use_f = y->dtype == DT_BOOL; /* logical_*, bitwise_* of bool; else bitwise on ints */
    else /* arithmetic follows the output; true division of ints yields a float */
        use_f = dtype_is_float(y->dtype) || (k.op == B_DIV && k.dm == DM_TRUE) ||
                (any_f && y->dtype != DT_I64);
    if (use_f && !ops[1].t) ops[1].s.f = f32r(ops[1].s.f);

    /* Fast path: float32 tensors of the output's shape, or a scalar second operand. */
    if (use_f && y->dtype == DT_F32 && ops[0].t->dtype == DT_F32 && ops[0].t->numel == y->numel &&
        ops[0].t->rank == y->rank &&
        (!ops[1].t ||
         (ops[1].t->dtype == DT_F32 && ops[1].t->numel == y->numel && ops[1].t->rank == y->rank))) {
        const float *a = ops[0].t->data, *b = ops[1].t ? ops[1].t->data : NULL;
        float *o = y->data;
        double bs = ops[1].s.f;
        for (int64_t i = 0; i < y->numel; i++)
            o[i] = (float)bin_f(&k, a[i], b ? b[i] : bs);
        return ST_OK;
    }

    BIter it;
    bi_init(&it, ops, 2, y);
    for (int64_t i = 0; i < y->numel; i++, bi_step(&it)) {
        if (use_f) {
            stf(y, i, bin_f(&k, f32r(opf(&ops[0], it.off[0])), f32r(opf(&ops[1], it.off[1]))));
            continue;
        }
        int64_t r;
        if (!bin_i(&k, opi(&ops[0], it.off[0]), opi(&ops[1], it.off[1]), &r))
            return diag_error(c->diag, c->file, c->node->name, NULL, "integer division by zero");
        sti(y, i, r);
    }
    return ST_OK;
}

/* ---- where, masked_fill ---- */

Status cpu_where(const CpuCall *c)
{
    const Node *n = c->node;
    HTensor *y = c->out[0];
    Opnd ops[3]; /* cond, a (true), b (false) */
    memset(ops, 0, sizeof ops);
    ops[0].t = c->in[0];
    if (n->op == OP_MASKED_FILL) {
        /* masked_fill(x, mask, value) = where(mask, value, x) */
        if (c->nin == 3)
            ops[1].t = c->in[2]; /* masked_fill.Tensor: a 0-dim value tensor */
        else if (c->nin != 2 || !scalar_attr(n, "value", &ops[1].s))
            return diag_error(c->diag, c->file, n->name, NULL,
                              "masked_fill needs inputs x and mask and a numeric `value`");
        ops[0].t = c->in[1];
        ops[2].t = c->in[0];
    } else if (c->nin == 3) {
        ops[1].t = c->in[1];
        ops[2].t = c->in[2];
    } else if (c->nin == 2 && scalar_attr(n, "other", &ops[2].s)) {
        ops[1].t = c->in[1]; /* where.ScalarOther */
    } else if (c->nin == 2 && scalar_attr(n, "self", &ops[1].s)) {
        ops[2].t = c->in[1]; /* where.ScalarSelf */
    } else if (c->nin != 1 || !scalar_attr(n, "self", &ops[1].s) ||
               !scalar_attr(n, "other", &ops[2].s)) {
        return diag_error(c->diag, c->file, n->name, NULL,
                          "%s with %d tensor inputs needs numeric attributes `self`/`other` for "
                          "the missing operands",
                          n->aten, c->nin);
    }
    Status st = check_bcast(c, ops, 3, y);
    if (st != ST_OK) return st;
    bool fl = dtype_is_float(y->dtype);
    for (int k = 1; k < 3; k++)
        if (!ops[k].t && fl) ops[k].s.f = f32r(ops[k].s.f);
    BIter it;
    bi_init(&it, ops, 3, y);
    for (int64_t i = 0; i < y->numel; i++, bi_step(&it)) {
        bool cnd = cpu_ldf(ops[0].t, it.off[0]) != 0;
        int k = cnd ? 1 : 2;
        if (fl)
            stf(y, i, opf(&ops[k], it.off[k]));
        else
            sti(y, i, opi(&ops[k], it.off[k]));
    }
    return ST_OK;
}
