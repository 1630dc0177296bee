#include "compiler/npubin.h"

#include <limits.h>
#include <math.h>
#include <msgpack.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "compiler/ops.h"
#include "common/hash.h"

/* ---- names of enums (the file stores names, never enum values) ---- */

static const char *const tkind_names[] = {
    [PT_ACT] = "act",       [PT_INPUT] = "input", [PT_OUTPUT] = "output",
    [PT_WEIGHT] = "weight", [PT_CONST] = "const", [PT_SCRATCH] = "scratch",
};
static const char *const target_names[] = {[KT_NPU] = "npu", [KT_CPU] = "cpu"};
static const char *const recipe_names[] = {
    [RECIPE_BN_FOLD] = "bn_fold", [RECIPE_CONCAT] = "concat", [RECIPE_FOLD] = "fold"};
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const char *tkind_name(int i)
{
    return tkind_names[i];
}
static const char *target_name(int i)
{
    return target_names[i];
}
static const char *recipe_name(int i)
{
    return recipe_names[i];
}
static const char *tier_key(int i)
{
    return plan_tier_name(i);
}
static const char *dtype_key(int i)
{
    return dtype_st_name((DType)i);
}
static const char *op_key(int i)
{
    return op_info[i].id;
}

/* ---- little-endian header fields ---- */

