/* `npu-explore generate DIR`: greedy decoding with an exported LLM folder (prefill.json,
 * decode.json, generation.json). Prefill and decode are compiled once into two programs on one
 * device; decode's KV-cache inputs are bound to the storage of prefill's cache outputs
 * (generation.json's state_carry), and decode updates its caches in place (index_copy writes the
 * new row only), so the caches never leave the device. Per step only the token, its position,
 * the cache position and the additive mask are uploaded; one submit per step. The next token is
 * picked on the GPU: before compiling, both graphs get one more output, an argmax over the last
 * dim of the logits (`skip_nan`: NaN ignored, -1 for logits of NaN alone), and the decode step's
 * recording copies that index (4 bytes a row) to host memory instead of the logits (a 152K
 * vocabulary: 300 KB in bf16). Where the backend cannot watch a tensor (--backend cpu, whose
 * graphs stay as exported), the argmax does not run on the device, or with --host-argmax, the
 * logits are read back and the argmax is the host's (the JSON's "argmax": "gpu" or "host"). A
 * prompt longer than the prefill length continues through decode steps; a shorter one runs
 * through decode steps alone. With reference.safetensors in the folder the greedy tokens are
 * compared with its `greedy_tokens` and prefill's logits with its own (read back for that). */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/fileio.h"
#include "common/jsonw.h"
#include "runtime/compare.h"
#include "runtime/profile.h"
#include "runtime/safetensors.h"
#include "app/commands.h"
#include "app/report.h"
#include "app/runner.h"
#include "common/clock.h"

#define GEN_MAX_STATE 128
#define GEN_MAX_TOKENS 4096
#define GEN_TOKEN "generate.next_token" /* the argmax output added to both graphs */

typedef struct Step {
    int ids, mask, pos, cpos; /* plan tensor ids of the per-step inputs */
    int logits;               /* plan tensor id of the logits output */
    int token;                /* of the argmax output when an NPU kernel computes it, else -1 */
    HTensor t_ids, t_mask, t_pos, t_cpos;
} Step;

typedef struct Gen {
    const char *dir;
    bool single; /* one graph with model state (generate_single), not prefill + decode */
    int prefill_len, max_cache, vocab;
    int nstate;
    char *st_out[GEN_MAX_STATE], *st_in[GEN_MAX_STATE]; /* decode: output -> next input */
    Model mp, md;
    Runner rp, rd;
    Step sp, sd;
    bool host_carry;   /* decode's caches are not updated in place: carry through the host */
    bool host_prefill; /* decode cannot use prefill's storage: copy prefill's caches over */
    bool piped;        /* the decode steps were queued back to back (decode_pipelined) */
    int64_t tokens[GEN_MAX_TOKENS];
    int ntok;
    float step_ms[GEN_MAX_TOKENS];  /* wall time of each decode step, by position */
    float step_gpu[GEN_MAX_TOKENS]; /* its GPU time by the device clock (-1: none) */
    float step_up[GEN_MAX_TOKENS], step_sub[GEN_MAX_TOKENS]; /* input upload, submit + wait */
    float step_run[GEN_MAX_TOKENS]; /* exec_run end to end: the rest of a step is the read back
                                     * of the logits and the argmax */
    int step_pos[GEN_MAX_TOKENS];
    int nsteps;
} Gen;

static Status read_config(Gen *g, DiagList *d)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/generation.json", g->dir);
    json_object *root = json_object_from_file(path), *v, *cfg, *carry;
    if (!root) return diag_error(d, path, NULL, NULL, "cannot read or parse generation.json");
    Status st = ST_OK;
    if (!json_object_object_get_ex(root, "prefill_len", &v) ||
        !json_object_is_type(v, json_type_int))
        st = diag_error(d, path, NULL, NULL, "'prefill_len' is missing or not an integer");
    else
        g->prefill_len = json_object_get_int(v);
    if (st == ST_OK && (!json_object_object_get_ex(root, "config", &cfg) ||
                        !json_object_object_get_ex(cfg, "max_cache", &v)))
        st = diag_error(d, path, NULL, NULL, "'config.max_cache' is missing");
    else if (st == ST_OK)
        g->max_cache = json_object_get_int(v);
    if (st == ST_OK && json_object_object_get_ex(cfg, "vocab", &v))
        g->vocab = json_object_get_int(v);
    if (st == ST_OK && (g->prefill_len < 1 || g->max_cache < 1 || g->max_cache > 1 << 20))
        st = diag_error(d, path, NULL, NULL, "prefill_len %d / max_cache %d out of range",
                        g->prefill_len, g->max_cache);
    if (st == ST_OK && !json_object_object_get_ex(root, "state_carry", &carry))
        st = diag_error(d, path, NULL, NULL, "'state_carry' is missing");
    for (size_t i = 0; st == ST_OK && i < json_object_array_length(carry); i++) {
        json_object *e = json_object_array_get_idx(carry, i), *ir, *state;
        if (!json_object_object_get_ex(e, "ir", &ir) ||
            strcmp(json_object_get_string(ir), "decode.json") != 0)
            continue;
        if (!json_object_object_get_ex(e, "state", &state)) continue;
        for (size_t k = 0; k < json_object_array_length(state) && g->nstate < GEN_MAX_STATE; k++) {
            json_object *pair = json_object_array_get_idx(state, k), *o, *in;
            if (!json_object_object_get_ex(pair, "output", &o) ||
                !json_object_object_get_ex(pair, "input", &in)) {
                st = diag_error(d, path, NULL, NULL, "state_carry entry %zu lacks output/input", k);
                break;
            }
            g->st_out[g->nstate] = strdup(json_object_get_string(o));
            g->st_in[g->nstate] = strdup(json_object_get_string(in));
            g->nstate++;
        }
    }
    if (st == ST_OK && g->nstate == 0)
        st = diag_error(d, path, NULL, NULL, "no state_carry entry for decode.json");
    json_object_put(root);
    return st;
}

/* Is this output a cache (state_carry names it)? The logits are the first output that is not. */
static bool is_state(const Gen *g, const char *name)
{
    for (int k = 0; k < g->nstate; k++)
        if (strcmp(name, g->st_out[k]) == 0) return true;
    return false;
}

