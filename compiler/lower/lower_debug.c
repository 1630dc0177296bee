/* corrupt: the kernel `--break ID` adds after a fused kernel. It rewrites that kernel's output
 * in place (y = 0.75 y + 0.25 over the physical buffer): wrong enough for any tolerance, finite,
 * and visible in describe and profile as its own row. Push CorruptPush (shaders/abi.h
 * CORRUPT_PUSH). */
#include "compiler/lower/kernels.h"

Status lower_corrupt(const KernelCtx *c, PlanKernel *k)
{
    const PlanTensor *out = kc_out(k, c->p);
    int64_t total = 1;
    for (int i = 0; i < out->rank; i++)
        total *= out->pshape[i];
    KcWords w = {0};
    CorruptPush pc = {.n = kc_word(&w, total)};
    Status st = kc_words_ok(c, k, &w);
    if (st == ST_OK) st = kc_push_block(c, k, &pc, sizeof pc);
    if (st == ST_OK) st = kc_spec(c, k, 256);
    kc_grid(k, total, 256);
    return st;
}
