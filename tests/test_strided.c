/* Strided views (compiler/strided.h), which layernorm_t's match, layout and lowering share: a
 * reshape as strides over the memory (torch.view's rule, size-1 dims and channel padding
 * included), and the rows of a norm read and written through two walks (their outer dims split
 * alike, collapsed, at most ROW_OUTER); an attention operand's chain of views, permutes and
 * selects as strides and an offset (sv_chain_strides). The kernels they drive: test_vk_lnt.c,
 * test_vk_attn_mha.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/strided.h"
#include "tests/testutil.h"

static StrideView sv(int r, const int64_t *shape, const int64_t *stride)
{
    StrideView v = {.rank = r};
    memcpy(v.shape, shape, sizeof(int64_t) * (size_t)r);
    memcpy(v.stride, stride, sizeof(int64_t) * (size_t)r);
    return v;
}

static void assert_strides(const StrideView *v, int r, const int64_t *want)
{
    assert_int_equal(v->rank, r);
    for (int d = 0; d < r; d++)
        assert_int_equal(v->stride[d], want[d]);
}

static void test_view_as(void **state)
{
    (void)state;
    StrideView v, o;
    /* padded NCHW [1, 5, 4, 6] (channels padded to 32): H and W split, the padding kept */
    sv_physical(&v, 4, (int64_t[]){1, 5, 4, 6}, (int64_t[]){1, 32, 4, 6});
    assert_true(sv_view_as(&v, 6, (int64_t[]){1, 5, 2, 2, 3, 2}, &o));
    assert_strides(&o, 6, (int64_t[]){0, 24, 12, 6, 2, 1});
    /* batch 2: merging N and C would need N's stride to be 5 * 24, it is 32 * 24 */
    sv_physical(&v, 4, (int64_t[]){2, 5, 4, 6}, (int64_t[]){2, 32, 4, 6});
    assert_false(sv_view_as(&v, 3, (int64_t[]){10, 4, 6}, &o));
    assert_true(sv_view_as(&v, 3, (int64_t[]){2, 5, 24}, &o));
    assert_strides(&o, 3, (int64_t[]){768, 24, 1});
    /* a permuted tensor: only dims that stay contiguous merge */
    v = sv(3, (int64_t[]){4, 6, 5}, (int64_t[]){1, 4, 24}); /* [5, 6, 4] dense, reversed */
    assert_false(sv_view_as(&v, 2, (int64_t[]){24, 5}, &o));
    assert_true(sv_view_as(&v, 4, (int64_t[]){4, 2, 3, 5}, &o));
    assert_strides(&o, 4, (int64_t[]){1, 12, 4, 24});
    /* size-1 dims in and out, and a tensor of one element */
    v = sv(3, (int64_t[]){3, 1, 7}, (int64_t[]){7, 99, 1});
    assert_true(sv_view_as(&v, 4, (int64_t[]){1, 21, 1, 1}, &o));
    assert_int_equal(o.stride[1], 1);
    v = sv(2, (int64_t[]){1, 1}, (int64_t[]){5, 9});
    assert_true(sv_view_as(&v, 1, (int64_t[]){1}, &o));
    /* another element count */
    assert_false(sv_view_as(&v, 1, (int64_t[]){2}, &o));
}

static void test_rows(void **state)
{
    (void)state;
    SvRows r;
    const char *why = NULL;
    /* ConvNeXt's block: x NCHW [1, 8(pad 32), 3, 5] seen as NHWC, y NHWC dense */
    StrideView x = sv(4, (int64_t[]){1, 3, 5, 8}, (int64_t[]){480, 5, 1, 15});
    StrideView y = sv(4, (int64_t[]){1, 3, 5, 8}, (int64_t[]){120, 40, 8, 1});
    assert_true(sv_rows(&x, &y, 8, &r, &why));
    assert_int_equal(r.rows, 15);
    assert_int_equal(r.xl, 15);
    assert_int_equal(r.yl, 1);
    /* the 15 pixels are one dim: contiguous in both */
    assert_int_equal(r.oshape[ROW_OUTER - 1], 15);
    assert_int_equal(r.xs[ROW_OUTER - 1], 1);
    assert_int_equal(r.ys[ROW_OUTER - 1], 8);
    assert_int_equal(r.oshape[0], 1);
    /* walks of other outer shapes split into common dims: [6, 4] against [24] */
    x = sv(3, (int64_t[]){6, 4, 3}, (int64_t[]){3, 18, 1});
    y = sv(2, (int64_t[]){24, 3}, (int64_t[]){3, 1});
    assert_true(sv_rows(&x, &y, 3, &r, &why));
    assert_int_equal(r.oshape[ROW_OUTER - 2], 6);
    assert_int_equal(r.oshape[ROW_OUTER - 1], 4);
    assert_int_equal(r.ys[ROW_OUTER - 2], 12);
    assert_int_equal(r.xs[ROW_OUTER - 1], 18);
    /* [6, 4] against [4, 6]: no common split */
    y = sv(3, (int64_t[]){4, 6, 3}, (int64_t[]){18, 3, 1});
    assert_false(sv_rows(&x, &y, 3, &r, &why));
    assert_non_null(strstr(why, "do not split alike"));
    /* the normalised elements must be one strided run */
    x = sv(3, (int64_t[]){5, 2, 3}, (int64_t[]){1, 5, 20});
    y = sv(3, (int64_t[]){5, 2, 3}, (int64_t[]){6, 3, 1});
    assert_false(sv_rows(&x, &y, 6, &r, &why));
    assert_non_null(strstr(why, "one strided run"));
    /* six outer dims that nothing merges: more than ROW_OUTER */
    int64_t sh[7] = {2, 2, 2, 2, 2, 2, 3}, sx[7] = {3, 12, 48, 192, 768, 3072, 1},
            sy[7] = {192, 96, 48, 24, 12, 6, 1};
    x = sv(7, sh, sx);
    y = sv(7, sh, sy);
    assert_false(sv_rows(&x, &y, 3, &r, &why));
    assert_non_null(strstr(why, "strided row dims"));
}