/* The per-step inputs and the logits output of one program. */
static Status find_step(const Plan *p, const Gen *g, Step *s, DiagList *d)
{
    s->ids = plan_find_tensor(p, "input_ids");
    s->mask = plan_find_tensor(p, "attention_mask");
    s->pos = plan_find_tensor(p, "position_ids");
    s->cpos = plan_find_tensor(p, "cache_position");
    s->logits = -1;
    s->token = -1;
    int tok = plan_find_tensor(p, GEN_TOKEN);
    for (int k = 0; tok >= 0 && k < p->nkernels; k++)
        for (int a = p->kernels[k].nin; a < p->kernels[k].nargs; a++)
            if (p->kernels[k].args[a] == tok && p->kernels[k].target == KT_NPU) s->token = tok;
    for (int i = 0; i < p->noutputs && s->logits < 0; i++) {
        if (p->outputs[i] != tok && !is_state(g, p->tensors[p->outputs[i]].name))
            s->logits = p->outputs[i];
    }
    if (g->single) { /* its own state: input_ids and cache_position, the others if it has them */
        for (int i = 0; i < p->ninputs; i++) {
            int t = p->inputs[i];
            if (t != s->ids && t != s->mask && t != s->pos && t != s->cpos &&
                plan_state_of(p, t) < 0)
                return diag_error(d, p->source, NULL, p->tensors[t].name,
                                  "generate fills input_ids, "
                                  "cache_position, position_ids and attention_mask; the model has "
                                  "another input");
        }
        if (s->ids >= 0 && s->cpos >= 0 && s->logits >= 0) return ST_OK;
    }
    if (s->ids < 0 || s->mask < 0 || s->pos < 0 || s->cpos < 0 || s->logits < 0)
        return diag_error(d, p->source, NULL, NULL,
                          "an LLM step needs inputs input_ids, "
                          "attention_mask, position_ids, cache_position and a logits output");
    return ST_OK;
}

/* Fills the step inputs for tokens tok[0..n) at positions start.. and points the executor at
 * them. */
static Status set_step(Gen *g, Runner *r, Step *s, const int64_t *tok, int n, int start)
{
    const Plan *p = r->pipe.plan;
    HTensor *ts[4] = {&s->t_ids, &s->t_mask, &s->t_pos, &s->t_cpos};
    int ids[4] = {s->ids, s->mask, s->pos, s->cpos};
    for (int i = 0; i < 4; i++) {
        if (ids[i] < 0) continue; /* a one-graph model without it */
        if (!ts[i]->data) {
            const PlanTensor *x = &p->tensors[ids[i]];
            Status st = htensor_alloc(ts[i], htensor_ref_dtype(x->dtype), x->rank, x->shape);
            if (st != ST_OK) return st;
        }
        r->x.vals[ids[i]] = ts[i];
    }
    if (s->t_ids.numel != n || s->t_cpos.numel != n ||
        (s->mask >= 0 && s->t_mask.numel != (int64_t)n * g->max_cache) ||
        (s->pos >= 0 && s->t_pos.numel != n))
        return ST_INTERNAL;
    for (int i = 0; i < n; i++) {
        ((int64_t *)s->t_ids.data)[i] = tok[i];
        ((int64_t *)s->t_cpos.data)[i] = start + i;
        if (s->pos >= 0) ((int64_t *)s->t_pos.data)[i] = start + i;
        for (int j = 0; s->mask >= 0 && j < g->max_cache; j++)
            ((float *)s->t_mask.data)[(int64_t)i * g->max_cache + j] =
                j <= start + i ? 0.0f : -INFINITY;
    }
    return ST_OK;
}

