/* The passes after fusion on small graphs and fixtures: the partition (by attributes, host-only
 * work hoisted), split chunks as views, every snapshot verifying, snapshots sharing what their
 * pass left unchanged, layout (batch 2, depads) and pack-inputs, the zoo's squeeze-excite convs on
 * the matrix-vector kernels. Split from test_passes.c (fusion patterns and rules). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/dump.h"
#include "compiler/lower/kernel_table.h"
#include "compiler/ir_json.h"
#include "compiler/pass.h"
#include "compiler/plan.h"
#include "tests/graph_eq.h"
#include "tests/pass_check.h"
#include "tests/testutil.h"

/* Host-only CPU work (an integer cumsum and comparison of a graph input, a view of it) that the
 * IR lists between NPU ops is hoisted ahead of them: one CPU then one NPU partition, the NPU
 * nodes in their order; a CPU node reading an NPU result stays where it is. */
static void test_partition_hoists_host_work(void **state)
{
    (void)state;
    /* clang-format off */
    Pipeline p = tp_compile_json_no_gen(
        "{\"graph_inputs\":[" T("x", "[2,6]") "," TIB("i", "[2,6]") "],\"graph_outputs\":[" T("o", "[2,6]") "],\"nodes\":["
        NODE("sin", "aten.sin.default", T("x", "[2,6]"), T("s", "[2,6]"), "")
        "," NODE("cs", "aten.cumsum.default", TIB("i", "[2,6]"), TIB("c", "[2,6]"), "\"dim\":1")
        "," NODE("gt", "aten.gt.Scalar", TIB("c", "[2,6]"), TBB("m", "[2,6]"), "\"other\":3")
        "," NODE("v", "aten.view.default", TBB("m", "[2,6]"), TBB("mv", "[12]"), "\"size\":[12]")
        "," NODE("v2", "aten.view.default", TBB("mv", "[12]"), TBB("m2", "[2,6]"), "\"size\":[2,6]")
        "," NODE("cos", "aten.cos.default", T("s", "[2,6]"), T("k", "[2,6]"), "")
        "," NODE("w", "aten.where.ScalarOther", TBB("m2", "[2,6]") "," T("k", "[2,6]"), T("o", "[2,6]"), "\"other\":-1") "]}");
    /* clang-format on */
    const Graph *g = p.g;
    static const char *want[] = {"cs", "gt", "v", "v2", "sin", "cos", "w"};
    int live = 0;
    for (int i = 0; i < g->nnodes; i++) {
        if (g->nodes[i].dead) continue;
        assert_string_equal(g->nodes[i].name, want[live]);
        assert_int_equal(g->nodes[i].place, live < 4 ? PLACE_CPU : PLACE_NPU);
        assert_int_equal(graph_find_node(g, want[live]), i);
        live++;
    }
    assert_int_equal(live, 7);
    assert_int_equal(p.plan->nparts, 2);
    assert_int_equal(p.plan->parts[0].target, KT_CPU);
    pipeline_free(&p);
    /* clang-format off */
    /* the CPU op reads the NPU's sin: nothing moves, three partitions */
    p = tp_compile_json(
        "{\"graph_inputs\":[" T("x", "[2,6]") "],\"graph_outputs\":[" T("o", "[2,6]") "],\"nodes\":["
        NODE("sin", "aten.sin.default", T("x", "[2,6]"), T("s", "[2,6]"), "")
        "," NODE("cs", "aten.cumsum.default", T("s", "[2,6]"), T("c", "[2,6]"), "\"dim\":1")
        "," NODE("cos", "aten.cos.default", T("c", "[2,6]"), T("o", "[2,6]"), "") "]}");
    /* clang-format on */
    assert_string_equal(p.g->nodes[0].name, "sin");
    assert_int_equal(p.plan->nparts, 3);
    pipeline_free(&p);
}

