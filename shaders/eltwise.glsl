// Elementwise math shared by the hand-written kernels (unary.comp, binary.glsl) and the generated
// ones (compiler/codegen/codegen_glsl.c): float32 functions with the CPU reference's semantics
// (runtime/cpu/cpu_eltwise.c): NaN through relu and clamp, torch's pow special cases, ATen's floor
// division, erf-based GELU. No bindings, no push constants: safe to include anywhere.
#ifndef NPU_ELTWISE_GLSL
#define NPU_ELTWISE_GLSL

float npu_nan()
{
    return uintBitsToFloat(0x7fc00000u);
}

float npu_inf()
{
    return uintBitsToFloat(0x7f800000u);
}

float copysign0(float mag, float s)
{
    return uintBitsToFloat((floatBitsToUint(mag) & 0x7fffffffu) | (floatBitsToUint(s) & 0x80000000u));
}

// clamp as the CPU reference (torch.clamp) computes it: NaN stays NaN (GLSL's clamp leaves it
// undefined), lo > hi gives hi.
float npu_clamp(float v, float lo, float hi)
{
    if (isnan(v)) return v;
    return v < lo ? (lo > hi ? hi : lo) : (v > hi ? hi : v);
}

float npu_relu(float v)
{
    return (v > 0.0 || isnan(v)) ? v : 0.0;
}

float npu_hardswish(float v)
{
    return v * npu_clamp(v + 3.0, 0.0, 6.0) / 6.0;
}

float npu_hardsigmoid(float v)
{
    return npu_clamp(v + 3.0, 0.0, 6.0) / 6.0;
}

float npu_sigmoid(float v)
{
    return 1.0 / (1.0 + exp(-v));
}

float npu_silu(float v)
{
    return v / (1.0 + exp(-v));
}

float npu_tanh(float v)
{
    return tanh(clamp(v, -15.0, 15.0));
}

// GELU with erf by Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7): GLSL has no erf.
float npu_gelu(float v)
{
    float z = abs(v) * 0.70710678;
    float t = 1.0 / (1.0 + 0.3275911 * z);
    float e = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * exp(-z * z);
    return 0.5 * v * (1.0 + sign(v) * e);
}

float npu_gelu_tanh(float v)
{
    float u = 0.7978845608 * (v + 0.044715 * v * v * v);
    return 0.5 * v * (1.0 + tanh(clamp(u, -15.0, 15.0)));
}

// floor division as ATen's div_floor_floating (runtime/cpu/cpu_eltwise.c div_floor_f), in float32.
// fmodf(x, z) is rebuilt exactly: the truncated quotient of the rounded x / z is off by one in
// magnitude only when the rounding crossed an integer, and then the fma remainder has the wrong
// sign; fma makes x - q * z exact.
float div_floor(float x, float z)
{
    if (z == 0.0) return x / z;
    precise float q = trunc(x / z);
    precise float m = fma(-q, z, x);
    if (m != 0.0 && ((m < 0.0) != (x < 0.0))) m = m + sign(q) * z;
    if (isinf(z) && !isinf(x)) m = x; // fmodf(x, +-inf) = x
    precise float dv = (x - m) / z;
    if (m != 0.0 && ((z < 0.0) != (m < 0.0))) dv -= 1.0;
    if (dv != 0.0) {
        float fd = floor(dv);
        if (dv - fd > 0.5) fd += 1.0;
        return fd;
    }
    return copysign0(0.0, x / z);
}

bool is_odd_int(float e)
{
    return abs(e) < 16777216.0 && fract(e) == 0.0 && mod(e, 2.0) == 1.0;
}

// torch's pow over floats: its special exponents (PowKernel.cpp), then C pow semantics for
// negative bases (integer exponents keep the sign of an odd power; others give NaN), zeros and
// infinities. GLSL's pow is undefined for x < 0, so it is built from exp2/log2 of |x|.
float npu_pow(float x, float e)
{
    if (e == 1.0) return x;
    if (e == 2.0) return x * x;
    if (e == 3.0) return x * x * x;
    if (e == 0.5) return sqrt(x);
    if (e == -0.5) return 1.0 / sqrt(x);
    if (e == -1.0) return 1.0 / x;
    if (e == -2.0) return 1.0 / (x * x);
    if (e == 0.0 || x == 1.0) return 1.0;
    if (isnan(x) || isnan(e)) return npu_nan();
    float ax = abs(x);
    if (isinf(e)) {
        if (ax == 1.0) return 1.0;
        return (ax > 1.0) == (e > 0.0) ? npu_inf() : 0.0;
    }
    bool odd = is_odd_int(e);
    if (x < 0.0 && fract(e) != 0.0) return npu_nan();
    float r;
    if (ax == 0.0)
        r = e > 0.0 ? 0.0 : npu_inf();
    else if (isinf(ax))
        r = e > 0.0 ? npu_inf() : 0.0;
    else
        r = exp2(e * log2(ax));
    return (odd && (x < 0.0 || (x == 0.0 && floatBitsToUint(x) != 0u))) ? -r : r;
}

#endif
