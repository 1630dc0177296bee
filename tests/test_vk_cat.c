/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * cat-in-place (compiler/pass_cat.c) on dense-block graphs like DenseNet's: a first map f0, then
 * layers k = 1..L each reading cat(f0 .. f_k-1) with a 3x3 conv + relu (one fused kernel) making
 * f_k, then the block's cat(f0 .. f_L) read by a 3x3 conv. The plan: which cats run no kernel, the
 * parts as views of the block's storage at their channel offsets, the prefix cats as views at 0,
 * what keeps its copy (a batch of 2, offsets off the binding alignment, a graph input as a part, a
 * map the cats want at two offsets), `--disable cat-in-place` giving the copies back. Numerics
 * against the CPU reference on Vulkan (every buffer poisoned with NaN first, so a region nobody
 * writes fails) and on the CPU backend running the plan, batch 1 and 2, padded (growth 8) and
 * unpadded (32) channels, a part also read by another consumer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/plan.h"
#include "tests/vk_check.h"

static char json[32768];

/* A dense block: batch n, c0 first channels, L layers of `growth`, hw x hw maps. input_part: f0
 * is the graph input itself (a part that must be copied); side: f1 is also read by a sigmoid (a
 * graph output); swap: one more cat reads f1 before f0 (f1 wanted at a second offset). */
typedef struct Block {
    int n, c0, growth, layers, hw;
    bool input_part, side, swap;
} Block;

static char *shape(char *b, int n, int c, int hw)
{
    sprintf(b, "[%d,%d,%d,%d]", n, c, hw, hw);
    return b;
}

static void tensor(char *dst, size_t cap, const char *name, const char *sh)
{
    tu_cat(dst, cap, "{\"name\":\"%s\",\"shape\":%s}", name, sh);
}

/* conv `name` (3x3, padding 1, no bias): x [n, cin] -> y [n, cout]. */
static void conv(TuGraph *j, const Block *b, const char *name, const char *x, int cin,
                 const char *y, int cout)
{
    char ws[64], xs[64], ys[64], ins[512] = "", outs[256] = "", pw[80], wn[64];
    sprintf(ws, "[%d,%d,3,3]", cout, cin);
    snprintf(wn, sizeof wn, "%s_w", name);
    snprintf(pw, sizeof pw, "p_%s", wn);
    tu_graph_weight(j, wn, ws);
    tensor(ins, sizeof ins, x, shape(xs, b->n, cin, b->hw));
    tu_cat(ins, sizeof ins, ",");
    tensor(ins, sizeof ins, pw, ws);
    tensor(outs, sizeof outs, y, shape(ys, b->n, cout, b->hw));
    tu_graph_node(j, name, "aten.conv2d.default", ins, outs, "\"padding\":[1,1]");
}

/* The name of map i: f<i>, or x for f0 when it is the graph input. */
static const char *map_name(const Block *b, int i, char *buf)
{
    if (i == 0 && b->input_part) return "x";
    sprintf(buf, "f%d", i);
    return buf;
}

/* cat `name` of maps from[0], from[1], ... -> y. */
static void cat(TuGraph *j, const Block *b, const char *name, const int *from, int nf,
                const char *y)
{
    char ins[2048] = "", outs[256] = "", s[64], buf[16];
    int c = 0;
    for (int i = 0; i < nf; i++) {
        int ci = from[i] == 0 ? b->c0 : b->growth;
        const char *fn = map_name(b, from[i], buf);
        if (i) tu_cat(ins, sizeof ins, ",");
        tensor(ins, sizeof ins, fn, shape(s, b->n, ci, b->hw));
        c += ci;
    }
    tensor(outs, sizeof outs, y, shape(s, b->n, c, b->hw));
    tu_graph_node(j, name, "aten.cat.default", ins, outs, "\"dim\":1");
}

static void unary(TuGraph *j, const Block *b, const char *op, const char *name, const char *x,
                  int c, const char *y)
{
    char ins[256] = "", outs[256] = "", s[64];
    tensor(ins, sizeof ins, x, shape(s, b->n, c, b->hw));
    tensor(outs, sizeof outs, y, shape(s, b->n, c, b->hw));
    tu_graph_node(j, name, op, ins, outs, "");
}

