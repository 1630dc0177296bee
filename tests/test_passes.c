/* Compiler passes on the real fixtures: fold and fusion counts, pattern matches and near misses
 * on hand-made graphs, graph invariants after every pass, and the .dump text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/dump.h"
#include "compiler/fusion.h"
#include "compiler/ir_json.h"
#include "compiler/pass.h"
#include "compiler/plan.h"
#include "tests/pass_check.h"
#include "tests/testutil.h"

static void test_resnet18_counts(void **state)
{
    (void)state;
    Pipeline p = tu_compile_file("tests/models/resnet18/model.json", NULL);
    const Graph *g = p.g;
    assert_int_equal(g->nrecipes, 20); /* every conv has a batch_norm */
    int live_bn = 0;
    for (int i = 0; i < g->nnodes; i++)
        live_bn += !g->nodes[i].dead && g->nodes[i].op == OP_BATCH_NORM;
    assert_int_equal(live_bn, 0);
    /* 8 basic blocks: conv1+relu in each, conv2+add+relu in each; the stem conv+relu */
    assert_int_equal(tp_count_pattern(g, "conv_add_relu"), 8);
    assert_int_equal(tp_count_pattern(g, "conv_relu"), 9);
    assert_true(p.plan != NULL);
    assert_true(p.plan->arena_bytes > 0 && p.plan->arena_bytes < p.plan->naive_bytes);
    pipeline_free(&p);
}

/* DenseNet is pre-activation: each norm1 and each transition's norm reads a cat, so none folds
 * into a conv. Each runs in the generated kernel of the relu after it, which does not take the
 * cat; switched off, the batch norms are their own kernels again. */
static void test_densenet_bn_relu(void **state)
{
    (void)state;
    static const char *path = "tests/models/zoo/densenet/model.json";
    Pipeline p = tu_compile_file(path, NULL);
    int live_bn = 0, in_gen = 0;
    for (int i = 0; i < p.g->nnodes; i++) {
        const Node *n = &p.g->nodes[i];
        if (n->dead || n->op != OP_BATCH_NORM) continue;
        live_bn++;
        in_gen += n->fusion >= 0 && !strcmp(p.g->fusions[n->fusion].pattern, FUSE_ELEMENTWISE) &&
                  p.g->fusions[n->fusion].enabled;
    }
    assert_int_equal(live_bn, 12);
    assert_int_equal(in_gen, 12);
    /* no batchnorm or relu kernel; the cats before the norms stay cats of their own (1, 2 and 3
     * parts, 4 of each), which cat-in-place makes views of each block's storage but in the last
     * block (1x1 maps: its growth's 8 channels start off the binding alignment), where the cats of
     * 2 and 3 parts copy */
    static const struct {
        const char *stem;
        int n;
    } kernels[] = {{"batchnorm", 0}, {"unary", 0}, {"copy", 0}, {"cat2", 1}, {"cat3", 1}};
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
        assert_int_equal(tp_count_shader(p.plan, kernels[i].stem), kernels[i].n);
    pipeline_free(&p);
    CompileOptions o;
    compile_defaults(&o);
    o.no_fuse[o.n_no_fuse++] = "elementwise";
    o.disable[o.n_disable++] = "cat-in-place";
    p = tu_compile_file(path, &o);
    assert_int_equal(tp_count_shader(p.plan, "batchnorm"), 12);
    assert_int_equal(tp_count_shader(p.plan, "cat3"), 4);
    pipeline_free(&p);
}

static void test_qwen_counts(void **state)
{
    (void)state;
    static const struct {
        const char *path;
        int rms, silu, attn, rope, linadd, rope_cache;
    } cases[] = {
        {"tests/models/qwen2_tiny/decode.json", 5, 2, 2, 4, 4, 2},
        {"tests/models/qwen2_5_1_5b/decode.json", 57, 28, 28, 56, 56, 28},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Pipeline p = tu_compile_file(cases[i].path, NULL);
        /* the prefixes count the folds too (rmsnorm_linear, silu_mul_linear): one per instance */
        assert_int_equal(tp_count_pattern(p.g, "rmsnorm"), 2 * cases[i].rms);
        assert_int_equal(tp_count_pattern(p.g, "rmsnorm_linear"), cases[i].rms);
        assert_int_equal(tp_count_pattern(p.g, "silu_mul"), 2 * cases[i].silu);
        assert_int_equal(tp_count_pattern(p.g, "silu_mul_linear"), cases[i].silu);
        /* the prefix counts the merges too: one per attention, taking its layer's ropes and
         * cache updates (fuse_merge.c) */
        assert_int_equal(tp_count_pattern(p.g, "decode_attention"), 2 * cases[i].attn);
        assert_int_equal(tp_count_pattern(p.g, "decode_attention_cache"), cases[i].attn);
        int merged = 0;
        for (int f = 0; f < p.g->nfusions; f++)
            merged += p.g->fusions[f].merged != 0;
        assert_int_equal(merged, 3 * cases[i].attn);
        assert_int_equal(tp_count_pattern(p.g, "rope"), cases[i].rope); /* rope_cache too */
        /* k's rope is stored into the cache by its index_copy: one kernel */
        assert_int_equal(tp_count_pattern(p.g, "rope_cache"), cases[i].rope_cache);
        /* o_proj and down_proj + the residual stream */
        assert_int_equal(tp_count_pattern(p.g, "linear_add"), cases[i].linadd);
        pipeline_free(&p);
    }
}

