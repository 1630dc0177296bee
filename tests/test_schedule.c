/* The kernel order (compiler/schedule.h): kernels of each NPU partition ordered by level, one
 * recorder barrier between consecutive levels and none inside one, and the memory plan still
 * valid in that order: a symbolic run over the arena checks that every byte a kernel reads
 * still holds the tensor it expects (a reordering that let a reused byte be overwritten too
 * early fails here). On every fixture, with and without fusions, reuse, in f16 and bf16. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/pass.h"
#include "compiler/plan.h"
#include "compiler/schedule.h"
#include "tests/pass_check.h"
#include "tests/testutil.h"

#define BLOCK 16 /* bytes per owner cell: divides the arena alignment and every view offset */

/* Owner (base tensor id + 1) of each arena cell; 0 = nothing yet. */
typedef struct Mem {
    int *own;
    int64_t n;
} Mem;

static bool in_arena(const Plan *p, int t)
{
    return p->tensors[plan_base(p, t)].offset >= 0;
}

static void mem_write(Mem *m, const Plan *p, int t)
{
    if (t < 0 || !in_arena(p, t)) return;
    HzSpan s = plan_span(p, t);
    for (uint64_t c = s.lo / BLOCK; c < (s.hi + BLOCK - 1) / BLOCK; c++) {
        assert_true((int64_t)c < m->n);
        m->own[c] = plan_base(p, t) + 1;
    }
}

/* Every cell of t holds t's base. */
static void mem_read(const Mem *m, const Plan *p, int t, int k)
{
    if (t < 0 || !in_arena(p, t)) return;
    HzSpan s = plan_span(p, t);
    for (uint64_t c = s.lo / BLOCK; c < (s.hi + BLOCK - 1) / BLOCK; c++)
        if (m->own[c] != plan_base(p, t) + 1) {
            fprintf(stderr, "%s: kernel %d (%s) reads %s, whose bytes at %llu hold %s\n", p->source,
                    k, p->kernels[k].shader, p->tensors[t].name, (unsigned long long)(c * BLOCK),
                    m->own[c] ? p->tensors[m->own[c] - 1].name : "nothing");
            fail();
        }
}

/* Runs the plan's kernels in order on owner cells. */
static void check_memory(const Plan *p)
{
    Mem m = {calloc((size_t)(p->arena_bytes / BLOCK + 1), sizeof(int)), p->arena_bytes / BLOCK + 1};
    assert_non_null(m.own);
    for (int i = 0; i < p->ninputs; i++)
        mem_write(&m, p, p->inputs[i]);
    for (int k = 0; k < p->nkernels; k++) {
        const PlanKernel *kn = &p->kernels[k];
        for (int a = 0; a < kn->nin; a++)
            mem_read(&m, p, kn->args[a], k);
        for (int a = kn->nin; a < kn->nargs; a++)
            mem_write(&m, p, kn->args[a]);
    }
    for (int i = 0; i < p->noutputs; i++)
        mem_read(&m, p, p->outputs[i], p->nkernels - 1);
    free(m.own);
}

/* Levels never decrease inside an NPU partition; a single NPU partition has levels - 1
 * barriers; several partitions at most that. */
static void check_order(const Plan *p)
{
    for (int pi = 0; pi < p->nparts; pi++) {
        const PlanPart *pp = &p->parts[pi];
        if (pp->target != KT_NPU) continue;
        for (int k = pp->first_kernel + 1; k < pp->first_kernel + pp->nkernels; k++)
            assert_true(p->kernels[k].level >= p->kernels[k - 1].level);
    }
    int barriers = plan_barriers_total(p);
    if (p->nparts == 1 && p->parts[0].target == KT_NPU)
        assert_int_equal(barriers, p->nlevels - 1);
    else
        assert_true(barriers >= 0 && barriers <= p->nlevels - 1);
    for (int f = 0; f < p->nfusions; f++) {
        int k = p->fusions[f].kernel;
        if (k < 0) continue;
        assert_int_equal(p->kernels[k].fusion, f);
        for (int j = 0; j < k; j++)
            assert_int_not_equal(p->kernels[j].fusion, f);
    }
}

static const char *const fixtures[] = {
    "tests/models/mlp/model.json",
    "tests/models/convnet/model.json",
    "tests/models/resnet18/model.json",
    "tests/models/resnet50/model.json",
    "tests/models/mobilenet_block/model.json",
    "tests/models/gpt_block/model.json",
    "tests/models/qwen2_tiny/prefill.json",
    "tests/models/qwen2_tiny/decode.json",
    "tests/models/qwen2_5_1_5b/decode.json",
    "tests/models/qwen2_5_1_5b/prefill.json",
};

