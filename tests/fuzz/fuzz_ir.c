/* libFuzzer target: the IR JSON reader plus the shape checker. */
#include <stddef.h>
#include <stdint.h>
#include "compiler/ir_json.h"
#include "compiler/shape/shape.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Graph *g = NULL;
    DiagList d = {0};
    if (ir_read_buffer("fuzz.json", (const char *)data, size, &g, &d) == ST_OK) {
        shape_check_graph(g, &d);
        graph_free(g);
    }
    diag_free(&d);
    return 0;
}
