/* CPU data-movement kernels against independent index arithmetic on random data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tests/testutil.h"

static float at(const HTensor *t, int64_t i)
{
    return ((const float *)t->data)[i];
}

static void run1(const char *aten, TuSpec in, TuSpec out, const char *attrs, HTensor *x, HTensor *y)
{
    Graph *g = tu_node_graph(aten, 1, &in, 1, &out, attrs);
    assert_non_null(g);
    tu_alloc(x, in.dtype, in.rank, in.shape);
    tu_rand(x, 7, -1, 1);
    DiagList d = {0};
    assert_int_equal(tu_run(g, x, y, &d), ST_OK);
    diag_free(&d);
    graph_free(g);
}

static void test_transpose_permute(void **state)
{
    (void)state;
    HTensor x, y;
    run1("aten.transpose.int", (TuSpec){0, 3, {2, 3, 4}}, (TuSpec){0, 3, {4, 3, 2}},
         "{\"dim0\":-1,\"dim1\":0}", &x, &y);
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 3; b++)
            for (int c = 0; c < 4; c++)
                assert_true(at(&y, (c * 3 + b) * 2 + a) == at(&x, (a * 3 + b) * 4 + c));
    htensor_free(&x);
    htensor_free(&y);
    run1("aten.permute.default", (TuSpec){0, 3, {2, 3, 4}}, (TuSpec){0, 3, {3, 4, 2}},
         "{\"dims\":[1,-1,0]}", &x, &y);
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 3; b++)
            for (int c = 0; c < 4; c++)
                assert_true(at(&y, (b * 4 + c) * 2 + a) == at(&x, (a * 3 + b) * 4 + c));
    htensor_free(&x);
    htensor_free(&y);
}

static void test_slice_select_expand(void **state)
{
    (void)state;
    HTensor x, y;
    /* huge end, negative start, step 2 */
    run1("aten.slice.Tensor", (TuSpec){0, 2, {3, 10}}, (TuSpec){0, 2, {3, 3}},
         "{\"dim\":1,\"start\":-6,\"end\":9223372036854775807,\"step\":2}", &x, &y);
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++)
            assert_true(at(&y, r * 3 + k) == at(&x, r * 10 + 4 + 2 * k));
    htensor_free(&x);
    htensor_free(&y);
    run1("aten.select.int", (TuSpec){0, 3, {2, 3, 4}}, (TuSpec){0, 2, {2, 4}},
         "{\"dim\":1,\"index\":-1}", &x, &y);
    for (int a = 0; a < 2; a++)
        for (int c = 0; c < 4; c++)
            assert_true(at(&y, a * 4 + c) == at(&x, (a * 3 + 2) * 4 + c));
    htensor_free(&x);
    htensor_free(&y);
    run1("aten.expand.default", (TuSpec){0, 3, {2, 1, 3}}, (TuSpec){0, 4, {2, 2, 4, 3}},
         "{\"size\":[2,-1,4,-1]}", &x, &y);
    for (int64_t i = 0; i < y.numel; i++) {
        int64_t c = i % 3, b = (i / 12) % 2;
        assert_true(at(&y, i) == at(&x, b * 3 + c));
    }
    htensor_free(&x);
    htensor_free(&y);
}

static void test_cat_many(void **state)
{
    (void)state;
    TuSpec in[5];
    for (int i = 0; i < 5; i++)
        in[i] = (TuSpec){0, 3, {2, i + 1, 3}};
    TuSpec out = {0, 3, {2, 15, 3}};
    Graph *g = tu_node_graph("aten.cat.default", 5, in, 1, &out, "{\"dim\":-2}");
    assert_non_null(g);
    HTensor x[5], y;
    for (int i = 0; i < 5; i++) {
        tu_alloc(&x[i], NULL, 3, in[i].shape);
        tu_rand(&x[i], (uint64_t)i + 1, -1, 1);
    }
    DiagList d = {0};
    assert_int_equal(tu_run(g, x, &y, &d), ST_OK);
    for (int b = 0; b < 2; b++) {
        int row = 0;
        for (int i = 0; i < 5; i++)
            for (int r = 0; r <= i; r++, row++)
                for (int c = 0; c < 3; c++)
                    assert_true(at(&y, (b * 15 + row) * 3 + c) ==
                                at(&x[i], (b * (i + 1) + r) * 3 + c));
    }
    for (int i = 0; i < 5; i++)
        htensor_free(&x[i]);
    htensor_free(&y);
    diag_free(&d);
    graph_free(g);
}

