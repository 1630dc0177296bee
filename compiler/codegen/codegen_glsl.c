/* Linearise and render a generated kernel as GLSL (codegen.h). Linearising is cheap because the
 * DAG is hash-consed: node ids already are a topological order, so the program is the nodes
 * reachable from the store, in id order, one SSA-style local per node (constants and the
 * element index inline). The shader follows docs/kernels.md: bindings are the inputs then the
 * output, spec constant 0 the workgroup size (NPU_WG, shaders/index.glsl), the grid folded by
 * npu_global_index(); float storage through S_LOAD/S_STORE (shaders/common.glsl) picked by a
 * STORAGE_ define, arithmetic in float32 (shaders/eltwise.glsl). Shapes are constants in the
 * source, so there are no push constants. Nothing names a tensor or a node: groups that compute the
 * same thing over the same shapes (a model's layers) render one source, so one module. */
#include "compiler/codegen/codegen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

static const char *type_name(CgType t)
{
    return t == CGT_F32 ? "float" : t == CGT_I32 ? "int" : "bool";
}

static char prefix(CgType t)
{
    return t == CGT_F32 ? 'v' : t == CGT_I32 ? 'i' : 'b';
}

/* A float32 constant as a GLSL literal that reads back exactly. */
static void fconst(char *buf, size_t n, double v)
{
    if (v != v) {
        snprintf(buf, n, "npu_nan()");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, n, v > 0 ? "npu_inf()" : "(-npu_inf())");
        return;
    }
    char t[48];
    snprintf(t, sizeof t, "%.9g", v);
    if (!strpbrk(t, ".en")) strcat(t, ".0");
    if (signbit(v))
        snprintf(buf, n, "(%s)", t);
    else
        snprintf(buf, n, "%s", t);
}

/* The name or literal of node id. */
static void ref(const Cg *g, int id, char *buf, size_t n)
{
    const CgNode *x = &g->n[id];
    if (x->op == CG_GID) {
        snprintf(buf, n, "gid");
    } else if (x->op != CG_CONST) {
        snprintf(buf, n, "%c%d", prefix(x->type), id);
    } else if (x->type == CGT_F32) {
        fconst(buf, n, x->c);
    } else if (x->type == CGT_I32) {
        snprintf(buf, n, x->c < 0 ? "(%lld)" : "%lld", (long long)x->c);
    } else {
        snprintf(buf, n, x->c != 0 ? "true" : "false");
    }
}

static const char *func_of(CgOp op)
{
    switch (op) {
    case CG_ABS:
        return "abs";
    case CG_EXP:
        return "exp";
    case CG_LOG:
        return "log";
    case CG_SQRT:
        return "sqrt";
    case CG_RSQRT:
        return "inversesqrt";
    case CG_COS:
        return "cos";
    case CG_SIN:
        return "sin";
    case CG_TANH:
        return "npu_tanh";
    case CG_SIGMOID:
        return "npu_sigmoid";
    case CG_RELU:
        return "npu_relu";
    case CG_GELU:
        return "npu_gelu";
    case CG_GELU_TANH:
        return "npu_gelu_tanh";
    case CG_SILU:
        return "npu_silu";
    case CG_HARDSWISH:
        return "npu_hardswish";
    case CG_HARDSIGMOID:
        return "npu_hardsigmoid";
    case CG_CLAMP:
        return "npu_clamp";
    case CG_POW:
        return "npu_pow";
    case CG_DIV_FLOOR:
        return "div_floor";
    case CG_MIN:
        return "min";
    case CG_MAX:
        return "max";
    default:
        return NULL;
    }
}

static const char *infix_of(CgOp op)
{
    switch (op) {
    case CG_ADD:
        return "+";
    case CG_SUB:
        return "-";
    case CG_MUL:
        return "*";
    case CG_DIV:
        return "/";
    case CG_IDIV:
        return "/";
    case CG_IMOD:
        return "%";
    case CG_EQ:
        return "==";
    case CG_NE:
        return "!=";
    case CG_LT:
        return "<";
    case CG_LE:
        return "<=";
    case CG_GT:
        return ">";
    case CG_GE:
        return ">=";
    case CG_AND:
        return "&&";
    case CG_OR:
        return "||";
    default:
        return NULL;
    }
}