/* A static-cache decode step (transformers' StaticCache export, two layers): each layer selects
 * the position from cache_position, adds it to an arange on the CPU (integer arithmetic) and
 * the NPU reads the sum. The select is a view the NPU would run as a kernel; a CPU node reads it,
 * so it stays on the host with the adds, and the step is one CPU prologue and one NPU partition
 * (on the NPU the selects gave cpu, npu, cpu, npu, cpu, npu: a wait and 4-byte transfers per
 * layer). */
static void test_partition_static_decode(void **state)
{
    (void)state;
#define LAYER(k, in, out)                                                                          \
    NODE("sel" k, "aten.select.int", TIB("cp", "[1]"), TIB("s" k, "[]"), "\"dim\":0,\"index\":0")  \
    "," NODE("ar" k, "aten.arange.default", "", TIB("a" k, "[4]"), "\"end\":4") "," NODE(          \
        "ad" k, "aten.add.Tensor", TIB("a" k, "[4]") "," TIB("s" k, "[]"), TIB("p" k, "[4]"),      \
        "") "," NODE("cv" k, "aten.to.dtype", TIB("p" k, "[4]"), T("f" k, "[4]"),                  \
                     "\"dtype\":\"torch.float32\"") "," NODE("mu" k, "aten.mul.Tensor",            \
                                                             T(in, "[1,4]") "," T("f" k, "[4]"),   \
                                                             T(out, "[1,4]"), "")
    /* clang-format off */
    const char *json =
        "{\"graph_inputs\":[" T("x", "[1,4]") "," TIB("cp", "[1]") "],"
        "\"graph_outputs\":[" T("o", "[1,4]") "],\"nodes\":["
        NODE("sin", "aten.sin.default", T("x", "[1,4]"), T("y", "[1,4]"), "") ","
        LAYER("0", "y", "m") "," LAYER("1", "m", "o") "]}";
    /* clang-format on */
#undef LAYER
    char parts[64];
    for (int gen = 0; gen < 2; gen++) { /* the partition pass's plan, then fuse-elementwise's */
        Pipeline p = gen ? tp_compile_json(json) : tp_compile_json_no_gen(json);
        const Graph *g = p.g;
        for (int k = 0; k < 2; k++) {
            const Node *sel = &g->nodes[graph_find_node(g, k ? "sel1" : "sel0")];
            assert_int_equal(sel->place, PLACE_CPU);
            assert_non_null(strstr(sel->why_cpu, "the CPU reads"));
            assert_int_equal(tp_place(g, k ? "ad1" : "ad0"), PLACE_CPU);
            assert_int_equal(tp_place(g, k ? "mu1" : "mu0"), PLACE_NPU);
        }
        assert_string_equal(tp_parts(p.plan, parts, sizeof parts), "cpu npu");
        pipeline_free(&p);
    }
    /* a select of an input that only the NPU reads, and a reshape-like view of an integer input
     * (an alias on the NPU, read by a CPU cumsum), stay on the NPU: the first costs no transfer
     * there, the second no kernel */
    /* clang-format off */
    Pipeline p = tp_compile_json_no_gen(
        "{\"graph_inputs\":[" T("x", "[2,4]") "," TIB("i", "[2,2]") "],"
        "\"graph_outputs\":[" T("o", "[4]") "," TIB("c", "[4]") "],\"nodes\":["
        NODE("sel", "aten.select.int", T("x", "[2,4]"), T("r", "[4]"), "\"dim\":0,\"index\":1") ","
        NODE("sin", "aten.sin.default", T("r", "[4]"), T("o", "[4]"), "") ","
        NODE("v", "aten.view.default", TIB("i", "[2,2]"), TIB("iv", "[4]"), "\"size\":[4]") ","
        NODE("cs", "aten.cumsum.default", TIB("iv", "[4]"), TIB("c", "[4]"), "\"dim\":0") "]}");
    /* clang-format on */
    assert_int_equal(tp_place(p.g, "sel"), PLACE_NPU);
    assert_int_equal(tp_place(p.g, "v"), PLACE_NPU);
    assert_int_equal(tp_place(p.g, "cs"), PLACE_CPU);
    assert_int_equal(tp_count_shader(p.plan, "view"), 0);
    pipeline_free(&p);
}

