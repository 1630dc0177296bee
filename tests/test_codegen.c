/* Generated kernels without a device: the simplifier's index arithmetic and constant folding
 * (compiler/codegen/codegen_expr.c), the rendered GLSL, glslang in-process with its two caches (a
 * second compile hits memory, a fresh process state hits the directory, a corrupt entry is
 * rebuilt), the fuse-elementwise pass's grouping rules, and .npubin round trips of plans that carry
 * generated modules (and the reader refusing a module that is not valid SPIR-V). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/codegen/codegen.h"
#include "compiler/ir_json.h"
#include "compiler/npubin.h"
#include "compiler/pass.h"
#include "compiler/plan.h"
#include "compiler/codegen/spv_tools.h"
#include "tests/testutil.h"

/* ---- the simplifier ---------------------------------------------------------------------- */

/* Coordinates of gid over shape, as codegen_build.c makes them. */
static void unravel(Cg *g, int gid, const int64_t *shape, int r, int *c)
{
    int64_t s = 1;
    for (int d = r - 1; d >= 0; d--) {
        c[d] = cg_imod(g, cg_idiv(g, gid, s), shape[d]);
        s *= shape[d];
    }
}

static int ravel(Cg *g, const int64_t *shape, int r, const int *c)
{
    int lin = cg_iconst(g, 0);
    int64_t s = 1;
    for (int d = r - 1; d >= 0; d--) {
        lin = cg_iadd(g, lin, cg_imul(g, c[d], s));
        s *= shape[d];
    }
    return lin;
}

static void test_dense_offset_is_gid(void **state)
{
    (void)state;
    static const int64_t shapes[][4] = {{2, 3, 4, 5}, {1, 7, 1, 3}, {5, 1, 1, 1}, {1, 1, 1, 1}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        Cg g;
        int64_t n = shapes[i][0] * shapes[i][1] * shapes[i][2] * shapes[i][3];
        cg_init(&g, n);
        int gid = cg_gid(&g), c[4];
        unravel(&g, gid, shapes[i], 4, c);
        assert_int_equal(ravel(&g, shapes[i], 4, c), gid);
        assert_null(g.err);
        cg_free(&g);
    }
}

static void test_reshape_and_broadcast(void **state)
{
    (void)state;
    Cg g;
    cg_init(&g, 24);
    int gid = cg_gid(&g), c[3], r[2];
    const int64_t s3[] = {2, 3, 4}, s2[] = {6, 4};
    unravel(&g, gid, s3, 3, c);
    /* [2,3,4] -> [6,4]: the last coordinate stays, the first two merge into gid / 4 */
    int lin = ravel(&g, s3, 3, c);
    unravel(&g, lin, s2, 2, r);
    assert_int_equal(r[1], c[2]);
    assert_int_equal(r[0], cg_idiv(&g, gid, 4));
    /* a [1,3,1] operand broadcast over [2,3,4]: offset (gid / 4) % 3, one div and one mod */
    int b = cg_iadd(&g, cg_imul(&g, cg_iconst(&g, 0), 3), c[1]);
    assert_int_equal(b, cg_imod(&g, cg_idiv(&g, gid, 4), 3));
    assert_int_equal(g.n[b].op, CG_IMOD);
    assert_int_equal(g.n[b].hi, 2);
    /* (x * 12 + 5) / 4 = x * 3 + 1 and % 4 = 1 for x >= 0 */
    int x = cg_idiv(&g, gid, 12);
    int e = cg_iadd(&g, cg_imul(&g, x, 12), cg_iconst(&g, 5));
    assert_int_equal(cg_idiv(&g, e, 4), cg_iadd(&g, cg_imul(&g, x, 3), cg_iconst(&g, 1)));
    assert_int_equal(cg_imod(&g, e, 4), cg_iconst(&g, 1));
    /* (gid / 4) / 3 = gid / 12; (gid % 12) % 4 = gid % 4; x % 1 = 0; a range below the divisor */
    assert_int_equal(cg_idiv(&g, cg_idiv(&g, gid, 4), 3), cg_idiv(&g, gid, 12));
    assert_int_equal(cg_imod(&g, cg_imod(&g, gid, 12), 4), cg_imod(&g, gid, 4));
    assert_int_equal(cg_imod(&g, gid, 1), cg_iconst(&g, 0));
    assert_int_equal(cg_idiv(&g, gid, 24), cg_iconst(&g, 0));
    assert_int_equal(cg_imod(&g, gid, 24), gid);
    /* clamps that cannot bind vanish */
    assert_int_equal(cg_imin(&g, gid, 100), gid);
    assert_int_equal(cg_imax(&g, gid, 0), gid);
    assert_int_equal(cg_imin(&g, cg_iconst(&g, 9), 4), cg_iconst(&g, 4));
    assert_null(g.err);
    cg_free(&g);
}

