/* run_tests: foreign-leaks-ok (lavapipe leaks inside itself; see test_vk_core.c)
 * Models nobody here tuned for (issue #5), hand-written in the exporter's format by
 * tests/models/gen_untuned.py: a MobileNetV3-like block (depthwise conv, hardswish/hardsigmoid/
 * relu6, squeeze-excite broadcast multiply, ceil_mode max and avg pools) and a GPT-2-like
 * decoder layer (layer_norm, addmm, a causal mask built in the graph from arange, a comparison,
 * where and masked_fill, positions from a cumsum of ones, tanh gelu, a tied lm_head). There is no
 * PyTorch reference for them: each runs on the CPU reference as imported and compiled on Vulkan
 * (NaN-poisoned buffers, seeded random weights and inputs) in every storage dtype, and every
 * output must agree. tests/cli/untuned.sh covers placement, --no-fuse and forced CPU ops. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "common/fileio.h"
#include "tests/vk_check.h"

/* One model in fp32, fp16 and bf16 storage; `shader` must appear among the NPU kernels. The
 * numbers go to stdout so a run's log records how close each dtype came. */
static void check_model(const char *path, const char *shader)
{
    char *j = tu_read_file(path);
    if (!j) fail_msg("cannot read %s (run from the repository root)", path);
    static const struct {
        const char *dt;
        double tol;
    } cases[] = {{"fp32", VC_TOL_F32}, {"fp16", VC_TOL_F16}, {"bf16", VC_TOL_BF16}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double e = vc_check_json(j, cases[i].dt, cases[i].tol, shader);
        printf("%s %s: worst rel_l2 %.3g (tol %.3g)\n", path, cases[i].dt, e, cases[i].tol);
    }
    free(j);
}

static void test_mobilenet_block(void **state)
{
    (void)state;
    check_model("tests/models/mobilenet_block/model.json", "pool2d");
}

static void test_gpt_block(void **state)
{
    (void)state;
    check_model("tests/models/gpt_block/model.json", "layernorm");
}

TU_MAIN(test_mobilenet_block, test_gpt_block)