static void put_le(unsigned char *b, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *b, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

/* ---- writer ---- */

/* Keys in each record map of this version: the writer writes exactly these, the reader needs at
 * least these (a version 1 file lacks a tensor's view_offset and a recipe's src: one fewer). A
 * recipe's "block" (interleaved runs, linear_glu) is written only when not 0 and read when
 * present: a plan with one also has the GLU kernels, which a build without them refuses. A
 * fold recipe's "nodes" is written only for a fold (version 3). */
enum {
    PLAN_KEYS = 18, /* the 16 required ones, modules and tier (both optional when reading) */
    MODULE_KEYS = 3,
    TENSOR_KEYS = 12,
    KERNEL_KEYS = 13,
    PART_KEYS = 5,
    FUSION_KEYS = 5,
    RECIPE_KEYS = 11
};

typedef struct Enc {
    msgpack_packer pk;
    int err; /* any packer call failed (out of memory) */
} Enc;

static void put_str(Enc *e, const char *s)
{
    if (!s) {
        e->err |= msgpack_pack_nil(&e->pk);
        return;
    }
    size_t n = strlen(s);
    e->err |= msgpack_pack_str(&e->pk, n);
    e->err |= msgpack_pack_str_body(&e->pk, s, n);
}

static void put_int(Enc *e, const char *key, int64_t v)
{
    put_str(e, key);
    e->err |= msgpack_pack_int64(&e->pk, v);
}

static void put_kstr(Enc *e, const char *key, const char *s)
{
    put_str(e, key);
    put_str(e, s);
}

static void put_ints(Enc *e, const char *key, const int *v, int n)
{
    put_str(e, key);
    e->err |= msgpack_pack_array(&e->pk, (size_t)n);
    for (int i = 0; i < n; i++)
        e->err |= msgpack_pack_int64(&e->pk, v[i]);
}

static void put_i64s(Enc *e, const char *key, const int64_t *v, int n)
{
    put_str(e, key);
    e->err |= msgpack_pack_array(&e->pk, (size_t)n);
    for (int i = 0; i < n; i++)
        e->err |= msgpack_pack_int64(&e->pk, v[i]);
}

static void put_u32s(Enc *e, const char *key, const uint32_t *v, int n)
{
    put_str(e, key);
    e->err |= msgpack_pack_array(&e->pk, (size_t)n);
    for (int i = 0; i < n; i++)
        e->err |= msgpack_pack_uint32(&e->pk, v[i]);
}

static void put_strs(Enc *e, const char *key, const char *const *v, int n)
{
    put_str(e, key);
    e->err |= msgpack_pack_array(&e->pk, (size_t)n);
    for (int i = 0; i < n; i++)
        put_str(e, v[i]);
}

static void put_tensor(Enc *e, const PlanTensor *t)
{
    e->err |= msgpack_pack_map(&e->pk, TENSOR_KEYS);
    put_kstr(e, "name", t->name);
    put_kstr(e, "kind", tkind_name(t->kind));
    put_kstr(e, "dtype", dtype_key(t->dtype));
    put_kstr(e, "storage", dtype_key(t->storage));
    put_i64s(e, "shape", t->shape, t->rank);
    put_i64s(e, "pshape", t->pshape, t->rank);
    put_int(e, "padded", t->padded);
    put_int(e, "alias_of", t->alias_of);
    put_int(e, "view_offset", t->view_off);
    put_int(e, "offset", t->offset);
    put_int(e, "bytes", t->bytes);
    put_kstr(e, "weight_key", t->weight_key);
}

static void put_kernel(Enc *e, const PlanKernel *k)
{
    /* "tuned" only for a kernel a tuning-cache entry shaped (its record; describe shows it),
     * "fingerprint" only for a built-in NPU kernel (version 4) */
    e->err |= msgpack_pack_map(&e->pk, KERNEL_KEYS + (k->tuned != NULL) + (k->fingerprint != 0));
    put_kstr(e, "shader", k->shader);
    put_kstr(e, "target", target_name(k->target));
    put_kstr(e, "op", op_key(k->op));
    put_int(e, "node", k->node);
    put_int(e, "fusion", k->fusion);
    put_int(e, "nin", k->nin);
    put_ints(e, "args", k->args, k->nargs);
    put_u32s(e, "push", k->push, k->npush);
    put_u32s(e, "spec", k->spec, k->nspec);
    put_u32s(e, "groups", k->groups, 3);
    put_strs(e, "prov", k->prov, k->nprov);
    put_int(e, "part", k->part);
    put_int(e, "level", k->level);
    if (k->tuned) put_kstr(e, "tuned", k->tuned);
    if (k->fingerprint) {
        put_str(e, "fingerprint");
        e->err |= msgpack_pack_uint64(&e->pk, k->fingerprint);
    }
}

static void put_part(Enc *e, const PlanPart *pp)
{
    e->err |= msgpack_pack_map(&e->pk, PART_KEYS);
    put_kstr(e, "target", target_name(pp->target));
    put_int(e, "first_kernel", pp->first_kernel);
    put_int(e, "nkernels", pp->nkernels);
    put_ints(e, "in", pp->in, pp->nin);
    put_ints(e, "out", pp->out, pp->nout);
}

static void put_fusion(Enc *e, const PlanFusion *f)
{
    e->err |= msgpack_pack_map(&e->pk, FUSION_KEYS);
    put_kstr(e, "id", f->id);
    put_kstr(e, "pattern", f->pattern);
    put_int(e, "enabled", f->enabled);
    put_int(e, "kernel", f->kernel);
    put_strs(e, "nodes", f->nodes, f->nnodes);
}

static void put_recipe(Enc *e, const PlanRecipe *r)
{
    bool fold = r->kind == RECIPE_FOLD;
    e->err |= msgpack_pack_map(&e->pk, RECIPE_KEYS + (r->block != 0) + fold);
    put_kstr(e, "kind", recipe_name(r->kind));
    put_int(e, "out_w", r->out_w);
    put_int(e, "out_b", r->out_b);
    put_int(e, "conv_w", r->conv_w);
    put_int(e, "conv_b", r->conv_b);
    put_int(e, "gamma", r->gamma);
    put_int(e, "beta", r->beta);
    put_int(e, "mean", r->mean);
    put_int(e, "var", r->var);
    put_str(e, "eps");
    e->err |= msgpack_pack_double(&e->pk, r->eps);
    put_ints(e, "src", r->src, r->nsrc);
    if (r->block) put_int(e, "block", r->block);
    if (fold) put_strs(e, "nodes", r->nodes, r->nnodes);
}

static void put_module(Enc *e, const PlanModule *m)
{
    e->err |= msgpack_pack_map(&e->pk, MODULE_KEYS);
    put_kstr(e, "name", m->name);
    put_kstr(e, "source", m->source);
    put_str(e, "spirv");
    e->err |= msgpack_pack_bin(&e->pk, (size_t)m->nwords * 4);
    e->err |= msgpack_pack_bin_body(&e->pk, m->spirv, (size_t)m->nwords * 4);
}

static void put_plan(Enc *e, const Plan *p)
{
    /* tuning and tuning_env only when the plan has them: a plan of the default tuning is the
     * same file as before they existed; so are state_in and state_out (model state) */
    e->err |= msgpack_pack_map(&e->pk, PLAN_KEYS + (p->tuning != NULL) + (p->tuning_env != NULL) +
                                           2 * (p->nstates > 0));
    put_kstr(e, "model_name", p->model_name);
    put_kstr(e, "source", p->source);
    put_kstr(e, "compute", dtype_key(p->compute));
    put_kstr(e, "tier", plan_tier_name(p->tier));
    put_int(e, "channel_tile", p->channel_tile);
    if (p->tuning) put_kstr(e, "tuning", p->tuning);
    if (p->tuning_env) put_kstr(e, "tuning_env", p->tuning_env);
    put_int(e, "arena_bytes", p->arena_bytes);
    put_int(e, "naive_bytes", p->naive_bytes);
    put_int(e, "nlevels", p->nlevels);
    put_str(e, "tensors");
    e->err |= msgpack_pack_array(&e->pk, (size_t)p->ntensors);
    for (int i = 0; i < p->ntensors; i++)
        put_tensor(e, &p->tensors[i]);
    put_str(e, "kernels");
    e->err |= msgpack_pack_array(&e->pk, (size_t)p->nkernels);
    for (int i = 0; i < p->nkernels; i++)
        put_kernel(e, &p->kernels[i]);
    put_str(e, "parts");
    e->err |= msgpack_pack_array(&e->pk, (size_t)p->nparts);
    for (int i = 0; i < p->nparts; i++)
        put_part(e, &p->parts[i]);
    put_str(e, "fusions");
    e->err |= msgpack_pack_array(&e->pk, (size_t)p->nfusions);
    for (int i = 0; i < p->nfusions; i++)
        put_fusion(e, &p->fusions[i]);
    put_str(e, "recipes");
    e->err |= msgpack_pack_array(&e->pk, (size_t)p->nrecipes);
    for (int i = 0; i < p->nrecipes; i++)
        put_recipe(e, &p->recipes[i]);
    put_ints(e, "inputs", p->inputs, p->ninputs);
    put_ints(e, "outputs", p->outputs, p->noutputs);
    put_ints(e, "weights", p->weights, p->nweights);
    if (p->nstates > 0) {
        put_ints(e, "state_in", p->state_in, p->nstates);
        put_ints(e, "state_out", p->state_out, p->nstates);
    }
    put_str(e, "ir_json");
    if (!p->ir_json) {
        e->err |= msgpack_pack_nil(&e->pk);
    } else {
        e->err |= msgpack_pack_bin(&e->pk, (size_t)p->ir_json_len);
        e->err |= msgpack_pack_bin_body(&e->pk, p->ir_json, (size_t)p->ir_json_len);
    }
    put_str(e, "modules");
    e->err |= msgpack_pack_array(&e->pk, (size_t)p->nmodules);
    for (int i = 0; i < p->nmodules; i++)
        put_module(e, &p->modules[i]);
}

static Status encode(const Plan *p, const char *file, unsigned char **out, size_t *len, DiagList *d)
{
    *out = NULL;
    *len = 0;
    Status st = npubin_check_plan(p, file, ST_INTERNAL, d);
    if (st != ST_OK) return st;
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    Enc e = {.err = 0};
    msgpack_packer_init(&e.pk, &sb, msgpack_sbuffer_write);
    static const unsigned char zero[NPUBIN_HEADER_SIZE];
    e.err |= msgpack_sbuffer_write(&sb, (const char *)zero, sizeof zero);
    put_plan(&e, p);
    if (e.err || !sb.data) {
        msgpack_sbuffer_destroy(&sb);
        return diag_add(d, DIAG_ERROR, ST_NOMEM, file, NULL, NULL, "out of memory encoding plan");
    }
    unsigned char *h = (unsigned char *)sb.data;
    size_t n = sb.size - NPUBIN_HEADER_SIZE;
    memcpy(h, NPUBIN_MAGIC, 8);
    put_le(h + 8, (uint64_t)plan_format_version(p), 4);
    put_le(h + 12, 0, 4);
    put_le(h + 16, n, 8);
    put_le(h + 24, hash64(h + NPUBIN_HEADER_SIZE, n), 8);
    *len = sb.size;
    *out = (unsigned char *)msgpack_sbuffer_release(&sb);
    return ST_OK;
}

Status npubin_encode(const Plan *p, unsigned char **out, size_t *len, DiagList *d)
{
    return encode(p, NULL, out, len, d);
}

Status npubin_write(const Plan *p, const char *path, DiagList *d)
{
    unsigned char *buf;
    size_t len;
    Status st = encode(p, path, &buf, &len, d);
    if (st != ST_OK) return st;
    st = file_write_atomic(path, buf, len, d);
    free(buf);
    return st;
}

/* ---- reader: fields ---- */

typedef struct Dec {
    const char *path;
    DiagList *d;
    Arena *a;
    const char *where; /* "tensors[3]", "" at the top */
    uint32_t version;  /* the file's format version */
} Dec;

static Status bad(const Dec *x, const char *key, const char *fmt, ...) NPU_PRINTF(3, 4);
static Status bad(const Dec *x, const char *key, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return diag_error(x->d, x->path, NULL, NULL, "%s%skey '%s': %s", x->where,
                      *x->where ? ": " : "", key, msg);
}

static Status nomem(const Dec *x)
{
    return diag_add(x->d, DIAG_ERROR, ST_NOMEM, x->path, NULL, NULL, "out of memory reading plan");
}

static const char *type_name(msgpack_object_type t)
{
    switch (t) {
    case MSGPACK_OBJECT_NIL:
        return "nil";
    case MSGPACK_OBJECT_BOOLEAN:
        return "a boolean";
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
    case MSGPACK_OBJECT_NEGATIVE_INTEGER:
        return "an integer";
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64:
        return "a float";
    case MSGPACK_OBJECT_STR:
        return "a string";
    case MSGPACK_OBJECT_ARRAY:
        return "an array";
    case MSGPACK_OBJECT_MAP:
        return "a map";
    case MSGPACK_OBJECT_BIN:
        return "binary data";
    case MSGPACK_OBJECT_EXT:
        return "an ext";
    }
    return "an unknown type";
}

/* The value of a required key in map m. */
static Status lookup(const Dec *x, const msgpack_object *m, const char *key,
                     const msgpack_object **v)
{
    *v = NULL;
    size_t kl = strlen(key);
    for (uint32_t i = 0; i < m->via.map.size; i++) {
        const msgpack_object *k = &m->via.map.ptr[i].key;
        if (k->type != MSGPACK_OBJECT_STR)
            return bad(x, key, "map key %u is %s, not a string", i, type_name(k->type));
        if (k->via.str.size != kl || memcmp(k->via.str.ptr, key, kl) != 0) continue;
        if (*v) return bad(x, key, "appears twice");
        *v = &m->via.map.ptr[i].val;
    }
    if (!*v) return bad(x, key, "missing");
    return ST_OK;
}

/* Is key present in map m (an optional key)? */
static bool has_key(const msgpack_object *m, const char *key)
{
    size_t kl = strlen(key);
    for (uint32_t i = 0; i < m->via.map.size; i++) {
        const msgpack_object *k = &m->via.map.ptr[i].key;
        if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == kl &&
            memcmp(k->via.str.ptr, key, kl) == 0)
            return true;
    }
    return false;
}

