/* The shader sources (shaders/NAME.comp, NAME.glsl and NAME.h) embedded at build time by
 * tools/embed.sh src into $(BUILD)/gen/shaders_src.c, as the SPIR-V is by tools/embed.sh spv:
 * `describe --source` and the explorer show a hand-written kernel's source from here, and the
 * `#include` lines of generated kernels resolve here (codegen_spv.c). Read-only data. */
#ifndef NPU_SHADER_SRC_H
#define NPU_SHADER_SRC_H

#include <stddef.h>

typedef struct ShaderSource {
    const char *name; /* "binary.glsl" */
    const char *text; /* NUL-terminated */
    size_t len;
} ShaderSource;

/* Defined by the generated file: shader_src_count rows sorted by strcmp, then a {0} sentinel. */
extern const ShaderSource shader_src_table[];
extern const size_t shader_src_count;

/* The source file called `name` ("unary.comp"), or NULL. */
const ShaderSource *shader_src_find(const char *name);

#endif
