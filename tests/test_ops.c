/* The op table: every slot of every per-op table is filled, names resolve both ways, the classes
 * agree with the flags. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/ops.h"
#include "runtime/cpu/cpu_kernels.h"
#include "tests/testutil.h"

static void test_every_op_has_cpu_kernel(void **state)
{
    (void)state;
    for (int op = 0; op < OP_COUNT; op++) {
        if (!cpu_kernel_table[op]) fail_msg("op %s has no CPU kernel", op_info[op].id);
    }
}

static void test_names_resolve(void **state)
{
    (void)state;
    assert_int_equal(op_lookup("aten.add_.Tensor"), OP_ADD);
    assert_int_equal(op_lookup("aten.relu_.default"), OP_RELU);
    assert_int_equal(op_lookup("aten.conv2d.default"), OP_CONV2D);
    assert_int_equal(op_lookup("<built-in function getitem>"), OP_GETITEM);
    assert_int_equal(op_lookup("aten.nonexistent.default"), OP_INVALID);
    assert_string_equal(op_short_name(OP_MAX_POOL2D), "max_pool2d");
    for (int op = 0; op < OP_COUNT; op++) {
        const char *c = op_canonical_name((OpId)op);
        assert_int_equal(op_lookup(c), op);
        assert_true(op_info[op].min_in <= op_info[op].max_in);
        assert_non_null(op_info[op].doc);
    }
}

static void test_names_unique(void **state)
{
    (void)state;
    /* an ATen name listed under two ops would silently route to the first */
    for (int a = 0; a < OP_COUNT; a++) {
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", op_info[a].names);
        for (char *s = strtok(buf, "|"); s; s = strtok(NULL, "|"))
            if (op_lookup(s) != a) fail_msg("%s listed twice", s);
    }
}

/* The CLASS column agrees with the flags: the elementwise classes are OPF_ELTWISE, the view
 * classes OPF_VIEW, and the groups code relies on are what they say. */
static void test_classes_agree_with_flags(void **state)
{
    (void)state;
    for (int op = 0; op < OP_COUNT; op++) {
        OpClass k = op_class((OpId)op);
        bool elt =
            k == OC_unary || k == OC_binary || k == OC_compare || k == OC_logical || k == OC_select;
        bool view = k == OC_reshape || k == OC_identity || k == OC_permute || k == OC_slice ||
                    k == OC_expand;
        if (elt && !op_has((OpId)op, OPF_ELTWISE))
            fail_msg("%s: an elementwise class without OPF_ELTWISE", op_info[op].id);
        if (view && !op_has((OpId)op, OPF_VIEW))
            fail_msg("%s: a view class without OPF_VIEW", op_info[op].id);
    }
    assert_int_equal(op_class(OP_EQ), OC_compare);
    assert_int_equal(op_class(OP_LOGICAL_OR), OC_logical);
    assert_int_equal(op_class(OP_TRANSPOSE), OC_permute);
    assert_true(op_keeps_order(OP_VIEW) && op_keeps_order(OP_DROPOUT));
    assert_false(op_keeps_order(OP_DEPAD) || op_keeps_order(OP_PERMUTE));
    assert_int_equal(op_class(OP_COUNT), OC_other);
}

TU_MAIN(test_every_op_has_cpu_kernel, test_names_resolve, test_names_unique,
        test_classes_agree_with_flags)