/* Swin's relative-position bias: a table indexed on the CPU by a weight (host-only, hoisted),
 * then permuted and unsqueezed (views of host-made data, on the CPU with it) for an NPU matmul.
 * fuse-elementwise takes the views onto the NPU as one generated kernel that runs at the
 * unsqueeze, among the hoisted nodes; the second block's index is hoisted again ahead of it:
 * one CPU and one NPU partition, not cpu, npu, cpu, npu. */
static void test_partition_rehoist_after_gen(void **state)
{
    (void)state;
#define BLOCK(k, in, out)                                                                          \
    NODE("ix" k, "aten.index.Tensor", T("tab", "[5,4]") "," TIB("idx", "[4]"), T("b" k, "[4,4]"),  \
         "")                                                                                       \
    "," NODE("pm" k, "aten.permute.default", T("b" k, "[4,4]"), T("bp" k, "[4,4]"),                \
             "\"dims\":[1,0]") "," NODE("us" k, "aten.unsqueeze.default", T("bp" k, "[4,4]"),      \
                                        T("bu" k, "[1,4,4]"),                                      \
                                        "\"dim\":0") "," NODE("mm" k, "aten.matmul.default",       \
                                                              T(in, "[1,4,4]") "," T("bu" k,       \
                                                                                     "[1,4,4]"),   \
                                                              T(out, "[1,4,4]"), "")
    /* clang-format off */
    Pipeline p = tp_compile_json(
        "{\"graph_inputs\":[" T("x", "[1,4,4]") "," T("tab", "[5,4]") "," TIB("idx", "[4]") "],"
        "\"graph_outputs\":[" T("o", "[1,4,4]") "],\"nodes\":["
        BLOCK("0", "x", "h") ","
        NODE("sin", "aten.sin.default", T("h", "[1,4,4]"), T("s", "[1,4,4]"), "") ","
        BLOCK("1", "s", "o") "]}");
    /* clang-format on */
#undef BLOCK
    const Graph *g = p.g;
    assert_int_equal(tp_place(g, "ix0"), PLACE_CPU);
    assert_int_equal(tp_place(g, "ix1"), PLACE_CPU);
    assert_int_equal(tp_place(g, "us0"), PLACE_NPU); /* taken by a generated group */
    assert_true(g->nodes[graph_find_node(g, "us0")].fusion >= 0);
    char parts[64];
    assert_string_equal(tp_parts(p.plan, parts, sizeof parts), "cpu npu");
    assert_int_equal(p.plan->parts[0].nkernels, 2);
    pipeline_free(&p);
}

/* split: chunks of one token are views starting inside the input where the start keeps the
 * arena alignment (f16: 128 elements = 256 bytes), else slice kernels; chunks of several rows
 * are always slice kernels. */