static int cmp_ms(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void note_step(Gen *g, int pos, double ms)
{
    if (g->nsteps < GEN_MAX_TOKENS) {
        g->step_pos[g->nsteps] = pos;
        g->step_gpu[g->nsteps] = (float)(g->rd.x.gpu_us < 0 ? -1 : g->rd.x.gpu_us / 1e3);
        g->step_up[g->nsteps] = (float)(g->rd.x.upload_us / 1e3);
        g->step_sub[g->nsteps] = (float)(g->rd.x.submit_us / 1e3);
        g->step_run[g->nsteps] = (float)(g->rd.x.wall_us / 1e3);
        g->step_ms[g->nsteps++] = (float)ms;
    }
}

/* The device's argmax of the last logits row after a step (-1: none, all NaN). */
static Status device_token(Runner *r, const Step *s, int64_t *best, DiagList *d)
{
    HTensor out = {0};
    Status st = exec_read(&r->x, s->token, &out, d);
    *best = st == ST_OK && out.numel > 0 ? ((const int64_t *)out.data)[out.numel - 1] : -1;
    htensor_free(&out);
    return st;
}

static Status nan_logits(const Runner *r, const Step *s, DiagList *d)
{
    return diag_error(d, r->pipe.plan->source, NULL, r->pipe.plan->tensors[s->logits].name,
                      "the logits are all NaN");
}

/* Runs one step and returns the argmax of the last row of the logits: the device's (s->token)
 * or the host's; logits (may be NULL) receives the logits, read back for it. */
static Status run_step(Runner *r, Step *s, int64_t *token, HTensor *logits, DiagList *d)
{
    Status st = exec_run(&r->x, false, d);
    HTensor out = {0};
    int64_t best = -1;
    if (st == ST_OK && s->token >= 0) st = device_token(r, s, &best, d);
    if (st == ST_OK && (s->token < 0 || logits)) st = exec_read(&r->x, s->logits, &out, d);
    if (st != ST_OK) return st;
    if (s->token < 0) {
        int64_t v = out.shape[out.rank - 1], rows = out.numel / (v ? v : 1);
        const float *row = (const float *)out.data + (rows - 1) * v;
        float bv = 0;
        for (int64_t i = 0; i < v; i++)
            if (row[i] == row[i] && (best < 0 || row[i] > bv)) best = i, bv = row[i];
    }
    *token = best;
    if (logits)
        *logits = out;
    else
        htensor_free(&out);
    return best < 0 ? nan_logits(r, s, d) : ST_OK;
}

/* Can the decode steps run pipelined: the next token picked on the device (and fed by it into
 * the next step's ids), the caches updated in place, one NPU partition, a backend that
 * pipelines, and no --step-sync? */
static bool pipelined(const Gen *g, const Options *o)
{
    return !o->step_sync && g->sd.token >= 0 && !g->host_carry && exec_can_pipeline(&g->rd.x);
}

/* n decode steps from token tok at position pos, each queued while the one before runs (two
 * input slots, the token fed on the device): the host's submit and wake-up latency overlap the
 * GPU's work. A step's wall time is the time between its token and the one before it. */
static Status decode_pipelined(Gen *g, int64_t tok, int pos, int n, DiagList *d)
{
    Exec *x = &g->rd.x;
    Status st = ST_OK;
    double last = clock_us() * 1e-3, up[2] = {0, 0}, sub[2] = {0, 0};
    for (int i = 0; i <= n && st == ST_OK; i++) {
        if (i < n) { /* step i's inputs into slot i % 2, free since step i - 2 was waited for */
            st = set_step(g, &g->rd, &g->sd, &tok, 1, pos + i);
            if (i > 0) x->vals[g->sd.ids] = NULL; /* the step before feeds it */
            if (st == ST_OK) st = exec_submit(x, i % 2, d);
            up[i % 2] = x->upload_us, sub[i % 2] = x->submit_us;
        }
        if (i == 0 || st != ST_OK) continue;
        st = exec_wait(x, (i - 1) % 2, d); /* step i - 1 */
        int64_t t = -1;
        if (st == ST_OK) st = device_token(&g->rd, &g->sd, &t, d);
        if (st == ST_OK && t < 0) st = nan_logits(&g->rd, &g->sd, d);
        double now = clock_us() * 1e-3;
        x->upload_us = up[(i - 1) % 2], x->submit_us = sub[(i - 1) % 2];
        note_step(g, pos + i - 1, now - last);
        last = now;
        if (st == ST_OK) g->tokens[g->ntok++] = t;
    }
    return st;
}

/* Binds decode's cache inputs to prefill's cache outputs and zeroes them. */
static Status wire_state(Gen *g, DiagList *d)
{
    const Plan *pp = g->rp.pipe.plan, *pd = g->rd.pipe.plan;
    Backend *bd = g->rd.be;
    for (int k = 0; k < g->nstate; k++) {
        int din = plan_find_tensor(pd, g->st_in[k]), dout = plan_find_tensor(pd, g->st_out[k]);
        int pout = plan_find_tensor(pp, g->st_out[k]), pin = plan_find_tensor(pp, g->st_in[k]);
        if (din < 0 || dout < 0 || pout < 0 || pin < 0)
            return diag_error(d, pd->source, NULL, g->st_in[k],
                              "state_carry names a tensor (%s -> %s) "
                              "the programs lack",
                              g->st_out[k], g->st_in[k]);
        int base = dout;
        while (pd->tensors[base].alias_of >= 0)
            base = pd->tensors[base].alias_of;
        if (base != din) g->host_carry = true;
        Status st = bd->ops->share ? bd->ops->share(bd, din, g->rp.be, pout, d) : ST_OK;
        if (st != ST_OK) return st;
        if (!bd->ops->share) g->host_carry = g->host_prefill = true;
        /* empty caches: prefill reads zeros, and so does a prompt that starts in decode */
        HTensor zero = {0};
        st = htensor_alloc(&zero, htensor_ref_dtype(pp->tensors[pin].dtype), pp->tensors[pin].rank,
                           pp->tensors[pin].shape);
        if (st == ST_OK) st = g->rp.be->ops->set_input(g->rp.be, pin, &zero, d);
        if (st == ST_OK) st = bd->ops->set_input(bd, din, &zero, d);
        htensor_free(&zero);
        if (st != ST_OK) return st;
        g->rp.x.vals[pin] = NULL; /* uploaded once, not per run */
        g->rd.x.vals[din] = NULL;
    }
    return ST_OK;
}

/* Without in-place caches or shared storage: move the caches `from` wrote to decode's inputs. */
static Status carry_through_host(Gen *g, Runner *from, DiagList *d)
{
    const Plan *pd = g->rd.pipe.plan;
    for (int k = 0; k < g->nstate; k++) {
        Status st = exec_move(&g->rd.x, plan_find_tensor(pd, g->st_in[k]), &from->x,
                              plan_find_tensor(from->pipe.plan, g->st_out[k]), d);
        if (st != ST_OK) return st;
    }
    return ST_OK;
}

static Status parse_prompt(const char *s, int64_t *out, int *n, DiagList *d)
{
    *n = 0;
    for (const char *p = s; *p;) {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 0 || *n == GEN_MAX_TOKENS)
            return diag_error(d, NULL, NULL, NULL,
                              "--prompt-ids: expected token ids like 1,2,3, got '%s'", s);
        out[(*n)++] = v;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return diag_error(d, NULL, NULL, NULL, "--prompt-ids: bad '%s'", s);
    }
    return *n ? ST_OK : diag_error(d, NULL, NULL, NULL, "--prompt-ids is empty");
}

/* Every decode step's wall time by cache position, one JSON line (for benchmarks). */
static void print_steps_json(const Gen *g, FILE *out)
{
    const struct {
        const char *key;
        const float *ms;
    } cols[] = {{"ms", g->step_ms},
                {"gpu_ms", g->step_gpu},
                {"upload_ms", g->step_up},
                {"submit_ms", g->step_sub},
                {"run_ms", g->step_run}};
    fprintf(out, "{\"schema\":\"npu-explore/generate/1\",\"kind\":\"steps\",\"pos\":");
    jw_ints(out, g->step_pos, g->nsteps);
    for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++) {
        fprintf(out, ",\"%s\":", cols[c].key);
        jw_floats(out, cols[c].ms, g->nsteps, 3);
    }
    fprintf(out, "}\n");
}

/* The graph edit before compiling (CompileOptions.edit): GEN_TOKEN = argmax(logits, dim=-1,
 * skip_nan), one more graph output, on the logits find_step will pick. */