static void test_constant_folding(void **state)
{
    (void)state;
    Cg g;
    cg_init(&g, 8);
    int two = cg_fconst(&g, 2), three = cg_fconst(&g, 3);
    int s = cg_binary(&g, CG_ADD, two, three);
    assert_int_equal(g.n[s].op, CG_CONST);
    assert_true(g.n[s].c == 5);
    int x = cg_load(&g, 0, CGT_F32, cg_gid(&g));
    assert_int_equal(cg_binary(&g, CG_MUL, x, cg_fconst(&g, 1)), x);
    assert_int_equal(cg_binary(&g, CG_ADD, x, cg_fconst(&g, 0)), x);
    /* x * 0 stays (NaN * 0 is NaN); x + -0.0 stays (-0.0 + -0.0 keeps its sign) */
    assert_int_not_equal(cg_binary(&g, CG_MUL, x, cg_fconst(&g, 0)), cg_fconst(&g, 0));
    assert_int_not_equal(cg_binary(&g, CG_ADD, x, cg_fconst(&g, -0.0)), x);
    /* pow by 2 is a product; commutative ops are one node in either order */
    int y = cg_load(&g, 1, CGT_F32, cg_gid(&g));
    assert_int_equal(cg_binary(&g, CG_POW, x, two), cg_binary(&g, CG_MUL, x, x));
    assert_int_equal(cg_binary(&g, CG_MUL, x, y), cg_binary(&g, CG_MUL, y, x));
    /* where on a constant condition, neg of neg, casts of constants */
    assert_int_equal(cg_where(&g, cg_bconst(&g, true), x, y), x);
    assert_int_equal(cg_where(&g, cg_binary(&g, CG_LT, two, three), x, y), x);
    assert_int_equal(cg_unary(&g, CG_NEG, cg_unary(&g, CG_NEG, x)), x);
    assert_int_equal(cg_cast(&g, CGT_F32, cg_iconst(&g, 7)), cg_fconst(&g, 7));
    int r = cg_clamp(&g, cg_fconst(&g, 9), 0, 6);
    assert_true(g.n[r].op == CG_CONST && g.n[r].c == 6);
    /* float constants are float32: 0.1 folds as torch's float32 0.1 */
    assert_true(g.n[cg_fconst(&g, 0.1)].c == (double)0.1f);
    assert_null(g.err);
    cg_free(&g);
}

static void test_failures_pass_through(void **state)
{
    (void)state;
    Cg g;
    cg_init(&g, (int64_t)1 << 40);
    assert_int_equal(cg_gid(&g), -1); /* beyond int32 */
    assert_non_null(g.err);
    assert_int_equal(cg_iadd(&g, -1, cg_iconst(&g, 1)), -1);
    assert_int_equal(cg_unary(&g, CG_EXP, -1), -1);
    cg_free(&g);
}

/* ---- rendering and compiling ------------------------------------------------------------- */