static void test_split_views(void **state)
{
    (void)state;
    static const struct {
        const char *x, *chunk;
        int size, dim;
        int64_t elems[3]; /* view_off of each chunk, -1: a slice kernel */
    } cases[] = {
        {"[1,1,384]", "[1,1,128]", 128, 2, {0, 128, 256}},
        {"[1,1,300]", "[1,1,100]", 100, 2, {0, -1, -1}},
        {"[3,2,128]", "[1,2,128]", 1, 0, {0, 256, 512}},
        {"[2,3,128]", "[2,1,128]", 1, 1, {-1, -1, -1}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char g[4096];
        /* clang-format off */
        snprintf(g, sizeof g,
                 "{\"graph_inputs\":[" T("x", "%s") "],\"graph_outputs\":[" T("a", "%s") "," T("b", "%s") "," T("c", "%s") "],\"nodes\":["
                 NODE("split", "aten.split.Tensor", T("x", "%s"), T("split_0", "%s") "," T("split_1", "%s") "," T("split_2", "%s"), "\"split_size\":%d,\"dim\":%d")
                 "," NODE("s", "aten.sin.default", T("split_0", "%s"), T("a", "%s"), "")
                 "," NODE("t", "aten.cos.default", T("split_1", "%s"), T("b", "%s"), "")
                 "," NODE("u", "aten.neg.default", T("split_2", "%s"), T("c", "%s"), "") "]}",
                 cases[i].x, cases[i].chunk, cases[i].chunk, cases[i].chunk, cases[i].x, cases[i].chunk,
                 cases[i].chunk, cases[i].chunk, cases[i].size, cases[i].dim, cases[i].chunk,
                 cases[i].chunk, cases[i].chunk, cases[i].chunk, cases[i].chunk, cases[i].chunk);
        /* clang-format on */
        Pipeline p = tp_compile_json(g);
        int slices = 0, want = 0;
        for (int k = 0; k < 3; k++) {
            char name[16];
            snprintf(name, sizeof name, "split_%d", k % 10);
            const GTensor *t = &p.g->tensors[graph_find_tensor(p.g, name)];
            if (cases[i].elems[k] < 0) {
                assert_int_equal(t->alias_of, -1);
                want++;
            } else {
                assert_int_equal(t->alias_of, graph_find_tensor(p.g, "x"));
                assert_int_equal(t->view_off, cases[i].elems[k]);
                assert_int_equal(t->offset,
                                 p.g->tensors[t->alias_of].offset); /* view_off says where */
            }
        }
        for (int k = 0; k < p.plan->nkernels; k++)
            slices += strcmp(p.plan->kernels[k].shader, "slice") == 0;
        assert_int_equal(slices, want);
        pipeline_free(&p);
    }
}

static void test_partition_by_attrs(void **state)
{
    (void)state;
    /* softmax over a non-last dim goes to the CPU; relu and a 5-way cat (two NPU kernels, one
     * per group of inputs) stay on the NPU */
    /* clang-format off */
    Pipeline p = tp_compile_json_no_gen(
        "{\"graph_inputs\":[" T("x", "[2,3]") "],\"graph_outputs\":[" T("c", "[10,3]") "],\"nodes\":["
        NODE("sm", "aten.softmax.int", T("x", "[2,3]"), T("s", "[2,3]"), "\"dim\":0") ","
        NODE("r", "aten.relu.default", T("s", "[2,3]"), T("y", "[2,3]"), "") ","
        NODE("cat", "aten.cat.default",
             T("y", "[2,3]") "," T("y", "[2,3]") "," T("y", "[2,3]") "," T("y", "[2,3]") "," T("y", "[2,3]"),
             T("c", "[10,3]"), "\"dim\":0") "]}");
    /* clang-format on */
    const Graph *g = p.g;
    assert_int_equal(g->nodes[graph_find_node(g, "sm")].place, PLACE_CPU);
    assert_non_null(strstr(g->nodes[graph_find_node(g, "sm")].why_cpu, "last dim"));
    assert_int_equal(g->nodes[graph_find_node(g, "r")].place, PLACE_NPU);
    assert_int_equal(g->nodes[graph_find_node(g, "cat")].place, PLACE_NPU);
    assert_int_equal(g->nparts, 2);
    assert_int_equal(p.plan->nparts, 2);
    int cats = 0;
    for (int k = 0; k < p.plan->nkernels; k++)
        cats += strncmp(p.plan->kernels[k].shader, "cat", 3) == 0;
    assert_int_equal(cats, 2);
    pipeline_free(&p);
}

static void test_every_snapshot_verifies(void **state)
{
    (void)state;
    const char *models[] = {"tests/models/mlp/model.json", "tests/models/convnet/model.json",
                            "tests/models/resnet18/model.json",
                            "tests/models/qwen2_tiny/prefill.json",
                            "tests/models/qwen2_tiny/decode.json"};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        Pipeline p = tu_compile_file(models[i], NULL);
        assert_int_equal(p.nsnaps, pass_count);
        for (int s = 0; s < p.nsnaps; s++) {
            DiagList d = {0};
            assert_int_equal(graph_verify(p.snaps[s].g, &d), ST_OK);
            diag_free(&d);
        }
        pipeline_free(&p);
    }
}