static void test_no_fuse_switches(void **state)
{
    (void)state;
    CompileOptions o;
    compile_defaults(&o);
    o.no_fuse[o.n_no_fuse++] = "rmsnorm";
    o.no_fuse[o.n_no_fuse++] = "F1";
    Pipeline p = tu_compile_file("tests/models/qwen2_tiny/decode.json", &o);
    Pipeline q = tu_compile_file("tests/models/qwen2_tiny/decode.json", NULL);
    assert_int_equal(p.g->nfusions, q.g->nfusions); /* ids stay stable */
    for (int i = 0; i < p.g->nfusions; i++) {
        const Fusion *f = &p.g->fusions[i];
        assert_string_equal(f->id, q.g->fusions[i].id);
        bool off = strcmp(f->pattern, "rmsnorm") == 0 || strcmp(f->id, "F1") == 0;
        off |= f->folds && !p.g->fusions[f->folds - 1].enabled; /* a fold of a switched-off base */
        assert_int_equal(f->enabled, !off);
    }
    /* switched-off instances leave their nodes as separate kernels */
    assert_true(p.plan->nkernels > q.plan->nkernels);
    pipeline_free(&p);
    pipeline_free(&q);
}

/* rope_cache falls back to rope when switched off alone (same ids, the rope instance without
 * the index_copy); "rope" and its id switch it off entirely. */
static void test_rope_cache_switches(void **state)
{
    (void)state;
    /* the merge decode_attention_cache off in every case (its own test is test_vk_attn_cache):
     * the rope_cache and rope kernels themselves */
    static const struct {
        const char *rules[3];
        int on_cache, on_rope, off_cache, off_rope, kernels; /* kernels: more than fused */
    } cases[] = {
        {{NULL}, 2, 2, 0, 0, 0},
        {{"rope_cache"}, 0, 4, 0, 0, 2}, /* today's rope and index_copy kernels */
        {{"rope"}, 0, 0, 2, 2, -1},      /* rope selects rope_cache too */
        {{"rope", "+rope_cache"}, 2, 0, 0, 2, -1},
        {{"F4"}, 1, 2, 1, 0, -1},               /* the id: off, no fallback */
        {{"rope_cache", "+F4"}, 1, 3, 0, 0, 1}, /* F13 falls back, F4 on again */
    };
    CompileOptions qo;
    compile_defaults(&qo);
    qo.no_fuse[qo.n_no_fuse++] = FUSE_MERGE_ATTN;
    Pipeline q = tu_compile_file("tests/models/qwen2_tiny/decode.json", &qo);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        CompileOptions o;
        compile_defaults(&o);
        o.no_fuse[o.n_no_fuse++] = FUSE_MERGE_ATTN;
        for (int r = 0; r < 3 && cases[c].rules[r]; r++)
            o.no_fuse[o.n_no_fuse++] = cases[c].rules[r];
        Pipeline p = tu_compile_file("tests/models/qwen2_tiny/decode.json", &o);
        assert_int_equal(p.g->nfusions, q.g->nfusions);
        int n[2][2] = {{0}};
        for (int i = 0; i < p.g->nfusions; i++) {
            const Fusion *f = &p.g->fusions[i];
            assert_string_equal(f->id, q.g->fusions[i].id);
            bool cache = strcmp(f->pattern, "rope_cache") == 0,
                 rope = strcmp(f->pattern, "rope") == 0;
            if (cache || rope) n[f->enabled ? 0 : 1][cache ? 0 : 1]++;
            /* a fallback keeps every member but the index_copy */
            if (rope && strcmp(q.g->fusions[i].pattern, "rope_cache") == 0)
                assert_int_equal(f->nnodes, q.g->fusions[i].nnodes - 1);
        }
        assert_int_equal(n[0][0], cases[c].on_cache);
        assert_int_equal(n[0][1], cases[c].on_rope);
        assert_int_equal(n[1][0], cases[c].off_cache);
        assert_int_equal(n[1][1], cases[c].off_rope);
        if (cases[c].kernels >= 0)
            assert_int_equal(p.plan->nkernels, q.plan->nkernels + cases[c].kernels);
        /* the caches stay updated in place whichever kernel writes them */
        for (int t = 0; t < p.plan->ntensors; t++)
            if (strncmp(p.plan->tensors[t].name, "index_copy", 10) == 0)
                assert_true(p.plan->tensors[t].alias_of >= 0);
        pipeline_free(&p);
    }
    pipeline_free(&q);
}

static void test_prefill_patterns(void **state)
{
    (void)state;
    /* 8 query rows: the attention pattern takes the whole chain (repeat_kv's views included)
     * into one decode_attention kernel per layer; no masked_softmax is left */
    Pipeline p = tu_compile_file("tests/models/qwen2_tiny/prefill.json", NULL);
    assert_int_equal(tp_count_pattern(p.g, "attention"), 2);
    assert_int_equal(tp_count_pattern(p.g, "decode_attention"), 0);
    assert_int_equal(tp_count_pattern(p.g, "masked_softmax"), 0);
    assert_int_equal(tp_count_pattern(p.g, "rmsnorm"), 5);
    assert_int_equal(tp_count_pattern(p.g, "rope"), 4);
    assert_int_equal(tp_count_pattern(p.g, "rope_cache"), 2); /* 8 positions stored at once */
    for (int i = 0; i < p.g->nfusions; i++)
        if (strcmp(p.g->fusions[i].pattern, "attention") == 0)
            assert_int_equal(p.g->fusions[i].nnodes, 13); /* with the transpose after P V */
    for (int i = 0; i < p.g->nmisses; i++)
        assert_true(strstr(p.g->misses[i].pattern, "attention") == NULL);
    assert_int_equal(tp_count_shader(p.plan, "decode_attention"), 2);
    assert_int_equal(tp_count_shader(p.plan, "masked_softmax"), 0);
    assert_int_equal(tp_count_shader(p.plan, "expand"), 0);
    assert_int_equal(tp_count_shader(p.plan, "binary_s"), 0);
    /* q and k read through their transposes by rope and rope_cache, v by index_copy_t, the
     * attention writing the layout o_proj reads: no transpose kernel is left */
    assert_int_equal(tp_count_pattern(p.g, "index_copy_t"), 2);
    assert_int_equal(tp_count_shader(p.plan, "transpose"), 0);
    pipeline_free(&p);
}

