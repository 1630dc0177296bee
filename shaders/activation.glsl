// The activation codes of the matmul family's fused epilogue (compiler/lower_matmul.c ACT_*):
// 0 none, 1 relu, 2 gelu (erf), 3 gelu (tanh), 4 silu, 5 sigmoid, 6 tanh, 7 hardswish.
// (shaders/matmul.glsl has the same function inline.)
#ifndef NPU_ACTIVATION_GLSL
#define NPU_ACTIVATION_GLSL

float npu_erf_as(float z)
{
    // Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7) for z >= 0: GLSL has no erf
    float t = 1.0 / (1.0 + 0.3275911 * z);
    return 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t +
                  0.254829592) * t * exp(-z * z);
}

float npu_activate(float v, uint act)
{
    switch (act) {
    case 1: return (v > 0.0 || isnan(v)) ? v : 0.0;
    case 2: return 0.5 * v * (1.0 + sign(v) * npu_erf_as(abs(v) * 0.70710678));
    case 3: {
        float u = 0.7978845608 * (v + 0.044715 * v * v * v);
        return 0.5 * v * (1.0 + tanh(clamp(u, -15.0, 15.0)));
    }
    case 4: return v / (1.0 + exp(-v));
    case 5: return 1.0 / (1.0 + exp(-v));
    case 6: return tanh(clamp(v, -15.0, 15.0));
    case 7: {
        float t = v + 3.0;
        t = isnan(t) ? t : clamp(t, 0.0, 6.0);
        return v * t / 6.0;
    }
    }
    return v;
}

#endif