static void test_convnet_layout_batch2(void **state)
{
    (void)state;
    /* the convnet fixture is batch 2 with channel counts below the tile: padded tensors are
     * [N, Cpad, H, W] and the flatten reads a depadded copy */
    Pipeline p = tu_compile_file("tests/models/convnet/model.json", NULL);
    int padded = 0;
    for (int t = 0; t < p.g->ntensors; t++)
        padded += p.g->tensors[t].padded;
    assert_true(padded > 0);
    for (int t = 0; t < p.g->ntensors; t++) {
        const GTensor *x = &p.g->tensors[t];
        if (!x->padded) continue;
        assert_int_equal(x->pshape[0], x->shape[0]);
        assert_int_equal(x->pshape[1] % 32, 0);
    }
    pipeline_free(&p);
}

static void test_layout_inserts_depad(void **state)
{
    (void)state;
    /* clang-format off */
    /* conv 3->16 channels (padded to 32) read by a flatten: a depad conversion is inserted */
    Pipeline p = tp_compile_json(
        "{\"graph_inputs\":[" T("x", "[2,3,4,4]") "],\"graph_outputs\":[" T("f", "[2,256]") "],"
        "\"weights\":[" T("w", "[16,3,1,1]") "],\"weight_name_mapping\":{\"p_w\":\"w\"},\"nodes\":["
        NODE("conv", "aten.conv2d.default", T("x", "[2,3,4,4]") "," T("p_w", "[16,3,1,1]"), T("c", "[2,16,4,4]"), "")
        "," NODE("flat", "aten.flatten.using_ints", T("c", "[2,16,4,4]"), T("f", "[2,256]"), "\"start_dim\":1")
        "]}");
    /* clang-format on */
    const Graph *g = p.g;
    int c = graph_find_tensor(g, "c");
    assert_true(g->tensors[c].padded);
    assert_int_equal(g->tensors[c].pshape[1], 32);
    const Node *flat = &g->nodes[graph_find_node(g, "flat")];
    const GTensor *in = node_input(g, flat, 0);
    assert_false(in->padded);
    assert_int_equal(g->nodes[in->producer].op, OP_DEPAD);
    pipeline_free(&p);
}

/* pack-inputs: resnet's input in bf16 is uploaded as f32 and cast by one pack kernel that the
 * first conv reads; switched off, or with nothing to pack (a threshold above every input), the
 * plan is the one of before (plan_equal); an fp32 plan packs nothing, and neither does an fp16
 * one (the host converts a dense f16 input as it copies: x is stored f16, read by the conv) */
static void test_pack_inputs(void **state)
{
    (void)state;
    const char *path = "tests/models/resnet18/model.json";
    CompileOptions o;
    compile_defaults(&o);
    o.compute = DT_BF16;
    Pipeline on = tu_compile_file(path, &o);
    const Plan *p = on.plan;
    int x = plan_find_tensor(p, "x"), xd = plan_find_tensor(p, "x@device");
    assert_true(x >= 0 && xd >= 0);
    assert_int_equal(p->tensors[x].storage, DT_F32);
    assert_int_equal(p->tensors[xd].storage, DT_BF16);
    assert_int_equal(tp_count_shader(p, "pack"), 1);
    const PlanKernel *k0 = &p->kernels[0];
    assert_string_equal(k0->shader, "pack");
    assert_int_equal(k0->args[0], x);
    assert_int_equal(k0->args[1], xd);
    for (int k = 1; k < p->nkernels; k++) /* nothing else reads the host form */
        for (int a = 0; a < p->kernels[k].nin; a++)
            assert_int_not_equal(p->kernels[k].args[a], x);
    assert_true(p->kernels[1].args[0] == xd);
    assert_true(p->kernels[1].level > k0->level);

    compile_defaults(&o);
    o.compute = DT_BF16;
    o.disable[o.n_disable++] = "pack-inputs";
    Pipeline off = tu_compile_file(path, &o);
    compile_defaults(&o);
    o.compute = DT_BF16;
    o.pack_min = INT64_MAX;
    Pipeline none = tu_compile_file(path, &o);
    assert_int_equal(tp_count_shader(off.plan, "pack"), 0);
    assert_int_equal(off.plan->tensors[plan_find_tensor(off.plan, "x")].storage, DT_BF16);
    assert_int_equal(plan_find_tensor(off.plan, "x@device"), -1);
    assert_true(plan_equal(off.plan, none.plan));
    assert_false(plan_equal(off.plan, p));
    compile_defaults(&o);
    o.compute = DT_F32;
    Pipeline f32 = tu_compile_file(path, &o);
    assert_int_equal(tp_count_shader(f32.plan, "pack"), 0);
    compile_defaults(&o);
    o.compute = DT_F16;
    o.pack_min = 1;
    Pipeline f16 = tu_compile_file(path, &o);
    const Plan *h = f16.plan;
    assert_int_equal(tp_count_shader(h, "pack"), 0);
    assert_int_equal(h->tensors[plan_find_tensor(h, "x")].storage, DT_F16);
    assert_int_equal(plan_find_tensor(h, "x@device"), -1);
    assert_int_equal(h->kernels[0].args[0], plan_find_tensor(h, "x"));
    pipeline_free(&f16);
    pipeline_free(&on);
    pipeline_free(&off);
    pipeline_free(&none);
    pipeline_free(&f32);
}