/* attention switched off falls back to masked_softmax under the same id, and the other members
 * go back to the kernels of the plan without the pattern: per layer the generated K
 * expand+transpose, V's expand, q K^T, the scale, the masked softmax, probs V (42 kernels in 29
 * levels, against 30 in 19 with the pattern); its id switches it off with no fallback, and
 * masked_softmax (its fallback) switches it off too */
static void test_prefill_attention_switches(void **state)
{
    (void)state;
    Pipeline q = tu_compile_file("tests/models/qwen2_tiny/prefill.json", NULL);
    assert_int_equal(q.plan->nkernels, 30);
    assert_int_equal(q.plan->nlevels, 19);
    static const struct {
        const char *rule;
        int kernels, levels, msm_on, attn_off, msm_kernels, gen;
    } cases[] = {
        {"attention", 42, 29, 2, 0, 2, 2},
        {"F5", 38, 26, 0, 1, 0, 0}, /* layer 0's attention: off, no fallback */
        {"masked_softmax", 46, 33, 0, 2, 0, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        CompileOptions o;
        compile_defaults(&o);
        o.no_fuse[o.n_no_fuse++] = cases[c].rule;
        Pipeline p = tu_compile_file("tests/models/qwen2_tiny/prefill.json", &o);
        int msm = 0, off = 0, gen = 0;
        for (int i = 0; i < p.g->nfusions; i++) {
            const Fusion *f = &p.g->fusions[i];
            msm += f->enabled && strcmp(f->pattern, "masked_softmax") == 0;
            off += !f->enabled && strcmp(f->pattern, "attention") == 0;
            if (strcmp(f->pattern, "masked_softmax") == 0) {
                /* the attention instance's id, its add and softmax */
                assert_true(i < q.g->nfusions);
                assert_string_equal(q.g->fusions[i].pattern, "attention");
                assert_string_equal(f->fell_back_from, "attention");
                assert_int_equal(f->nnodes, 2);
            }
        }
        for (int k = 0; k < p.plan->nkernels; k++)
            gen += strncmp(p.plan->kernels[k].shader, "gen_", 4) == 0 &&
                   p.plan->kernels[k].nin == 1 && p.plan->kernels[k].nprov == 4;
        fprintf(stderr, "  --no-fuse %s: %d kernels in %d levels\n", cases[c].rule,
                p.plan->nkernels, p.plan->nlevels);
        assert_int_equal(p.plan->nkernels, cases[c].kernels);
        assert_int_equal(p.plan->nlevels, cases[c].levels);
        assert_int_equal(msm, cases[c].msm_on);
        assert_int_equal(off, cases[c].attn_off);
        assert_int_equal(tp_count_shader(p.plan, "masked_softmax"), cases[c].msm_kernels);
        assert_int_equal(tp_count_shader(p.plan, "decode_attention"), 2 - cases[c].attn_off - msm);
        assert_int_equal(gen, cases[c].gen); /* K's unsqueeze, expand, view, transpose */
        pipeline_free(&p);
    }
    pipeline_free(&q);
}

static void test_rmsnorm_rules(void **state)
{
    (void)state;
    /* clang-format off */
    /* exponent 3 is not a norm; the normalised tensor must be the pow's input */
    const char *g3 =
        "{\"graph_inputs\":[" T("x", "[1,4]") "," T("w", "[4]") "],\"graph_outputs\":[" T("o", "[1,4]") "],\"nodes\":["
        NODE("pow", "aten.pow.Tensor_Scalar", T("x", "[1,4]"), T("p", "[1,4]"), "\"exponent\":2")
        "," NODE("mean", "aten.mean.dim", T("p", "[1,4]"), T("m", "[1,1]"), "\"dim\":[-1],\"keepdim\":true")
        "," NODE("eps", "aten.add.Tensor", T("m", "[1,1]"), T("e", "[1,1]"), "\"other\":1e-6")
        "," NODE("rs", "aten.rsqrt.default", T("e", "[1,1]"), T("r", "[1,1]"), "")
        "," NODE("mx", "aten.mul.Tensor", T("x", "[1,4]") "," T("r", "[1,1]"), T("y", "[1,4]"), "")
        "," NODE("mw", "aten.mul.Tensor", T("w", "[4]") "," T("y", "[1,4]"), T("o", "[1,4]"), "") "]}";
    /* clang-format on */
    Pipeline p = tp_compile_json(g3);
    assert_int_equal(tp_count_pattern(p.g, "rmsnorm"), 1);
    assert_int_equal(p.g->fusions[0].nnodes, 6);
    pipeline_free(&p);
    /* clang-format off */
    /* the normalised tensor is not the pow's input: a near miss, no instance */
    p = tp_compile_json(
        "{\"graph_inputs\":[" T("x", "[1,4]") "," T("z", "[1,4]") "," T("w", "[4]") "],\"graph_outputs\":[" T("o", "[1,4]") "],\"nodes\":["
        NODE("pow", "aten.pow.Tensor_Scalar", T("x", "[1,4]"), T("p", "[1,4]"), "\"exponent\":2")
        "," NODE("mean", "aten.mean.dim", T("p", "[1,4]"), T("m", "[1,1]"), "\"dim\":[-1],\"keepdim\":true")
        "," NODE("eps", "aten.add.Tensor", T("m", "[1,1]"), T("e", "[1,1]"), "\"other\":1e-6")
        "," NODE("rs", "aten.rsqrt.default", T("e", "[1,1]"), T("r", "[1,1]"), "")
        "," NODE("mx", "aten.mul.Tensor", T("z", "[1,4]") "," T("r", "[1,1]"), T("y", "[1,4]"), "")
        "," NODE("mw", "aten.mul.Tensor", T("w", "[4]") "," T("y", "[1,4]"), T("o", "[1,4]"), "") "]}");
    /* clang-format on */
    assert_int_equal(tp_count_pattern(p.g, "rmsnorm"), 0);
    assert_int_equal(p.g->nmisses, 1);
    assert_non_null(strstr(p.g->misses[0].reason, "not the pow's input"));
    pipeline_free(&p);
}

static void test_conv_rope_linear_rules(void **state)
{
    (void)state;
    /* clang-format off */
    /* conv whose output feeds two nodes: no conv instance, a near miss names the reason */
    Pipeline p = tp_compile_json(
        "{\"graph_inputs\":[" T("x", "[1,3,4,4]") "],\"graph_outputs\":[" T("r", "[1,8,4,4]") "," T("n", "[1,8,4,4]") "],"
        "\"weights\":[" T("w", "[8,3,1,1]") "],\"weight_name_mapping\":{\"p_w\":\"w\"},\"nodes\":["
        NODE("conv", "aten.conv2d.default", T("x", "[1,3,4,4]") "," T("p_w", "[8,3,1,1]"), T("c", "[1,8,4,4]"), "")
        "," NODE("relu", "aten.relu.default", T("c", "[1,8,4,4]"), T("r", "[1,8,4,4]"), "")
        "," NODE("neg", "aten.neg.default", T("c", "[1,8,4,4]"), T("n", "[1,8,4,4]"), "") "]}");
    /* clang-format on */
    assert_int_equal(tp_count_pattern(p.g, "conv"), 0);
    assert_true(p.g->nmisses >= 1);
    assert_non_null(strstr(p.g->misses[0].reason, "several consumers"));
    pipeline_free(&p);
    /* clang-format off */
    /* conv + relu fuses; the same graph with a broadcast residual add stops before the add */
    p = tp_compile_json(
        "{\"graph_inputs\":[" T("x", "[1,3,4,4]") "," T("b", "[1,8,1,1]") "],\"graph_outputs\":[" T("r", "[1,8,4,4]") "],"
        "\"weights\":[" T("w", "[8,3,1,1]") "],\"weight_name_mapping\":{\"p_w\":\"w\"},\"nodes\":["
        NODE("conv", "aten.conv2d.default", T("x", "[1,3,4,4]") "," T("p_w", "[8,3,1,1]"), T("c", "[1,8,4,4]"), "")
        "," NODE("add", "aten.add.Tensor", T("c", "[1,8,4,4]") "," T("b", "[1,8,1,1]"), T("a", "[1,8,4,4]"), "")
        "," NODE("relu", "aten.relu.default", T("a", "[1,8,4,4]"), T("r", "[1,8,4,4]"), "") "]}");
    /* clang-format on */
    assert_int_equal(tp_count_pattern(p.g, "conv"), 0);     /* the add is not a residual */
    assert_int_equal(tp_count_pattern(p.g, "add_relu"), 1); /* the add and relu still fuse */
    pipeline_free(&p);
    /* clang-format off */
    /* linear + gelu fuses as linear_gelu; linear + neg does not fuse */
    p = tp_compile_json(
        "{\"graph_inputs\":[" T("x", "[2,4]") "],\"graph_outputs\":[" T("g", "[2,3]") "," T("n", "[2,3]") "],"
        "\"weights\":[" T("w", "[3,4]") "],\"weight_name_mapping\":{\"p_w\":\"w\"},\"nodes\":["
        NODE("l1", "aten.linear.default", T("x", "[2,4]") "," T("p_w", "[3,4]"), T("y", "[2,3]"), "")
        "," NODE("gelu", "aten.gelu.default", T("y", "[2,3]"), T("g", "[2,3]"), "")
        "," NODE("l2", "aten.linear.default", T("x", "[2,4]") "," T("p_w", "[3,4]"), T("z", "[2,3]"), "")
        "," NODE("neg", "aten.neg.default", T("z", "[2,3]"), T("n", "[2,3]"), "") "]}");
    /* clang-format on */
    assert_int_equal(p.g->nfusions, 1);
    assert_string_equal(p.g->fusions[0].pattern, "linear_gelu");
    pipeline_free(&p);
    /* clang-format off */
    /* rope: the two slices must be the halves of the last dim; here the first takes [0:3] of 8 */
    p = tp_compile_json(
        "{\"graph_inputs\":[" T("x", "[1,2,1,8]") "," T("c", "[1,1,1,8]") "," T("s", "[1,1,1,8]") "],\"graph_outputs\":[" T("o", "[1,2,1,8]") "],\"nodes\":["
        NODE("m1", "aten.mul.Tensor", T("x", "[1,2,1,8]") "," T("c", "[1,1,1,8]"), T("a", "[1,2,1,8]"), "")
        "," NODE("s1", "aten.slice.Tensor", T("x", "[1,2,1,8]"), T("h1", "[1,2,1,5]"), "\"dim\":3,\"start\":3,\"end\":9223372036854775807")
        "," NODE("ng", "aten.neg.default", T("h1", "[1,2,1,5]"), T("nh", "[1,2,1,5]"), "")
        "," NODE("s2", "aten.slice.Tensor", T("x", "[1,2,1,8]"), T("h2", "[1,2,1,3]"), "\"dim\":3,\"start\":0,\"end\":3")
        "," NODE("ct", "aten.cat.default", T("nh", "[1,2,1,5]") "," T("h2", "[1,2,1,3]"), T("rt", "[1,2,1,8]"), "\"dim\":-1")
        "," NODE("m2", "aten.mul.Tensor", T("rt", "[1,2,1,8]") "," T("s", "[1,1,1,8]"), T("b", "[1,2,1,8]"), "")
        "," NODE("ad", "aten.add.Tensor", T("a", "[1,2,1,8]") "," T("b", "[1,2,1,8]"), T("o", "[1,2,1,8]"), "") "]}");
    /* clang-format on */
    assert_int_equal(tp_count_pattern(p.g, "rope"), 0);
    int why = 0;
    for (int i = 0; i < p.g->nmisses; i++)
        why += strstr(p.g->misses[i].reason, "halves") != NULL;
    assert_int_equal(why, 1);
    pipeline_free(&p);
    /* rope_cache: a rope output that is a graph output as well as the index_copy's source stays
     * a rope (near miss); stored along the rotated dim it stays one too */
    static const char *ic_dim[] = {"2", "3"}, *ic_kv[] = {"[1,2,4,8]", "[1,2,1,9]"},
                      *ic_n[] = {"[1]", "[8]"};
    static const char *ic_why[] = {"other readers", "rotated"};
    for (int k = 0; k < 2; k++) {
        char json[4096], kv[64], ix[64];
        snprintf(kv, sizeof kv, "{\"name\":\"kv\",\"shape\":%s}", ic_kv[k]);
        snprintf(ix, sizeof ix, "{\"name\":\"i\",\"dtype\":\"int64\",\"shape\":%s}", ic_n[k]);
        /* clang-format off */
        snprintf(json, sizeof json,
            "{\"graph_inputs\":[" T("x", "[1,2,1,8]") "," T("c", "[1,1,1,8]") "," T("s", "[1,1,1,8]") ",%1$s,%2$s],"
            "\"graph_outputs\":[%3$s{\"name\":\"ic\",\"shape\":%4$s}],\"nodes\":["
            NODE("m1", "aten.mul.Tensor", T("x", "[1,2,1,8]") "," T("c", "[1,1,1,8]"), T("a", "[1,2,1,8]"), "")
            "," NODE("s1", "aten.slice.Tensor", T("x", "[1,2,1,8]"), T("h1", "[1,2,1,4]"), "\"dim\":3,\"start\":4,\"end\":9223372036854775807")
            "," NODE("ng", "aten.neg.default", T("h1", "[1,2,1,4]"), T("nh", "[1,2,1,4]"), "")
            "," NODE("s2", "aten.slice.Tensor", T("x", "[1,2,1,8]"), T("h2", "[1,2,1,4]"), "\"dim\":3,\"start\":0,\"end\":4")
            "," NODE("ct", "aten.cat.default", T("nh", "[1,2,1,4]") "," T("h2", "[1,2,1,4]"), T("rt", "[1,2,1,8]"), "\"dim\":-1")
            "," NODE("m2", "aten.mul.Tensor", T("rt", "[1,2,1,8]") "," T("s", "[1,1,1,8]"), T("b", "[1,2,1,8]"), "")
            "," NODE("ad", "aten.add.Tensor", T("a", "[1,2,1,8]") "," T("b", "[1,2,1,8]"), T("o", "[1,2,1,8]"), "")
            ",{\"name\":\"icp\",\"op_type\":\"aten.index_copy.default\",\"inputs\":[%1$s,%2$s," T("o", "[1,2,1,8]") "],"
            "\"outputs\":[{\"name\":\"ic\",\"shape\":%4$s}],\"attrs\":{\"dim\":%5$s}}]}",
            kv, ix, k == 0 ? T("o", "[1,2,1,8]") "," : "", ic_kv[k], ic_dim[k]);
        /* clang-format on */
        p = tp_compile_json(json);
        assert_int_equal(tp_count_pattern(p.g, "rope_cache"), 0);
        assert_int_equal(tp_count_pattern(p.g, "rope"), 1);
        why = 0;
        for (int i = 0; i < p.g->nmisses; i++)
            why += strcmp(p.g->misses[i].pattern, "rope_cache") == 0 &&
                   strstr(p.g->misses[i].reason, ic_why[k]) != NULL;
        assert_int_equal(why, 1);
        pipeline_free(&p);
    }
}

/* x[2,4] @ w[3,4]^T then add(y, r) (or add(r, y)) with r of shape RS, optionally a relu. */
/* clang-format off */
#define LIN_ADD(RS, ADD_INS, TAIL, OUTS)                                                            \
    "{\"graph_inputs\":[" T("x", "[2,4]") "," T("r", RS) "],\"graph_outputs\":[" OUTS "],"     \
    "\"weights\":[" T("w", "[3,4]") "],\"weight_name_mapping\":{\"p_w\":\"w\"},\"nodes\":["  \
    NODE("lin", "aten.linear.default", T("x", "[2,4]") "," T("p_w", "[3,4]"), T("y", "[2,3]"), "")  \
    "," NODE("add", "aten.add.Tensor", ADD_INS, T("s", "[2,3]"), "") TAIL "]}"
/* clang-format on */

static bool has_miss(const Graph *g, const char *pattern, const char *why)
{
    for (int i = 0; i < g->nmisses; i++)
        if (strcmp(g->misses[i].pattern, pattern) == 0 && strstr(g->misses[i].reason, why))
            return true;
    return false;
}

static void test_linear_add_rules(void **state)
{
    (void)state;
    /* either operand order; a relu after the add joins the instance */
    const char *fused[] = {
        LIN_ADD("[2,3]", T("y", "[2,3]") "," T("r", "[2,3]"), "", T("s", "[2,3]")),
        LIN_ADD("[2,3]", T("r", "[2,3]") "," T("y", "[2,3]"), "", T("s", "[2,3]")),
        LIN_ADD("[2,3]", T("r", "[2,3]") "," T("y", "[2,3]"),
                "," NODE("relu", "aten.relu.default", T("s", "[2,3]"), T("o", "[2,3]"), ""),
                T("o", "[2,3]")),
    };
    for (int i = 0; i < 3; i++) {
        Pipeline p = tp_compile_json(fused[i]);
        assert_int_equal(p.g->nfusions, 1);
        assert_string_equal(p.g->fusions[0].pattern, i == 2 ? "linear_add_relu" : "linear_add");
        assert_int_equal(p.g->fusions[0].nnodes, i == 2 ? 3 : 2);
        assert_int_equal(p.plan->nkernels, 1);
        assert_string_equal(p.plan->kernels[0].shader, "matmul_r");
        pipeline_free(&p);
    }
    /* near misses: a broadcast residual (the add stays a binary kernel), the linear's output
     * read twice, an add with alpha */
    Pipeline p =
        tp_compile_json(LIN_ADD("[1,3]", T("y", "[2,3]") "," T("r", "[1,3]"), "", T("s", "[2,3]")));
    assert_int_equal(p.g->nfusions, 0);
    assert_true(has_miss(p.g, "linear_add", "broadcast"));
    pipeline_free(&p);
    p = tp_compile_json(
        LIN_ADD("[2,3]", T("y", "[2,3]") "," T("r", "[2,3]"),
                "," NODE("neg", "aten.neg.default", T("y", "[2,3]"), T("n", "[2,3]"), ""),
                T("s", "[2,3]") "," T("n", "[2,3]")));
    assert_int_equal(p.g->nfusions, 0);
    assert_true(has_miss(p.g, "linear_add", "several consumers"));
    pipeline_free(&p);
    /* clang-format off */
    p = tp_compile_json(
        "{\"graph_inputs\":[" T("x", "[2,4]") "," T("r", "[2,3]") "],\"graph_outputs\":[" T("s", "[2,3]") "],"
        "\"weights\":[" T("w", "[3,4]") "],\"weight_name_mapping\":{\"p_w\":\"w\"},\"nodes\":["
        NODE("lin", "aten.linear.default", T("x", "[2,4]") "," T("p_w", "[3,4]"), T("y", "[2,3]"), "")
        "," NODE("add", "aten.add.Tensor", T("y", "[2,3]") "," T("r", "[2,3]"), T("s", "[2,3]"), "\"alpha\":2") "]}");
    /* clang-format on */
    assert_int_equal(p.g->nfusions, 0);
    assert_true(has_miss(p.g, "linear_add", "alpha"));
    pipeline_free(&p);
    /* clang-format off */
    /* matmul + add of a same-shape mask + softmax: masked_softmax keeps the add */
    p = tp_compile_json(
        "{\"graph_inputs\":[" T("q", "[1,2,4,8]") "," T("k", "[1,2,8,4]") "," T("m", "[1,2,4,4]") "],"
        "\"graph_outputs\":[" T("o", "[1,2,4,4]") "],\"nodes\":["
        NODE("mm", "aten.matmul.default", T("q", "[1,2,4,8]") "," T("k", "[1,2,8,4]"), T("s", "[1,2,4,4]"), "")
        "," NODE("add", "aten.add.Tensor", T("s", "[1,2,4,4]") "," T("m", "[1,2,4,4]"), T("a", "[1,2,4,4]"), "")
        "," NODE("sm", "aten.softmax.int", T("a", "[1,2,4,4]"), T("o", "[1,2,4,4]"), "\"dim\":-1") "]}");
    /* clang-format on */
    assert_int_equal(tp_count_pattern(p.g, "masked_softmax"), 1);
    assert_int_equal(tp_count_pattern(p.g, "linear_add"), 0);
    assert_true(has_miss(p.g, "linear_add", "softmax"));
    pipeline_free(&p);
    /* --no-fuse by registry name: linear_add, and linear_act for its variants (linear_gelu) */
    CompileOptions o;
    compile_defaults(&o);
    o.no_fuse[o.n_no_fuse++] = "linear_add";
    p = tu_compile_json(fused[0], &o);
    assert_int_equal(p.g->nfusions, 1);
    assert_false(p.g->fusions[0].enabled);
    assert_int_equal(p.plan->nkernels, 2);
    pipeline_free(&p);
    compile_defaults(&o);
    o.no_fuse[o.n_no_fuse++] = "linear_act";
    /* clang-format off */
    p = tu_compile_json(
        "{\"graph_inputs\":[" T("x", "[2,4]") "],\"graph_outputs\":[" T("g", "[2,3]") "],"
        "\"weights\":[" T("w", "[3,4]") "],\"weight_name_mapping\":{\"p_w\":\"w\"},\"nodes\":["
        NODE("l1", "aten.linear.default", T("x", "[2,4]") "," T("p_w", "[3,4]"), T("y", "[2,3]"), "")
        "," NODE("gelu", "aten.gelu.default", T("y", "[2,3]"), T("g", "[2,3]"), "") "]}", &o);
    /* clang-format on */
    assert_int_equal(p.g->nfusions, 1);
    assert_string_equal(p.g->fusions[0].pattern, "linear_gelu");
    assert_false(p.g->fusions[0].enabled);
    pipeline_free(&p);
}

/* conv -> [add r] -> ACT -> [mul r] as a graph with output y: x [1,3,4,4], r and y [1,8,4,4]. */
static void conv_act_graph(char *g, size_t cap, const char *op, const char *attrs, bool add,
                           bool mul)
{
    static const char x[] = T("x", "[1,3,4,4]"), w[] = T("w", "[8,3,1,1]"),
                      pw[] = T("p_w", "[8,3,1,1]"), c[] = T("c", "[1,8,4,4]"),
                      r[] = T("r", "[1,8,4,4]"), a[] = T("a", "[1,8,4,4]"),
                      s[] = T("s", "[1,8,4,4]"), y[] = T("y", "[1,8,4,4]");
    static const char node[] = NODE("%s", "%s", "%s,%s", "%s", "%s");
    static const char unary[] = NODE("%s", "%s", "%s", "%s", "%s");
    char conv[512], addn[512] = "", act[512], muln[512] = "";
    snprintf(conv, sizeof conv, node, "conv", "aten.conv2d.default", x, pw, c, "");
    if (add) snprintf(addn, sizeof addn, node, "add", "aten.add.Tensor", c, r, a, "");
    snprintf(act, sizeof act, unary, "act", op, add ? a : c, mul ? s : y, attrs);
    if (mul) snprintf(muln, sizeof muln, node, "mul", "aten.mul.Tensor", s, r, y, "");
    int n = snprintf(g, cap,
                     "{\"graph_inputs\":[%s,%s],\"graph_outputs\":[%s],\"weights\":[%s],"
                     "\"weight_name_mapping\":{\"p_w\":\"w\"},\"nodes\":[%s%s%s%s%s%s%s]}",
                     x, r, y, w, conv, add ? "," : "", addn, ",", act, mul ? "," : "", muln);
    assert_true(n > 0 && (size_t)n < cap);
}

/* The conv epilogue's activations fuse (compiler/act.c): relu6 (op and hardtanh(0, 6)), hardtanh
 * with half-exact bounds, hardswish, hardsigmoid, silu, sigmoid, gelu (both forms), tanh, after
 * an add too, also one a squeeze-excite gate's mul reads; hardtanh bounds half precision cannot
 * hold stay unfused with the reason recorded; mobilenet_block fuses every conv with its
 * activation. */
static void test_conv_activation_patterns(void **state)
{
    (void)state;
    static const struct {
        const char *op, *attrs, *variant, *add_variant;
    } cases[] = {
        {"aten.relu6.default", "", "conv_relu6", "conv_add_relu6"},
        {"aten.hardtanh.default", "\"min_val\":0.0,\"max_val\":6.0", "conv_relu6",
         "conv_add_relu6"},
        {"aten.hardtanh.default", "\"min_val\":-1.5,\"max_val\":2.25", "conv_hardtanh",
         "conv_add_hardtanh"},
        {"aten.hardswish.default", "", "conv_hardswish", "conv_add_hardswish"},
        {"aten.hardsigmoid.default", "", "conv_hardsigmoid", "conv_add_hardsigmoid"},
        {"aten.silu.default", "", "conv_silu", "conv_add_silu"},
        {"aten.sigmoid.default", "", "conv_sigmoid", "conv_add_sigmoid"},
        {"aten.gelu.default", "", "conv_gelu", "conv_add_gelu"},
        {"aten.gelu.default", "\"approximate\":\"tanh\"", "conv_gelu", "conv_add_gelu"},
        {"aten.tanh.default", "", "conv_tanh", "conv_add_tanh"},
        {"aten.hardtanh.default", "\"min_val\":-0.1,\"max_val\":0.3", NULL, "conv_add"},
    };
    char g[4096];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int add = 0; add < 2; add++) {
            conv_act_graph(g, sizeof g, cases[i].op, cases[i].attrs, add, false);
            Pipeline p = tp_compile_json(g);
            const char *want = add ? cases[i].add_variant : cases[i].variant;
            if (!want) {
                assert_int_equal(p.g->nfusions, 0);
                assert_true(p.g->nmisses >= 1);
                assert_non_null(strstr(p.g->misses[0].reason, "half precision"));
            } else {
                assert_int_equal(p.g->nfusions, 1);
                assert_string_equal(p.g->fusions[0].pattern, want);
                /* the activation runs in the conv's epilogue: no unary kernel (a depad follows,
                 * the 8 channels being padded) */
                for (int k = 0; k < p.plan->nkernels && cases[i].variant; k++)
                    assert_string_not_equal(p.plan->kernels[k].shader, "unary");
            }
            pipeline_free(&p);
        }
    /* an activation whose output a mul reads (a squeeze-excite gate) joins the conv too; the
     * mul reads the padded conv output as it is (no depad) */
    for (int add = 0; add < 2; add++) {
        conv_act_graph(g, sizeof g, "aten.sigmoid.default", "", add, true);
        Pipeline p = tp_compile_json(g);
        assert_int_equal(tp_count_pattern(p.g, add ? "conv_add_sigmoid" : "conv_sigmoid"), 1);
        assert_int_equal(tp_count_shader(p.plan, "binary"), 1);
        assert_int_equal(tp_count_shader(p.plan, "depad"), 0);
        pipeline_free(&p);
    }
    Pipeline p = tu_compile_file("tests/models/mobilenet_block/model.json", NULL);
    assert_int_equal(tp_count_pattern(p.g, "conv_hardswish"), 3);
    assert_int_equal(tp_count_pattern(p.g, "conv_relu6"), 1);
    assert_int_equal(tp_count_pattern(p.g, "conv_hardsigmoid"), 1);
    for (int k = 0; k < p.plan->nkernels; k++)
        assert_string_not_equal(p.plan->kernels[k].shader, "unary"); /* no activation left alone */
    pipeline_free(&p);
}

