/* app/attrib.h: which kernel of a plan computes a fusion instance's members and a tensor, and
 * where each --break lands, on plans compiled here (no device): qwen2_tiny decode, whose prologue
 * folds run rmsnorm and silu_mul instances inside the GEMVs reading them, and convnet, whose
 * split conv writes its output in its second kernel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "app/attrib.h"
#include "compiler/pass.h"
#include "tests/testutil.h"

static Pipeline compiled(const char *path, const char *brk)
{
    Pipeline p;
    assert_int_equal(tu_compile(path, brk, &p), ST_OK);
    return p;
}

static int fusion(const Plan *p, const char *id)
{
    for (int f = 0; f < p->nfusions; f++)
        if (strcmp(p->fusions[f].id, id) == 0) return f;
    fail_msg("no fusion %s", id);
    return -1;
}

static const char *fusion_of(const Plan *p, int k)
{
    return p->kernels[k].fusion >= 0 ? p->fusions[p->kernels[k].fusion].id : "";
}

/* F8 silu_mul is folded (F22) into F9's GEMV: no kernel of its own; its ops and the break are in
 * F9's kernel, whose output the corrupt kernel after it rewrites. */
static void test_folded_break(void **state)
{
    (void)state;
    Pipeline pl = compiled("tests/models/qwen2_tiny/decode.json", "F8,F9,F7");
    const Plan *p = pl.plan;
    bool own;
    int k = attrib_fusion_kernel(p, fusion(p, "F8"), &own);
    assert_false(own);
    assert_string_equal(fusion_of(p, k), "F9");
    assert_true(strncmp(p->kernels[k].shader, "gemv", 4) == 0);
    BreakSite b[8];
    int n = attrib_breaks(p, "F8,F9,F7", b, 8);
    assert_int_equal(n, 3);
    /* F8: inside F9's kernel, the corrupt kernel right after rewriting its output */
    assert_string_equal(b[0].id, "F8");
    assert_false(b[0].own);
    assert_int_equal(b[0].kernel, k);
    assert_true(b[0].corrupt > k);
    assert_string_equal(p->kernels[b[0].corrupt].shader, "corrupt");
    assert_int_equal(p->kernels[b[0].corrupt].args[p->kernels[b[0].corrupt].nargs - 1],
                     p->kernels[k].args[p->kernels[k].nargs - 1]);
    char text[512];
    attrib_break_text(p, &b[0], text, sizeof text);
    char want[256];
    snprintf(want, sizeof want,
             "F8 silu_mul has no kernel of its own in this plan: its ops (silu, mul_10) run inside "
             "kernel %d (%s, F9)",
             k, p->kernels[k].shader);
    assert_non_null(strstr(text, want));
    attrib_break_short(p, &b[0], text, sizeof text);
    snprintf(want, sizeof want, "F8 in kernel %d (F9)", k);
    assert_string_equal(text, want);
    assert_ptr_equal(attrib_break_of_kernel(b, n, b[0].corrupt), &b[0]);
    /* F9 has its kernel: the same one, its own */
    assert_string_equal(b[1].id, "F9");
    assert_true(b[1].own);
    assert_int_equal(b[1].kernel, k);
    attrib_break_text(p, &b[1], text, sizeof text);
    assert_non_null(
        strstr(text, "F9 linear_add: the break corrupts the output add_6 of its kernel"));
    /* F7 rmsnorm runs inside the two GEMVs of no fusion reading it: the first one */
    assert_false(b[2].own);
    assert_true(b[2].kernel >= 0 && p->kernels[b[2].kernel].fusion < 0);
    assert_true(b[2].corrupt > b[2].kernel);
    /* mul_10 is no kernel's output: computed inside F9's kernel */
    bool inside;
    assert_int_equal(attrib_tensor_kernel(p, "mul_10", &inside), k);
    assert_true(inside);
    assert_int_equal(attrib_tensor_kernel(p, "no_such_tensor", &inside), -1);
    pipeline_free(&pl);
}

/* convnet's F2 is a split conv (part, then the reduction writing relu_1): the break corrupts the
 * reduction's output, which is relu_1's last writer. */
static void test_own_break(void **state)
{
    (void)state;
    Pipeline pl = compiled("tests/models/convnet/model.json", "F2");
    const Plan *p = pl.plan;
    BreakSite b[2];
    assert_int_equal(attrib_breaks(p, "F2", b, 2), 1);
    assert_true(b[0].own);
    bool inside;
    int w = attrib_tensor_kernel(p, "relu_1", &inside);
    assert_false(inside);
    assert_int_equal(b[0].kernel, w);
    assert_string_equal(p->kernels[b[0].corrupt].shader, "corrupt");
    bool own;
    int first = attrib_fusion_kernel(p, fusion(p, "F2"), &own);
    assert_true(own);
    assert_true(first <= w);
    assert_int_equal(attrib_breaks(p, "F99", b, 2), 0); /* an id of no instance */
    pipeline_free(&pl);
}

TU_MAIN(test_folded_break, test_own_break)