static void block_json(const Block *b)
{
    static TuGraph j;
    memset(&j, 0, sizeof j);
    char s[64], nm[32], x[32], y[32];
    tensor(j.in, sizeof j.in, "x", shape(s, b->n, b->input_part ? b->c0 : 3, b->hw));
    if (!b->input_part) conv(&j, b, "stem", "x", 3, "f0", b->c0);
    int from[64];
    for (int k = 1; k <= b->layers; k++) {
        for (int i = 0; i < k; i++)
            from[i] = i;
        snprintf(nm, sizeof nm, "cat_%d", k);
        snprintf(x, sizeof x, "c%d", k);
        cat(&j, b, nm, from, k, x);
        int ck = b->c0 + (k - 1) * b->growth;
        snprintf(nm, sizeof nm, "conv_%d", k);
        snprintf(y, sizeof y, "t%d", k);
        conv(&j, b, nm, x, ck, y, b->growth);
        snprintf(nm, sizeof nm, "relu_%d", k);
        snprintf(x, sizeof x, "f%d", k);
        unary(&j, b, "aten.relu.default", nm, y, b->growth, x);
    }
    for (int i = 0; i <= b->layers; i++)
        from[i] = i;
    cat(&j, b, "cat_final", from, b->layers + 1, "cf");
    conv(&j, b, "head", "cf", b->c0 + b->layers * b->growth, "y", 16);
    tensor(j.out, sizeof j.out, "y", shape(s, b->n, 16, b->hw));
    if (b->side) {
        unary(&j, b, "aten.sigmoid.default", "side", "f1", b->growth, "s");
        tu_cat(j.out, sizeof j.out, ",");
        tensor(j.out, sizeof j.out, "s", shape(s, b->n, b->growth, b->hw));
    }
    if (b->swap) {
        int sw[2] = {1, 0};
        cat(&j, b, "cat_swap", sw, 2, "cs");
        conv(&j, b, "head_swap", "cs", b->c0 + b->growth, "z", 16);
        tu_cat(j.out, sizeof j.out, ",");
        tensor(j.out, sizeof j.out, "z", shape(s, b->n, 16, b->hw));
    }
    tu_graph_json(&j, json, sizeof json);
}

static Pipeline compile(bool disable)
{
    if (getenv("CAT_DUMP")) {
        FILE *f = fopen(getenv("CAT_DUMP"), "w");
        fputs(json, f);
        fclose(f);
    }
    CompileOptions o;
    vc_options(&o);
    if (disable) o.disable[o.n_disable++] = "cat-in-place";
    return tu_compile_json(json, &o);
}

/* Kernels made from cat nodes (cat2..cat4, a copy). */
static int cat_kernels(const Plan *p)
{
    int n = 0;
    for (int k = 0; k < p->nkernels; k++)
        n += p->kernels[k].op == OP_CAT;
    return n;
}

static const GTensor *tensor_of(const Graph *g, const char *name)
{
    int t = graph_find_tensor(g, name);
    assert_true(t >= 0);
    return &g->tensors[t];
}

/* Batch 1, aligned offsets: no cat runs a kernel; f_k lives in the block's storage at its
 * channels, c_k is a view of the block's prefix; padded (growth 8) or not (32). */
