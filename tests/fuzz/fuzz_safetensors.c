/* libFuzzer target: the safetensors reader (through a file, as it maps files). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include "runtime/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/tmp/npu-fuzz-%d.safetensors", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    SafeTensors s;
    DiagList d = {0};
    if (st_open(&s, path, &d) == ST_OK)
        for (int i = 0; i < st_count(&s); i++) {
            HTensor h;
            if (st_to_htensor(st_at(&s, i), DT_F32, &h) == ST_OK) htensor_free(&h);
        }
    st_close(&s);
    diag_free(&d);
    return 0;
}