static Status as_i64(const Dec *x, const char *key, const msgpack_object *v, int64_t lo, int64_t hi,
                     int64_t *out)
{
    int64_t n;
    if (v->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
        if (v->via.u64 > INT64_MAX)
            return bad(x, key, "%llu out of range", (unsigned long long)v->via.u64);
        n = (int64_t)v->via.u64;
    } else if (v->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
        n = v->via.i64;
    } else {
        return bad(x, key, "expected an integer, found %s", type_name(v->type));
    }
    if (n < lo || n > hi)
        return bad(x, key, "%lld out of range (%lld..%lld)", (long long)n, (long long)lo,
                   (long long)hi);
    *out = n;
    return ST_OK;
}

static Status get_i64(const Dec *x, const msgpack_object *m, const char *key, int64_t *out)
{
    const msgpack_object *v;
    Status st = lookup(x, m, key, &v);
    return st != ST_OK ? st : as_i64(x, key, v, INT64_MIN, INT64_MAX, out);
}

static Status get_int(const Dec *x, const msgpack_object *m, const char *key, int *out)
{
    const msgpack_object *v;
    int64_t n = 0;
    Status st = lookup(x, m, key, &v);
    if (st == ST_OK) st = as_i64(x, key, v, INT_MIN, INT_MAX, &n);
    *out = (int)n;
    return st;
}

