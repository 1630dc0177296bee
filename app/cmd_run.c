/* `npu-explore run`: execute a model on a backend (the compiled plan on Vulkan with CPU
 * partitions on the reference, or everything on the CPU reference), compare with the reference
 * (--check), write the outputs (-o). */
#include "app/commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/compare.h"
#include "runtime/cpu/cpu_ref.h"
#include "runtime/safetensors.h"
#include "app/runner.h"
#include "app/model.h"
#include "app/report.h"

/* Runs the compiled plan; outs[i] receives graph output i, dtype the compute dtype. */
static Status run_plan(const Options *o, Model *m, HTensor *outs, char *dev, size_t ndev,
                       char dtype[8], DiagList *d)
{
    Runner r;
    Status st = runner_open(&r, o, m, false, d);
    if (st == ST_OK) {
        snprintf(dev, ndev, "%s, tier %s", r.be->ops->device(r.be),
                 plan_tier_name(r.pipe.plan->tier));
        memcpy(dtype, r.dtype, 8);
    }
    if (st == ST_OK) st = exec_run(&r.x, false, d);
    for (int i = 0; st == ST_OK && i < r.pipe.plan->noutputs; i++)
        st = exec_read(&r.x, r.pipe.plan->outputs[i], &outs[i], d);
    if (st == ST_OK) st = runner_check_validation(&r, d);
    runner_close(&r);
    return st;
}

int cmd_run(int argc, char **argv)
{
    Options o;
    DiagList d = {0};
    Status st = opt_read(&o, argc, argv, &d);
    Model m = {0};
    RefRun r = {0};
    HTensor *vals = NULL; /* by graph tensor id: the outputs of this run */
    HTensor *outs = NULL;
    char dev[600] = "";
    if (st == ST_OK) st = model_load_graph(&m, o.model, &d);
    if (st == ST_OK) st = model_bind(&m, &o, &d);
    char dtype[8] = "fp32";
    if (st == ST_OK) snprintf(dtype, sizeof dtype, "%s", runner_dtype(&o, &m.b));
    bool cpu = strcmp(o.backend, "cpu") == 0;
    if (st == ST_OK && cpu) {
        RefOptions ro = {.keep_all = false, .keep_argmax_inputs = o.check};
        st = ref_run(m.g, m.b.vals, &ro, &r, &d);
        vals = r.vals;
        /* this run is the reference too: its argmax inputs judge its indices */
        if (st == ST_OK && o.check) st = bind_argmax_sources(m.g, r.vals, r.ntensors, &m.b, NULL);
        snprintf(dtype, sizeof dtype, "fp32");
    } else if (st == ST_OK) {
        vals = calloc((size_t)m.g->ntensors + 1, sizeof *vals);
        outs = calloc((size_t)m.g->noutputs + 1, sizeof *outs);
        if (!vals || !outs) st = ST_NOMEM;
        if (st == ST_OK) st = run_plan(&o, &m, outs, dev, sizeof dev, dtype, &d);
        for (int i = 0; st == ST_OK && i < m.g->noutputs; i++)
            vals[m.g->outputs[i]] = outs[i];
    }
    if (st == ST_OK && o.out) {
        const Graph *g = m.g;
        const char **names = calloc((size_t)g->noutputs + 1, sizeof *names);
        const HTensor **ts = calloc((size_t)g->noutputs + 1, sizeof *ts);
        if (!names || !ts) st = ST_NOMEM;
        for (int i = 0; st == ST_OK && i < g->noutputs; i++) {
            names[i] = g->tensors[g->outputs[i]].name;
            ts[i] = &vals[g->outputs[i]];
        }
        if (st == ST_OK) st = st_write(o.out, g->noutputs, names, ts, &d);
        free(names);
        free(ts);
    }
    /* outputs without a reference (architecture-only models, generated weights): the CPU
     * reference run is the right answer; argmax outputs get their inputs' reference values */
    bool cpu_ref = false;
    if (st == ST_OK && o.check && !cpu) st = model_cpu_reference(&m, &cpu_ref, &d);
    int rc = status_exit_code(st);
    if (st == ST_OK && o.check) {
        Tolerance tol = report_tolerance(&o, dtype);
        if (!cpu && !o.json) printf("device: %s, compute %s\n", dev, dtype);
        if (m.g->nstates > 0 && !o.json)
            printf("model state: %d tensors, the run starts from their first values (generate "
                   "carries state from run to run)\n",
                   m.g->nstates);
        if (cpu_ref && !o.json)
            printf("reference: the CPU reference (fp32) for outputs the files lack\n");
        rc = report_check(stdout, m.g, &m.b, vals, &tol, o.backend, o.json);
    }
    diag_print(&d, stderr);
    if (outs)
        for (int i = 0; i < m.g->noutputs; i++)
            htensor_free(&outs[i]);
    free(outs);
    if (!cpu) free(vals);
    ref_free(&r);
    model_free(&m);
    diag_free(&d);
    return rc;
}