static void test_fixtures_order_and_memory(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++)
        for (int variant = 0; variant < 4; variant++) {
            CompileOptions o;
            compile_defaults(&o);
            if (variant == 1) o.no_fuse[o.n_no_fuse++] = "all";
            if (variant == 2) o.no_reuse = true;
            if (variant == 3) o.compute = DT_BF16;
            Pipeline p = tu_compile_file(fixtures[i], &o);
            check_order(p.plan);
            check_memory(p.plan);
            pipeline_free(&p);
        }
}

/* Mixed plans: gpt_block with its CPU partitions, and a CPU op forced into the middle of a
 * decoder (partitions ordered each on its own, lifetimes across them). */
static void test_mixed_partitions(void **state)
{
    (void)state;
    CompileOptions o;
    compile_defaults(&o);
    o.cpu_ops[o.n_cpu_ops++] = "aten.linear.default";
    Pipeline p = tu_compile_file("tests/models/qwen2_tiny/decode.json", &o);
    assert_true(p.plan->nparts > 2);
    check_order(p.plan);
    check_memory(p.plan);
    pipeline_free(&p);
}

/* The levels are the dependency levels: arena reuse adds none (qwen2_tiny decode has 23, after
 * linear_add folded its 4 residual adds and a generated kernel its position chain, 14 with the
 * rmsnorm and silu_mul folds, rope_cache and the one-dispatch attention, 12 with the ropes and
 * cache updates merged into the attention (decode_attention_cache); resnet18 20
 * when storage alone is counted), and ResNet's downsample conv shares a level with
 * the first conv of its block, next to it. */
static void test_levels_are_dependency_levels(void **state)
{
    (void)state;
    Pipeline p = tu_compile_file("tests/models/qwen2_tiny/decode.json", NULL);
    /* the rmsnorm and silu_mul levels folded (fuse_fold.c), the rope level merged
     * (fuse_merge.c) */
    assert_int_equal(p.plan->nlevels, 12);
    pipeline_free(&p);
    CompileOptions o;
    compile_defaults(&o);
    o.no_fuse[o.n_no_fuse++] = "rmsnorm_linear";
    o.no_fuse[o.n_no_fuse++] = "silu_mul_linear";
    p = tu_compile_file("tests/models/qwen2_tiny/decode.json", &o);
    assert_int_equal(p.plan->nlevels, 19); /* 21 without the merge */
    pipeline_free(&p);
    p = tu_compile_file("tests/models/resnet18/model.json", NULL);
    /* 20 data levels; the K-split convs add their reduce passes (42 kernels in 37 levels; the
     * f16 input is converted by the host, no pack kernel) */
    assert_int_equal(p.plan->nlevels, 37);
    int shared = 0;
    for (int k = 1; k < p.plan->nkernels; k++) {
        const PlanKernel *a = &p.plan->kernels[k - 1], *b = &p.plan->kernels[k];
        shared += a->level == b->level && a->args[0] == b->args[0] &&
                  strncmp(a->shader, "conv2d", 6) == 0 && strncmp(b->shader, "conv2d", 6) == 0;
    }
    assert_int_equal(shared, 3); /* the three downsampling blocks */
    pipeline_free(&p);
}

/* The hazard rule itself: read-read never conflicts, any overlap with a write does. */
static void test_hazard_rule(void **state)
{
    (void)state;
    HzSet s = {0};
    HzSpan a = {1, 0, 64, 3}, b = {1, 32, 96, 0}, c = {2, 0, 64, 0}, e = {1, 64, 128, 0};
    assert_int_equal(hz_add(&s, &a, false), ST_OK);
    assert_int_equal(hz_conflict(&s, &b, false), -1); /* read after read */
    assert_int_equal(hz_conflict(&s, &b, true), 3);   /* write after read */
    assert_int_equal(hz_conflict(&s, &c, true), -1);  /* another buffer */
    assert_int_equal(hz_conflict(&s, &e, true), -1);  /* adjacent bytes */
    a.tag = 5;
    assert_int_equal(hz_add(&s, &a, true), ST_OK);
    assert_int_equal(hz_conflict(&s, &b, false), 5); /* read after write */
    hz_clear(&s);
    assert_int_equal(hz_conflict(&s, &b, true), -1);
    hz_free(&s);
}

TU_MAIN(test_hazard_rule, test_fixtures_order_and_memory, test_mixed_partitions,
        test_levels_are_dependency_levels)
