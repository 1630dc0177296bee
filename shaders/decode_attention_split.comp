// decode_attention_split: the flash-decoding first pass, one workgroup per (batch, query head,
// split of the cache) writes fp32 partials (shaders/decode_attention.glsl); the combine pass is
// decode_attention_combine.comp. Bindings 0 = K, 1 = V, 2 = q, 3 = mask, 4 = partials (float),
// 5 = out (not accessed: it sets the module variant and orders the combine after this kernel).
#version 450
#define ATTN_SPLIT 1
#include "decode_attention.glsl"
