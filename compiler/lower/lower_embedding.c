/* embedding: rows of weight[V, D] picked by integer ids of any shape (int32 on the device, so
 * ids above 65504 are exact); out = ids.shape + [D] (shaders/embedding.comp).
 * Push EmbeddingPush (shaders/abi.h EMBEDDING_PUSH): n = numel(ids) * D; the strides are row
 * pitches. */
#include "compiler/lower/kernels.h"

#define EMB_WG 256

Status lower_embedding(const KernelCtx *c, PlanKernel *k)
{
    if (k->nin != 2) return kc_error(c, "embedding kernel needs weight and ids");
    const PlanTensor *w = kc_arg(k, c->p, 0), *ids = kc_arg(k, c->p, 1), *out = kc_out(k, c->p);
    if (w->rank != 2 || w->padded || out->padded || ids->storage != DT_I32)
        return kc_error(c, "embedding needs a dense 2-D weight and int ids");
    if (w->storage != out->storage)
        return kc_error(c, "embedding weight and output storage differ");
    int64_t v = w->shape[0], d = w->shape[1];
    if (kc_numel(out) != kc_numel(ids) * d)
        return kc_error(c, "embedding output has %lld elements, expected %lld",
                        (long long)kc_numel(out), (long long)(kc_numel(ids) * d));
    int64_t n = kc_numel(out);
    KcWords ws = {0};
    EmbeddingPush pe = {.n = kc_word(&ws, n),
                        .d = kc_word(&ws, d > 0 ? d : 1),
                        .v = kc_word(&ws, v),
                        .w_stride = kc_word(&ws, w->pshape[1]),
                        .y_stride = kc_word(&ws, d)};
    Status st = kc_words_ok(c, k, &ws);
    if (st == ST_OK) st = kc_push_block(c, k, &pe, sizeof pe);
    if (st == ST_OK) st = kc_spec(c, k, EMB_WG);
    kc_grid(k, n, EMB_WG);
    return st;
}
