// binary core, the body of the rows binary, binary_s, add_relu and silu_mul:
// y = a OP b elementwise with broadcasting, computed in float32 over the logical output shape,
// each operand addressed with its own strides (0 on broadcast dims). Codes, flags and push words:
// abi.h BINARY_PUSH; lowering: compiler/lower/lower_binary.c. Spec: 0 = workgroup size.
// BIN_SCALAR: bindings {a, y}; operand b is the scalar push word (or a itself with BF_SELF).
// otherwise:  bindings {a, b, y}.
#include "common.glsl"
#include "abi.h"
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
PUSH_BLOCK(BINARY_PUSH)

// abi.h's flag bits as constants
const uint F_RELU = BF_RELU, F_SILU_A = BF_SILU_A, F_SELF = BF_SELF, F_DENSE = BF_DENSE;

float binop(uint op, float x, float z)
{
    switch (op) {
    case BN_ADD: return x + pc.alpha * z;
    case BN_SUB: return x - pc.alpha * z;
    case BN_RSUB: return z - pc.alpha * x;
    case BN_MUL: return x * z;
    case BN_DIV: return x / z;
    case BN_DIV_TRUNC: return trunc(x / z);
    case BN_DIV_FLOOR: return div_floor(x, z);
    case BN_POW: return npu_pow(x, z);
    // comparisons and logical ops: bool results as 0/1 in the storage of bool tensors (the
    // compute dtype). Ordered compares are false with a NaN operand, != true (as C and torch);
    // a nonzero (or NaN) operand is true for and/or.
    case BN_EQ: return x == z ? 1.0 : 0.0;
    case BN_NE: return x == z ? 0.0 : 1.0;
    case BN_LT: return x < z ? 1.0 : 0.0;
    case BN_LE: return x <= z ? 1.0 : 0.0;
    case BN_GT: return x > z ? 1.0 : 0.0;
    case BN_GE: return x >= z ? 1.0 : 0.0;
    case BN_AND: return (x == 0.0 || z == 0.0) ? 0.0 : 1.0;
    case BN_OR: return (x == 0.0 && z == 0.0) ? 0.0 : 1.0;
    }
    return npu_nan();
}

void main()
{
    uint i = npu_global_index();
    if (i >= pc.n) return;
    uint ia = i, ib = i, iy = i;
    if ((pc.code & F_DENSE) == 0u) {
        uint rem = i;
        int oa = 0, ob = 0, oy = 0;
        for (int d = KERNEL_DIMS - 1; d >= 0; d--) {
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
    float z = (pc.code & F_SELF) != 0u ? x : pc.scalar;
#else
    float z = S_LOAD(b[ib]);
#endif
    if ((pc.code & F_SILU_A) != 0u) x = npu_silu(x);
    float r = binop(pc.code & 0xffu, x, z);
    if ((pc.code & F_RELU) != 0u) r = npu_relu(r);
    y[iy] = S_STORE(r);
}