/* bf16: below the threshold nothing is packed (decode's mask, ids and caches at their real sizes);
 * with every size taken, the float mask is packed but not the integer ids, and not the KV caches,
 * which index_copy updates in place (the output stays an alias of the input: state the runtime
 * carries) */
static void test_pack_inputs_choice(void **state)
{
    (void)state;
    const char *path = "tests/models/qwen2_tiny/decode.json";
    CompileOptions o;
    compile_defaults(&o);
    o.compute = DT_BF16;
    Pipeline def = tu_compile_file(path, &o);
    assert_int_equal(tp_count_shader(def.plan, "pack"), 0);
    o.pack_min = 1;
    Pipeline all = tu_compile_file(path, &o);
    const Plan *p = all.plan;
    assert_int_equal(tp_count_shader(p, "pack"), 1);
    assert_true(plan_find_tensor(p, "attention_mask@device") >= 0);
    assert_int_equal(p->tensors[plan_find_tensor(p, "attention_mask")].storage, DT_F32);
    assert_int_equal(plan_find_tensor(p, "kv_0@device"), -1);
    assert_int_equal(plan_find_tensor(p, "input_ids@device"), -1);
    int kv = plan_find_tensor(p, "kv_0"), out = plan_find_tensor(p, "index_copy");
    assert_int_equal(p->tensors[kv].storage, o.compute);
    assert_int_equal(plan_base(p, out), kv);
    pipeline_free(&def);
    pipeline_free(&all);
}

/* A snapshot shares with the one before it the arrays its pass left unchanged (fold-batchnorm on
 * a model without batch norm changes nothing), and a change to a graph that shares makes its own
 * copy first, leaving the lender as it was; a clone shares its source's name maps until it
 * changes names. */