static Status add_argmax(Graph *gr, void *ctx, DiagList *d)
{
    const Gen *g = ctx;
    int lg = -1;
    for (int i = 0; i < gr->noutputs && lg < 0; i++)
        if (!is_state(g, gr->tensors[gr->outputs[i]].name)) lg = gr->outputs[i];
    if (lg < 0) return diag_error(d, gr->path, NULL, NULL, "an LLM step needs a logits output");
    if (graph_find_tensor(gr, GEN_TOKEN) >= 0)
        return diag_error(d, gr->path, NULL, GEN_TOKEN,
                          "the model already has a tensor of this name");
    const GTensor *l = &gr->tensors[lg];
    if (l->rank < 1) return diag_error(d, gr->path, NULL, l->name, "the logits are a scalar");
    int t = graph_add_tensor(gr, GEN_TOKEN, DT_I64, l->rank - 1, l->shape, TK_ACT);
    int n = t < 0 ? -1
                  : graph_add_node(gr, "generate_argmax", OP_ARGMAX, "aten.argmax.default", &lg, 1,
                                   &t, 1);
    if (n < 0 || !graph_add_attr(gr, n, "dim", ATTR_INT, -1) ||
        !graph_add_attr(gr, n, "keepdim", ATTR_BOOL, 0) ||
        !graph_add_attr(gr, n, "skip_nan", ATTR_BOOL, 1) || !graph_add_output(gr, t))
        return ST_NOMEM;
    return graph_link(gr);
}

/* ---- one graph with model state (a static-KV-cache export) ---- */

/* What one step of generate_single saw: its input token, the token it picked, the reference's
 * (-1: none, a prompt step before the last) and its logits' error (-1: not compared). */
typedef struct StepCheck {
    int64_t tok, next, ref;
    double rel;
    bool tie; /* next is not ref, but within the tolerance's window of it in the reference's
               * logits (compare.h cmp_near_max): a near tie, not a mismatch */
} StepCheck;

/* The positions a one-graph model's state holds: the size along `dim` of the state its
 * index_copy nodes write (a static KV cache's length), else GEN_MAX_TOKENS. */
static int state_positions(const Graph *gr)
{
    int64_t best = GEN_MAX_TOKENS;
    for (int i = 0; i < gr->nnodes; i++) {
        const Node *n = &gr->nodes[i];
        if (n->dead || n->op != OP_INDEX_COPY || n->nin != 3) continue;
        const GTensor *self = node_input(gr, n, 0);
        int dim = norm_dim(attr_int(n, "dim", 0), self->rank);
        if (self->state && dim >= 0 && self->shape[dim] < best) best = self->shape[dim];
    }
    return (int)best;
}

/* Reads int64 tensor `name` of rs into out[0..GEN_MAX_TOKENS), *n values; false when absent. */
static bool ref_ids(const SafeTensors *rs, const char *name, int64_t *out, int *n)
{
    const StTensor *s = st_find(rs, name);
    HTensor t = {0};
    *n = 0;
    if (!s || st_to_htensor(s, DT_I64, &t) != ST_OK) return false;
    for (int64_t i = 0; i < t.numel && *n < GEN_MAX_TOKENS; i++)
        out[(*n)++] = ((int64_t *)t.data)[i];
    htensor_free(&t);
    return true;
}

static const char *step_verdict(const StepCheck *c, const Tolerance *tol)
{
    if (c->rel < 0 && c->ref < 0) return "-";
    if (c->rel >= 0 && c->rel > tol->rel_l2) return "MISMATCH";
    return c->ref < 0 || c->ref == c->next ? "ok" : c->tie ? "near tie" : "MISMATCH";
}

/* The result of generate_single, for its report. */
typedef struct SingleResult {
    const StepCheck *chk;
    int nc, np, ndec, ncmp;
    double ttft, tdec, worst;
    int match, logits_ok;  /* 1 yes, 0 no, -1 nothing to compare with */
    int tie_pos, ntok_cmp; /* the near tie that ended the comparison (-1: none); tokens compared */
    Tolerance tol;
} SingleResult;

