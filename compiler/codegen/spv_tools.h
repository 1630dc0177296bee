/* SPIR-V through SPIRV-Tools' C API (spirv-tools): disassembly for the source -> assembly view
 * of `describe --source` and the explorer, and validation for the .npubin reader (a generated
 * module in a file is checked before any driver sees it). */
#ifndef NPU_SPV_TOOLS_H
#define NPU_SPV_TOOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The disassembly of words[0..n) (friendly names, indented), or a one-line explanation when the
 * words are not valid SPIR-V. A malloc'd string; NULL only on allocation failure. */
char *spv_disassemble(const uint32_t *words, size_t n);
/* Is words[0..n) a valid SPIR-V module for Vulkan 1.2 (spirv-val's rules)? When not, why[] gets
 * the validator's first message. */
bool spv_validate(const uint32_t *words, size_t n, char *why, size_t nwhy);

#endif
