/* The passes after fusion on small graphs and fixtures: the partition (by attributes, host-only
 * work hoisted), split chunks as views, every snapshot verifying, layout (batch 2, depads) and
 * pack-inputs. Split from test_passes.c (fusion patterns and rules). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/dump.h"
#include "compiler/ir_json.h"
#include "compiler/pass.h"
#include "compiler/plan.h"
#include "tests/pass_check.h"

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
        Pipeline p = tp_compile(models[i], NULL);
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
    Pipeline p = tp_compile("tests/models/convnet/model.json", NULL);
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
    Pipeline on = tp_compile(path, &o);
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
    Pipeline off = tp_compile(path, &o);
    compile_defaults(&o);
    o.compute = DT_BF16;
    o.pack_min = INT64_MAX;
    Pipeline none = tp_compile(path, &o);
    assert_int_equal(tp_count_shader(off.plan, "pack"), 0);
    assert_int_equal(off.plan->tensors[plan_find_tensor(off.plan, "x")].storage, DT_BF16);
    assert_int_equal(plan_find_tensor(off.plan, "x@device"), -1);
    assert_true(plan_equal(off.plan, none.plan));
    assert_false(plan_equal(off.plan, p));
    compile_defaults(&o);
    o.compute = DT_F32;
    Pipeline f32 = tp_compile(path, &o);
    assert_int_equal(tp_count_shader(f32.plan, "pack"), 0);
    compile_defaults(&o);
    o.compute = DT_F16;
    o.pack_min = 1;
    Pipeline f16 = tp_compile(path, &o);
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
    Pipeline def = tp_compile(path, &o);
    assert_int_equal(tp_count_shader(def.plan, "pack"), 0);
    o.pack_min = 1;
    Pipeline all = tp_compile(path, &o);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_partition_hoists_host_work),
        cmocka_unit_test(test_split_views),
        cmocka_unit_test(test_partition_by_attrs),
        cmocka_unit_test(test_every_snapshot_verifies),
        cmocka_unit_test(test_convnet_layout_batch2),
        cmocka_unit_test(test_layout_inserts_depad),
        cmocka_unit_test(test_pack_inputs),
        cmocka_unit_test(test_pack_inputs_choice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