/* Prints generate_single's report: a line per step, the tokens, the times, the verdicts. */
static void print_single(const Gen *g, const SingleResult *r, FILE *out, bool json)
{
    const Plan *p = g->rd.pipe.plan;
    int inplace = 0;
    for (int i = 0; i < p->nstates; i++)
        inplace += exec_state_in_place(&g->rd.x, i);
    double tps = r->ndec > 0 && r->tdec > 0 ? r->ndec / (r->tdec / 1e3) : 0;
    const char *dev = g->rd.be->ops->device(g->rd.be);
    if (json) {
        for (int i = 0; i < r->nc; i++) {
            const StepCheck *c = &r->chk[i];
            fprintf(out,
                    "{\"schema\":\"npu-explore/generate/1\",\"kind\":\"step\",\"pos\":%d,"
                    "\"token\":%lld,\"next\":%lld,\"ref_next\":%lld,\"logits_rel_l2\":%.6g,"
                    "\"verdict\":\"%s\"}\n",
                    i, (long long)c->tok, (long long)c->next, (long long)c->ref, c->rel,
                    step_verdict(c, &r->tol));
        }
        fprintf(out, "{\"schema\":\"npu-explore/generate/1\",\"kind\":\"summary\",\"tokens\":");
        jw_i64s(out, g->tokens, g->ntok);
        fprintf(out,
                ",\"prompt_len\":%d,\"ttft_ms\":%.3f,\"decode_steps\":%d,\"decode_ms\":%.3f,"
                "\"decode_tokens_per_s\":%.2f,\"reference\":\"%s\",\"logits\":\"%s\","
                "\"logits_steps\":%d,\"logits_max_rel_l2\":%.6g,\"tol_rel_l2\":%g,"
                "\"state\":\"%s\",\"state_tensors\":%d,\"state_in_place\":%d,"
                "\"device\":\"%s\",\"dtype\":\"%s\",\"argmax\":\"%s\",\"tokens_compared\":%d,"
                "\"near_tie_pos\":%d}\n",
                r->np, r->ttft, r->ndec, r->tdec, tps,
                r->match < 0 ? "none"
                : r->match   ? "match"
                             : "mismatch",
                r->logits_ok < 0 ? "none"
                : r->logits_ok   ? "ok"
                                 : "mismatch",
                r->ncmp, r->worst, r->tol.rel_l2, inplace == p->nstates ? "device" : "host",
                p->nstates, inplace, dev, g->rd.dtype, g->sd.token >= 0 ? "gpu" : "host",
                r->ntok_cmp, r->tie_pos);
        print_steps_json(g, out);
        return;
    }
    fprintf(out,
            "device %s, %s; model state: %d tensors, %d updated in place on the device, %d "
            "carried through the host; next token picked on the %s\n",
            dev, g->rd.dtype, p->nstates, inplace, p->nstates - inplace,
            g->sd.token >= 0 ? "GPU (argmax)" : "host (logits read back)");
    fprintf(out, "%5s %6s %6s %6s  %13s  %s\n", "pos", "token", "next", "ref", "logits rel_l2",
            "verdict");
    for (int i = 0; i < r->nc; i++) {
        const StepCheck *c = &r->chk[i];
        char ref[24] = "-", rel[24] = "-";
        if (c->ref >= 0) snprintf(ref, sizeof ref, "%lld", (long long)c->ref);
        if (c->rel >= 0) snprintf(rel, sizeof rel, "%.3e", c->rel);
        fprintf(out, "%5d %6lld %6lld %6s  %13s  %s\n", i, (long long)c->tok, (long long)c->next,
                ref, rel, step_verdict(c, &r->tol));
    }
    fprintf(out, "tokens:");
    for (int i = 0; i < g->ntok; i++)
        fprintf(out, " %lld", (long long)g->tokens[i]);
    fprintf(out,
            "\ntime to first token %.2f ms (prompt %d tokens, a step each); decode %d steps "
            "in %.2f ms = %.1f tokens/s\n",
            r->ttft, r->np, r->ndec, r->tdec, tps);
    if (r->logits_ok >= 0)
        fprintf(out,
                "logits vs reference: %d steps compared, worst rel_l2 %.3e (tolerance %g): %s\n",
                r->ncmp, r->worst, r->tol.rel_l2, r->logits_ok ? "ok" : "MISMATCH");
    if (r->match >= 0 && r->tie_pos < 0)
        fprintf(out, "greedy tokens vs reference: %s (%d compared)\n",
                r->match ? "match" : "MISMATCH", r->ntok_cmp);
    else if (r->match >= 0)
        fprintf(out,
                "greedy tokens vs reference: match (%d compared), then a near tie at position %d: "
                "the token picked is within the %s tolerance's window of the reference's in the "
                "reference's own logits; the tokens after it are not compared\n",
                r->ntok_cmp, r->tie_pos, g->rd.dtype);
}

/* Compiles the one-graph model and finds its steps' tensors; the state pairs come from the
 * model itself (Graph.state_in/state_out), not from a generation.json. */
static Status open_single(Gen *g, const Options *o, const char *model, DiagList *d)
{
    Options od = *o;
    od.model = model;
    od.inputs = NULL;
    Status st = model_load_graph(&g->md, model, d);
    if (st == ST_OK) st = model_bind(&g->md, &od, d);
    const Graph *gr = g->md.g;
    if (st == ST_OK && gr->nstates == 0)
        st = diag_error(d, model, NULL, NULL,
                        "the model keeps no state (no buffer it updates in "
                        "place, such as a static KV cache) and there is no generation.json beside "
                        "it: generate needs one or the other");
    for (int k = 0; st == ST_OK && k < gr->nstates && k < GEN_MAX_STATE; k++, g->nstate++) {
        g->st_in[k] = strdup(gr->tensors[gr->state_in[k]].name);
        g->st_out[k] = strdup(gr->tensors[gr->outputs[gr->state_out[k]]].name);
        if (!g->st_in[k] || !g->st_out[k]) st = ST_NOMEM;
    }
    if (st == ST_OK) g->max_cache = state_positions(gr);
    bool gpu_argmax = strcmp(o->backend, "cpu") != 0 && !o->host_argmax;
    if (st == ST_OK)
        st = runner_open_edit(&g->rd, &od, &g->md, false, NULL, gpu_argmax ? add_argmax : NULL, g,
                              d);
    if (st == ST_OK) st = find_step(g->rd.pipe.plan, g, &g->sd, d);
    if (st != ST_OK) return st;
    const PlanTensor *mask = g->sd.mask >= 0 ? &g->rd.pipe.plan->tensors[g->sd.mask] : NULL;
    if (mask) g->max_cache = (int)mask->shape[mask->rank - 1];
    if (!g->rd.be->ops->watch) return (g->sd.token = -1), ST_OK;
    return g->rd.be->ops->watch(g->rd.be, g->sd.token >= 0 ? g->sd.token : g->sd.logits, d);
}

/* generate with one compiled graph that keeps its own model state (Plan.state_in/state_out;
 * transformers' TorchExportableModuleWithStaticCache): the prompt token by token, then greedy
 * decoding, a run per position, the runtime carrying the state each run leaves into the next
 * (exec_carry_state: in place on the device where the plan updates it in place). With
 * greedy.safetensors beside the model (prompt, greedy_tokens, logits per position) the tokens
 * and each step's logits are compared, the logits while every token so far is the reference's. */
