/* IR reader: the fixtures import, malformed input is rejected with the node and tensor named,
 * multi-output nodes (split with getitems) import with their outputs told apart; the walk over the
 * text (compiler/json_walk.h) reads every file as the one-tree read does, and takes the files
 * laid out as exports write them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json.h>

#include "compiler/ir_json.h"
#include "compiler/json_walk.h"
#include "compiler/pass.h"
#include "compiler/shape/shape.h"
#include "tests/graph_eq.h"
#include "tests/testutil.h"

/* Reads json[0..len) both ways (IR_READ_WALK, IR_READ_TREE); fails the test unless they give the
 * same status, diagnostics and graph. *walked: whether the walk made the graph. */
static Status read_both(const char *json, size_t len, bool *walked)
{
    Graph *a = NULL, *b = NULL;
    DiagList da = {0}, db = {0};
    Status sa = ir_read_buffer_as("m.json", json, len, IR_READ_WALK, &a, &da, walked);
    Status sb = ir_read_buffer_as("m.json", json, len, IR_READ_TREE, &b, &db, NULL);
    if (sa != sb) fail_msg("status %d walked, %d as a tree", sa, sb);
    if (da.count != db.count || da.errors != db.errors)
        fail_msg("%d diagnostics walked, %d as a tree", da.count, db.count);
    for (int i = 0; i < da.count; i++) {
        char x[2048], y[2048];
        diag_format(&da.items[i], x, sizeof x);
        diag_format(&db.items[i], y, sizeof y);
        if (strcmp(x, y) != 0) fail_msg("walked: %s\nas a tree: %s", x, y);
    }
    char why[256];
    if (sa == ST_OK && !geq_same(a, b, why, sizeof why)) fail_msg("graphs differ: %s", why);
    assert_true((sa == ST_OK) == (a != NULL));
    graph_free(a);
    graph_free(b);
    diag_free(&da);
    diag_free(&db);
    return sa;
}

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
        assert_int_equal(read_both(cases[i].json, strlen(cases[i].json), NULL), ST_BAD_INPUT);
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

/* Every layout the exporters write is walked (nodes last; "constants" after the nodes) and
 * makes the graph the one-tree read makes. */
static void test_walk_fixtures(void **state)
{
    (void)state;
    static const char *paths[] = {
        "tests/models/mlp/model.json",          "tests/models/convnet/model.json",
        "tests/models/qwen2_tiny/decode.json",  "tests/models/qwen2_5_1_5b/decode.json",
        "tests/models/inplace/state.json",      "tests/models/zoo/hf_qwen2/model.json",
        "tests/models/zoo/hf_gemma/model.json", "tests/models/resnet18/model.json",
    };
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        char *text = tu_read_file(paths[i]);
        assert_non_null(text);
        bool walked = false;
        assert_int_equal(read_both(text, strlen(text), &walked), ST_OK);
        if (!walked) fail_msg("%s: not walked", paths[i]);
        free(text);
    }
}

#define RELU(in, out)                                                                              \
    "{\"name\":\"" out "\",\"op_type\":\"aten.relu.default\",\"inputs\":[{\"name\":\"" in          \
    "\",\"shape\":[2,3]}],\"outputs\":[{\"name\":\"" out "\",\"shape\":[2,3]}]}"
#define INPUTS "\"graph_inputs\":[" XIN "]"
#define OUTPUTS "\"graph_outputs\":[{\"name\":\"z\"}]"
#define NODES "\"nodes\":[" RELU("x", "y") "," RELU("y", "z") "]"
/* add(x, c) with c a constant the file carries */
#define ADDC                                                                                       \
    "\"nodes\":[{\"name\":\"z\",\"op_type\":\"aten.add.Tensor\",\"inputs\":[" XIN                  \
    ",{\"name\":\"c\",\"shape\":[3]}],\"outputs\":[{\"name\":\"z\",\"shape\":[2,3]}]}]"
#define CONSTS "\"constants\":{\"c\":{\"data\":[1,2,3]}}"

