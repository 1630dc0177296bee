#include "runtime/bind.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/hash.h"
#include "runtime/cpu/cpu_ref.h"
#include "runtime/safetensors.h"

Status bind_init(const Graph *g, Binding *b)
{
    memset(b, 0, sizeof *b);
    b->ntensors = g->ntensors;
    b->noutputs = g->noutputs;
    b->vals = calloc((size_t)g->ntensors + 1, sizeof *b->vals);
    b->ref = calloc((size_t)g->noutputs + 1, sizeof *b->ref);
    if (!b->vals || !b->ref) {
        bind_free(b);
        return ST_NOMEM;
    }
    return ST_OK;
}

void bind_free(Binding *b)
{
    if (b->vals)
        for (int i = 0; i < b->ntensors; i++)
            htensor_free(&b->vals[i]);
    if (b->ref)
        for (int i = 0; i < b->noutputs; i++)
            htensor_free(&b->ref[i]);
    if (b->argmax)
        for (int i = 0; i < b->noutputs; i++)
            htensor_free(&b->argmax[i].x);
    free(b->vals);
    free(b->ref);
    free(b->argmax);
    free(b->weights_from);
    free(b->inputs_from);
    free(b->ref_from);
    memset(b, 0, sizeof *b);
}

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

static int same_shape(const StTensor *s, const GTensor *t)
{
    return shape_equal(s->rank, s->shape, t->rank, t->shape);
}

/* Loads stored tensor s into the slot for tensor t, checking the shape. */
static Status load_into(const char *path, const StTensor *s, const GTensor *t, HTensor *slot,
                        const char *what, DiagList *d)
{
    if (!same_shape(s, t)) {
        char a[160], b2[160];
        return diag_error(d, path, NULL, t->name, "%s '%s' is stored as %s%s but the IR needs %s",
                          what, s->name, dtype_short(s->dtype),
                          shape_str(s->shape, s->rank, a, sizeof a),
                          shape_str(t->shape, t->rank, b2, sizeof b2));
    }
    if (dtype_is_float(t->dtype) != dtype_is_float(s->dtype) && t->dtype != DT_BOOL)
        return diag_error(d, path, NULL, t->name, "%s '%s' is stored as %s but the IR declares %s",
                          what, s->name, dtype_name(s->dtype), dtype_name(t->dtype));
    htensor_free(slot);
    Status st = st_to_htensor(s, htensor_ref_dtype(t->dtype), slot);
    if (st != ST_OK)
        return diag_add(d, DIAG_ERROR, st, path, NULL, t->name, "cannot load %s '%s'", what,
                        s->name);
    return ST_OK;
}

/* slot = the values the IR carries for t (t->const_data), in the reference dtype. */
static Status bind_ir_values(const GTensor *t, HTensor *slot)
{
    htensor_free(slot);
    Status st = htensor_alloc(slot, htensor_ref_dtype(t->dtype), t->rank, t->shape);
    if (st == ST_OK) htensor_convert(slot->data, slot->dtype, t->const_data, DT_F64, slot->numel);
    return st;
}

