// decode_attention: one workgroup per (batch, query head) walks the whole cache and writes the
// output (shaders/decode_attention.glsl; compiler/lower_attention.c picks it when the cache is
// short). Bindings 0 = K, 1 = V, 2 = q, 3 = mask, 4 = out.
#version 450
#define ATTN_SPLIT 0
#include "decode_attention.glsl"
