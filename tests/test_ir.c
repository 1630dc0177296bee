/* IR reader: the fixtures import, malformed input is rejected with the node and tensor named,
 * multi-output nodes (split with getitems) import with their outputs told apart. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/ir_json.h"
#include "compiler/pass.h"
#include "compiler/shape/shape.h"
#include "tests/testutil.h"

static void test_fixture_counts(void **state)
{
    (void)state;
    static const struct {
        const char *path;
        int nodes, inputs, outputs;
    } cases[] = {
        {"tests/models/mlp/model.json", 5, 1, 1},
        {"tests/models/convnet/model.json", -1, 1, 1},
        {"tests/models/resnet18/model.json", -1, 1, 1},
        {"tests/models/qwen2_tiny/decode.json", -1, 8, 5},
        {"tests/models/qwen2_5_1_5b/decode.json", 1725, -1, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Graph *g = NULL;
        DiagList d = {0};
        Status st = ir_read_file(cases[i].path, &g, &d);
        if (st != ST_OK) diag_print(&d, stderr);
        assert_int_equal(st, ST_OK);
        if (cases[i].nodes >= 0) assert_int_equal(g->nnodes, cases[i].nodes);
        if (cases[i].inputs >= 0) assert_int_equal(g->ninputs, cases[i].inputs);
        if (cases[i].outputs >= 0) assert_int_equal(g->noutputs, cases[i].outputs);
        assert_int_equal(graph_verify(g, &d), ST_OK);
        graph_free(g);
        diag_free(&d);
    }
}

static void test_weights_mapped(void **state)
{
    (void)state;
    Graph *g = NULL;
    DiagList d = {0};
    assert_int_equal(ir_read_file("tests/models/mlp/model.json", &g, &d), ST_OK);
    int t = graph_find_tensor(g, "p_fc1_weight");
    assert_true(t >= 0);
    assert_int_equal(g->tensors[t].kind, TK_WEIGHT);
    assert_string_equal(g->tensors[t].weight_key, "fc1.weight");
    assert_int_equal(g->nweights, 6);
    graph_free(g);
    diag_free(&d);
}

#define HDR "{\"graph_inputs\":[{\"name\":\"x\",\"shape\":[2,3],\"dtype\":\"float32\"}],"
#define XIN "{\"name\":\"x\",\"shape\":[2,3],\"dtype\":\"float32\"}"
/* split(x [2,3], 1, dim 0): two outputs as the exporter writes them (split_0, split_1) */
#define SPLIT2                                                                                     \
    "{\"name\":\"split\",\"op_type\":\"aten.split.Tensor\",\"inputs\":[" XIN "],"                  \
    "\"outputs\":[{\"name\":\"split_0\",\"shape\":[1,3]},{\"name\":\"split_1\",\"shape\":[1,3]}]," \
    "\"attrs\":{\"split_size\":1}}"
