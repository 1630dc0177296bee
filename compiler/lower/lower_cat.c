/* cat: dense inputs along one dim (shaders/cat.glsl). The binding count of a shader is static,
 * so a kernel takes a group of 2 to NPU_CAT_GROUP inputs (cat2, cat3, cat4) and writes their
 * slice of the output: a cat of more inputs is one kernel per group (groups as even as possible,
 * each of at least 2), every one writing its own rows along the dim, so DenseNet's long
 * concatenations stay on the NPU. One input left after dropping legacy empty tensors is a copy.
 * Tensors are seen as [outer, size, inner] around the cat dim. Push CatPush (shaders/abi.h
 * CAT_PUSH): the kernel writes out rows [start, start + span) along the dim, its input k
 * rows [start + end(k-1), start + end(k)) (ends relative to start); n = outer * span * inner. */
#include <string.h>

#include "compiler/lower/kernels.h"

#include "compiler/support.h"

#define CAT_WG 256

Status lower_cat(const KernelCtx *c, PlanKernel *k)
{
    const PlanTensor *out = kc_out(k, c->p);
    int r = out->rank;
    int dim = norm_dim(attr_int(c->anchor, "dim", 0), r);
    if (dim < 0) return kc_error(c, "cat dim out of range for rank %d", r);
    if (out->padded) return kc_error(c, "cat writes a padded layout");
    /* drop legacy empty inputs (rank 1, 0 elements), as the CPU reference does */
    int outk = k->args[k->nargs - 1], nin = 0;
    for (int i = 0; i < k->nin; i++) {
        const PlanTensor *x = kc_arg(k, c->p, i);
        if (x->rank == 1 && x->shape[0] == 0) continue;
        k->args[nin++] = k->args[i];
    }
    k->args[nin] = outk;
    k->nin = nin;
    k->nargs = nin + 1;
    if (nin < 1 || nin > NPU_MAX_CAT_INPUTS)
        return kc_error(c, "cat of %d inputs (the kernels take 1..%d)", nin, NPU_MAX_CAT_INPUTS);
    int64_t at = 0, inner = 1;
    for (int i = dim + 1; i < r; i++)
        inner *= out->shape[i];
    for (int i = 0; i < nin; i++) {
        const PlanTensor *x = kc_arg(k, c->p, i);
        if (x->rank != r || x->padded || x->storage != out->storage)
            return kc_error(c, "cat input %d differs from the output in rank, layout or storage",
                            i);
        for (int d = 0; d < r; d++)
            if (d != dim && x->shape[d] != out->shape[d])
                return kc_error(c, "cat input %d: dim %d is %lld, the output's %lld", i, d,
                                (long long)x->shape[d], (long long)out->shape[d]);
        at += x->shape[dim];
    }
    if (at != out->shape[dim])
        return kc_error(c, "cat gives %lld along the dim, declared %lld", (long long)at,
                        (long long)out->shape[dim]);
    if (nin == 1) { /* the input in its own order */
        Status st = kc_pick(c, k, (KernelKey){.kind = KK_copy});
        return st == ST_OK ? lower_copy(c, k) : st;
    }
    /* groups of inputs, as even as possible: the first `rem` take one more */
    int ng = (nin + NPU_CAT_GROUP - 1) / NPU_CAT_GROUP, base = nin / ng, rem = nin % ng;
    int64_t rows = out->shape[dim] * inner, outer = rows ? kc_numel(out) / rows : 0, start = 0;
    int args[NPU_MAX_CAT_INPUTS + 1];
    memcpy(args, k->args, sizeof(int) * (size_t)nin);
    PlanKernel *kg = k;
    for (int gi = 0, first = 0; gi < ng; gi++) {
        int m = base + (gi < rem), bind[NPU_CAT_GROUP + 1];
        int64_t end[NPU_CAT_GROUP] = {0}, span = 0;
        for (int i = 0; i < m; i++) {
            bind[i] = args[first + i];
            span += c->p->tensors[args[first + i]].shape[dim];
            end[i] = span;
        }
        bind[m] = outk;
        KernelKey key = {.kind = KK_cat, .n = m};
        Status st = ST_OK;
        if (gi == 0) {
            st = kc_set_args(c, k, bind, m, m + 1);
            if (st == ST_OK) st = kc_pick(c, k, key);
        } else {
            kg = kc_append(c, kg, key, bind, m, m + 1);
            if (!kg) return ST_BAD_INPUT;
        }
        int64_t n = outer * span * inner;
        KcWords w = {0};
        CatPush pc = {
            .n = kc_word(&w, n),
            .total = kc_word(&w, out->shape[dim]),
            .inner = kc_word(&w, inner),
            .end0 = kc_word(&w, end[0]),
            .end1 = kc_word(&w, end[1]),
            .end2 = kc_word(&w, end[2]),
            .start = kc_word(&w, start),
            .span = kc_word(&w, span),
        };
        if (st == ST_OK) st = kc_words_ok(c, kg, &w);
        if (st == ST_OK) st = kc_push_block(c, kg, &pc, sizeof pc);
        if (st == ST_OK) st = kc_spec(c, kg, CAT_WG);
        if (st != ST_OK) return st;
        kc_grid(kg, n, CAT_WG);
        first += m;
        start += span;
    }
    return ST_OK;
}