static void test_block_in_place(void **state)
{
    (void)state;
    static const Block cases[] = {
        {1, 32, 32, 3, 8, false, false, false},
        {1, 16, 8, 3, 8, false, false, false},
        {1, 16, 8, 2, 2, false, false, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const Block *b = &cases[i];
        block_json(b);
        Pipeline p = compile(false);
        const Graph *g = p.g;
        int cf = graph_find_tensor(g, "cf");
        int64_t hw = (int64_t)b->hw * b->hw;
        assert_int_equal(cat_kernels(p.plan), 0);
        assert_int_equal(tensor_of(g, "cf")->alias_of, -1);
        for (int k = 0; k <= b->layers; k++) {
            char nm[16];
            snprintf(nm, sizeof nm, "f%d", k);
            const GTensor *f = tensor_of(g, nm);
            assert_int_equal(f->alias_of, cf);
            assert_int_equal(f->view_off, (k == 0 ? 0 : b->c0 + (k - 1) * b->growth) * hw);
            assert_int_equal(f->padded, 0);
            snprintf(nm, sizeof nm, "c%d", k + 1);
            if (k < b->layers) {
                const GTensor *c = tensor_of(g, nm);
                assert_int_equal(c->alias_of, cf);
                assert_int_equal(c->view_off, 0);
            }
        }
        /* each kernel writing a part writes it at its offset */
        pipeline_free(&p);
        /* switched off: one cat kernel (or a copy) per cat, as before */
        p = compile(true);
        assert_int_equal(tensor_of(p.g, "f1")->alias_of, -1);
        int kernels = 0;
        for (int k = 1; k <= b->layers + 1; k++)
            kernels += k == 1 ? 1 : (k + 3) / 4; /* cat of k inputs: groups of up to 4 */
        assert_int_equal(cat_kernels(p.plan), kernels);
        pipeline_free(&p);
    }
}

/* What keeps its copy: a batch of 2 (a channel slice is not contiguous), offsets off the binding
 * alignment (1x1 maps: 16 channels = 16 elements), a graph input (copied into its place by a cat
 * of its own), f1 wanted first by another cat (that cat keeps its kernel). */
static void test_block_copies(void **state)
{
    (void)state;
    static const struct {
        Block b;
        int kernels;      /* kernels made from cats */
        const char *t[3]; /* tensors and where they live: the storage they are views of */
        const char *base[3];
        int64_t off[3]; /* and their view_off */
    } cases[] = {
        {{2, 16, 8, 2, 8, false, false, false}, 3, {"f1", "c2"}, {NULL, NULL}, {0}},
        /* cat_1 = cat(f0) is f0's storage; cat_2 and the final cat copy */
        {{1, 16, 8, 2, 1, false, false, false}, 2, {"f0", "f1"}, {"c1", NULL}, {0}},
        /* the final cat's copy of x is a cat node of its own writing x's place in the block's
         * storage; cat_2 keeps its kernel (x is not in that storage before the block's end),
         * and so does cat_1 (a copy of x) */
        {{1, 32, 32, 2, 8, true, false, false},
         3,
         {"x", "cat_final@in0", "f1"},
         {NULL, "cf", "cf"},
         {0, 0, 32 * 64}},
        /* f1 is read by the sigmoid inside the block's storage; cat_swap copies */
        {{1, 32, 32, 2, 8, false, true, true}, 1, {"f1", "cs"}, {"cf", NULL}, {32 * 64, 0}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        block_json(&cases[i].b);
        Pipeline p = compile(false);
        assert_int_equal(cat_kernels(p.plan), cases[i].kernels);
        for (int k = 0; k < 3 && cases[i].t[k]; k++) {
            const GTensor *t = tensor_of(p.g, cases[i].t[k]);
            int want = cases[i].base[k] ? graph_find_tensor(p.g, cases[i].base[k]) : -1;
            assert_int_equal(t->alias_of, want);
            assert_int_equal(t->view_off, cases[i].off[k]);
        }
        pipeline_free(&p);
    }
}

/* The pass shows in the snapshots: its changes name the cats in place. */
static void test_block_changes(void **state)
{
    (void)state;
    Block b = {1, 32, 32, 2, 8, false, false, false};
    block_json(&b);
    Pipeline p = compile(false);
    const Snapshot *s = NULL;
    for (int i = 0; i < p.nsnaps; i++)
        if (strcmp(p.snaps[i].pass, "cat-in-place") == 0) s = &p.snaps[i];
    assert_non_null(s);
    int cats = 0, parts = 0;
    for (int i = 0; i < s->nchanges; i++) {
        const char *w = s->changes[i].what;
        cats += strstr(w, "in place: its producers write") != NULL;
        parts += strstr(w, "written in place into a cat") != NULL;
    }
    assert_int_equal(cats, 3);  /* cat_1, cat_2, cat_final */
    assert_int_equal(parts, 3); /* stem, conv_1, conv_2 */
    pipeline_free(&p);
}

/* Numerics: Vulkan (fp16, fp32) and the CPU backend running the plan. */
static void test_block_numerics(void **state)
{
    (void)state;
    static const Block cases[] = {
        {1, 32, 32, 3, 8, false, true, false}, {1, 16, 8, 3, 8, false, true, true},
        {2, 16, 8, 2, 8, false, false, false}, {2, 32, 32, 2, 4, false, true, false},
        {1, 16, 8, 2, 1, false, false, false}, {1, 32, 32, 2, 8, true, true, false},
        {1, 16, 8, 2, 2, false, false, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        block_json(&cases[i]);
        vc_check_json(json, "fp16", VC_TOL_F16, "conv2d");
        vc_check_json(json, "fp32", VC_TOL_F32, "conv2d");
        vc_check_json_on(json, "fp32", VC_TOL_F32, "conv2d", true);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block_in_place),
        cmocka_unit_test(test_block_copies),
        cmocka_unit_test(test_block_changes),
        cmocka_unit_test(test_block_numerics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