Status bind_weights_file(const Graph *g, const char *path, Binding *b, DiagList *d)
{
    SafeTensors st;
    memset(&st, 0, sizeof st);
    Status rc = st_open(&st, path, d);
    if (rc != ST_OK) {
        st_close(&st);
        return rc;
    }
    for (int i = 0; i < g->nweights && rc == ST_OK; i++) {
        const GTensor *t = &g->tensors[g->weights[i]];
        const char *key = t->weight_key ? t->weight_key : t->name;
        const StTensor *s = st_find(&st, key);
        if (!s) s = st_find(&st, t->name);
        if (!s && t->const_data) { /* a lifted tensor the IR carries */
            rc = bind_ir_values(t, &b->vals[g->weights[i]]);
            continue;
        }
        if (!s) {
            if (strncmp(key, "lifted_tensor", 13) == 0 || strncmp(t->name, "c_lifted", 8) == 0)
                rc = diag_error(d, path, NULL, t->name,
                                "the IR names buffer '%s', which torch.export lifted from a "
                                "constant and no weights file holds (register it as a buffer "
                                "and re-export, or pass --random-weights)",
                                key);
            else
                rc = diag_error(d, path, NULL, t->name,
                                "weight '%s' (placeholder '%s' in %s) is not in the weights file",
                                key, t->name, g->path);
            break;
        }
        if (s->dtype == DT_BF16) b->stored_bf16 = 1;
        if (s->dtype == DT_F16) b->stored_f16 = 1;
        rc = load_into(path, s, t, &b->vals[g->weights[i]], "weight", d);
    }
    st_close(&st);
    if (rc == ST_OK) {
        free(b->weights_from);
        b->weights_from = dupstr(path);
    }
    return rc;
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static double rng_unit(uint64_t *s) /* [0, 1) */
{
    return (double)(rng_next(s) >> 11) / 9007199254740992.0;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

Status bind_weights_random(const Graph *g, uint64_t seed, Binding *b)
{
    for (int i = 0; i < g->nweights; i++) {
        const GTensor *t = &g->tensors[g->weights[i]];
        HTensor *v = &b->vals[g->weights[i]];
        Status st = t->const_data ? bind_ir_values(t, v) : ST_OK; /* the IR's values are data */
        if (st != ST_OK) return st;
        if (t->const_data) continue;
        htensor_free(v);
        st = htensor_alloc(v, htensor_ref_dtype(t->dtype), t->rank, t->shape);
        if (st != ST_OK) return st;
        const char *key = t->weight_key ? t->weight_key : t->name;
        uint64_t s = hash64(key, strlen(key)) ^ (seed * 0x2545F4914F6CDD1DULL);
        int64_t fan_in = t->rank >= 2 ? v->numel / t->shape[0] : v->numel;
        double bound = 1.0 / sqrt((double)(fan_in > 0 ? fan_in : 1));
        /* the tensor's kind once, not per element (1.5G elements for Qwen2.5-1.5B) */
        enum {
            R_FREQ,
            R_VAR,
            R_MEAN,
            R_SCALE,
            R_BIAS,
            R_MAT
        } kind = ends_with(key, "inv_freq")                 ? R_FREQ /* rotary frequencies */
                 : ends_with(key, "running_var")            ? R_VAR
                 : ends_with(key, "running_mean")           ? R_MEAN
                 : t->rank == 1 && ends_with(key, "weight") ? R_SCALE
                 : t->rank == 1                             ? R_BIAS
                                                            : R_MAT;
        for (int64_t k = 0; k < v->numel; k++) {
            double u = rng_unit(&s), x;
            switch (kind) {
            case R_FREQ: /* 1/base^(2k/dim) */
                x = pow(10000.0, -(double)k / (double)v->numel);
                break;
            case R_VAR:
                x = 0.5 + u;
                break;
            case R_MEAN:
                x = 0.2 * (u - 0.5);
                break;
            case R_SCALE:
                x = 0.8 + 0.4 * u;
                break; /* norm scales */
            case R_BIAS:
                x = 0.1 * (u - 0.5);
                break;
            default:
                x = bound * (2 * u - 1);
                break;
            }
            if (v->dtype == DT_F32)
                ((float *)v->data)[k] = (float)x;
            else if (v->dtype == DT_I64)
                ((int64_t *)v->data)[k] = (int64_t)(u * 8);
            else
                ((uint8_t *)v->data)[k] = u < 0.5;
        }
    }
    free(b->weights_from);
    char buf[64];
    snprintf(buf, sizeof buf, "random (seed %llu)", (unsigned long long)seed);
    b->weights_from = dupstr(buf);
    return ST_OK;
}

static const char *prefixed(char *buf, size_t n, const char *prefix, const char *name)
{
    if (!prefix || !*prefix) return name;
    snprintf(buf, n, "%s.%s", prefix, name);
    return buf;
}

Status bind_inputs_st(const Graph *g, const SafeTensors *st, const char *path, const char *prefix,
                      Binding *b, DiagList *d)
{
    Status rc = ST_OK;
    for (int i = 0; i < g->ninputs && rc == ST_OK; i++) {
        const GTensor *t = &g->tensors[g->inputs[i]];
        char buf[512];
        const char *key = prefixed(buf, sizeof buf, prefix, t->name);
        const StTensor *s = st_find(st, key);
        if (!s && t->state) continue; /* model state starts from its weight or constant */
        if (!s)
            return diag_error(d, path, NULL, t->name, "graph input '%s' is not in the inputs file",
                              key);
        rc = load_into(path, s, t, &b->vals[g->inputs[i]], "input", d);
    }
    if (rc == ST_OK) {
        free(b->inputs_from);
        b->inputs_from = dupstr(path);
    }
    return rc;
}

typedef Status (*BindSt)(const Graph *g, const SafeTensors *st, const char *path,
                         const char *prefix, Binding *b, DiagList *d);

/* Opens path, binds from it with fn, closes it. */
static Status bind_file(BindSt fn, const Graph *g, const char *path, const char *prefix, Binding *b,
                        DiagList *d)
{
    SafeTensors st;
    memset(&st, 0, sizeof st);
    Status rc = st_open(&st, path, d);
    if (rc == ST_OK) rc = fn(g, &st, path, prefix, b, d);
    st_close(&st);
    return rc;
}

Status bind_inputs_file(const Graph *g, const char *path, const char *prefix, Binding *b,
                        DiagList *d)
{
    return bind_file(bind_inputs_st, g, path, prefix, b, d);
}

/* Upper bound (exclusive) for random integers fed to tensor t. */
static int64_t int_range(const Graph *g, const GTensor *t, int id)
{
    int64_t hi = 8;
    for (int c = 0; c < t->nconsumers; c++) {
        const Node *n = &g->nodes[t->consumers[c]];
        if (n->op == OP_EMBEDDING && n->nin == 2 && n->in[1] == id)
            hi = node_input(g, n, 0)->shape[0];
        if (n->op == OP_INDEX_COPY && n->nin == 3 && n->in[1] == id) {
            const GTensor *self = node_input(g, n, 0);
            int dim = norm_dim(attr_int(n, "dim", 0), self->rank);
            if (dim >= 0) hi = self->shape[dim];
        }
    }
    return hi > 0 ? hi : 1;
}

Status bind_inputs_random(const Graph *g, uint64_t seed, Binding *b)
{
    for (int i = 0; i < g->ninputs; i++) {
        int id = g->inputs[i];
        const GTensor *t = &g->tensors[id];
        if (t->state) continue; /* model state starts from its weight or constant */
        HTensor *v = &b->vals[id];
        htensor_free(v);
        Status st = htensor_alloc(v, htensor_ref_dtype(t->dtype), t->rank, t->shape);
        if (st != ST_OK) return st;
        uint64_t s = hash64(t->name, strlen(t->name)) ^ (seed * 0x2545F4914F6CDD1DULL);
        int64_t hi = v->dtype == DT_I64 ? int_range(g, t, id) : 2;
        for (int64_t k = 0; k < v->numel; k++) {
            if (v->dtype == DT_F32)
                ((float *)v->data)[k] = (float)(2 * rng_unit(&s) - 1);
            else if (v->dtype == DT_I64)
                ((int64_t *)v->data)[k] = (int64_t)(rng_next(&s) % (uint64_t)hi);
            else
                ((uint8_t *)v->data)[k] = rng_next(&s) & 1;
        }
    }
    free(b->inputs_from);
    char buf[64];
    snprintf(buf, sizeof buf, "random (seed %llu)", (unsigned long long)seed);
    b->inputs_from = dupstr(buf);
    return ST_OK;
}

Status bind_reference_st(const Graph *g, const SafeTensors *st, const char *path,
                         const char *prefix, Binding *b, DiagList *d)
{
    Status rc = ST_OK;
    for (int i = 0; i < g->noutputs && rc == ST_OK; i++) {
        const GTensor *t = &g->tensors[g->outputs[i]];
        char buf[512];
        const StTensor *s = st_find(st, prefixed(buf, sizeof buf, prefix, t->name));
        if (!s) continue;
        rc = load_into(path, s, t, &b->ref[i], "reference", d);
        if (rc == ST_OK) b->nref++;
    }
    if (rc == ST_OK && b->nref) {
        free(b->ref_from);
        b->ref_from = dupstr(path);
    }
    return rc;
}

Status bind_reference_file(const Graph *g, const char *path, const char *prefix, Binding *b,
                           DiagList *d)
{
    return bind_file(bind_reference_st, g, path, prefix, b, d);
}

Status bind_constants(const Graph *g, Binding *b)
{
    for (int id = 0; id < g->ntensors; id++) {
        const GTensor *t = &g->tensors[id];
        if ((t->kind != TK_CONST && !t->state) || !t->const_data) continue;
        Status st = bind_ir_values(t, &b->vals[id]);
        if (st != ST_OK) return st;
    }
    return ST_OK;
}

Status bind_argmax_sources(const Graph *g, const HTensor *vals, int nvals, Binding *b, int *missing)
{
    int left = 0;
    Status st = ST_OK;
    for (int i = 0; i < g->noutputs && i < b->noutputs && st == ST_OK; i++) {
        ArgmaxSrc a;
        if (!cmp_argmax_source(g, g->outputs[i], vals, nvals, &a)) continue;
        if (b->argmax && b->argmax[i].x.data) continue;
        if (!a.x.data) {
            left++;
            continue;
        }
        if (!b->argmax) b->argmax = calloc((size_t)b->noutputs + 1, sizeof *b->argmax);
        if (!b->argmax) return ST_NOMEM;
        st = htensor_convert_new(&b->argmax[i].x, &a.x, a.x.dtype);
        b->argmax[i].dim = a.dim;
        b->argmax[i].skip_nan = a.skip_nan;
    }
    if (missing) *missing = left;
    return st;
}

Status bind_extend(const Graph *g, Binding *b)
{
    if (g->ntensors <= b->ntensors) return ST_OK;
    HTensor *v = realloc(b->vals, sizeof(HTensor) * (size_t)g->ntensors);
    if (!v) return ST_NOMEM;
    memset(v + b->ntensors, 0, sizeof(HTensor) * (size_t)(g->ntensors - b->ntensors));
    b->vals = v;
    b->ntensors = g->ntensors;
    return ST_OK;
}

/* concat: out = src[0] | src[1] | ... along dim 0 (linear_concat's weight or bias); with a block
 * of B rows, runs of B rows of each source in turn (linear_glu's gate|up: graph.h Recipe). */
static Status apply_concat(const Graph *g, const Recipe *r, Binding *b, DiagList *d)
{
    const GTensor *o = &g->tensors[r->out_w];
    int64_t rows = 0, inner = 1;
    for (int k = 1; k < o->rank; k++)
        inner *= o->shape[k];
    for (int i = 0; i < r->nsrc; i++) {
        const HTensor *s = &b->vals[r->src[i]];
        if (!s->data || s->dtype != DT_F32 || s->rank != o->rank || s->numel != s->shape[0] * inner)
            return diag_error(d, g->path, NULL, o->name,
                              "concat: source '%s' is not bound as a [rows, %lld] float tensor",
                              g->tensors[r->src[i]].name, (long long)inner);
        if (r->block > 0 &&
            (s->shape[0] % r->block != 0 || s->shape[0] != b->vals[r->src[0]].shape[0]))
            return diag_error(d, g->path, NULL, o->name,
                              "concat: source '%s' has %lld rows, not the others' count in runs "
                              "of %d",
                              g->tensors[r->src[i]].name, (long long)s->shape[0], r->block);
        rows += s->shape[0];
    }
    if (rows != o->shape[0])
        return diag_error(d, g->path, NULL, o->name, "concat: %lld rows, the sources have %lld",
                          (long long)o->shape[0], (long long)rows);
    HTensor *v = &b->vals[r->out_w];
    htensor_free(v);
    Status st = htensor_alloc(v, DT_F32, o->rank, o->shape);
    if (st != ST_OK) return st;
    float *dst = v->data;
    for (int i = 0; r->block == 0 && i < r->nsrc; i++) {
        const HTensor *s = &b->vals[r->src[i]];
        memcpy(dst, s->data, sizeof(float) * (size_t)s->numel);
        dst += s->numel;
    }
    /* interleaved: runs of `block` rows from each source in turn (all have the same rows) */
    int64_t per = r->block > 0 && r->nsrc ? b->vals[r->src[0]].shape[0] : 0, n = r->block * inner;
    for (int64_t at = 0; at < per; at += r->block)
        for (int i = 0; i < r->nsrc; i++) {
            const float *s = (const float *)b->vals[r->src[i]].data + at * inner;
            memcpy(dst, s, sizeof(float) * (size_t)n);
            dst += n;
        }
    return ST_OK;
}

/* fold: runs the recipe's nodes on the CPU reference, each once per call of
 * bind_apply_recipes: made[] (by tensor id) keeps what earlier nodes of any fold computed, so
 * nodes two folded values share run once. Inputs the nodes do not make are bound values. */
static Status apply_fold(const Graph *g, const Recipe *r, Binding *b, HTensor *made, DiagList *d)
{
    for (int j = 0; j < r->nnodes; j++) {
        const Node *n = &g->nodes[r->nodes[j]];
        bool done = true;
        for (int k = 0; k < n->nout; k++)
            done &= made[n->out[k]].data != NULL;
        if (done) continue;
        const HTensor *in[64];
        if (n->nin > 64 || n->nout > 64)
            return diag_error(d, g->path, n->name, NULL, "too many operands to fold");
        for (int k = 0; k < n->nin; k++) {
            int t = n->in[k];
            in[k] = made[t].data ? &made[t] : &b->vals[t];
            if (!in[k]->data)
                return diag_error(d, g->path, n->name, g->tensors[t].name,
                                  "folding constant '%s' at load: input '%s' has no value",
                                  g->tensors[r->out_w].name, g->tensors[t].name);
        }
        HTensor out[64];
        Status st = ref_run_node(g, r->nodes[j], in, out, d);
        if (st != ST_OK)
            return diag_error(d, g->path, n->name, g->tensors[r->out_w].name,
                              "folding constant '%s' at load: node '%s' failed (fold-constants; "
                              "the same error would stop every run)",
                              g->tensors[r->out_w].name, n->name);
        for (int k = 0; k < n->nout; k++) {
            htensor_free(&made[n->out[k]]);
            made[n->out[k]] = out[k];
        }
        b->fold_evals++;
    }
    HTensor *v = &b->vals[r->out_w];
    htensor_free(v);
    return htensor_convert_new(v, &made[r->out_w], made[r->out_w].dtype);
}

Status bind_apply_recipes(const Graph *g, Binding *b, DiagList *d)
{
    Status st = bind_extend(g, b);
    if (st != ST_OK) return st;
    bool folds = false;
    for (int i = 0; i < g->nrecipes; i++)
        folds |= g->recipes[i].kind == RECIPE_FOLD;
    HTensor *made = folds ? calloc((size_t)g->ntensors + 1, sizeof *made) : NULL;
    if (folds && !made) return ST_NOMEM;
    for (int i = 0; i < g->nrecipes && st == ST_OK; i++)
        if (g->recipes[i].kind == RECIPE_FOLD) st = apply_fold(g, &g->recipes[i], b, made, d);
    if (made)
        for (int t = 0; t < g->ntensors; t++)
            htensor_free(&made[t]);
    free(made);
    if (st != ST_OK) return st;
    for (int i = 0; i < g->nrecipes; i++) {
        const Recipe *r = &g->recipes[i];
        if (r->kind == RECIPE_FOLD) continue;
        if (r->kind == RECIPE_CONCAT) {
            if ((st = apply_concat(g, r, b, d)) != ST_OK) return st;
            continue;
        }
        const HTensor *w = &b->vals[r->conv_w];
        const HTensor *cb = r->conv_b >= 0 ? &b->vals[r->conv_b] : NULL;
        const HTensor *ga = r->gamma >= 0 ? &b->vals[r->gamma] : NULL;
        const HTensor *be = r->beta >= 0 ? &b->vals[r->beta] : NULL;
        const HTensor *mu = &b->vals[r->mean], *va = &b->vals[r->var];
        if (!w->data || !mu->data || !va->data || (cb && !cb->data) || (ga && !ga->data) ||
            (be && !be->data))
            return diag_error(d, g->path, NULL, g->tensors[r->out_w].name,
                              "batch-norm fold: a source weight is not bound");
        int64_t cout = w->shape[0], per = w->numel / (cout ? cout : 1);
        if (mu->numel != cout || va->numel != cout || (cb && cb->numel != cout) ||
            (ga && ga->numel != cout) || (be && be->numel != cout))
            return diag_error(d, g->path, NULL, g->tensors[r->out_w].name,
                              "batch-norm fold: parameter sizes do not match %lld output channels",
                              (long long)cout);
        HTensor *ow = &b->vals[r->out_w], *ob = &b->vals[r->out_b];
        htensor_free(ow);
        htensor_free(ob);
        if ((st = htensor_alloc(ow, DT_F32, w->rank, w->shape)) != ST_OK) return st;
        if ((st = htensor_alloc(ob, DT_F32, 1, &cout)) != ST_OK) return st;
        const float *W = w->data;
        float *OW = ow->data, *OB = ob->data;
        for (int64_t c = 0; c < cout; c++) {
            double gam = ga ? ((const float *)ga->data)[c] : 1.0;
            double bet = be ? ((const float *)be->data)[c] : 0.0;
            double mean = ((const float *)mu->data)[c], var = ((const float *)va->data)[c];
            double scale = gam / sqrt(var + r->eps);
            double bias = cb ? ((const float *)cb->data)[c] : 0.0;
            for (int64_t k = 0; k < per; k++)
                OW[c * per + k] = (float)(W[c * per + k] * scale);
            OB[c] = (float)((bias - mean) * scale + bet);
        }
    }
    return ST_OK;
}
