// binary core, the body of the rows binary, binary_s, add_relu and silu_mul:
// y = a OP b elementwise with broadcasting, computed in float32 over the logical output shape,
// each operand addressed with its own strides (0 on broadcast dims). Codes, flags and push words:
// compiler/lower/lower_binary.c. Spec: 0 = workgroup size.
// BIN_SCALAR: bindings {a, y}; operand b is the scalar push word (or a itself with BF_SELF).
// otherwise:  bindings {a, b, y}.
#include "common.glsl"
#include "index.glsl"
#include "eltwise.glsl"

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
    if ((pc.code & BF_SILU_A) != 0u) x = npu_silu(x);
    float r = binop(pc.code & 0xffu, x, z);
    if ((pc.code & BF_RELU) != 0u) r = npu_relu(r);
    y[iy] = S_STORE(r);
}