static Status generate_single(Gen *g, const Options *o, const char *model, FILE *out, int *rc,
                              DiagList *d)
{
    Status st = open_single(g, o, model, d);
    char ref[4096];
    SafeTensors rs = {0};
    DiagList quiet = {0};
    bool have_ref = st == ST_OK && !o->prompt_ids &&
                    file_exists(path_sibling(ref, sizeof ref, model, "greedy.safetensors")) &&
                    st_open(&rs, ref, &quiet) == ST_OK;
    diag_free(&quiet);
    int64_t prompt[GEN_MAX_TOKENS], want[GEN_MAX_TOKENS];
    int np = 0, nwant = 0;
    if (st == ST_OK && o->prompt_ids)
        st = parse_prompt(o->prompt_ids, prompt, &np, d);
    else if (st == ST_OK && !(have_ref && ref_ids(&rs, "prompt", prompt, &np) && np > 0))
        st = diag_error(d, model, NULL, NULL,
                        "no --prompt-ids and no prompt in a greedy.safetensors beside the model");
    if (have_ref) ref_ids(&rs, "greedy_tokens", want, &nwant);
    HTensor wl = {0}; /* the reference's logits, a row per position */
    const StTensor *rl = have_ref ? st_find(&rs, "logits") : NULL;
    if (st == ST_OK && rl) st = st_to_htensor(rl, DT_F32, &wl);
    int max_new = o->max_new ? o->max_new : nwant > 0 ? nwant : 16;
    if (st == ST_OK && (max_new > GEN_MAX_TOKENS || np + max_new - 1 > g->max_cache))
        st = diag_error(d, model, NULL, NULL,
                        "prompt (%d) + --max-new (%d) exceeds the cache (%d positions)", np,
                        max_new, g->max_cache);
    StepCheck *chk = calloc(GEN_MAX_TOKENS, sizeof *chk);
    if (!chk) st = ST_NOMEM;
    SingleResult r = {.chk = chk,
                      .np = np,
                      .match = nwant > 0 ? 1 : -1,
                      .tie_pos = -1,
                      .tol = report_tolerance(o, g->rd.dtype)};
    int64_t vocab = wl.rank == 2 ? wl.shape[1] : 0, next = -1;
    double t0 = clock_us() * 1e-3, td0 = 0;
    bool same = true; /* every token so far is the reference's: the logits are comparable */
    for (int pos = 0; st == ST_OK && g->ntok < max_new; pos++) {
        double s0 = clock_us() * 1e-3;
        int64_t tok = pos < np ? prompt[pos] : next;
        HTensor lg = {0}, row = {0};
        bool have_row =
            wl.rank == 2 && pos < wl.shape[0] && htensor_view(&row, &wl, 1, &vocab, pos * vocab);
        bool cmp = same && have_row;
        st = set_step(g, &g->rd, &g->sd, &tok, 1, pos);
        if (st == ST_OK) st = run_step(&g->rd, &g->sd, &next, cmp ? &lg : NULL, d);
        if (st == ST_OK) st = exec_carry_state(&g->rd.x, d);
        note_step(g, pos, clock_us() * 1e-3 - s0);
        StepCheck *c = &chk[r.nc++];
        *c = (StepCheck){.tok = tok, .next = next, .ref = -1, .rel = -1};
        CmpStats cs;
        if (st == ST_OK && cmp && lg.numel == vocab && cmp_tensors(&lg, &row, &cs)) {
            c->rel = cs.rel_l2;
            r.worst = cs.rel_l2 > r.worst ? cs.rel_l2 : r.worst;
            r.ncmp++;
        }
        htensor_free(&lg);
        if (st != ST_OK || pos < np - 1) continue; /* the next input is the prompt's */
        if (g->ntok < nwant && same) {
            c->ref = want[g->ntok];
            r.ntok_cmp++;
            c->tie = c->ref != next && have_row && cmp_near_max(&row, next, &r.tol);
            if (c->ref != next) same = false;
            if (c->tie)
                r.tie_pos = pos, r.ntok_cmp--;
            else if (c->ref != next)
                r.match = 0;
        }
        g->tokens[g->ntok++] = next;
        if (g->ntok == 1) {
            r.ttft = clock_us() * 1e-3 - t0;
            td0 = clock_us() * 1e-3;
        } else
            r.ndec++;
    }
    r.tdec = clock_us() * 1e-3 - td0;
    r.logits_ok = r.ncmp > 0 ? r.worst <= r.tol.rel_l2 : -1;
    if (st == ST_OK) {
        print_single(g, &r, out, o->json);
        if (r.match == 0 || r.logits_ok == 0) *rc = 1;
    }
    free(chk);
    htensor_free(&wl);
    st_close(&rs);
    return st;
}