static void test_snapshots_share(void **state)
{
    (void)state;
    Pipeline p = tu_compile_file("tests/models/mlp/model.json", NULL);
    int fb = pass_find("fold-batchnorm");
    assert_true(fb > 0 && fb < p.nsnaps);
    Graph *prev = p.snaps[fb - 1].g, *g = p.snaps[fb].g;
    assert_true(g->shared & GRAPH_SHARES_TENSORS);
    assert_true(g->shared & GRAPH_SHARES_NODES);
    assert_ptr_equal(g->tensors, prev->tensors);
    assert_ptr_equal(g->nodes, prev->nodes);
    for (int i = 1; i < p.nsnaps; i++) /* whatever is shared is the snapshot's own content */
        assert_int_equal(graph_verify(p.snaps[i].g, NULL), ST_OK);
    char why[256];
    Graph *ref = graph_clone(prev); /* the lender as it is now */
    assert_non_null(ref);
    int64_t shape[1] = {4};
    int t = graph_add_tensor(g, "added_here", DT_F32, 1, shape, TK_ACT);
    assert_true(t >= 0);
    assert_false(g->shared & (GRAPH_SHARES_TENSORS | GRAPH_SHARES_BY_NAME));
    assert_ptr_not_equal(g->tensors, prev->tensors);
    assert_true(graph_find_tensor(g, "added_here") == t);
    assert_true(graph_find_tensor(prev, "added_here") < 0);
    int in[1] = {0}, out[1] = {t};
    assert_true(graph_add_node(g, "added_node", OP_RELU, "aten.relu.default", in, 1, out, 1) >= 0);
    assert_false(g->shared & (GRAPH_SHARES_NODES | GRAPH_SHARES_NODE_BY_NAME));
    assert_int_equal(graph_link(g), ST_OK);
    if (!geq_same(ref, prev, why, sizeof why)) fail_msg("the lender changed: %s", why);
    /* a clone: the maps are its source's until it renames */
    Graph *c = graph_clone(ref);
    assert_non_null(c);
    assert_int_equal(c->shared, GRAPH_SHARES_BY_NAME | GRAPH_SHARES_NODE_BY_NAME);
    assert_ptr_equal(c->by_name.keys, ref->by_name.keys);
    if (!geq_same(c, ref, why, sizeof why)) fail_msg("the clone differs: %s", why);
    const char *first = c->nodes[0].name;
    assert_true(graph_name_tensor(c, 0, "renamed"));
    assert_true(graph_index_nodes(c, 0));
    assert_int_equal(c->shared, 0);
    assert_int_equal(graph_find_tensor(c, "renamed"), 0);
    assert_true(graph_find_tensor(ref, "renamed") < 0);
    assert_int_equal(graph_find_node(c, first), 0);
    graph_free(c);
    graph_free(ref);
    pipeline_free(&p);
}

/* canonicalize: a pad by zero on every side and a roll by whole turns (per dim, and of the
 * flattened tensor) are identities, removed; a pad of (1, -1), which keeps the shape, and a roll
 * by less than a turn stay kernels; an integer pad runs on the NPU. */
static void test_window_identities(void **state)
{
    (void)state;
    /* clang-format off */
    Pipeline p = tp_compile_json(
        "{\"graph_inputs\":[" T("x", "[2,4,6]") "," TIB("i", "[3,5]") "],"
        "\"graph_outputs\":[" T("o", "[2,4,6]") "," T("q", "[2,4,6]") "," TIB("j", "[3,8]") "],\"nodes\":["
        NODE("relu", "aten.relu.default", T("x", "[2,4,6]"), T("r", "[2,4,6]"), "") ","
        NODE("pad0", "aten.constant_pad_nd.default", T("r", "[2,4,6]"), T("a", "[2,4,6]"), "\"pad\":[0,0,0,0]") ","
        NODE("roll0", "aten.roll.default", T("a", "[2,4,6]"), T("b", "[2,4,6]"), "\"shifts\":[8,-12],\"dims\":[1,2]") ","
        NODE("rollf", "aten.roll.default", T("b", "[2,4,6]"), T("c", "[2,4,6]"), "\"shifts\":[96]") ","
        NODE("sin", "aten.sin.default", T("c", "[2,4,6]"), T("o", "[2,4,6]"), "") ","
        NODE("pad1", "aten.constant_pad_nd.default", T("r", "[2,4,6]"), T("d", "[2,4,6]"), "\"pad\":[1,-1]") ","
        NODE("roll1", "aten.roll.default", T("d", "[2,4,6]"), T("q", "[2,4,6]"), "\"shifts\":[5],\"dims\":[1]") ","
        NODE("padi", "aten.constant_pad_nd.default", TIB("i", "[3,5]"), TIB("j", "[3,8]"), "\"pad\":[1,2],\"value\":4") "]}");
    /* clang-format on */
    assert_int_equal(tp_count_shader(p.plan, "pad"), 2);
    assert_int_equal(tp_count_shader(p.plan, "pad_circular"), 1);
    assert_int_equal(tp_place(p.g, "padi"), PLACE_NPU);
    for (int i = 0; i < p.g->nnodes; i++)
        if (!p.g->nodes[i].dead)
            assert_true(strcmp(p.g->nodes[i].name, "pad0") && strcmp(p.g->nodes[i].name, "roll0") &&
                        strcmp(p.g->nodes[i].name, "rollf"));
    pipeline_free(&p);
}

