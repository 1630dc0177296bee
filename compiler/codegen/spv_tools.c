#include "compiler/codegen/spv_tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <spirv-tools/libspirv.h>

char *spv_disassemble(const uint32_t *words, size_t n)
{
    spv_context ctx = spvContextCreate(SPV_ENV_VULKAN_1_2);
    if (!ctx) return NULL;
    spv_text text = NULL;
    spv_diagnostic diag = NULL;
    spv_result_t r = spvBinaryToText(
        ctx, words, n, SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES | SPV_BINARY_TO_TEXT_OPTION_INDENT,
        &text, &diag);
    char *out = NULL;
    if (r == SPV_SUCCESS && text) {
        out = malloc(text->length + 1);
        if (out) {
            memcpy(out, text->str, text->length);
            out[text->length] = 0;
        }
    } else {
        const char *why = diag && diag->error ? diag->error : "not a SPIR-V module";
        size_t len = strlen(why) + 64;
        out = malloc(len);
        if (out) snprintf(out, len, "; cannot disassemble: %s\n", why);
    }
    spvTextDestroy(text);
    spvDiagnosticDestroy(diag);
    spvContextDestroy(ctx);
    return out;
}

bool spv_validate(const uint32_t *words, size_t n, char *why, size_t nwhy)
{
    if (n < 5 || words[0] != 0x07230203u) {
        snprintf(why, nwhy, "not a SPIR-V module (%zu words)", n);
        return false;
    }
    spv_context ctx = spvContextCreate(SPV_ENV_VULKAN_1_2);
    if (!ctx) {
        snprintf(why, nwhy, "out of memory");
        return false;
    }
    spv_const_binary_t bin = {words, n};
    spv_diagnostic diag = NULL;
    spv_result_t r = spvValidate(ctx, &bin, &diag);
    if (r != SPV_SUCCESS)
        snprintf(why, nwhy, "%s", diag && diag->error ? diag->error : "invalid SPIR-V");
    spvDiagnosticDestroy(diag);
    spvContextDestroy(ctx);
    return r == SPV_SUCCESS;
}
