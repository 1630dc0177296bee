/* SPIR-V disassembly through SPIRV-Tools' C API (spirv-tools), for the source -> assembly view
 * of `describe --source` and the explorer. */
#ifndef NPU_SPV_DISASM_H
#define NPU_SPV_DISASM_H

#include <stddef.h>
#include <stdint.h>

/* The disassembly of words[0..n) (friendly names, indented), or a one-line explanation when the
 * words are not valid SPIR-V. A malloc'd string; NULL only on allocation failure. */
char *spv_disassemble(const uint32_t *words, size_t n);

#endif
