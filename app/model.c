#include "model.h"

#include <stdlib.h>
#include <string.h>
#include "../common/fileio.h"
#include "../compiler/ir_json.h"
#include "../compiler/shape.h"
#include "../runtime/cpu_ref.h"

Status model_load_graph(Model *m, const char *path, DiagList *d)
{
    memset(m, 0, sizeof *m);
    size_t n = strlen(path) + 1;
    m->path = malloc(n);
    if (!m->path) return ST_NOMEM;
    memcpy(m->path, path, n);
    Status st = ir_read_file(path, &m->g, d);
    if (st == ST_OK) st = shape_check_graph(m->g, d);
    return st;
}

/* "dir/prefill.json" -> "dir/prefill_io.safetensors" */
static void io_sibling(char *buf, size_t n, const char *model)
{
    const char *slash = strrchr(model, '/');
    const char *base = slash ? slash + 1 : model;
    const char *dot = strrchr(base, '.');
    int stem = dot ? (int)(dot - base) : (int)strlen(base);
    char name[512];
    snprintf(name, sizeof name, "%.*s_io.safetensors", stem, base);
    path_sibling(buf, n, model, name);
}

Status model_bind(Model *m, const Options *o, DiagList *d)
{
    Graph *g = m->g;
    Status st = bind_init(g, &m->b);
    if (st != ST_OK) return st;
    st = bind_constants(g, &m->b);
    if (st != ST_OK) return st;
    char buf[4096];
    if (o->random_weights) {
        st = bind_weights_random(g, o->weights_seed, &m->b);
    } else if (o->weights) {
        st = bind_weights_file(g, o->weights, &m->b, d);
    } else if (file_exists(path_sibling(buf, sizeof buf, m->path, "weights.safetensors"))) {
        st = bind_weights_file(g, buf, &m->b, d);
    } else if (g->nweights > 0) {
        st = diag_error(d, m->path, NULL, NULL,
                        "the model has %d weights but no weights.safetensors beside it: pass "
                        "--weights FILE or --random-weights SEED",
                        g->nweights);
    }
    if (st != ST_OK) return st;

    const char *inputs = o->inputs;
    char ibuf[4096];
    if (!inputs) {
        io_sibling(ibuf, sizeof ibuf, m->path);
        if (file_exists(ibuf)) inputs = ibuf;
        else if (file_exists(path_sibling(ibuf, sizeof ibuf, m->path, "reference.safetensors")))
            inputs = ibuf;
    }
    if (inputs) st = bind_inputs_file(g, inputs, NULL, &m->b, d);
    else st = bind_inputs_random(g, o->inputs_seed, &m->b);
    if (st != ST_OK) return st;

    /* a reference file beside the model was computed with the real weights: with generated
     * weights only an explicit --reference counts (run --check then uses the CPU reference) */
    const char *ref = o->reference ? o->reference : o->random_weights ? NULL : inputs;
    if (ref) st = bind_reference_file(g, ref, NULL, &m->b, d);
    return st;
}

Status model_cpu_reference(Model *m, bool *added, DiagList *d)
{
    *added = false;
    if (m->b.nref >= m->g->noutputs) return ST_OK;
    RefRun r = {0};
    RefOptions ro = {.keep_all = false};
    Status st = ref_run(m->g, m->b.vals, &ro, &r, d);
    for (int i = 0; st == ST_OK && i < m->g->noutputs; i++)
        if (!m->b.ref[i].data) {
            m->b.ref[i] = r.vals[m->g->outputs[i]];
            r.vals[m->g->outputs[i]] = (HTensor){0};
            m->b.nref++;
            *added = true;
        }
    ref_free(&r);
    return st;
}

void model_free(Model *m)
{
    bind_free(&m->b);
    graph_free(m->g);
    free(m->path);
    memset(m, 0, sizeof *m);
}