/* Layouts the walk takes, and what it leaves to the one-tree read (which then gives the
 * diagnostics): both ways agree on each, and the walk makes the graph where it should. */
static void test_walk_layouts(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        Status st;
        bool walked;
    } cases[] = {
        {"{" INPUTS "," OUTPUTS "," NODES "}", ST_OK, true},
        {"{" NODES "," INPUTS "," OUTPUTS "}", ST_OK, true}, /* the head after the nodes */
        {"{" INPUTS "," OUTPUTS "," ADDC "," CONSTS "}", ST_OK, true},
        {"{" INPUTS "," CONSTS "," OUTPUTS "," ADDC "}", ST_OK, true},
        /* a head key the text does not spell plainly: the nodes are read again */
        {"{" NODES "," OUTPUTS ",\"graph_\\u0069nputs\":[" XIN "]}", ST_OK, true},
        {"{" INPUTS "," OUTPUTS "," ADDC ",\"co\\u006estants\":{\"c\":{\"data\":[1,2,3]}}}", ST_OK,
         true},
        {" \n{" INPUTS "," OUTPUTS "," NODES "}  trailing words", ST_OK, true},
        {"{" INPUTS ",\"graph_outputs\":[],\"nodes\":[]}", ST_OK, true},
        /* beyond plain JSON structure, or a key twice: the tree */
        {"{ /* c */ " INPUTS "," OUTPUTS "," NODES "}", ST_OK, false},
        {"{" INPUTS "," OUTPUTS ",\"nodes\":[" RELU("x", "y") "," RELU("y", "z") ",]}", ST_OK,
         false},
        {"{" INPUTS "," OUTPUTS "," NODES ",}", ST_OK, false},
        {"{" INPUTS ",\"graph_outputs\":[]," OUTPUTS "," NODES "}", ST_OK, false},
        {"{" INPUTS "," OUTPUTS "," NODES "," NODES "}", ST_OK, false}, /* json-c: the last */
        {"{'graph_inputs':[" XIN "]," OUTPUTS "," NODES "}", ST_OK, false},
        /* malformed: the tree's diagnostics */

        {"{" INPUTS "," NODES ",\"graph_outputs\":[}", ST_BAD_INPUT, false},
        {"{" INPUTS ",\"nodes\":[" RELU("q", "y") "],\"graph_outputs\":[}", ST_BAD_INPUT, false},
        {"{" INPUTS ",\"nodes\":[" RELU("q", "y") "]," OUTPUTS "}", ST_BAD_INPUT, false},
        {"{" INPUTS "," OUTPUTS "," ADDC "}", ST_BAD_INPUT, false},
        {"{" INPUTS "," OUTPUTS ",\"nodes\":{}}", ST_BAD_INPUT, false},
        {"{" INPUTS "," OUTPUTS ",\"nodes\":[1]}", ST_BAD_INPUT, false},
        {"{" INPUTS "," OUTPUTS "}", ST_BAD_INPUT, false},
        {"{" INPUTS "," OUTPUTS "," NODES, ST_BAD_INPUT, false},
        {"", ST_BAD_INPUT, false},
        {"  ", ST_BAD_INPUT, false},
        {"[]", ST_BAD_INPUT, false},
        {"{\"nodes\":[" RELU("x", "y") "]\"x\":1}", ST_BAD_INPUT, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool walked = false;
        Status st = read_both(cases[i].json, strlen(cases[i].json), &walked);
        if (st != cases[i].st || walked != cases[i].walked)
            fail_msg("case %zu: status %d walked %d, want %d and %d", i, st, walked, cases[i].st,
                     cases[i].walked);
    }
}

/* Attributes nested up to json-c's depth limit and past it: a node's values parse on their own
 * with the limit they have inside the whole document, so both ways agree at every depth. */