static Status generate(Gen *g, const Options *o, FILE *out, int *rc, DiagList *d)
{
    char pp[4096], pd[4096], ref[4096];
    snprintf(pp, sizeof pp, "%s/prefill.json", g->dir);
    snprintf(pd, sizeof pd, "%s/decode.json", g->dir);
    snprintf(ref, sizeof ref, "%s/reference.safetensors", g->dir);
    Options op = *o, od = *o;
    op.model = pp;
    od.model = pd;
    op.inputs = od.inputs = NULL;
    Status st = read_config(g, d);
    if (st == ST_OK) st = model_load_graph(&g->mp, pp, d);
    if (st == ST_OK) st = model_bind(&g->mp, &op, d);
    if (st == ST_OK) st = model_load_graph(&g->md, pd, d);
    if (st == ST_OK) st = model_bind(&g->md, &od, d);
    /* the CPU backend has no watch: its graphs stay as exported */
    bool gpu_argmax = strcmp(o->backend, "cpu") != 0 && !o->host_argmax;
    Status (*edit)(Graph *, void *, DiagList *) = gpu_argmax ? add_argmax : NULL;
    if (st == ST_OK) st = runner_open_edit(&g->rp, &op, &g->mp, false, NULL, edit, g, d);
    if (st == ST_OK) st = runner_open_edit(&g->rd, &od, &g->md, false, g->rp.be, edit, g, d);
    if (st == ST_OK) st = find_step(g->rp.pipe.plan, g, &g->sp, d);
    if (st == ST_OK) st = find_step(g->rd.pipe.plan, g, &g->sd, d);
    if (st == ST_OK) st = wire_state(g, d);
    /* the decode step's token (or logits) comes back with the step's own submit; without a
     * watch the device's argmax would be read by a second submit: the host's takes the logits */
    if (st == ST_OK && !g->rd.be->ops->watch) g->sp.token = g->sd.token = -1;
    int watched = g->sd.token >= 0 ? g->sd.token : g->sd.logits;
    if (st == ST_OK && g->rd.be->ops->watch) st = g->rd.be->ops->watch(g->rd.be, watched, d);
    /* queued decode steps: their two recordings made here, at load, not at the first tokens */
    if (st == ST_OK && pipelined(g, o)) st = exec_pipe_feed(&g->rd.x, g->sd.ids, g->sd.token, d);
    if (st != ST_OK) return st;

    /* the prompt: --prompt-ids, else the reference's prefill prompt */
    int64_t prompt[GEN_MAX_TOKENS];
    int np = 0;
    SafeTensors rs = {0};
    DiagList quiet = {0};
    bool have_ref = file_exists(ref) && st_open(&rs, ref, &quiet) == ST_OK;
    diag_free(&quiet);
    if (o->prompt_ids)
        st = parse_prompt(o->prompt_ids, prompt, &np, d);
    else if (have_ref && st_find(&rs, "prefill.input_ids")) {
        HTensor t = {0};
        st = st_to_htensor(st_find(&rs, "prefill.input_ids"), DT_I64, &t);
        for (int64_t i = 0; st == ST_OK && i < t.numel && np < GEN_MAX_TOKENS; i++)
            prompt[np++] = ((int64_t *)t.data)[i];
        htensor_free(&t);
    } else
        st = diag_error(d, g->dir, NULL, NULL,
                        "no --prompt-ids and no reference prompt in the folder");
    int max_new = o->max_new;
    if (max_new == 0) {
        const StTensor *gt = have_ref && !o->prompt_ids ? st_find(&rs, "greedy_tokens") : NULL;
        max_new = gt && gt->rank == 1 ? (int)gt->shape[0] : 16;
    }
    if (st == ST_OK && np + max_new > g->max_cache)
        st =
            diag_error(d, g->dir, NULL, NULL, "prompt (%d) + --max-new (%d) exceeds the cache (%d)",
                       np, max_new, g->max_cache);
    for (int i = 0; st == ST_OK && i < np; i++)
        if (g->vocab > 0 && prompt[i] >= g->vocab)
            st = diag_error(d, g->dir, NULL, "input_ids",
                            "token id %lld is outside the vocabulary (%d)", (long long)prompt[i],
                            g->vocab);

    double t0 = (clock_us() * 1e-3), ttft = 0, tdec = 0;
    int64_t next = -1;
    int pos = 0, ndec = 0;
    double prefill_rel = -1;
    if (st == ST_OK && np >= g->prefill_len) {
        HTensor logits = {0};
        const StTensor *rl = have_ref && !o->prompt_ids ? st_find(&rs, "prefill.logits") : NULL;
        st = set_step(g, &g->rp, &g->sp, prompt, g->prefill_len, 0);
        if (st == ST_OK) st = run_step(&g->rp, &g->sp, &next, rl ? &logits : NULL, d);
        if (st == ST_OK && rl) {
            HTensor want = {0};
            CmpStats cs;
            if (st_to_htensor(rl, DT_F32, &want) == ST_OK && cmp_tensors(&logits, &want, &cs))
                prefill_rel = cs.rel_l2;
            htensor_free(&want);
        }
        htensor_free(&logits);
        pos = g->prefill_len;
        if (st == ST_OK && g->host_prefill) st = carry_through_host(g, &g->rp, d);
    }
    /* the rest of the prompt through decode steps */
    for (; st == ST_OK && pos < np; pos++) {
        double s0 = (clock_us() * 1e-3);
        st = set_step(g, &g->rd, &g->sd, &prompt[pos], 1, pos);
        if (st == ST_OK) st = run_step(&g->rd, &g->sd, &next, NULL, d);
        if (st == ST_OK && g->host_carry) st = carry_through_host(g, &g->rd, d);
        note_step(g, pos, (clock_us() * 1e-3) - s0);
    }
    ttft = (clock_us() * 1e-3) - t0;
    if (st == ST_OK) g->tokens[g->ntok++] = next;
    double td0 = (clock_us() * 1e-3);
    int left = (max_new < GEN_MAX_TOKENS ? max_new : GEN_MAX_TOKENS) - g->ntok;
    g->piped = st == ST_OK && left > 0 && pipelined(g, o);
    if (g->piped) {
        st = decode_pipelined(g, next, pos, left, d);
        pos += left;
        ndec += left;
    }
    while (st == ST_OK && g->ntok < max_new && g->ntok < GEN_MAX_TOKENS) {
        double s0 = (clock_us() * 1e-3);
        st = set_step(g, &g->rd, &g->sd, &next, 1, pos);
        if (st == ST_OK) st = run_step(&g->rd, &g->sd, &next, NULL, d);
        if (st == ST_OK && g->host_carry) st = carry_through_host(g, &g->rd, d);
        note_step(g, pos, (clock_us() * 1e-3) - s0);
        if (st == ST_OK) g->tokens[g->ntok++] = next;
        pos++;
        ndec++;
    }
    tdec = (clock_us() * 1e-3) - td0;

    /* warm prefill runs for benchmarks: the same prompt again (the caches' first prefill_len rows
     * are rewritten with the same values); the step alone, without reading the logits back,
     * after a warm-up (prof_warm_up: timed straight after the model's upload, the H100 ran a
     * prefill 2.4x slower) */
    double pf_wall = -1, pf_gpu = -1;
    int pf_runs = st == ST_OK && np >= g->prefill_len ? o->prefill_runs : 0;
    if (pf_runs > 0) {
        double *w = malloc(sizeof(double) * (size_t)pf_runs),
               *gp = malloc(sizeof(double) * (size_t)pf_runs);
        if (!w || !gp) st = ST_NOMEM;
        if (st == ST_OK) st = set_step(g, &g->rp, &g->sp, prompt, g->prefill_len, 0);
        if (st == ST_OK) st = prof_warm_up(&g->rp.x, d);
        for (int i = 0; st == ST_OK && i < pf_runs; i++) {
            st = set_step(g, &g->rp, &g->sp, prompt, g->prefill_len, 0);
            if (st == ST_OK) st = exec_run(&g->rp.x, false, d);
            if (st == ST_OK) {
                w[i] = g->rp.x.wall_us / 1e3;
                gp[i] = g->rp.x.gpu_us < 0 ? -1 : g->rp.x.gpu_us / 1e3;
            }
        }
        if (st == ST_OK) {
            qsort(w, (size_t)pf_runs, sizeof *w, cmp_ms);
            qsort(gp, (size_t)pf_runs, sizeof *gp, cmp_ms);
            pf_wall = w[pf_runs / 2];
            pf_gpu = gp[0] < 0 ? -1 : gp[pf_runs / 2];
        }
        free(w);
        free(gp);
    }

    /* the reference's greedy tokens, when the prompt is the reference's */
    int match = -1, compared = 0;
    const StTensor *gt = have_ref && !o->prompt_ids ? st_find(&rs, "greedy_tokens") : NULL;
    if (st == ST_OK && gt) {
        HTensor want = {0};
        if (st_to_htensor(gt, DT_I64, &want) == ST_OK) {
            match = 1;
            for (int i = 0; i < g->ntok && i < want.numel; i++, compared++)
                if (g->tokens[i] != ((int64_t *)want.data)[i]) match = 0;
        }
        htensor_free(&want);
    }
    if (st == ST_OK) {
        double tps = ndec > 0 && tdec > 0 ? ndec / (tdec / 1e3) : 0;
        double wp, wd; /* the clock warm-up during each graph's upload (runtime/backend.h) */
        vk_backend_warm(g->rp.be, &wp);
        vk_backend_warm(g->rd.be, &wd);
        double warm_ms = (wp + wd) / 1e3;
        if (o->json) {
            fprintf(out, "{\"schema\":\"npu-explore/generate/1\",\"kind\":\"summary\",\"tokens\":");
            jw_i64s(out, g->tokens, g->ntok);
            fprintf(out,
                    ",\"prompt_len\":%d,\"ttft_ms\":%.3f,\"decode_steps\":%d,\"decode_ms\":%.3f,"
                    "\"decode_tokens_per_s\":%.2f,\"prefill_rel_l2\":%.6g,\"reference\":\"%s\","
                    "\"state\":\"%s\",\"device\":\"%s\",\"dtype\":\"%s\",\"prefill_runs\":%d,"
                    "\"prefill_wall_ms\":%.3f,\"prefill_gpu_ms\":%.3f,\"argmax\":\"%s\","
                    "\"pipelined\":%s,\"clock_warm_up_ms\":%.3f}\n",
                    np, ttft, ndec, tdec, tps, prefill_rel,
                    match < 0 ? "none"
                    : match   ? "match"
                              : "mismatch",
                    g->host_carry ? "host" : "device", g->rp.be->ops->device(g->rp.be), g->rd.dtype,
                    pf_runs, pf_wall, pf_gpu, g->sd.token >= 0 ? "gpu" : "host",
                    g->piped ? "true" : "false", warm_ms);
            print_steps_json(g, out);
        } else {
            fprintf(out,
                    "device %s, %s; caches carried on the %s; next token picked on the %s%s\n"
                    "tokens:",
                    g->rp.be->ops->device(g->rp.be), g->rd.dtype,
                    g->host_carry ? "host (index_copy not in place)" : "device",
                    g->sd.token >= 0 ? "GPU (argmax)" : "host (logits read back)",
                    g->piped ? "; decode steps queued back to back" : "");
            for (int i = 0; i < g->ntok; i++)
                fprintf(out, " %lld", (long long)g->tokens[i]);
            fprintf(out,
                    "\ntime to first token %.2f ms (prompt %d tokens); decode %d steps in %.2f ms "
                    "= %.1f tokens/s\n",
                    ttft, np, ndec, tdec, tps);
            if (prefill_rel >= 0)
                fprintf(out, "prefill logits vs reference: rel_l2 %.3e\n", prefill_rel);
            if (pf_runs > 0) {
                fprintf(out, "prefill step, median of %d warm runs: wall %.3f ms", pf_runs,
                        pf_wall);
                if (pf_gpu >= 0) fprintf(out, ", gpu %.3f ms", pf_gpu);
                fprintf(out, "\n");
            }
            if (match >= 0)
                fprintf(out, "greedy tokens vs reference: %s (%d compared)\n",
                        match ? "match" : "MISMATCH", compared);
            if (warm_ms > 0)
                fprintf(out,
                        "the GPU was kept busy during the weights' upload for %.1f ms (its "
                        "clock ramps up before the first token)\n",
                        warm_ms);
        }
        if (match == 0) *rc = 1;
    }
    st_close(&rs);
    return st;
}

