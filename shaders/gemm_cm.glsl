// Tensor-core fragments for the nv-coopmat GEMM kernels (conv2d_cm*, matmul_cm*): the
// GL_NV_cooperative_matrix operations they use, behind macros, so that the same kernel text also
// builds with CM_EMULATE 1 as a portable module (stems *_cmx) that computes the same fragments
// with plain shared-memory reads. The emulation is how lavapipe (no cooperative matrix) tests
// everything of these kernels but the tensor-core instructions themselves: tiling, im2col
// staging, padded strides, fragment offsets, split-K, the epilogue (tests/test_vk_conv.c).
//
// Fragments are 16x16 at subgroup scope: A (M x K) and B (K x N) of float16_t loaded from shared
// memory, accumulators of float32. A workgroup is 4 subgroups of 32 lanes (the tier requires
// 32-lane subgroups): CM_SUBGROUP is the subgroup index 0..3. The emulation uses 32-invocation
// slices of the workgroup as its subgroups (lavapipe's are 8 lanes), lane l owning elements
// 8l .. 8l+7 of the row-major 16x16 accumulator.
//
// Element (i, j) of a fragment loaded at `off` with `stride` is at off + i*stride + j (row-major)
// or off + j*stride + i (column-major, cm true), as OpCooperativeMatrixLoadNV defines it. The
// NV extension wants offsets and strides of 16 bytes (8 halves, 4 floats) multiples: callers
// pad their shared rows by 8 halves (f32 staging rows by 4 floats) and start fragments at
// multiples of 16 elements along the contiguous dimension.
//
// The emulation's MMA keeps its loops rolled ([[dont_unroll]]): unrolled, its 8 x 16 bodies per
// fragment product made lavapipe's LLVM compile each pipeline for 10-40 s (cold Mesa shader
// cache; 0.9-3.4 s rolled, measured on the test host), and the tests build dozens of them.
//
// Macros (A and B fragments come from shared arrays the kernel names SH_A and SH_B):
//   CM_ACC(name, n)            declares n accumulators      CM_ZERO(a)     a = 0
//   CM_FRAG(name, n)           declares n A/B fragments
//   CM_LOAD_A(f, off, st, cm)  f = A fragment at SH_A[off] CM_LOAD_B(f, off, st, cm) from SH_B
//   CM_MMA(acc, fa, fb)        acc += fa * fb               CM_STORE(acc, arr, off, st) row-major
#ifndef NPU_GEMM_CM_GLSL
#define NPU_GEMM_CM_GLSL

#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require

#if CM_EMULATE

#define CM_SUBGROUP (gl_LocalInvocationID.x / 32u)
#define CM_LANE (gl_LocalInvocationID.x % 32u)
#define CM_ACC(name, n) float name[n][8]
#define CM_FRAG(name, n) uvec3 name[n]
#define CM_ZERO(a)                                                                             \
    for (uint e_ = 0u; e_ < 8u; e_++) a[e_] = 0.0
// With GEMM_SH_VEC the shared arrays hold 8 halves per uvec4 and offsets and strides count
// vectors (as OpCooperativeMatrixLoadNV counts array elements): CM_UNIT halves each.
#if GEMM_SH_VEC
#define CM_UNIT 8u
#define CM_SH(arr, i) unpackHalf2x16(arr[(i) / 8u][((i) % 8u) / 2u])[(i) % 2u]
#else
#define CM_UNIT 1u
#define CM_SH(arr, i) float(arr[i])
#endif
#define CM_LOAD_A(f, off, st, cm) f = uvec3((off) * CM_UNIT, (st) * CM_UNIT, (cm) ? 1u : 0u)
#define CM_LOAD_B(f, off, st, cm) f = uvec3((off) * CM_UNIT, (st) * CM_UNIT, (cm) ? 1u : 0u)
#define CM_MMA(acc, fa, fb)                                                                    \
    [[dont_unroll]] for (uint e_ = 0u; e_ < 8u; e_++) {                                        \
        uint i_ = (CM_LANE * 8u + e_) / 16u, j_ = (CM_LANE * 8u + e_) % 16u;                   \
        float s_ = acc[e_];                                                                    \
        [[dont_unroll]] for (uint k_ = 0u; k_ < 16u; k_++) {                                   \
            uint ai_ = fa.x + (fa.z != 0u ? k_ * fa.y + i_ : i_ * fa.y + k_);                  \
            uint bi_ = fb.x + (fb.z != 0u ? j_ * fb.y + k_ : k_ * fb.y + j_);                  \
            s_ += CM_SH(SH_A, ai_) * CM_SH(SH_B, bi_);                                         \
        }                                                                                      \
        acc[e_] = s_;                                                                          \
    }
#define CM_STORE(acc, arr, off, st)                                                            \
    for (uint e_ = 0u; e_ < 8u; e_++)                                                          \
    arr[(off) + ((CM_LANE * 8u + e_) / 16u) * (st) + (CM_LANE * 8u + e_) % 16u] = acc[e_]

#else

#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require

#define CM_SUBGROUP gl_SubgroupID
#define CM_ACC(name, n) fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> name[n]
#define CM_FRAG(name, n) fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> name[n]
#define CM_ZERO(a) a = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0)
#define CM_LOAD_A(f, off, st, cm) coopMatLoadNV(f, SH_A, off, st, cm)
#define CM_LOAD_B(f, off, st, cm) coopMatLoadNV(f, SH_B, off, st, cm)
#define CM_MMA(acc, fa, fb) acc = coopMatMulAddNV(fa, fb, acc)
#define CM_STORE(acc, arr, off, st) coopMatStoreNV(acc, arr, off, st, false)

#endif

#endif