/* y = relu(a * b[broadcast]) over [3, 5], f16 storage */
static char *render_small(void)
{
    CgKernel k;
    memset(&k, 0, sizeof k);
    cg_init(&k.g, 15);
    Cg *g = &k.g;
    int gid = cg_gid(g);
    int a = cg_load(g, 0, CGT_F32, gid);
    int b = cg_load(g, 1, CGT_F32, cg_imod(g, gid, 5));
    k.value = cg_unary(g, CG_RELU, cg_binary(g, CG_MUL, a, b));
    k.offset = gid;
    k.nbind = 3;
    k.bind[0] = (CgBinding){"a", CGT_F32};
    k.bind[1] = (CgBinding){"b", CGT_F32};
    k.bind[2] = (CgBinding){"y", CGT_F32};
    k.storage = DT_F16;
    k.title = "test kernel";
    char *src = cg_render_glsl(&k);
    cg_free(g);
    return src;
}

static void test_render(void **state)
{
    (void)state;
    char *src = render_small();
    assert_non_null(src);
    assert_non_null(strstr(src, "#define STORAGE_F16"));
    assert_non_null(strstr(src, "if (u >= 15u) return;"));
    assert_non_null(strstr(src, "S_LOAD(t0[gid])"));
    assert_non_null(strstr(src, "gid % 5"));
    assert_non_null(strstr(src, "npu_relu("));
    assert_non_null(strstr(src, "t2[gid] = S_STORE("));
    char *text = cg_expand_includes(src);
    assert_non_null(text);
    assert_null(strstr(text, "#include"));
    assert_non_null(strstr(text, "float npu_pow(")); /* eltwise.glsl is in */
    assert_non_null(strstr(text, "uint npu_group_index()"));
    free(text);
    free(src);
    assert_null(cg_expand_includes("#include \"no_such_file.glsl\"\n"));
}

static void test_compile_and_caches(void **state)
{
    (void)state;
    char *src = render_small();
    assert_non_null(src);
    DiagList d = {0};
    uint32_t *w1 = NULL, *w2 = NULL, *w3 = NULL;
    size_t n1, n2, n3;
    uint64_t k1, k2, k3;
    cg_cache_reset();
    assert_int_equal(cg_compile(src, tu_tmp_dir(), "t", &w1, &n1, &k1, &d), ST_OK);
    CgStats s = cg_stats();
    assert_int_equal(s.compiled, 1);
    char why[256];
    assert_true(spv_validate(w1, n1, why, sizeof why));
    /* the same source again: this process's cache */
    assert_int_equal(cg_compile(src, tu_tmp_dir(), "t", &w2, &n2, &k2, &d), ST_OK);
    s = cg_stats();
    assert_int_equal(s.compiled, 1);
    assert_int_equal(s.memory_hits, 1);
    assert_true(k1 == k2 && n1 == n2 && memcmp(w1, w2, n1 * 4) == 0);
    /* a fresh process (memory emptied): the directory */
    cg_cache_reset();
    assert_int_equal(cg_compile(src, tu_tmp_dir(), "t", &w3, &n3, &k3, &d), ST_OK);
    s = cg_stats();
    assert_int_equal(s.compiled, 0);
    assert_int_equal(s.disk_hits, 1);
    assert_true(n3 == n1 && memcmp(w1, w3, n1 * 4) == 0);
    free(w2);
    free(w3);
    /* a corrupt entry is ignored and rebuilt */
    char path[512];
    snprintf(path, sizeof path, "%s/%016llx.npuspv", tu_tmp_dir(), (unsigned long long)k1);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, 40, SEEK_SET);
    fputc(0x5a, f);
    fclose(f);
    cg_cache_reset();
    assert_int_equal(cg_compile(src, tu_tmp_dir(), "t", &w2, &n2, &k2, &d), ST_OK);
    s = cg_stats();
    assert_int_equal(s.compiled, 1);
    assert_int_equal(s.disk_hits, 0);
    assert_true(n2 == n1 && memcmp(w1, w2, n1 * 4) == 0);
    free(w2);
    /* no disk cache: "none" */
    cg_cache_reset();
    assert_int_equal(cg_compile(src, "none", "t", &w2, &n2, &k2, &d), ST_OK);
    assert_int_equal(cg_stats().compiled, 1);
    free(w2);
    /* a shader that does not compile: glslang's message, no words */
    assert_int_equal(
        cg_compile("#version 450\nvoid main() { nonsense; }\n", "none", "bad", &w2, &n2, &k2, &d),
        ST_INTERNAL);
    assert_null(w2);
    assert_true(d.count > 0);
    char *dis = spv_disassemble(w1, n1);
    assert_non_null(dis);
    assert_non_null(strstr(dis, "OpEntryPoint GLCompute"));
    free(dis);
    free(w1);
    free(src);
    diag_free(&d);
}

