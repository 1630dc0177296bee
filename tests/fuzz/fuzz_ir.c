/* libFuzzer target: the IR JSON reader plus the shape checker. The reader's two ways (the walk
 * and the one tree, compiler/ir_json.h) must agree on every input: the same status, diagnostics
 * and graph; a disagreement aborts. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/ir_json.h"
#include "compiler/shape/shape.h"
#include "tests/graph_eq.h"

static bool same_diags(const DiagList *a, const DiagList *b)
{
    if (a->count != b->count || a->errors != b->errors) return false;
    for (int i = 0; i < a->count; i++) {
        char x[2048], y[2048];
        diag_format(&a->items[i], x, sizeof x);
        diag_format(&b->items[i], y, sizeof y);
        if (strcmp(x, y) != 0) return false;
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Graph *g = NULL, *t = NULL;
    DiagList d = {0}, dt = {0};
    const char *text = (const char *)data;
    Status st = ir_read_buffer_as("fuzz.json", text, size, IR_READ_WALK, &g, &d, NULL);
    Status stt = ir_read_buffer_as("fuzz.json", text, size, IR_READ_TREE, &t, &dt, NULL);
    char why[256] = "";
    if (st != stt || !same_diags(&d, &dt) || (st == ST_OK && !geq_same(g, t, why, sizeof why))) {
        fprintf(stderr, "the walk and the tree disagree: status %d and %d %s\n", st, stt, why);
        abort();
    }
    if (st == ST_OK) shape_check_graph(g, &d);
    graph_free(g);
    graph_free(t);
    diag_free(&d);
    diag_free(&dt);
    return 0;
}