/* Squeeze-excite's convs (after the global average pool: 1x1 maps) run as matrix-vector products
 * in the zoo's EfficientNet-B0 and MobileNetV3-Large in fp16, on the portable tier and on
 * nv-coopmat (whose tensor-core conv would take those with K >= 1024): every conv over a 1x1
 * input with a 1x1 kernel and no residual is on conv2d_gemv* or conv2d_mv*, the squeeze (reading a
 * pool's output) and the excite (reading the squeeze's) of each block among them; conv.gemv=0 puts
 * none there. */
static void test_se_convs_matvec(void **state)
{
    (void)state;
    static const struct {
        const char *path;
        int blocks;
    } models[] = {{"tests/models/zoo/efficientnet_b0/model.json", 7},
                  {"tests/models/zoo/mobilenet_v3_large/model.json", 8}};
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++)
        for (int tier = TIER_PORTABLE; tier <= TIER_NV_COOPMAT; tier++)
            for (int on = 1; on >= 0; on--) {
                CompileOptions o;
                compile_defaults(&o);
                o.compute = DT_F16;
                o.tier = tier;
                if (!on) assert_int_equal(tuning_set(&o.tuning, "conv.gemv=0", NULL), ST_OK);
                Pipeline p = tu_compile_file(models[m].path, &o);
                const Plan *pl = p.plan;
                int squeeze = 0, excite = 0, mv = 0, pointwise = 0;
                bool *sq_out = test_calloc((size_t)pl->ntensors, sizeof *sq_out);
                bool *pooled = test_calloc((size_t)pl->ntensors, sizeof *pooled);
                for (int k = 0; k < pl->nkernels; k++) {
                    const PlanKernel *pk = &pl->kernels[k];
                    const char *s = pk->shader;
                    int out = pk->args[pk->nargs - 1];
                    if (strcmp(s, "pool2d_global") == 0) pooled[out] = true;
                    bool is_mv = !strncmp(s, "conv2d_gemv", 11) || !strncmp(s, "conv2d_mv", 9);
                    mv += is_mv;
                    if (pk->target != KT_NPU || kernel_kind_of(s) != KK_conv2d) continue;
                    const PlanTensor *x = &pl->tensors[pk->args[0]];
                    const PlanTensor *w = &pl->tensors[pk->args[1]];
                    bool res = pk->fusion >= 0 &&
                               strncmp(pl->fusions[pk->fusion].pattern, "conv_add", 8) == 0;
                    if (res || x->rank != 4 || x->shape[2] != 1 || x->shape[3] != 1 ||
                        w->shape[2] != 1 || w->shape[3] != 1)
                        continue; /* a residual keeps the implicit GEMM */
                    pointwise++;
                    assert_int_equal(is_mv, on);
                    if (is_mv && pooled[pk->args[0]]) squeeze++, sq_out[out] = true;
                    if (is_mv && sq_out[pk->args[0]]) excite++;
                }
                test_free(sq_out);
                test_free(pooled);
                assert_true(pointwise >= 2 * models[m].blocks);
                assert_int_equal(mv, on ? pointwise : 0);
                assert_int_equal(squeeze, on ? models[m].blocks : 0);
                assert_int_equal(excite, on ? models[m].blocks : 0);
                pipeline_free(&p);
            }
}

TU_MAIN(test_partition_hoists_host_work, test_partition_static_decode,
        test_partition_rehoist_after_gen, test_split_views, test_partition_by_attrs,
        test_every_snapshot_verifies, test_snapshots_share, test_convnet_layout_batch2,
        test_layout_inserts_depad, test_pack_inputs, test_pack_inputs_choice,
        test_window_identities, test_se_convs_matvec)
