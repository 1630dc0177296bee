#include "app/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/fileio.h"
#include "compiler/ir_json.h"
#include "compiler/model_src.h"
#include "compiler/npubin.h"
#include "compiler/shape/shape.h"
#include "runtime/cpu/cpu_ref.h"
#include "runtime/safetensors.h"

Status model_load_graph(Model *m, const char *path, DiagList *d)
{
    memset(m, 0, sizeof *m);
    size_t n = strlen(path) + 1;
    m->path = malloc(n);
    if (!m->path) return ST_NOMEM;
    memcpy(m->path, path, n);
    Status st = model_src_read(path, &m->ir_text, &m->ir_len, &m->origin, d);
    if (st == ST_OK) st = ir_read_buffer(path, m->ir_text, m->ir_len, &m->g, d);
    if (st == ST_OK) st = shape_check_graph(m->g, d);
    return st;
}

/* The first existing file called name beside the model at path, or beside the IR file a
 * .npubin names (origin, may be NULL); NULL. */
static const char *find_sibling(const char *path, const char *origin, char *buf, size_t n,
                                const char *name)
{
    if (file_exists(path_sibling(buf, n, path, name))) return buf;
    if (origin && file_exists(path_sibling(buf, n, origin, name))) return buf;
    return NULL;
}

/* "dir/prefill.json" -> "dir/prefill_io.safetensors" (if it exists), and the same for a
 * .npubin's IR file; else NULL */
static const char *io_sibling(const Model *m, char *buf, size_t n)
{
    const char *paths[2] = {m->path, m->origin};
    for (int i = 0; i < 2 && paths[i]; i++) {
        const char *slash = strrchr(paths[i], '/');
        const char *base = slash ? slash + 1 : paths[i];
        const char *dot = strrchr(base, '.');
        int stem = dot ? (int)(dot - base) : (int)strlen(base);
        char name[512];
        snprintf(name, sizeof name, "%.*s_io.safetensors", stem, base);
        if (file_exists(path_sibling(buf, n, paths[i], name))) return buf;
    }
    return NULL;
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
    } else if (find_sibling(m->path, m->origin, buf, sizeof buf, "weights.safetensors")) {
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
        inputs = io_sibling(m, ibuf, sizeof ibuf);
        if (!inputs)
            inputs = find_sibling(m->path, m->origin, ibuf, sizeof ibuf, "reference.safetensors");
    }
    if (inputs)
        st = bind_inputs_file(g, inputs, o->io_prefix, &m->b, d);
    else
        st = bind_inputs_random(g, o->inputs_seed, &m->b);
    if (st != ST_OK) return st;

    /* a reference file beside the model was computed with the real weights: with generated
     * weights only an explicit --reference counts (run --check then uses the CPU reference) */
    const char *ref = o->reference ? o->reference : o->random_weights ? NULL : inputs;
    if (ref) st = bind_reference_file(g, ref, o->io_prefix, &m->b, d);
    return st;
}

/* One run of the CPU reference for what the check lacks: the outputs without a reference
 * (fill_missing) and the inputs of argmax outputs (Binding.argmax). */
static Status cpu_reference(Model *m, bool fill_missing, bool *added, DiagList *d)
{
    if (added) *added = false;
    int lack = 0;
    Status st = bind_argmax_sources(m->g, NULL, 0, &m->b, &lack);
    if (st != ST_OK || ((!fill_missing || m->b.nref >= m->g->noutputs) && lack == 0)) return st;
    RefRun r = {0};
    RefOptions ro = {.keep_all = false, .keep_argmax_inputs = lack > 0};
    st = ref_run(m->g, m->b.vals, &ro, &r, d);
    if (st == ST_OK) st = bind_argmax_sources(m->g, r.vals, r.ntensors, &m->b, NULL);
    for (int i = 0; st == ST_OK && fill_missing && i < m->g->noutputs; i++)
        if (!m->b.ref[i].data) {
            m->b.ref[i] = r.vals[m->g->outputs[i]];
            r.vals[m->g->outputs[i]] = (HTensor){0};
            m->b.nref++;
            *added = true;
        }
    ref_free(&r);
    return st;
}

Status model_cpu_reference(Model *m, bool *added, DiagList *d)
{
    return cpu_reference(m, true, added, d);
}

Status model_argmax_reference(Model *m, DiagList *d)
{
    return cpu_reference(m, false, NULL, d);
}

