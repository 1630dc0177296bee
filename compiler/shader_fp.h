/* Kernel fingerprints: hash64 (FNV-1a, common/hash.h) of each SPIR-V module this build embeds
 * for its hand-written kernels. tools/spv_fp.c computes them at build time, from the same
 * modules tools/embed.sh embeds for the runtime (runtime/vulkan/vk_shaders.h), into the
 * generated $(BUILD)/gen/shaders_fp.c, so the compiler has them without the runtime. Lowering
 * records each built-in NPU kernel's in the plan (PlanKernel.fingerprint), a .npubin keeps it,
 * and a later build refuses a file whose kernels were lowered for other modules (npubin.h,
 * npubin_verify). The runtime names a kernel's module through shader_fp_for too, so the module
 * it runs is the one whose fingerprint was checked. Read-only data; any module may call these. */
#ifndef NPU_SHADER_FP_H
#define NPU_SHADER_FP_H

#include <stddef.h>
#include <stdint.h>
#include "compiler/plan.h"

typedef struct ShaderFp {
    const char *name; /* "axpy.f16" */
    uint64_t fp;
} ShaderFp;

/* Defined by the generated file: shader_fp_count rows sorted by strcmp, then a {0} sentinel. */
extern const ShaderFp shader_fp_table[];
extern const size_t shader_fp_count;

/* The module a hand-written kernel of shader `stem` runs for output storage `storage`:
 * "stem.f16" / "stem.bf16" / "stem.i32" / "stem.f32" when this build has it, else "stem" (a
 * shader without variants); its name goes to name[n]. Returns its fingerprint, 0 when the build
 * has neither. */
uint64_t shader_fp_for(const char *stem, DType storage, char *name, size_t n);
/* This build's fingerprint of the module kernel k of p runs (shader_fp_for of its output's
 * storage; the module's name to name[n] when name is not NULL); 0 for a CPU kernel, a generated
 * one (the plan carries its SPIR-V: name is its module's) and one whose module this build
 * lacks. */
uint64_t shader_fp_kernel(const Plan *p, const PlanKernel *k, char *name, size_t n);
/* Records every kernel's shader_fp_kernel in its fingerprint (lowering, once the kernels and
 * generated modules are built). */
void shader_fp_plan(Plan *p);

#endif