static void test_add_relu_rules(void **state)
{
    (void)state;
    /* clang-format off */
    /* fused: add's only consumer is relu */
    Pipeline p = tp_compile_json("{\"graph_inputs\":[" T("a", "[2,3]") "," T("b", "[2,3]") "],"
                              "\"graph_outputs\":[" T("r", "[2,3]") "],\"nodes\":["
                              NODE("add", "aten.add.Tensor", T("a", "[2,3]") "," T("b", "[2,3]"), T("s", "[2,3]"), "")
                              "," NODE("relu", "aten.relu.default", T("s", "[2,3]"), T("r", "[2,3]"), "") "]}");
    /* clang-format on */
    assert_int_equal(p.g->nfusions, 1);
    assert_string_equal(p.g->fusions[0].pattern, "add_relu");
    assert_string_equal(p.g->fusions[0].id, "F1");
    pipeline_free(&p);
    /* clang-format off */
    /* not fused: the add's output is also a graph output; the near miss says why */
    p = tp_compile_json("{\"graph_inputs\":[" T("a", "[2,3]") "," T("b", "[2,3]") "],"
                     "\"graph_outputs\":[" T("r", "[2,3]") "," T("s", "[2,3]") "],\"nodes\":["
                     NODE("add", "aten.add.Tensor", T("a", "[2,3]") "," T("b", "[2,3]"), T("s", "[2,3]"), "")
                     "," NODE("relu", "aten.relu.default", T("s", "[2,3]"), T("r", "[2,3]"), "") "]}");
    /* clang-format on */
    assert_int_equal(p.g->nfusions, 0);
    pipeline_free(&p);
    /* clang-format off */
    /* not fused: two consumers */
    p = tp_compile_json("{\"graph_inputs\":[" T("a", "[2,3]") "," T("b", "[2,3]") "],"
                     "\"graph_outputs\":[" T("r", "[2,3]") "," T("n", "[2,3]") "],\"nodes\":["
                     NODE("add", "aten.add.Tensor", T("a", "[2,3]") "," T("b", "[2,3]"), T("s", "[2,3]"), "")
                     "," NODE("relu", "aten.relu.default", T("s", "[2,3]"), T("r", "[2,3]"), "")
                     "," NODE("neg", "aten.neg.default", T("s", "[2,3]"), T("n", "[2,3]"), "") "]}");
    /* clang-format on */
    assert_int_equal(p.g->nfusions, 0);
    assert_true(p.g->nmisses >= 1);
    assert_non_null(strstr(p.g->misses[0].reason, "several consumers"));
    pipeline_free(&p);
}