const char *model_auto_dtype(const Options *o)
{
    if (strcmp(o->dtype, "auto") != 0) return o->dtype;
    if (o->random_weights) return "fp16";
    char buf[4096];
    DiagList d = {0};
    char *text = NULL, *origin = NULL;
    size_t len = 0;
    if (model_is_npubin(o->model)) /* for the IR file it names: its weights are defaults too */
        (void)model_src_read(o->model, &text, &len, &origin, &d);
    const char *path = o->weights
                           ? o->weights
                           : find_sibling(o->model, origin, buf, sizeof buf, "weights.safetensors");
    SafeTensors st;
    bool bf16 = false;
    if (path && st_open(&st, path, &d) == ST_OK) {
        for (int i = 0; i < st_count(&st) && !bf16; i++)
            bf16 = st_at(&st, i)->dtype == DT_BF16;
        st_close(&st);
    }
    free(text);
    free(origin);
    diag_free(&d); /* an unreadable file is reported where the weights are bound */
    return bf16 ? "bf16" : "fp16";
}

/* The note for an option o gives over the one the .npubin at path records. */
static void overridden(DiagList *d, const char *path, const char *given, const char *file)
{
    diag_add(d, DIAG_NOTE, ST_OK, path, NULL, NULL, "recompiling with %s (the file's plan: %s)",
             given, file);
}

/* The file's tuning knobs (rec, Plan.tuning) into o->tune where o sets none of them; a note for
 * each knob o sets to another value than the file's plan has. */
static Status npubin_knobs(Options *o, const char *rec, DiagList *d)
{
    Tuning ft = {0};
    DiagList why = {0};
    Status st = rec ? tuning_parse_list(&ft, rec, &why) : ST_OK;
    if (st != ST_OK)
        st = diag_error(d, o->model, NULL, NULL, "its plan's tuning knobs '%s': %s", rec,
                        why.count ? why.items[0].msg : status_name(st));
    diag_free(&why);
    for (int i = 0; st == ST_OK && i < TUNE_COUNT; i++) {
        TuneMask bit = TUNE_BIT(i);
        const char *name = tune_info[i].name;
        if (!(o->tune.set & bit)) { /* the file's value, if it sets one */
            if (ft.set & bit) o->tune.v[i] = ft.v[i];
            o->tune.set |= ft.set & bit;
            continue;
        }
        if (tuning_get(&o->tune, (TuneId)i) == tuning_get(&ft, (TuneId)i)) continue;
        char given[128], file[128];
        if (o->tune.env & bit) /* bench/'s override in the environment */
            snprintf(given, sizeof given, "%s=%lld from %s", name, (long long)o->tune.v[i],
                     tune_info[i].env);
        else
            snprintf(given, sizeof given, "--tune %s=%lld", name, (long long)o->tune.v[i]);
        if (ft.set & bit)
            snprintf(file, sizeof file, "%s=%lld", name, (long long)ft.v[i]);
        else
            snprintf(file, sizeof file, "%s at its default", name);
        overridden(d, o->model, given, file);
    }
    return st;
}

Status model_npubin_options(Options *o, DiagList *d)
{
    if (!model_is_npubin(o->model)) return ST_OK;
    Plan *p = NULL;
    Status st = npubin_read(o->model, &p, d);
    if (st != ST_OK) return st;
    /* a file written before tiers recorded none and reads as portable: its kernels are */
    const char *dt = dtype_compute_name(p->compute), *tier = plan_tier_name(p->tier);
    if (dt && strcmp(o->dtype, "auto") == 0) o->dtype = dt;
    if (tier && strcmp(o->tier, "auto") == 0) o->tier = tier;
    char given[64];
    if (dt && strcmp(o->dtype, dt) != 0) {
        snprintf(given, sizeof given, "--dtype %s", o->dtype);
        overridden(d, o->model, given, dt);
    }
    if (tier && strcmp(o->tier, tier) != 0) {
        snprintf(given, sizeof given, "--tier %s", o->tier);
        overridden(d, o->model, given, tier);
    }
    st = npubin_knobs(o, p->tuning, d);
    int ntuned = 0;
    for (int k = 0; k < p->nkernels; k++)
        ntuned += p->kernels[k].tuned != NULL;
    if (st == ST_OK && ntuned && !o->tuned)
        diag_add(d, DIAG_NOTE, ST_OK, o->model, NULL, NULL,
                 "%d of its kernels had knobs of their own from a tuning cache (describe: "
                 "tuned); the file does not record their tuning keys, so recompiling takes such "
                 "knobs from --tuned's cache, as an IR's compile does",
                 ntuned);
    plan_free(p);
    return st;
}

void model_free(Model *m)
{
    bind_free(&m->b);
    graph_free(m->g);
    free(m->path);
    free(m->ir_text);
    free(m->origin);
    memset(m, 0, sizeof *m);
}