static void emit_node(StrBuf *o, const CgKernel *k, int id)
{
    const Cg *g = &k->g;
    const CgNode *x = &g->n[id];
    char a[3][64];
    for (int i = 0; i < x->na; i++)
        ref(g, x->a[i], a[i], sizeof a[i]);
    sb_printf(o, "    %s %c%d = ", type_name(x->type), prefix(x->type), id);
    const char *f = func_of(x->op), *in = infix_of(x->op);
    if (x->op == CG_LOAD) {
        int b = (int)x->c;
        if (k->bind[b].type == CGT_F32)
            sb_printf(o, "S_LOAD(t%d[%s])", b, a[0]);
        else if (k->bind[b].type == CGT_I32)
            sb_printf(o, "t%d[%s]", b, a[0]);
        else
            sb_printf(o, "((t%d[(%s) >> 2] >> (((%s) & 3) * 8)) & 0xffu) != 0u", b, a[0], a[0]);
    } else if (x->op == CG_NEG) {
        sb_printf(o, "-%s", a[0]);
    } else if (x->op == CG_NOT) {
        sb_printf(o, "!%s", a[0]);
    } else if (x->op == CG_DIV_TRUNC) {
        sb_printf(o, "trunc(%s / %s)", a[0], a[1]);
    } else if (x->op == CG_WHERE) {
        sb_printf(o, "%s ? %s : %s", a[0], a[1], a[2]);
    } else if (x->op == CG_CAST) {
        CgType from = g->n[x->a[0]].type;
        if (x->type == CGT_BOOL)
            sb_printf(o, "%s != %s", a[0], from == CGT_F32 ? "0.0" : "0");
        else
            sb_printf(o, "%s(%s)", type_name(x->type), a[0]);
    } else if (in) {
        sb_printf(o, "%s %s %s", a[0], in, a[1]);
    } else if (f) {
        sb_printf(o, "%s(", f);
        for (int i = 0; i < x->na; i++)
            sb_printf(o, "%s%s", i ? ", " : "", a[i]);
        sb_printf(o, ")");
    } else {
        sb_printf(o, "0 /* %s */", cg_op_name(x->op));
    }
    sb_printf(o, ";\n");
}

static const char *storage_define(DType dt)
{
    switch (dt) {
    case DT_F16:
        return "STORAGE_F16";
    case DT_BF16:
        return "STORAGE_BF16";
    default:
        return "STORAGE_F32";
    }
}

static void mark(const Cg *g, int id, char *live)
{
    if (id < 0 || live[id]) return;
    live[id] = 1;
    for (int i = 0; i < g->n[id].na; i++)
        mark(g, g->n[id].a[i], live);
}

char *cg_render_glsl(const CgKernel *k)
{
    const Cg *g = &k->g;
    char *live = calloc((size_t)g->count + 1, 1);
    if (!live) return NULL;
    mark(g, k->value, live);
    mark(g, k->offset, live);
    int nlive = 0;
    for (int i = 0; i < g->count; i++)
        nlive += live[i] && g->n[i].op != CG_CONST && g->n[i].op != CG_GID;
    StrBuf o = {0};
    sb_printf(&o, "// %s: %lld elements, %d operations (npu-explore, compiler/codegen_*.c)\n",
              k->title ? k->title : "generated elementwise kernel", (long long)g->numel, nlive);
    sb_printf(&o, "#version 450\n#define %s\n", storage_define(k->storage));
    sb_printf(&o,
              "#include \"common.glsl\"\n#include \"index.glsl\"\n#include \"eltwise.glsl\"\n\n");
    sb_printf(&o, "layout(local_size_x_id = 0) in;\n");
    for (int b = 0; b < k->nbind; b++) {
        bool out = b == k->nbind - 1;
        const char *ty = k->bind[b].type == CGT_F32   ? "STORAGE_T"
                         : k->bind[b].type == CGT_I32 ? "int"
                                                      : "uint";
        sb_printf(&o, "layout(std430, set = 0, binding = %d) %s buffer B%d { %s t%d[]; };%s\n", b,
                  out ? "writeonly" : "readonly", b, ty, b,
                  k->bind[b].type == CGT_BOOL ? " // bool bytes" : "");
    }
    sb_printf(&o, "\nvoid main()\n{\n");
    char v[64], off[64];
    ref(g, k->value, v, sizeof v);
    ref(g, k->offset, off, sizeof off);
    int ob = k->nbind - 1;
    if (k->pack_bytes) {
        /* bool bytes: four elements per invocation, packed into one uint (no 8-bit stores) */
        sb_printf(
            &o,
            "    uint u = npu_global_index();\n    if (u >= %lluu) return;\n    uint word = 0u;\n",
            (unsigned long long)(g->numel + 3) / 4);
        sb_printf(
            &o,
            "    for (int j = 0; j < 4; j++) {\n    int gid = int(u) * 4 + j;\n    if (gid >= "
            "%lld) break;\n",
            (long long)g->numel);
    } else {
        sb_printf(&o,
                  "    uint u = npu_global_index();\n    if (u >= %lluu) return;\n    int gid = "
                  "int(u);\n",
                  (unsigned long long)g->numel);
    }
    for (int i = 0; i < g->count; i++)
        if (live[i] && g->n[i].op != CG_CONST && g->n[i].op != CG_GID) emit_node(&o, k, i);
    if (k->pack_bytes)
        sb_printf(&o, "    word |= uint(%s) << (8 * j);\n    }\n    t%d[u] = word;\n}\n", v, ob);
    else if (k->bind[ob].type == CGT_F32)
        sb_printf(&o, "    t%d[%s] = S_STORE(%s);\n}\n", ob, off, v);
    else
        sb_printf(&o, "    t%d[%s] = %s;\n}\n", ob, off, v);
    free(live);
    return sb_take(&o);
}