static void test_silu_mul_either_order(void **state)
{
    (void)state;
    /* clang-format off */
    /* up is computed after silu (the order Hugging Face exports): still fused */
    Pipeline p = tp_compile_json("{\"graph_inputs\":[" T("x", "[1,4]") "],"
                              "\"graph_outputs\":[" T("m", "[1,4]") "],\"nodes\":["
                              NODE("silu", "aten.silu.default", T("x", "[1,4]"), T("s", "[1,4]"), "")
                              "," NODE("up", "aten.neg.default", T("x", "[1,4]"), T("u", "[1,4]"), "")
                              "," NODE("mul", "aten.mul.Tensor", T("s", "[1,4]") "," T("u", "[1,4]"), T("m", "[1,4]"), "") "]}");
    /* clang-format on */
    assert_int_equal(p.g->nfusions, 1);
    assert_string_equal(p.g->fusions[0].pattern, "silu_mul");
    assert_int_equal(p.g->fusions[0].anchor, graph_find_node(p.g, "mul"));
    pipeline_free(&p);
    /* clang-format off */
    /* a broadcast multiplier is a near miss */
    p = tp_compile_json("{\"graph_inputs\":[" T("x", "[2,4]") "," T("y", "[1,4]") "],"
                     "\"graph_outputs\":[" T("m", "[2,4]") "],\"nodes\":["
                     NODE("silu", "aten.silu.default", T("x", "[2,4]"), T("s", "[2,4]"), "")
                     "," NODE("mul", "aten.mul.Tensor", T("s", "[2,4]") "," T("y", "[1,4]"), T("m", "[2,4]"), "") "]}");
    /* clang-format on */
    assert_int_equal(tp_count_pattern(p.g, "silu_mul"), 0);
    assert_int_equal(tp_count_pattern(p.g, "elementwise"),
                     1); /* a generated kernel takes the pair */
    assert_int_equal(p.g->nmisses, 1);
    assert_non_null(strstr(p.g->misses[0].reason, "broadcast"));
    pipeline_free(&p);
}

TU_MAIN(test_resnet18_counts, test_densenet_bn_relu, test_qwen_counts, test_no_fuse_switches,
        test_rope_cache_switches, test_prefill_patterns, test_prefill_attention_switches,
        test_conv_rope_linear_rules, test_rmsnorm_rules, test_add_relu_rules, test_linear_add_rules,
        test_silu_mul_either_order, test_conv_activation_patterns)
