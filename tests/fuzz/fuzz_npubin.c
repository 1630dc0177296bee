/* libFuzzer target: the .npubin decoder. */
#include <stddef.h>
#include <stdint.h>
#include "compiler/npubin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Plan *p = NULL;
    DiagList d = {0};
    if (npubin_decode("fuzz.npubin", data, size, &p, &d) == ST_OK) plan_free(p);
    diag_free(&d);
    return 0;
}