static Status get_u64(const Dec *x, const msgpack_object *m, const char *key, uint64_t *out)
{
    const msgpack_object *v;
    Status st = lookup(x, m, key, &v);
    if (st != ST_OK) return st;
    if (v->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return bad(x, key, "expected an unsigned integer, found %s", type_name(v->type));
    *out = v->via.u64;
    return ST_OK;
}

static Status get_double(const Dec *x, const msgpack_object *m, const char *key, double *out)
{
    const msgpack_object *v;
    Status st = lookup(x, m, key, &v);
    if (st != ST_OK) return st;
    if (v->type != MSGPACK_OBJECT_FLOAT64 && v->type != MSGPACK_OBJECT_FLOAT32)
        return bad(x, key, "expected a float, found %s", type_name(v->type));
    *out = v->via.f64;
    return ST_OK;
}

/* Copies a msgpack string (or nil when nullable) into the plan's arena. */
static Status as_str(const Dec *x, const char *key, const msgpack_object *v, bool nullable,
                     const char **out)
{
    *out = NULL;
    if (v->type == MSGPACK_OBJECT_NIL && nullable) return ST_OK;
    if (v->type != MSGPACK_OBJECT_STR)
        return bad(x, key, "expected a string, found %s", type_name(v->type));
    uint32_t n = v->via.str.size;
    if (n && memchr(v->via.str.ptr, 0, n)) return bad(x, key, "string contains a NUL byte");
    char *s = arena_alloc(x->a, (size_t)n + 1);
    if (!s) return nomem(x);
    if (n) memcpy(s, v->via.str.ptr, n);
    *out = s;
    return ST_OK;
}

static Status get_str(const Dec *x, const msgpack_object *m, const char *key, bool nullable,
                      const char **out)
{
    const msgpack_object *v;
    Status st = lookup(x, m, key, &v);
    return st != ST_OK ? st : as_str(x, key, v, nullable, out);
}

/* A name from `names(0..count)`; the index in *out. */
static Status get_enum(const Dec *x, const msgpack_object *m, const char *key,
                       const char *(*names)(int), int count, int *out)
{
    const msgpack_object *v;
    Status st = lookup(x, m, key, &v);
    if (st != ST_OK) return st;
    if (v->type != MSGPACK_OBJECT_STR)
        return bad(x, key, "expected a name, found %s", type_name(v->type));
    for (int i = 0; i < count; i++) {
        const char *s = names(i);
        if (s && strlen(s) == v->via.str.size && memcmp(s, v->via.str.ptr, v->via.str.size) == 0) {
            *out = i;
            return ST_OK;
        }
    }
    return bad(x, key, "unknown name '%.*s'", (int)(v->via.str.size > 64 ? 64 : v->via.str.size),
               v->via.str.ptr);
}

static Status get_array(const Dec *x, const msgpack_object *m, const char *key, uint32_t max,
                        const msgpack_object_array **out)
{
    const msgpack_object *v;
    Status st = lookup(x, m, key, &v);
    if (st != ST_OK) return st;
    if (v->type != MSGPACK_OBJECT_ARRAY)
        return bad(x, key, "expected an array, found %s", type_name(v->type));
    if (v->via.array.size > max)
        return bad(x, key, "%u elements (at most %u)", v->via.array.size, max);
    *out = &v->via.array;
    return ST_OK;
}

/* An array of ints into a new arena array (one spare element, as lower allocates). */
static Status get_ints(const Dec *x, const msgpack_object *m, const char *key, int **out, int *n)
{
    const msgpack_object_array *a = NULL;
    Status st = get_array(x, m, key, NPUBIN_MAX_COUNT, &a);
    if (st != ST_OK) return st;
    int *v = arena_alloc(x->a, sizeof(int) * ((size_t)a->size + 1));
    if (!v) return nomem(x);
    for (uint32_t i = 0; i < a->size; i++) {
        int64_t k = 0;
        st = as_i64(x, key, &a->ptr[i], INT_MIN, INT_MAX, &k);
        if (st != ST_OK) return st;
        v[i] = (int)k;
    }
    *out = v;
    *n = (int)a->size;
    return ST_OK;
}

static Status get_i64s(const Dec *x, const msgpack_object *m, const char *key, int64_t *dst,
                       int max, int *n)
{
    const msgpack_object_array *a = NULL;
    Status st = get_array(x, m, key, (uint32_t)max, &a);
    for (uint32_t i = 0; st == ST_OK && i < a->size; i++)
        st = as_i64(x, key, &a->ptr[i], INT64_MIN, INT64_MAX, &dst[i]);
    if (st == ST_OK) *n = (int)a->size;
    return st;
}

static Status get_u32s(const Dec *x, const msgpack_object *m, const char *key, uint32_t *dst,
                       int max, int *n)
{
    const msgpack_object_array *a = NULL;
    Status st = get_array(x, m, key, (uint32_t)max, &a);
    for (uint32_t i = 0; st == ST_OK && i < a->size; i++) {
        int64_t k = 0;
        st = as_i64(x, key, &a->ptr[i], 0, UINT32_MAX, &k);
        dst[i] = (uint32_t)k;
    }
    if (st == ST_OK) *n = (int)a->size;
    return st;
}

static Status get_strs(const Dec *x, const msgpack_object *m, const char *key, const char ***out,
                       int *n)
{
    const msgpack_object_array *a = NULL;
    Status st = get_array(x, m, key, NPUBIN_MAX_COUNT, &a);
    if (st != ST_OK) return st;
    const char **v = arena_alloc(x->a, sizeof(char *) * ((size_t)a->size + 1));
    if (!v) return nomem(x);
    for (uint32_t i = 0; st == ST_OK && i < a->size; i++)
        st = as_str(x, key, &a->ptr[i], false, &v[i]);
    if (st != ST_OK) return st;
    *out = v;
    *n = (int)a->size;
    return ST_OK;
}

/* Checks that element i of an array of records is a map with room for the nkeys keys a record
 * needs. Done for every element before the records are allocated, so a long array of tiny
 * items cannot make the reader allocate far more than the file's size. */
static Status as_record(const Dec *x, const char *key, const msgpack_object *v, uint32_t i,
                        uint32_t nkeys)
{
    if (v->type != MSGPACK_OBJECT_MAP)
        return bad(x, key, "element %u is %s, not a map", i, type_name(v->type));
    if (v->via.map.size < nkeys)
        return bad(x, key, "element %u has %u keys, fewer than the %u every record has", i,
                   v->via.map.size, nkeys);
    return ST_OK;
}

static Status read_tensor(const Dec *x, const msgpack_object *m, PlanTensor *t)
{
    int kind = 0, dt = 0, sdt = 0, np = 0;
    Status st = get_str(x, m, "name", false, &t->name);
    if (!st) st = get_enum(x, m, "kind", tkind_name, COUNT(tkind_names), &kind);
    if (!st) st = get_enum(x, m, "dtype", dtype_key, DT_COUNT, &dt);
    if (!st) st = get_enum(x, m, "storage", dtype_key, DT_COUNT, &sdt);
    if (!st) st = get_i64s(x, m, "shape", t->shape, NPU_MAX_RANK, &t->rank);
    if (!st) st = get_i64s(x, m, "pshape", t->pshape, NPU_MAX_RANK, &np);
    if (!st && np != t->rank) st = bad(x, "pshape", "%d dimensions but shape has %d", np, t->rank);
    if (!st) st = get_int(x, m, "padded", &t->padded);
    if (!st) st = get_int(x, m, "alias_of", &t->alias_of);
    t->view_off = 0;
    if (!st && x->version >= 2) st = get_i64(x, m, "view_offset", &t->view_off);
    if (!st) st = get_i64(x, m, "offset", &t->offset);
    if (!st) st = get_i64(x, m, "bytes", &t->bytes);
    if (!st) st = get_str(x, m, "weight_key", true, &t->weight_key);
    t->kind = (PlanTensorKind)kind;
    t->dtype = (DType)dt;
    t->storage = (DType)sdt;
    return st;
}

static Status read_kernel(const Dec *x, const msgpack_object *m, PlanKernel *k)
{
    int target = 0, op = 0, ng = 0;
    Status st = get_str(x, m, "shader", false, &k->shader);
    if (!st) st = get_enum(x, m, "target", target_name, COUNT(target_names), &target);
    if (!st) st = get_enum(x, m, "op", op_key, OP_COUNT, &op);
    if (!st) st = get_int(x, m, "node", &k->node);
    if (!st) st = get_int(x, m, "fusion", &k->fusion);
    if (!st) st = get_int(x, m, "nin", &k->nin);
    if (!st) st = get_ints(x, m, "args", &k->args, &k->nargs);
    if (!st) st = get_u32s(x, m, "push", k->push, PLAN_MAX_PUSH, &k->npush);
    if (!st) st = get_u32s(x, m, "spec", k->spec, PLAN_MAX_SPEC, &k->nspec);
    if (!st) st = get_u32s(x, m, "groups", k->groups, 3, &ng);
    if (!st && ng != 3) st = bad(x, "groups", "%d sizes, expected 3", ng);
    if (!st) st = get_strs(x, m, "prov", &k->prov, &k->nprov);
    if (!st) st = get_int(x, m, "part", &k->part);
    if (!st) st = get_int(x, m, "level", &k->level);
    if (!st && has_key(m, "tuned")) st = get_str(x, m, "tuned", false, &k->tuned);
    /* a version 4 file's built-in NPU kernels (npubin_verify compares it with this build's);
     * an older file has none */
    if (!st && x->version >= 4 && has_key(m, "fingerprint"))
        st = get_u64(x, m, "fingerprint", &k->fingerprint);
    k->target = (KernelTarget)target;
    k->op = op;
    return st;
}

static Status read_part(const Dec *x, const msgpack_object *m, PlanPart *pp)
{
    int target = 0;
    Status st = get_enum(x, m, "target", target_name, COUNT(target_names), &target);
    if (!st) st = get_int(x, m, "first_kernel", &pp->first_kernel);
    if (!st) st = get_int(x, m, "nkernels", &pp->nkernels);
    if (!st) st = get_ints(x, m, "in", &pp->in, &pp->nin);
    if (!st) st = get_ints(x, m, "out", &pp->out, &pp->nout);
    pp->target = (KernelTarget)target;
    return st;
}

static Status read_fusion(const Dec *x, const msgpack_object *m, PlanFusion *f)
{
    Status st = get_str(x, m, "id", false, &f->id);
    if (!st) st = get_str(x, m, "pattern", false, &f->pattern);
    if (!st) st = get_int(x, m, "enabled", &f->enabled);
    if (!st) st = get_int(x, m, "kernel", &f->kernel);
    if (!st) st = get_strs(x, m, "nodes", &f->nodes, &f->nnodes);
    return st;
}

static Status read_recipe(const Dec *x, const msgpack_object *m, PlanRecipe *r)
{
    int kind = 0;
    Status st = get_enum(x, m, "kind", recipe_name, COUNT(recipe_names), &kind);
    if (!st) st = get_int(x, m, "out_w", &r->out_w);
    if (!st) st = get_int(x, m, "out_b", &r->out_b);
    if (!st) st = get_int(x, m, "conv_w", &r->conv_w);
    if (!st) st = get_int(x, m, "conv_b", &r->conv_b);
    if (!st) st = get_int(x, m, "gamma", &r->gamma);
    if (!st) st = get_int(x, m, "beta", &r->beta);
    if (!st) st = get_int(x, m, "mean", &r->mean);
    if (!st) st = get_int(x, m, "var", &r->var);
    if (!st) st = get_double(x, m, "eps", &r->eps);
    r->kind = (RecipeKind)kind;
    r->nsrc = 0;
    if (!st && x->version >= 2) {
        int *src = NULL;
        st = get_ints(x, m, "src", &src, &r->nsrc);
        if (!st && r->nsrc > RECIPE_MAX_SRC)
            st = bad(x, "src", "%d sources, at most %d", r->nsrc, RECIPE_MAX_SRC);
        for (int i = 0; !st && i < r->nsrc; i++)
            r->src[i] = src[i];
    }
    r->block = 0;
    if (!st && has_key(m, "block")) st = get_int(x, m, "block", &r->block);
    if (!st && (r->block < 0 || (r->block > 0 && r->kind != RECIPE_CONCAT)))
        st = bad(x, "block", "%d (a concat's rows per run, or 0)", r->block);
    r->nodes = NULL;
    r->nnodes = 0;
    if (!st && r->kind == RECIPE_FOLD && x->version < 3)
        st = bad(x, "kind", "fold, which a version %u file cannot hold", x->version);
    if (!st && r->kind == RECIPE_FOLD) st = get_strs(x, m, "nodes", &r->nodes, &r->nnodes);
    return st;
}

/* SPIR-V words, little-endian in the file as on every host we build for (tools/embed.sh too). */
static Status read_module(const Dec *x, const msgpack_object *m, PlanModule *pm)
{
    Status st = get_str(x, m, "name", false, &pm->name);
    if (!st) st = get_str(x, m, "source", false, &pm->source);
    const msgpack_object *v = NULL;
    if (!st) st = lookup(x, m, "spirv", &v);
    if (st) return st;
    if (v->type != MSGPACK_OBJECT_BIN || v->via.bin.size % 4 != 0 || v->via.bin.size < 20)
        return bad(x, "spirv", "expected SPIR-V words (binary data, a multiple of 4 bytes)");
    uint32_t *w = arena_alloc(x->a, v->via.bin.size);
    if (!w) return nomem(x);
    memcpy(w, v->via.bin.ptr, v->via.bin.size);
    pm->spirv = w;
    pm->nwords = v->via.bin.size / 4;
    return ST_OK;
}

/* Reads an array of records of `size` bytes each, calling rd on each map. */
#define READ_RECORDS(x, m, key, T, nkeys, arr, count, rd)                                          \
    do {                                                                                           \
        const msgpack_object_array *a_;                                                            \
        if ((st = get_array(x, m, key, NPUBIN_MAX_COUNT, &a_)) != ST_OK) return st;                \
        for (uint32_t i_ = 0; i_ < a_->size; i_++)                                                 \
            if ((st = as_record(x, key, &a_->ptr[i_], i_, nkeys)) != ST_OK) return st;             \
        T *v_ = arena_alloc((x)->a, sizeof(T) * ((size_t)a_->size + 1));                           \
        if (!v_) return nomem(x);                                                                  \
        char w_[48];                                                                               \
        Dec y_ = *(x);                                                                             \
        y_.where = w_;                                                                             \
        for (uint32_t i_ = 0; i_ < a_->size; i_++) {                                               \
            snprintf(w_, sizeof w_, "%s[%u]", key, i_);                                            \
            if ((st = rd(&y_, &a_->ptr[i_], &v_[i_])) != ST_OK) return st;                         \
        }                                                                                          \
        (arr) = v_;                                                                                \
        (count) = (int)a_->size;                                                                   \
    } while (0)

static Status read_plan(const Dec *x, const msgpack_object *m, Plan *p)
{
    int compute = 0;
    Status st = get_str(x, m, "model_name", true, &p->model_name);
    if (!st) st = get_str(x, m, "source", true, &p->source);
    if (!st) st = get_enum(x, m, "compute", dtype_key, DT_COUNT, &compute);
    p->compute = (DType)compute;
    /* "tier" came with the kernel tiers; a plan written before has portable kernels only */
    if (!st && has_key(m, "tier")) st = get_enum(x, m, "tier", tier_key, TIER_COUNT, &p->tier);
    if (!st) st = get_int(x, m, "channel_tile", &p->channel_tile);
    /* tuning and tuning_env: only in a plan built with non-default tuning (its record, shown by
     * describe; nothing reads the values back) */
    if (!st && has_key(m, "tuning")) st = get_str(x, m, "tuning", false, &p->tuning);
    if (!st && has_key(m, "tuning_env")) st = get_str(x, m, "tuning_env", false, &p->tuning_env);
    if (!st) st = get_i64(x, m, "arena_bytes", &p->arena_bytes);
    if (!st) st = get_i64(x, m, "naive_bytes", &p->naive_bytes);
    if (!st) st = get_int(x, m, "nlevels", &p->nlevels);
    if (st) return st;
    uint32_t v1 = x->version < 2; /* version 1: no view_offset, no src */
    READ_RECORDS(x, m, "tensors", PlanTensor, TENSOR_KEYS - v1, p->tensors, p->ntensors,
                 read_tensor);
    READ_RECORDS(x, m, "kernels", PlanKernel, KERNEL_KEYS, p->kernels, p->nkernels, read_kernel);
    READ_RECORDS(x, m, "parts", PlanPart, PART_KEYS, p->parts, p->nparts, read_part);
    READ_RECORDS(x, m, "fusions", PlanFusion, FUSION_KEYS, p->fusions, p->nfusions, read_fusion);
    READ_RECORDS(x, m, "recipes", PlanRecipe, RECIPE_KEYS - v1, p->recipes, p->nrecipes,
                 read_recipe);
    if (!st) st = get_ints(x, m, "inputs", &p->inputs, &p->ninputs);
    if (!st) st = get_ints(x, m, "outputs", &p->outputs, &p->noutputs);
    if (!st) st = get_ints(x, m, "weights", &p->weights, &p->nweights);
    /* model state: only in a plan that has some */
    int nout = 0;
    if (!st && has_key(m, "state_in")) st = get_ints(x, m, "state_in", &p->state_in, &p->nstates);
    if (!st && has_key(m, "state_out")) st = get_ints(x, m, "state_out", &p->state_out, &nout);
    if (!st && nout != p->nstates)
        return bad(x, "state_out", "has %d entries for %d in state_in", nout, p->nstates);
    const msgpack_object *v;
    if (!st) st = lookup(x, m, "ir_json", &v);
    if (st) return st;
    if (v->type == MSGPACK_OBJECT_BIN) {
        char *s = arena_alloc(x->a, (size_t)v->via.bin.size + 1);
        if (!s) return nomem(x);
        if (v->via.bin.size) memcpy(s, v->via.bin.ptr, v->via.bin.size);
        p->ir_json = s;
        p->ir_json_len = v->via.bin.size;
    } else if (v->type != MSGPACK_OBJECT_NIL) {
        return bad(x, "ir_json", "expected binary data or nil, found %s", type_name(v->type));
    }
    /* modules came with generated kernels; a file without them has none */
    if (has_key(m, "modules")) {
        READ_RECORDS(x, m, "modules", PlanModule, MODULE_KEYS, p->modules, p->nmodules,
                     read_module);
        p->cap_modules = p->nmodules;
    }
    return ST_OK;
}

/* ---- reader: header and entry points ---- */

static Status check_header(const char *path, const unsigned char *buf, size_t len, DiagList *d)
{
    if (len == 0) return diag_error(d, path, NULL, NULL, "empty file, not an .npubin plan");
    size_t m = len < 8 ? len : 8;
    if (memcmp(buf, NPUBIN_MAGIC, m) != 0)
        return diag_error(d, path, NULL, NULL, "not an .npubin plan (bad magic)");
    if (len < 12)
        return diag_error(d, path, NULL, NULL, "truncated: %zu bytes, the header alone is %d", len,
                          NPUBIN_HEADER_SIZE);
    uint32_t ver = (uint32_t)get_le(buf + 8, 4);
    if (ver > PLAN_FORMAT_VERSION)
        return diag_error(d, path, NULL, NULL,
                          "written by a newer npu-explore (format v%u, this build reads v%d)", ver,
                          PLAN_FORMAT_VERSION);
    if (ver == 0) return diag_error(d, path, NULL, NULL, "invalid format version 0");
    if (len < NPUBIN_HEADER_SIZE)
        return diag_error(d, path, NULL, NULL, "truncated: %zu bytes, the header alone is %d", len,
                          NPUBIN_HEADER_SIZE);
    if (get_le(buf + 12, 4) != 0)
        return diag_error(d, path, NULL, NULL, "corrupt header (reserved field is not zero)");
    uint64_t n = get_le(buf + 16, 8);
    size_t have = len - NPUBIN_HEADER_SIZE;
    if (n > have)
        return diag_error(d, path, NULL, NULL,
                          "truncated: the header promises %llu payload bytes, the file has %zu",
                          (unsigned long long)n, have);
    if (n < have)
        return diag_error(d, path, NULL, NULL,
                          "%llu unexpected bytes after the %llu-byte payload (corrupt header or "
                          "appended data)",
                          (unsigned long long)(have - n), (unsigned long long)n);
    uint64_t want = get_le(buf + 24, 8), got = hash64(buf + NPUBIN_HEADER_SIZE, have);
    if (want != got)
        return diag_error(d, path, NULL, NULL,
                          "checksum mismatch (stored %016llx, computed %016llx): the file is "
                          "corrupt",
                          (unsigned long long)want, (unsigned long long)got);
    return ST_OK;
}

Status npubin_decode(const char *path, const unsigned char *buf, size_t len, Plan **out,
                     DiagList *d)
{
    *out = NULL;
    Status st = check_header(path, buf, len, d);
    if (st != ST_OK) return st;
    const unsigned char *pl = buf + NPUBIN_HEADER_SIZE;
    size_t n = len - NPUBIN_HEADER_SIZE;
    st = npubin_prescan(path, pl, n, d);
    if (st != ST_OK) return st;
    msgpack_unpacked u;
    msgpack_unpacked_init(&u);
    size_t off = 0;
    msgpack_unpack_return r = msgpack_unpack_next(&u, (const char *)pl, n, &off);
    if (r != MSGPACK_UNPACK_SUCCESS || off != n) {
        msgpack_unpacked_destroy(&u);
        if (r == MSGPACK_UNPACK_NOMEM_ERROR)
            return diag_add(d, DIAG_ERROR, ST_NOMEM, path, NULL, NULL,
                            "out of memory reading plan");
        return diag_error(d, path, NULL, NULL, "malformed msgpack payload (code %d)", (int)r);
    }
    Plan *p = plan_new();
    if (!p) {
        msgpack_unpacked_destroy(&u);
        return diag_add(d, DIAG_ERROR, ST_NOMEM, path, NULL, NULL, "out of memory reading plan");
    }
    Dec x = {path, d, &p->arena, "", (uint32_t)get_le(buf + 8, 4)};
    if (u.data.type != MSGPACK_OBJECT_MAP)
        st = diag_error(d, path, NULL, NULL, "payload is %s, not a map", type_name(u.data.type));
    else
        st = read_plan(&x, &u.data, p);
    msgpack_unpacked_destroy(&u);
    if (st == ST_OK) st = npubin_check_plan(p, path, ST_BAD_INPUT, d);
    if (st != ST_OK) {
        plan_free(p);
        return st;
    }
    p->file_version = (int)x.version;
    *out = p;
    return ST_OK;
}

Status npubin_read(const char *path, Plan **out, DiagList *d)
{
    *out = NULL;
    char *buf;
    size_t len;
    Status st = file_read_all(path, &buf, &len, d);
    if (st != ST_OK) return st;
    st = npubin_decode(path, (const unsigned char *)buf, len, out, d);
    free(buf);
    return st;
}
