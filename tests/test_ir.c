/* IR reader: the fixtures import, malformed input is rejected with the node and tensor named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/ir_json.h"
#include "testutil.h"

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
static void test_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *json, *want1, *want2;
    } cases[] = {
        {"{", "not valid JSON", NULL},
        {"[1,2]", "not a JSON object", NULL},
        {"{\"nodes\":[]}", "graph_inputs", NULL},
        {HDR "\"graph_outputs\":[],\"nodes\":[{\"name\":\"a\",\"op_type\":\"aten.frobnicate.default\","
             "\"inputs\":[" XIN "],\"outputs\":[{\"name\":\"y\",\"shape\":[2,3]}]}]}",
         "unknown op", "'a'"},
        {HDR "\"graph_outputs\":[],\"nodes\":[{\"name\":\"a\",\"op_type\":\"aten.relu.default\","
             "\"inputs\":[" XIN "," XIN "],\"outputs\":[{\"name\":\"y\",\"shape\":[2,3]}]}]}",
         "takes 1..1", "'a'"},
        {HDR "\"graph_outputs\":[],\"nodes\":[{\"name\":\"a\",\"op_type\":\"aten.relu.default\","
             "\"inputs\":[{\"name\":\"zz\",\"shape\":[2,3]}],\"outputs\":[{\"name\":\"y\",\"shape\":[2,3]}]}]}",
         "no earlier node produces", "'zz'"},
        {HDR "\"graph_outputs\":[],\"nodes\":[{\"name\":\"a\",\"op_type\":\"aten.relu.default\","
             "\"inputs\":[{\"name\":\"x\",\"shape\":[3,2]}],\"outputs\":[{\"name\":\"y\",\"shape\":[2,3]}]}]}",
         "consumed with shape [3,2]", "'x'"},
        {HDR "\"graph_outputs\":[{\"name\":\"nope\"}],\"nodes\":[]}", "not produced", "'nope'"},
        {HDR "\"graph_outputs\":[],\"nodes\":[{\"name\":\"a\",\"op_type\":\"aten.relu.default\","
             "\"inputs\":[" XIN "],\"outputs\":[{\"name\":\"x\",\"shape\":[2,3]}]}]}",
         "produced twice", "'a'"},
        {HDR "\"graph_outputs\":[],\"nodes\":[{\"name\":\"a\",\"op_type\":\"aten.relu.default\","
             "\"inputs\":[{\"name\":\"x\",\"shape\":[2,\"s0\"]}],\"outputs\":[{\"name\":\"y\",\"shape\":[2,3]}]}]}",
         "dynamic shapes", "'x'"},
        {HDR "\"graph_outputs\":[],\"nodes\":[{\"name\":\"a\",\"op_type\":\"aten.relu.default\","
             "\"inputs\":[{\"name\":\"x\",\"shape\":[2,3],\"dtype\":\"complex32\"}],\"outputs\":[{\"name\":\"y\",\"shape\":[2,3]}]}]}",
         "unknown dtype", NULL},
        {"{\"graph_inputs\":[{\"name\":\"x\",\"shape\":[-2]}],\"graph_outputs\":[],\"nodes\":[]}",
         "shape entry 0 is -2", NULL},
        {HDR "\"graph_outputs\":[],\"nodes\":[{\"name\":\"b\",\"op_type\":\"aten.relu.default\","
             "\"inputs\":[{\"name\":\"y\",\"shape\":[2,3],\"producer_node\":\"a\"}],\"outputs\":[{\"name\":\"z\",\"shape\":[2,3]}]},"
             "{\"name\":\"a\",\"op_type\":\"aten.relu.default\","
             "\"inputs\":[" XIN "],\"outputs\":[{\"name\":\"y\",\"shape\":[2,3]}]}]}",
         "does not come before it", "'b'"},
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_counts),
        cmocka_unit_test(test_weights_mapped),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_attrs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