static void test_walk_depth(void **state)
{
    (void)state;
    int last_ok = -1, first_bad = -1;
    for (int depth = 20; depth <= 34; depth++) {
        char attr[128] = "";
        for (int i = 0; i < depth; i++)
            strcat(attr, "[");
        strcat(attr, "1");
        for (int i = 0; i < depth; i++)
            strcat(attr, "]");
        char json[1024];
        snprintf(json, sizeof json,
                 "{" INPUTS "," OUTPUTS ",\"nodes\":[{\"name\":\"z\",\"op_type\":"
                 "\"aten.relu.default\",\"inputs\":[" XIN "],\"outputs\":[{\"name\":\"z\","
                 "\"shape\":[2,3]}],\"attrs\":{\"deep\":%s}}]}",
                 attr);
        bool walked;
        Status st = read_both(json, strlen(json), &walked);
        assert_int_equal(walked, st == ST_OK); /* too deep: the tree says so */
        if (st == ST_OK) last_ok = depth;
        if (st != ST_OK && first_bad < 0) first_bad = depth;
    }
    assert_true(last_ok >= 20 && first_bad == last_ok + 1); /* one limit, inside the range */
}

/* The walker on its own: members and elements in order, values of every kind, and a failed step
 * on each break of plain JSON structure. */
static void test_json_walk(void **state)
{
    (void)state;
    const char *doc = " {\"a\" : 1, \"b\":[{\"x\":[2]}, \"s\" ,null], \"c\":{}}";
    JsonWalk w;
    json_walk_init(&w, doc, strlen(doc), 32);
    bool first = true, fe = true;
    const char *key;
    struct json_object *v;
    assert_true(json_walk_open(&w, '{'));
    assert_int_equal(json_walk_member(&w, &first, &key), 1);
    assert_string_equal(key, "a");
    assert_true(json_walk_value(&w, &v));
    assert_int_equal(json_object_get_int(v), 1);
    json_object_put(v);
    assert_int_equal(json_walk_member(&w, &first, &key), 1);
    assert_string_equal(key, "b");
    assert_true(json_walk_open(&w, '['));
    assert_int_equal(json_walk_element(&w, &fe), 1);
    assert_true(json_walk_value(&w, &v));
    assert_true(json_object_is_type(v, json_type_object));
    json_object_put(v);
    assert_int_equal(json_walk_element(&w, &fe), 1);
    assert_true(json_walk_value(&w, &v));
    assert_string_equal(json_object_get_string(v), "s");
    json_object_put(v);
    assert_int_equal(json_walk_element(&w, &fe), 1);
    assert_true(json_walk_value(&w, &v));
    assert_null(v); /* null */
    assert_int_equal(json_walk_element(&w, &fe), 0);
    assert_int_equal(json_walk_member(&w, &first, &key), 1);
    assert_string_equal(key, "c");
    assert_true(json_walk_value(&w, &v));
    json_object_put(v);
    assert_int_equal(json_walk_member(&w, &first, &key), 0);
    assert_int_equal(w.level, 0);
    json_walk_free(&w);
    static const char *bad[] = {"{\"a\" 1}",   "{\"a\":1,}", "{\"a\":1 \"b\":2}", "{1:2}",
                                "{\"a\":tru}", "{\"a\":1",   "{\"a\":[1,2}",      "{,}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_walk_init(&w, bad[i], strlen(bad[i]), 32);
        first = true;
        bool ok = json_walk_open(&w, '{');
        int k;
        while (ok && (k = json_walk_member(&w, &first, &key)) == 1)
            if (json_walk_value(&w, &v))
                json_object_put(v);
            else
                ok = false;
        if (ok && k == 0) fail_msg("'%s' walked", bad[i]);
        json_walk_free(&w);
    }
    json_walk_init(&w, "[1]", 3, 32);
    assert_false(json_walk_open(&w, '{'));
    json_walk_free(&w);
}

TU_MAIN(test_fixture_counts, test_weights_mapped, test_malformed, test_attrs, test_multi_output,
        test_walk_fixtures, test_walk_layouts, test_walk_depth, test_json_walk)