/* ---- the pass ---------------------------------------------------------------------------- */

#define T(n, s) "{\"name\":\"" n "\",\"shape\":" s "}"
#define NODE(name, op, ins, outs, attrs)                                                           \
    "{\"name\":\"" name "\",\"op_type\":\"" op "\",\"inputs\":[" ins "],\"outputs\":[" outs        \
    "],\"attrs\":{" attrs "}}"

static Pipeline compile(const char *json, const char *no_fuse)
{
    CompileOptions o;
    compile_defaults(&o);
    o.kernel_cache = tu_tmp_dir();
    if (no_fuse) o.no_fuse[o.n_no_fuse++] = no_fuse;
    return tu_compile_json(json, &o);
}

static int count_gen(const Plan *p)
{
    int n = 0;
    for (int k = 0; k < p->nkernels; k++)
        n += strncmp(p->kernels[k].shader, "gen_", 4) == 0;
    return n;
}

/* clang-format off */
/* x -> neg -> exp -> (relu, sigmoid) -> mul -> relu: exp's output is read twice and is a graph
 * output, so it roots {neg, exp}; the graph output `o` roots {relu, sigmoid, mul, relu}. */
static const char *diamond =
    "{\"graph_inputs\":[" T("x", "[4,9]") "],\"graph_outputs\":[" T("o", "[4,9]") "," T("e", "[4,9]") "],\"nodes\":["
    NODE("n", "aten.neg.default", T("x", "[4,9]"), T("a", "[4,9]"), "")
    "," NODE("ex", "aten.exp.default", T("a", "[4,9]"), T("e", "[4,9]"), "")
    "," NODE("r", "aten.relu.default", T("e", "[4,9]"), T("b", "[4,9]"), "")
    "," NODE("s", "aten.sigmoid.default", T("e", "[4,9]"), T("c", "[4,9]"), "")
    "," NODE("ad", "aten.mul.Tensor", T("b", "[4,9]") "," T("c", "[4,9]"), T("f", "[4,9]"), "")
    "," NODE("r2", "aten.relu.default", T("f", "[4,9]"), T("o", "[4,9]"), "") "]}";
/* clang-format on */

static void test_pass_groups(void **state)
{
    (void)state;
    Pipeline p = compile(diamond, NULL);
    const Graph *g = p.g;
    /* {n, ex}: ex's output is a graph output too, so it roots a group; {r, s, ad, r2} */
    assert_int_equal(g->nfusions, 2);
    assert_string_equal(g->fusions[0].pattern, "elementwise");
    assert_string_equal(g->fusions[0].id, "F1");
    assert_int_equal(g->fusions[0].nnodes, 2);
    assert_int_equal(g->fusions[1].nnodes, 4);
    assert_string_equal(g->nodes[g->fusions[1].anchor].name, "r2");
    assert_int_equal(p.plan->nkernels, 2);
    assert_int_equal(count_gen(p.plan), 2);
    assert_int_equal(p.plan->nmodules, 2);
    pipeline_free(&p);
    /* --no-fuse fuse-elementwise: the pass is off, six kernels as before */
    p = compile(diamond, "fuse-elementwise");
    assert_int_equal(p.g->nfusions, 0);
    assert_int_equal(p.plan->nkernels, 6);
    assert_int_equal(p.plan->nmodules, 0);
    pipeline_free(&p);
    /* --no-fuse elementwise (or an id): listed, off, members as their own kernels */
    p = compile(diamond, "F2");
    assert_int_equal(p.g->nfusions, 2);
    assert_true(p.g->fusions[0].enabled && !p.g->fusions[1].enabled);
    assert_int_equal(p.plan->nkernels, 5);
    pipeline_free(&p);
}

