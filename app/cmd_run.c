/* `npu-explore run`: execute a model on a backend, compare with the reference (--check), write
 * the outputs (-o). */
#include "commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../runtime/compare.h"
#include "../runtime/cpu_ref.h"
#include "../runtime/safetensors.h"
#include "model.h"
#include "report.h"

int cmd_run(int argc, char **argv)
{
    Options o;
    DiagList d = {0};
    opt_defaults(&o);
    Status st = opt_parse(&o, argc, argv, 1, &d);
    Model m = {0};
    RefRun r = {0};
    if (st == ST_OK) st = model_load_graph(&m, o.model, &d);
    if (st == ST_OK) st = model_bind(&m, &o, &d);
    if (st == ST_OK && strcmp(o.backend, "cpu") != 0)
        st = diag_add(&d, DIAG_ERROR, ST_NO_DEVICE, o.model, NULL, NULL,
                      "the Vulkan backend is not built yet: use --backend cpu");
    if (st == ST_OK) {
        RefOptions ro = {.keep_all = false};
        st = ref_run(m.g, m.b.vals, &ro, &r, &d);
    }
    if (st == ST_OK && o.out) {
        const Graph *g = m.g;
        const char **names = calloc((size_t)g->noutputs + 1, sizeof *names);
        const HTensor **ts = calloc((size_t)g->noutputs + 1, sizeof *ts);
        if (!names || !ts) st = ST_NOMEM;
        for (int i = 0; st == ST_OK && i < g->noutputs; i++) {
            names[i] = g->tensors[g->outputs[i]].name;
            ts[i] = &r.vals[g->outputs[i]];
        }
        if (st == ST_OK) st = st_write(o.out, g->noutputs, names, ts, &d);
        free(names);
        free(ts);
    }
    int rc = status_exit_code(st);
    if (st == ST_OK && o.check) {
        Tolerance tol = report_tolerance(&o, "fp32");
        rc = report_check(stdout, m.g, &m.b, r.vals, &tol, o.backend, o.json);
    }
    diag_print(&d, stderr);
    ref_free(&r);
    model_free(&m);
    diag_free(&d);
    return rc;
}