static void test_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *json, *want1, *want2;
    } cases[] = {
        {"{", "not valid JSON", NULL},
        {"[1,2]", "not a JSON object", NULL},
        {"{\"nodes\":[]}", "graph_inputs", NULL},
        {HDR
         "\"graph_outputs\":[],\"nodes\":[{\"name\":\"a\",\"op_type\":\"aten.frobnicate.default\","
         "\"inputs\":[" XIN "],\"outputs\":[{\"name\":\"y\",\"shape\":[2,3]}]}]}",
         "unknown op", "'a'"},
        {HDR "\"graph_outputs\":[],\"nodes\":[{\"name\":\"a\",\"op_type\":\"aten.relu.default\","
             "\"inputs\":[" XIN "," XIN "],\"outputs\":[{\"name\":\"y\",\"shape\":[2,3]}]}]}",
         "takes 1..1", "'a'"},
        {HDR "\"graph_outputs\":[],\"nodes\":[{\"name\":\"a\",\"op_type\":\"aten.relu.default\","
             "\"inputs\":[{\"name\":\"zz\",\"shape\":[2,3]}],\"outputs\":[{\"name\":\"y\","
             "\"shape\":[2,3]}]}]}",
         "no earlier node produces", "'zz'"},
        {HDR "\"graph_outputs\":[],\"nodes\":[{\"name\":\"a\",\"op_type\":\"aten.relu.default\","
             "\"inputs\":[{\"name\":\"x\",\"shape\":[3,2]}],\"outputs\":[{\"name\":\"y\",\"shape\":"
             "[2,3]}]}]}",
         "consumed with shape [3,2]", "'x'"},
        {HDR "\"graph_outputs\":[{\"name\":\"nope\"}],\"nodes\":[]}", "not produced", "'nope'"},
        {HDR "\"graph_outputs\":[],\"nodes\":[{\"name\":\"a\",\"op_type\":\"aten.relu.default\","
             "\"inputs\":[" XIN "],\"outputs\":[{\"name\":\"x\",\"shape\":[2,3]}]}]}",
         "produced twice", "'a'"},
        {HDR "\"graph_outputs\":[],\"nodes\":[{\"name\":\"a\",\"op_type\":\"aten.relu.default\","
             "\"inputs\":[{\"name\":\"x\",\"shape\":[2,\"s0\"]}],\"outputs\":[{\"name\":\"y\","
             "\"shape\":[2,3]}]}]}",
         "dynamic shapes", "'x'"},
        {HDR "\"graph_outputs\":[],\"nodes\":[{\"name\":\"a\",\"op_type\":\"aten.relu.default\","
             "\"inputs\":[{\"name\":\"x\",\"shape\":[2,3],\"dtype\":\"complex32\"}],\"outputs\":[{"
             "\"name\":\"y\",\"shape\":[2,3]}]}]}",
         "unknown dtype", NULL},
        {"{\"graph_inputs\":[{\"name\":\"x\",\"shape\":[-2]}],\"graph_outputs\":[],\"nodes\":[]}",
         "shape entry 0 is -2", NULL},
        {HDR "\"graph_outputs\":[],\"nodes\":[{\"name\":\"b\",\"op_type\":\"aten.relu.default\","
             "\"inputs\":[{\"name\":\"y\",\"shape\":[2,3],\"producer_node\":\"a\"}],\"outputs\":[{"
             "\"name\":\"z\",\"shape\":[2,3]}]},"
             "{\"name\":\"a\",\"op_type\":\"aten.relu.default\","
             "\"inputs\":[" XIN "],\"outputs\":[{\"name\":\"y\",\"shape\":[2,3]}]}]}",
         "does not come before it", "'b'"},
        /* multi-output: a chunk the split does not have, a producer_output_idx that disagrees
         * with the name, and a declared chunk count the split attributes do not give */
        {HDR "\"graph_outputs\":[],\"nodes\":[" SPLIT2
             ",{\"name\":\"g\",\"op_type\":\"aten.relu.default\","
             "\"inputs\":[{\"name\":\"split_2\",\"shape\":[1,3],\"producer_node\":\"split\","
             "\"producer_output_idx\":2}],"
             "\"outputs\":[{\"name\":\"y\",\"shape\":[1,3]}]}]}",
         "output 2 of node 'split', which has 2 outputs", "'split_2'"},
        {HDR "\"graph_outputs\":[],\"nodes\":[" SPLIT2
             ",{\"name\":\"g\",\"op_type\":\"aten.relu.default\","
             "\"inputs\":[{\"name\":\"split_1\",\"shape\":[1,3],\"producer_node\":\"split\","
             "\"producer_output_idx\":0}],"
             "\"outputs\":[{\"name\":\"y\",\"shape\":[1,3]}]}]}",
         "is output 1 of node 'split', but the record says output 0", "'g'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Graph *g = NULL;
        DiagList d = {0};
        Status st = ir_read_buffer("bad.json", cases[i].json, strlen(cases[i].json), &g, &d);
        assert_int_equal(st, ST_BAD_INPUT);
        assert_null(g);
        assert_true(d.errors > 0);
        char buf[2048];
        diag_format(&d.items[0], buf, sizeof buf);
        if (!strstr(buf, "bad.json") || !strstr(buf, cases[i].want1) ||
            (cases[i].want2 && !strstr(buf, cases[i].want2)))
            fail_msg("case %zu: got '%s', want '%s' and '%s'", i, buf, cases[i].want1,
                     cases[i].want2 ? cases[i].want2 : "");
        diag_free(&d);
    }
}

static void test_attrs(void **state)
{
    (void)state;
    TuSpec x = {"float32", 4, {1, 3, 8, 8}};
    TuSpec y = {"float32", 4, {1, 3, 4, 4}};
    Graph *g = tu_node_graph("aten.max_pool2d.default", 1, &x, 1, &y,
                             "{\"kernel_size\":[2,2],\"padding\":1,\"ceil_mode\":false,"
                             "\"other\":1e-06,\"end\":9223372036854775807,\"n\":null}");
    assert_non_null(g);
    const Node *n = &g->nodes[0];
    int64_t k[2], p[2], s[2];
    assert_true(attr_ints_n(n, "kernel_size", k, 2, 1));
    assert_true(attr_ints_n(n, "padding", p, 2, 0));
    assert_true(attr_ints_n(n, "stride", s, 2, 7));
    assert_int_equal(k[1], 2);
    assert_int_equal(p[1], 1);
    assert_int_equal(s[0], 7);
    assert_false(attr_bool(n, "ceil_mode", true));
    assert_true(attr_float(n, "other", 0) == 1e-06);
    assert_true(attr_int(n, "end", 0) == INT64_MAX);
    assert_false(attr_present(n, "n"));
    graph_free(g);
}