/* node `name` of g: a view/permute/select op on `in` ([shape] JSON) giving `out` */
static void link(TuGraph *j, const char *name, const char *op, const char *in, const char *ish,
                 const char *osh, const char *attrs)
{
    char ins[256], outs[256];
    snprintf(ins, sizeof ins, "{\"name\":\"%s\",\"shape\":%s}", in, ish);
    snprintf(outs, sizeof outs, "{\"name\":\"%s\",\"shape\":%s}", name, osh);
    tu_graph_node(j, name, op, ins, outs, attrs);
}

/* nn.MultiheadAttention's k of the packed projection x [L 5, N 2, 3E 36] (E 12, 3 heads of 4):
 * view [5, 2, 3, 12] -> unsqueeze(0) -> transpose(0, -2) -> squeeze(-2) -> select(0, 1) ->
 * view [5, 6, 4] (N and the heads merged although N's stride is 36, not 12) -> transpose(0, 1)
 * -> view [2, 3, 5, 4]: element (n, h, l, d) at 12 + 72 l + 36 n + 4 h + d. A view of the select
 * merging N with E has no strides. */
static void test_chain_select(void **state)
{
    (void)state;
    static TuGraph j;
    memset(&j, 0, sizeof j);
    tu_cat(j.in, sizeof j.in, "{\"name\":\"x\",\"shape\":[5,2,36]}");
    tu_cat(j.out, sizeof j.out, "{\"name\":\"k\",\"shape\":[2,3,5,4]},");
    tu_cat(j.out, sizeof j.out, "{\"name\":\"bad\",\"shape\":[5,24]}");
    link(&j, "uf", "aten.view.default", "x", "[5,2,36]", "[5,2,3,12]", "\"size\":[5,2,3,12]");
    link(&j, "us", "aten.unsqueeze.default", "uf", "[5,2,3,12]", "[1,5,2,3,12]", "\"dim\":0");
    link(&j, "tr", "aten.transpose.int", "us", "[1,5,2,3,12]", "[3,5,2,1,12]",
         "\"dim0\":0,\"dim1\":-2");
    link(&j, "sq", "aten.squeeze.dim", "tr", "[3,5,2,1,12]", "[3,5,2,12]", "\"dim\":-2");
    link(&j, "sel", "aten.select.int", "sq", "[3,5,2,12]", "[5,2,12]", "\"dim\":0,\"index\":1");
    link(&j, "v3", "aten.view.default", "sel", "[5,2,12]", "[5,6,4]", "\"size\":[5,6,4]");
    link(&j, "t3", "aten.transpose.int", "v3", "[5,6,4]", "[6,5,4]", "\"dim0\":0,\"dim1\":1");
    link(&j, "k", "aten.view.default", "t3", "[6,5,4]", "[2,3,5,4]", "\"size\":[2,3,5,4]");
    link(&j, "bad", "aten.view.default", "sel", "[5,2,12]", "[5,24]", "\"size\":[5,24]");
    static char json[32768];
    tu_graph_json(&j, json, sizeof json);
    Graph *g = tu_read_json(json);
    assert_non_null(g);
    static const char *names[] = {"uf", "us", "tr", "sq", "sel", "v3", "t3", "k", "bad"};
    int chain[9];
    for (int i = 0; i < 9; i++) {
        chain[i] = graph_find_node(g, names[i]);
        assert_true(chain[i] >= 0 && sv_link_op(g, &g->nodes[chain[i]]));
    }
    int64_t st[NPU_MAX_RANK], off = -1;
    assert_true(sv_chain_strides(g, chain, 8, st, &off));
    assert_int_equal(off, 12);
    int64_t want[] = {36, 4, 72, 1};
    for (int d = 0; d < 4; d++)
        assert_int_equal(st[d], want[d]);
    /* up to the select: [5, 2, 12] at strides 72, 36, 1 */
    assert_true(sv_chain_strides(g, chain, 5, st, &off));
    assert_int_equal(off, 12);
    assert_true(st[0] == 72 && st[1] == 36 && st[2] == 1);
    int bad[] = {chain[0], chain[1], chain[2], chain[3], chain[4], chain[8]};
    assert_false(sv_chain_strides(g, bad, 6, st, &off));
    graph_free(g);
}

TU_MAIN(test_view_as, test_rows, test_chain_select)