int cmd_generate(int argc, char **argv)
{
    Options o;
    DiagList d = {0};
    Status st = opt_read(&o, argc, argv, &d);
    Gen g;
    memset(&g, 0, sizeof g);
    g.dir = o.model;
    int rc = 0;
    /* a folder with generation.json: prefill + decode; else one graph with model state: the
     * folder's model.json, or the IR named */
    char path[4096], model[4096];
    snprintf(path, sizeof path, "%s/generation.json", o.model ? o.model : ".");
    snprintf(model, sizeof model, "%s/model.json", o.model ? o.model : ".");
    if (st == ST_OK && !file_exists(model) && file_exists(o.model))
        snprintf(model, sizeof model, "%s", o.model);
    g.single = st == ST_OK && !file_exists(path) && file_exists(model);
    if (st == ST_OK && g.single)
        st = generate_single(&g, &o, model, stdout, &rc, &d);
    else if (st == ST_OK)
        st = generate(&g, &o, stdout, &rc, &d);
    if (st != ST_OK) rc = status_exit_code(st);
    diag_print(&d, stderr);
    Step *steps[2] = {&g.sp, &g.sd};
    for (int i = 0; i < 2; i++) {
        htensor_free(&steps[i]->t_ids);
        htensor_free(&steps[i]->t_mask);
        htensor_free(&steps[i]->t_pos);
        htensor_free(&steps[i]->t_cpos);
    }
    runner_close(&g.rd);
    runner_close(&g.rp);
    model_free(&g.md);
    model_free(&g.mp);
    for (int i = 0; i < g.nstate; i++) {
        free(g.st_out[i]);
        free(g.st_in[i]);
    }
    diag_free(&d);
    return rc;
}
