// The bindings of the layer norms (layernorm.glsl, layernorm_t.glsl): x, the weight w when
// LN_WEIGHT, the bias b when LN_BIAS (each 0 or 1), then the output y; ln_affine applies the
// weight and bias of element j to a normalised value. Include after common.glsl.
#ifndef NPU_LAYERNORM_IO_GLSL
#define NPU_LAYERNORM_IO_GLSL

layout(std430, set = 0, binding = 0) readonly buffer X { STORAGE_T x[]; };
#if LN_WEIGHT
layout(std430, set = 0, binding = 1) readonly buffer W { STORAGE_T w[]; };
#endif
#if LN_BIAS
layout(std430, set = 0, binding = 2) readonly buffer B { STORAGE_T b[]; };
#endif
layout(std430, set = 0, binding = 1 + LN_WEIGHT + LN_BIAS) writeonly buffer Y { STORAGE_T y[]; };

float ln_affine(float v, uint j)
{
#if LN_WEIGHT
    v *= S_LOAD(w[j]);
#endif
#if LN_BIAS
    v += S_LOAD(b[j]);
#endif
    return v;
}

#endif
