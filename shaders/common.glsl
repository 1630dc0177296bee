// Shared include for every kernel: the storage element type of one build variant and the macros
// that convert it to and from float. Arithmetic is always float32; only storage changes.
//   -DSTORAGE_F32   STORAGE_T = float
//   -DSTORAGE_F16   STORAGE_T = float16_t. The float -> float16_t conversion rounds as the driver
//                   likes (RTE or RTZ): tests use an fp16 tolerance of a few ulp.
//   -DSTORAGE_I32   STORAGE_T = int (integer tensors; only data-movement kernels build it:
//                   their rows of shaders/kernels.def list the variant i32)
//   -DSTORAGE_BF16  STORAGE_T = uint16_t holding bf16 bits: our glslc lacks GL_EXT_bfloat16, so
//                   S_LOAD widens by a 16-bit shift (exact) and S_STORE rounds to nearest even.
// Macros rather than functions: a 16-bit type may then appear only in buffer blocks, so the SPIR-V
// needs the StorageBuffer16BitAccess capability alone (no Int16/Float16 arithmetic).
// The build compiles one SPIR-V per variant a kernel's row of shaders/kernels.def lists
// (NAME.f32.spv, NAME.f16.spv, NAME.bf16.spv; "none": NAME.spv without a STORAGE_ macro).
#ifndef NPU_COMMON_GLSL
#define NPU_COMMON_GLSL

#if defined(STORAGE_F16) || defined(STORAGE_BF16)
#extension GL_EXT_shader_16bit_storage : require
#endif

// S_ROUND(x): x rounded to the storage dtype and widened back (what a store and a load give),
// in 32-bit arithmetic.
#if defined(STORAGE_F16)
#define STORAGE_T float16_t
#define S_LOAD(v) float(v)
#define S_STORE(x) float16_t(x)
#define S_ROUND(v) unpackHalf2x16(packHalf2x16(vec2((v), 0.0))).x
#elif defined(STORAGE_BF16)
#define STORAGE_T uint16_t
#define S_LOAD(v) uintBitsToFloat(uint(v) << 16)
#define S_STORE(x) uint16_t(npu_bf16_bits(x))
#define S_ROUND(x) uintBitsToFloat(npu_bf16_bits(x) << 16)
uint npu_bf16_bits(float x)
{
    uint u = floatBitsToUint(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (u >> 16) | 0x40u; // NaN stays a (quiet) NaN
    return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;                  // round to nearest even
}
#elif defined(STORAGE_F32)
#define STORAGE_T float
#define S_LOAD(v) (v)
#define S_STORE(x) (x)
#define S_ROUND(x) (x)
#elif defined(STORAGE_I32)
// Integer tensors (int64 in the IR, int32 on the device): data-movement kernels copy them raw.
#define STORAGE_T int
#define S_LOAD(v) float(v)
#define S_STORE(x) int(x)
#define S_ROUND(x) float(int(x))
#else
#error "compile with -DSTORAGE_F32, -DSTORAGE_F16, -DSTORAGE_BF16 or -DSTORAGE_I32"
#endif

#endif