static void test_index_copy_and_embedding(void **state)
{
    (void)state;
    TuSpec in[3] = {{0, 4, {1, 2, 6, 3}}, {"int64", 1, {2}}, {0, 4, {1, 2, 2, 3}}};
    TuSpec out = {0, 4, {1, 2, 6, 3}};
    Graph *g = tu_node_graph("aten.index_copy.default", 3, in, 1, &out, "{\"dim\":2}");
    HTensor x[3], y;
    tu_alloc(&x[0], NULL, 4, in[0].shape);
    tu_rand(&x[0], 1, -1, 1);
    tu_alloc(&x[1], "int64", 1, in[1].shape);
    ((int64_t *)x[1].data)[0] = 4;
    ((int64_t *)x[1].data)[1] = 1;
    tu_alloc(&x[2], NULL, 4, in[2].shape);
    tu_rand(&x[2], 2, -1, 1);
    DiagList d = {0};
    assert_int_equal(tu_run(g, x, &y, &d), ST_OK);
    for (int h = 0; h < 2; h++)
        for (int s = 0; s < 6; s++)
            for (int c = 0; c < 3; c++) {
                float want = s == 4   ? at(&x[2], (h * 2 + 0) * 3 + c)
                             : s == 1 ? at(&x[2], (h * 2 + 1) * 3 + c)
                                      : at(&x[0], (h * 6 + s) * 3 + c);
                assert_true(at(&y, (h * 6 + s) * 3 + c) == want);
            }
    htensor_free(&y);
    /* an index out of range is an error naming the node and the index tensor */
    ((int64_t *)x[1].data)[1] = 6;
    assert_int_equal(tu_run(g, x, &y, &d), ST_BAD_INPUT);
    char buf[512];
    diag_format(&d.items[d.count - 1], buf, sizeof buf);
    assert_non_null(strstr(buf, "n0"));
    assert_non_null(strstr(buf, "in1"));
    for (int i = 0; i < 3; i++)
        htensor_free(&x[i]);
    diag_free(&d);
    graph_free(g);

    /* embedding ids above 65504 stay exact */
    TuSpec ein[2] = {{0, 2, {70000, 2}}, {"int64", 2, {1, 3}}};
    TuSpec eout = {0, 3, {1, 3, 2}};
    g = tu_node_graph("aten.embedding.default", 2, ein, 1, &eout, NULL);
    tu_alloc(&x[0], NULL, 2, ein[0].shape);
    tu_rand(&x[0], 3, -1, 1);
    tu_alloc(&x[1], "int64", 2, ein[1].shape);
    int64_t ids[3] = {69999, 65505, 0};
    memcpy(x[1].data, ids, sizeof ids);
    assert_int_equal(tu_run(g, x, &y, &d), ST_OK);
    for (int i = 0; i < 3; i++)
        for (int c = 0; c < 2; c++)
            assert_true(at(&y, i * 2 + c) == at(&x[0], ids[i] * 2 + c));
    htensor_free(&y);
    ((int64_t *)x[1].data)[0] = 70000;
    assert_int_equal(tu_run(g, x, &y, &d), ST_BAD_INPUT);
    for (int i = 0; i < 2; i++)
        htensor_free(&x[i]);
    diag_free(&d);
    graph_free(g);
}

/* copy(self, src) (copy_ made out of place): src cast to self's dtype and broadcast to its
 * shape (test_shape: a src that does not broadcast to it is refused). */
static void test_copy(void **state)
{
    (void)state;
    TuSpec in[2] = {{0, 2, {2, 3}}, {"int64", 1, {3}}};
    TuSpec out = {0, 2, {2, 3}};
    Graph *g = tu_node_graph("aten.copy.default", 2, in, 1, &out, NULL);
    assert_non_null(g);
    HTensor x[2], y;
    tu_alloc(&x[0], NULL, 2, in[0].shape);
    tu_rand(&x[0], 1, -1, 1);
    tu_alloc(&x[1], "int64", 1, in[1].shape);
    for (int i = 0; i < 3; i++)
        ((int64_t *)x[1].data)[i] = 5 - 4 * i;
    DiagList d = {0};
    assert_int_equal(tu_run(g, x, &y, &d), ST_OK);
    assert_int_equal(y.dtype, DT_F32);
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 3; c++)
            assert_true(at(&y, r * 3 + c) == (float)(5 - 4 * c));
    htensor_free(&y);
    for (int i = 0; i < 2; i++)
        htensor_free(&x[i]);
    diag_free(&d);
    graph_free(g);
}

static void test_sources(void **state)
{
    (void)state;
    TuSpec out = {"int64", 1, {5}};
    Graph *g = tu_node_graph("aten.arange.start_step", 0, NULL, 1, &out,
                             "{\"start\":2,\"end\":11,\"step\":2}");
    HTensor y;
    DiagList d = {0};
    assert_int_equal(tu_run(g, NULL, &y, &d), ST_OK);
    for (int i = 0; i < 5; i++)
        assert_int_equal(((int64_t *)y.data)[i], 2 + 2 * i);
    htensor_free(&y);
    graph_free(g);
    TuSpec fo = {0, 2, {2, 2}};
    g = tu_node_graph("aten.full.default", 0, NULL, 1, &fo, "{\"size\":[2,2],\"fill_value\":-1.5}");
    assert_int_equal(tu_run(g, NULL, &y, &d), ST_OK);
    for (int i = 0; i < 4; i++)
        assert_true(at(&y, i) == -1.5f);
    htensor_free(&y);
    graph_free(g);
    diag_free(&d);
}

TU_MAIN(test_transpose_permute, test_slice_select_expand, test_cat_many,
        test_index_copy_and_embedding, test_sources, test_copy)