/* Multi-output nodes: a split's outputs are tensors of their own (producer, position), each
 * getitem lists every chunk (producer_output_idx 0..n-1) and picks one by `index`; the shape
 * check infers every chunk; canonicalize makes consumers read the chunks directly. */
static void test_multi_output(void **state)
{
    (void)state;
    const char *json =
        HDR "\"graph_outputs\":[{\"name\":\"y\",\"shape\":[1,3]},{\"name\":\"getitem\",\"shape\":["
            "1,3]}],\"nodes\":[" SPLIT2
            ",{\"name\":\"getitem\",\"op_type\":\"<built-in function getitem>\",\"inputs\":["
            "{\"name\":\"split_0\",\"shape\":[1,3],\"producer_node\":\"split\",\"producer_output_"
            "idx\":0},"
            "{\"name\":\"split_1\",\"shape\":[1,3],\"producer_node\":\"split\",\"producer_output_"
            "idx\":1}],"
            "\"outputs\":[{\"name\":\"getitem\",\"shape\":[1,3]}],\"attrs\":{\"index\":0}}"
            ",{\"name\":\"getitem_1\",\"op_type\":\"<built-in function getitem>\",\"inputs\":["
            "{\"name\":\"split_0\",\"shape\":[1,3],\"producer_node\":\"split\",\"producer_output_"
            "idx\":0},"
            "{\"name\":\"split_1\",\"shape\":[1,3],\"producer_node\":\"split\",\"producer_output_"
            "idx\":1}],"
            "\"outputs\":[{\"name\":\"getitem_1\",\"shape\":[1,3]}],\"attrs\":{\"index\":1}}"
            ",{\"name\":\"relu\",\"op_type\":\"aten.relu.default\",\"inputs\":["
            "{\"name\":\"getitem_1\",\"shape\":[1,3],\"producer_node\":\"getitem_1\",\"producer_"
            "output_idx\":0}],"
            "\"outputs\":[{\"name\":\"y\",\"shape\":[1,3]}]}]}";
    Graph *g = NULL;
    DiagList d = {0};
    Status st = ir_read_buffer("m.json", json, strlen(json), &g, &d);
    if (st != ST_OK) diag_print(&d, stderr);
    assert_int_equal(st, ST_OK);
    int sp = graph_find_node(g, "split");
    assert_true(sp >= 0);
    assert_int_equal(g->nodes[sp].nout, 2);
    int s0 = graph_find_tensor(g, "split_0"), s1 = graph_find_tensor(g, "split_1");
    assert_int_equal(g->tensors[s0].producer, sp);
    assert_int_equal(g->tensors[s1].producer, sp);
    assert_int_equal(g->tensors[s0].producer_out, 0);
    assert_int_equal(g->tensors[s1].producer_out, 1);
    const Node *gi = &g->nodes[graph_find_node(g, "getitem_1")];
    assert_int_equal(gi->nin, 2);
    assert_int_equal(gi->in[1], s1);
    assert_int_equal(shape_check_graph(g, &d), ST_OK);
    assert_int_equal(graph_verify(g, &d), ST_OK);
    /* canonicalize: relu reads split_1 itself; getitem stays (a graph output keeps its name) */
    CompileOptions o;
    compile_defaults(&o);
    Pipeline pipe;
    assert_int_equal(pipeline_run_graph(g, &o, &pipe, &d), ST_OK);
    const Graph *c = pipe.g;
    const Node *relu = &c->nodes[graph_find_node(c, "relu")];
    assert_int_equal(relu->in[0], graph_find_tensor(c, "split_1"));
    assert_true(graph_find_node(c, "getitem_1") < 0 ||
                c->nodes[graph_find_node(c, "getitem_1")].dead);
    assert_false(c->nodes[graph_find_node(c, "getitem")].dead);
    pipeline_free(&pipe);
    diag_free(&d);
    /* a declared chunk count the attributes do not give */
    const char *bad =
        HDR "\"graph_outputs\":[],\"nodes\":[{\"name\":\"split\",\"op_type\":\"aten.split.Tensor\","
            "\"inputs\":[" XIN "],\"outputs\":[{\"name\":\"split_0\",\"shape\":[2,2]},{\"name\":"
            "\"split_1\",\"shape\":[2,1]}],"
            "\"attrs\":{\"split_size\":1,\"dim\":1}}]}";
    assert_int_equal(ir_read_buffer("m.json", bad, strlen(bad), &g, &d), ST_OK);
    assert_int_equal(shape_check_graph(g, &d), ST_BAD_INPUT);
    char buf[2048];
    diag_format(&d.items[0], buf, sizeof buf);
    if (!strstr(buf, "produces 3 outputs") || !strstr(buf, "'split'")) fail_msg("got '%s'", buf);
    graph_free(g);
    diag_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_counts), cmocka_unit_test(test_weights_mapped),
        cmocka_unit_test(test_malformed),      cmocka_unit_test(test_attrs),
        cmocka_unit_test(test_multi_output),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