/* Pattern instances keep their nodes (on or off), and the generated ones are numbered after. */
static void test_pass_after_patterns(void **state)
{
    (void)state;
    /* clang-format off */
    const char *g =
        "{\"graph_inputs\":[" T("x", "[4,9]") "," T("y", "[4,9]") "],\"graph_outputs\":[" T("o", "[4,9]") "],\"nodes\":["
        NODE("m", "aten.mul.Tensor", T("x", "[4,9]") "," T("y", "[4,9]"), T("a", "[4,9]"), "")
        "," NODE("ad", "aten.add.Tensor", T("a", "[4,9]") "," T("y", "[4,9]"), T("b", "[4,9]"), "")
        "," NODE("r", "aten.relu.default", T("b", "[4,9]"), T("c", "[4,9]"), "")
        "," NODE("t", "aten.tanh.default", T("c", "[4,9]"), T("d", "[4,9]"), "")
        "," NODE("n", "aten.neg.default", T("d", "[4,9]"), T("o", "[4,9]"), "") "]}";
    /* clang-format on */
    Pipeline p = compile(g, NULL);
    assert_int_equal(p.g->nfusions, 2); /* F1 add_relu {ad, r}; F2 {t, n}; m alone saves nothing */
    assert_string_equal(p.g->fusions[0].pattern, "add_relu");
    assert_string_equal(p.g->fusions[1].pattern, "elementwise");
    pipeline_free(&p);
    p = compile(g, "add_relu");
    assert_int_equal(p.g->nfusions, 2);
    assert_false(p.g->fusions[0].enabled);
    for (int i = 1; i < p.g->nfusions; i++)
        for (int k = 0; k < p.g->fusions[i].nnodes; k++) {
            const char *nm = p.g->nodes[p.g->fusions[i].nodes[k]].name;
            assert_true(strcmp(nm, "ad") != 0 && strcmp(nm, "r") != 0);
        }
    pipeline_free(&p);
}

/* ---- .npubin ------------------------------------------------------------------------------ */

static void test_npubin_modules(void **state)
{
    (void)state;
    Pipeline p = compile(diamond, NULL);
    DiagList d = {0};
    unsigned char *buf = NULL;
    size_t len = 0;
    assert_int_equal(npubin_encode(p.plan, &buf, &len, &d), ST_OK);
    Plan *back = NULL;
    assert_int_equal(npubin_decode("<mem>", buf, len, &back, &d), ST_OK);
    assert_true(plan_equal(p.plan, back));
    assert_int_equal(back->nmodules, 2);
    assert_non_null(plan_find_module(back, back->kernels[0].shader));
    plan_free(back);
    free(buf);
    /* a module whose words are not SPIR-V: the writer refuses to write it, naming it */
    PlanModule *m = &p.plan->modules[0];
    uint32_t *bad = arena_dup(&p.plan->arena, m->spirv, sizeof(uint32_t) * (size_t)m->nwords);
    bad[m->nwords / 2] = 0xdeadbeefu;
    m->spirv = bad;
    assert_int_not_equal(npubin_encode(p.plan, &buf, &len, &d), ST_OK);
    assert_non_null(strstr(d.items[d.count - 1].msg, "invalid SPIR-V"));
    /* a kernel naming a module the plan lacks */
    p.plan->nmodules = 0;
    assert_int_not_equal(npubin_encode(p.plan, &buf, &len, &d), ST_OK);
    pipeline_free(&p);
    diag_free(&d);
}

int main(void)
{
    return TU_GROUP(tu_tmp_setup, tu_tmp_teardown, test_dense_offset_is_gid,
                    test_reshape_and_broadcast, test_constant_folding, test_failures_pass_through,
                    test_render, test_compile_and_caches, test_pass_groups,
                    test_pass_after_patterns, test_npubin_modules);
}
