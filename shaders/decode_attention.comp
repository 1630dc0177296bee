// decode_attention: the attention of a KV-cache decode step (one query row) or prefill (Tq rows),
// one workgroup per (batch, group of G query heads sharing one kv head, query row, split of the
// cache); the last split of a (batch, group, row) to finish merges the splits (shaders/decode_attention.glsl; lowering:
// compiler/lower_attention.c). Bindings 0 = K, 1 = V, 2 = q, 3 = mask, 4 = scratch (tickets and
// fp32 partials; the output again when the cache is not split), 5 = out.
#version 450
#include "decode_attention.glsl"
