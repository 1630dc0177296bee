// binary core, included by binary.comp, binary_s.comp, add_relu.comp and silu_mul.comp:
// y = a OP b elementwise with broadcasting, computed in float32 over the logical output shape,
// each operand addressed with its own strides (0 on broadcast dims). Codes, flags and push words:
// compiler/lower_binary.c. Spec: 0 = workgroup size.
// BIN_SCALAR: bindings {a, y}; operand b is the scalar push word (or a itself with BF_SELF).
// otherwise:  bindings {a, b, y}.
#include "common.glsl"
#include "index.glsl"

layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer A { STORAGE_T a[]; };
#ifdef BIN_SCALAR
layout(std430, set = 0, binding = 1) writeonly buffer Y { STORAGE_T y[]; };
#else
layout(std430, set = 0, binding = 1) readonly buffer B { STORAGE_T b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Y { STORAGE_T y[]; };
#endif
layout(push_constant) uniform Push {
    uint n;
    uint code;
    float alpha;
    float scalar;
    uint shape[6];
    int sa[6];
    int sb[6];
    int so[6];
} pc;

const uint BF_RELU = 1u << 8, BF_SILU_A = 1u << 9, BF_SELF = 1u << 10, BF_DENSE = 1u << 11;

float npu_nan()
{
    return uintBitsToFloat(0x7fc00000u);
}

float copysign0(float mag, float s)
{
    return uintBitsToFloat((floatBitsToUint(mag) & 0x7fffffffu) | (floatBitsToUint(s) & 0x80000000u));
}

// floor division as ATen's div_floor_floating (runtime/cpu_eltwise.c div_floor_f), in float32.
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
        return (ax > 1.0) == (e > 0.0) ? uintBitsToFloat(0x7f800000u) : 0.0;
    }
    bool odd = is_odd_int(e);
    if (x < 0.0 && fract(e) != 0.0) return npu_nan();
    float r;
    if (ax == 0.0)
        r = e > 0.0 ? 0.0 : uintBitsToFloat(0x7f800000u);
    else if (isinf(ax))
        r = e > 0.0 ? uintBitsToFloat(0x7f800000u) : 0.0;
    else
        r = exp2(e * log2(ax));
    return (odd && (x < 0.0 || (x == 0.0 && floatBitsToUint(x) != 0u))) ? -r : r;
}

float binop(uint op, float x, float z)
{
    switch (op) {
    case 1: return x + pc.alpha * z;
    case 2: return x - pc.alpha * z;
    case 3: return z - pc.alpha * x;
    case 4: return x * z;
    case 5: return x / z;
    case 6: return trunc(x / z);
    case 7: return div_floor(x, z);
    case 8: return npu_pow(x, z);
    // comparisons and logical ops: bool results as 0/1 in the storage of bool tensors (the
    // compute dtype). Ordered compares are false with a NaN operand, != true (as C and torch);
    // a nonzero (or NaN) operand is true for and/or.
    case 9: return x == z ? 1.0 : 0.0;
    case 10: return x == z ? 0.0 : 1.0;
    case 11: return x < z ? 1.0 : 0.0;
    case 12: return x <= z ? 1.0 : 0.0;
    case 13: return x > z ? 1.0 : 0.0;
    case 14: return x >= z ? 1.0 : 0.0;
    case 15: return (x == 0.0 || z == 0.0) ? 0.0 : 1.0;
    case 16: return (x == 0.0 && z == 0.0) ? 0.0 : 1.0;
    }
    return npu_nan();
}

void main()
{
    uint i = npu_global_index();
    if (i >= pc.n) return;
    uint ia = i, ib = i, iy = i;
    if ((pc.code & BF_DENSE) == 0u) {
        uint rem = i;
        int oa = 0, ob = 0, oy = 0;
        for (int d = 5; d >= 0; d--) {
            uint c = rem % pc.shape[d];
            rem /= pc.shape[d];
            oa += int(c) * pc.sa[d];
            ob += int(c) * pc.sb[d];
            oy += int(c) * pc.so[d];
        }
        ia = uint(oa);
        ib = uint(ob);
        iy = uint(oy);
    }
    float x = S_LOAD(a[ia]);
#ifdef BIN_SCALAR
    float z = (pc.code & BF_SELF) != 0u ? x : pc.scalar;
#else
    float z = S_LOAD(b[ib]);
#endif
    if ((pc.code & BF_SILU_A) != 0u) x = x / (1.0 + exp(-x));
    float r = binop(pc.code & 0xffu, x, z);
    if ((pc.code & BF_RELU) != 0u) r = (r > 0.0 || isnan(r)) ? r : 0.0;
    y[iy] = S_STORE(r);
}
