#define _GNU_SOURCE /* memmem */
#include "compiler/ir_json.h"
#include "compiler/inplace.h"

#include <json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/fileio.h"
#include "compiler/json_walk.h"

typedef struct Reader {
    Graph *g;
    DiagList *d;
    const char *path;
    struct json_object *mapping; /* weight_name_mapping, may be NULL */
    struct json_object *consts;  /* constants, may be NULL */
    StrMap weight_keys;          /* state_dict key -> json record in "weights" */
} Reader;

static struct json_object *get(struct json_object *o, const char *k)
{
    struct json_object *v = NULL;
    if (o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, k, &v))
        return v;
    return NULL;
}

static const char *get_str(struct json_object *o, const char *k)
{
    struct json_object *v = get(o, k);
    return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* Reads {"shape": [...], "dtype": "..."} of a tensor record. */
static Status read_tensor_rec(Reader *r, struct json_object *rec, const char *node,
                              const char *name, int *rank, int64_t *shape, DType *dt)
{
    struct json_object *sh = get(rec, "shape");
    if (!sh || !json_object_is_type(sh, json_type_array))
        return diag_error(r->d, r->path, node, name, "missing or non-list \"shape\"");
    size_t n = json_object_array_length(sh);
    if (n > NPU_MAX_RANK)
        return diag_error(r->d, r->path, node, name, "rank %zu exceeds the maximum of %d", n,
                          NPU_MAX_RANK);
    for (size_t i = 0; i < n; i++) {
        struct json_object *e = json_object_array_get_idx(sh, i);
        if (!json_object_is_type(e, json_type_int))
            return diag_error(r->d, r->path, node, name,
                              "shape entry %zu is not an integer (dynamic shapes are not "
                              "supported: export with static shapes)",
                              i);
        int64_t v = json_object_get_int64(e);
        if (v < 0 || v > ((int64_t)1 << 40))
            return diag_error(r->d, r->path, node, name, "shape entry %zu is %lld", i,
                              (long long)v);
        shape[i] = v;
    }
    *rank = (int)n;
    const char *ds = get_str(rec, "dtype");
    *dt = ds ? dtype_parse(ds) : DT_F32;
    if (*dt == DT_INVALID) return diag_error(r->d, r->path, node, name, "unknown dtype '%s'", ds);
    /* guard numel overflow */
    int64_t numel = 1;
    for (int i = 0; i < *rank; i++) {
        if (shape[i] && numel > INT64_MAX / 16 / shape[i])
            return diag_error(r->d, r->path, node, name, "tensor is too large");
        numel *= shape[i];
    }
    return ST_OK;
}

Status ir_parse_attrs(Graph *g, Node *n, struct json_object *attrs, DiagList *d)
{
    if (!attrs) return ST_OK;
    if (!json_object_is_type(attrs, json_type_object))
        return diag_error(d, g->path, n->name, NULL, "\"attrs\" is not an object");
    int cnt = json_object_object_length(attrs);
    n->attrs = cnt ? arena_alloc(&g->arena, sizeof(Attr) * (size_t)cnt) : NULL;
    if (cnt && !n->attrs) return ST_NOMEM;
    n->nattrs = 0;
    json_object_object_foreach(attrs, key, val)
    {
        Attr *a = &n->attrs[n->nattrs++];
        a->key = arena_strdup(&g->arena, key);
        switch (val ? json_object_get_type(val) : json_type_null) {
        case json_type_null:
            a->kind = ATTR_NONE;
            break;
        case json_type_boolean:
            a->kind = ATTR_BOOL;
            a->i = json_object_get_boolean(val);
            a->f = (double)a->i;
            break;
        case json_type_int:
            a->kind = ATTR_INT;
            a->i = json_object_get_int64(val);
            a->f = (double)a->i;
            break;
        case json_type_double:
            a->kind = ATTR_FLOAT;
            a->f = json_object_get_double(val);
            a->i = (a->f > -9.2e18 && a->f < 9.2e18) ? (int64_t)a->f : 0; /* +-inf, nan */
            break;
        case json_type_string:
            a->kind = ATTR_STR;
            a->s = arena_strdup(&g->arena, json_object_get_string(val));
            break;
        case json_type_array: {
            int len = (int)json_object_array_length(val);
            int all_int = 1, all_num = 1;
            for (int i = 0; i < len; i++) {
                struct json_object *e = json_object_array_get_idx(val, i);
                json_type t = e ? json_object_get_type(e) : json_type_null;
                if (t != json_type_int && t != json_type_boolean) all_int = 0;
                if (t != json_type_int && t != json_type_double && t != json_type_boolean)
                    all_num = 0;
            }
            if (!all_num) {
                a->kind = ATTR_OTHER;
                a->s = arena_strdup(&g->arena, json_object_to_json_string(val));
                break;
            }
            a->kind = all_int ? ATTR_INTS : ATTR_FLOATS;
            a->n = len;
            a->ints = arena_alloc(&g->arena, sizeof(int64_t) * (size_t)(len ? len : 1));
            a->floats = arena_alloc(&g->arena, sizeof(double) * (size_t)(len ? len : 1));
            if (!a->ints || !a->floats) return ST_NOMEM;
            for (int i = 0; i < len; i++) {
                struct json_object *e = json_object_array_get_idx(val, i);
                a->floats[i] = json_object_get_double(e);
                double fv = a->floats[i];
                a->ints[i] = !json_object_is_type(e, json_type_double) ? json_object_get_int64(e)
                             : (fv > -9.2e18 && fv < 9.2e18)           ? (int64_t)fv
                                                                       : 0;
            }
            break;
        }
        case json_type_object:
            a->kind = ATTR_OTHER;
            a->s = arena_strdup(&g->arena, json_object_to_json_string(val));
            break;
        }
        if (!a->key) return ST_NOMEM;
    }
    return ST_OK;
}

static int same_shape(const GTensor *t, int rank, const int64_t *shape)
{
    return shape_equal(t->rank, t->shape, rank, shape);
}

/* Stores the numbers of a value nested in lists (tolist()'s form; a bare number for a 0-dim
 * tensor) in order into v[0..max), counting them all in *n; false on anything else. */
static bool flat_values(struct json_object *o, double *v, int64_t max, int64_t *n, int depth)
{
    if (json_object_is_type(o, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(o); i++)
            if (depth >= NPU_MAX_RANK ||
                !flat_values(json_object_array_get_idx(o, i), v, max, n, depth + 1))
                return false;
        return true;
    }
    if (!json_object_is_type(o, json_type_double) && !json_object_is_type(o, json_type_int) &&
        !json_object_is_type(o, json_type_boolean))
        return false;
    if (*n < max) v[*n] = json_object_get_double(o);
    ++*n;
    return true;
}

/* The values of constant record crec ({"data": numbers, flat or nested}), when it has them,
 * into tensor t's const_data. */
static Status read_const_data(Reader *r, const char *node, struct json_object *crec, int t)
{
    Graph *g = r->g;
    struct json_object *data = get(crec, "data");
    if (!data || json_object_is_type(data, json_type_null)) return ST_OK;
    int64_t numel = tensor_numel(&g->tensors[t]), n = 0;
    double *v = arena_alloc(&g->arena, sizeof(double) * (size_t)(numel ? numel : 1));
    if (!v) return ST_NOMEM;
    if (!flat_values(data, v, numel, &n, 0))
        return diag_error(r->d, r->path, node, g->tensors[t].name,
                          "constant data is not numbers (in nested lists)");
    if (n != numel)
        return diag_error(r->d, r->path, node, g->tensors[t].name,
                          "constant has %lld values for %lld elements", (long long)n,
                          (long long)numel);
    g->tensors[t].const_data = v;
    return ST_OK;
}

/* Resolves a node input record to a tensor id, creating weight/const tensors on first use. */
static Status resolve_input(Reader *r, const char *node, struct json_object *rec, int *id)
{
    const char *name = get_str(rec, "name");
    if (!name) return diag_error(r->d, r->path, node, NULL, "input record without a \"name\"");
    int rank;
    int64_t shape[NPU_MAX_RANK];
    DType dt;
    Status st = read_tensor_rec(r, rec, node, name, &rank, shape, &dt);
    if (st != ST_OK) return st;
    Graph *g = r->g;
    int t = graph_find_tensor(g, name);
    /* a multi-output producer's outputs are told apart by name; producer_output_idx, when
     * given, must agree with the position the name has among the producer's outputs */
    const char *pn = get_str(rec, "producer_node");
    struct json_object *pi = get(rec, "producer_output_idx");
    if (t >= 0 && pn && pi && json_object_is_type(pi, json_type_int) &&
        g->tensors[t].producer >= 0) {
        const GTensor *x = &g->tensors[t];
        const Node *p = &g->nodes[x->producer];
        int64_t idx = json_object_get_int64(pi);
        if (strcmp(p->name, pn) != 0 || idx != x->producer_out)
            return diag_error(r->d, r->path, node, name,
                              "is output %d of node '%s', but the record says output %lld of '%s'",
                              x->producer_out, p->name, (long long)idx, pn);
    }
    if (t >= 0) {
        if (!same_shape(&g->tensors[t], rank, shape)) {
            char a[128], b[128];
            return diag_error(r->d, r->path, node, name,
                              "consumed with shape %s but it has shape %s",
                              shape_str(shape, rank, a, sizeof a),
                              shape_str(g->tensors[t].shape, g->tensors[t].rank, b, sizeof b));
        }
        *id = t;
        return ST_OK;
    }
    const char *key = get_str(r->mapping, name);
    if (!key && strmap_has(&r->weight_keys, name)) key = name;
    if (key) {
        struct json_object *wrec = strmap_get(&r->weight_keys, key);
        if (wrec) {
            int wr;
            int64_t ws[NPU_MAX_RANK];
            DType wd;
            if (read_tensor_rec(r, wrec, NULL, key, &wr, ws, &wd) != ST_OK) return ST_BAD_INPUT;
            int ok = wr == rank;
            for (int i = 0; ok && i < rank; i++)
                ok = ws[i] == shape[i];
            if (!ok) {
                char a[128], b[128];
                return diag_error(r->d, r->path, node, name,
                                  "weight '%s' is declared %s in \"weights\" but used as %s", key,
                                  shape_str(ws, wr, a, sizeof a),
                                  shape_str(shape, rank, b, sizeof b));
            }
        }
        t = graph_add_tensor(g, name, dt, rank, shape, TK_WEIGHT);
        if (t < 0) return ST_NOMEM;
        g->tensors[t].weight_key = arena_strdup(&g->arena, key);
        int *w = realloc(g->weights, sizeof(int) * (size_t)(g->nweights + 1));
        if (!w) return ST_NOMEM;
        g->weights = w;
        g->weights[g->nweights++] = t;
        *id = t;
        /* a lifted tensor the IR carries under its key: the values when the file lacks it */
        struct json_object *krec = get(r->consts, key);
        return krec ? read_const_data(r, node, krec, t) : ST_OK;
    }
    struct json_object *crec = get(r->consts, name);
    if (crec) {
        t = graph_add_tensor(g, name, dt, rank, shape, TK_CONST);
        if (t < 0) return ST_NOMEM;
        *id = t;
        return read_const_data(r, node, crec, t);
    }
    const char *prod = get_str(rec, "producer_node");
    int pk = prod ? graph_find_node(g, prod) : -1;
    if (pk >= 0 && pi && json_object_is_type(pi, json_type_int))
        return diag_error(r->d, r->path, node, name,
                          "names output %lld of node '%s', which has %d output%s and none of "
                          "this name",
                          (long long)json_object_get_int64(pi), prod, g->nodes[pk].nout,
                          g->nodes[pk].nout == 1 ? "" : "s");
    if (prod && pk < 0 && strcmp(prod, name) != 0)
        return diag_error(r->d, r->path, node, name,
                          "consumes a tensor of node '%s', which does not come before it "
                          "(unknown node, or the graph has a cycle or is out of order)",
                          prod);
    return diag_error(r->d, r->path, node, name,
                      "consumes a tensor that no earlier node produces and that is neither a "
                      "graph input, a weight nor a constant");
}

/* Ops an export may hold that nobody can compute here, and what to do instead. */
static const struct {
    const char *aten, *why;
} refused[] = {
    {"wrap_with_set_grad_enabled",
     "a higher-order op whose body the IR does not carry (the model was exported with grad "
     "enabled): export it under torch.no_grad()"},
};

/* Appends attribute `at` to n. */
static bool add_attr(Graph *g, Node *n, Attr at)
{
    return graph_add_attr_v(g, (int)(n - g->nodes), &at);
}

const char *ir_refused(const char *aten)
{
    for (size_t i = 0; aten && i < sizeof refused / sizeof refused[0]; i++)
        if (!strcmp(aten, refused[i].aten)) return refused[i].why;
    return NULL;
}

/* Adds an int-list attribute to n. */
static bool add_ints_attr(Graph *g, Node *n, const char *key, const int64_t *v, int cnt)
{
    return add_attr(g, n, (Attr){.key = key, .kind = ATTR_INTS, .n = cnt, .ints = (int64_t *)v});
}

/* Ops that are another op spelt differently get that op's attributes here, so the shape check,
 * the CPU reference and the lowering read one spelling: swapaxes' axis0/axis1 are transpose's
 * dim0/dim1, unflatten's dim/sizes a view's `size`, expand_as' other tensor an expand's `size`
 * (the other tensor is dropped: only its shape is read), floor_divide a div with rounding_mode
 * floor (ATen's definition since 1.13), narrow's start and length a slice's start and end,
 * new_zeros/zeros_like and the like zeros, ones or full (their input gives only the dtype, and
 * for *_like the size, so it is dropped: a mask built from new_zeros is host-side data, made
 * before the NPU work rather than after the activation it was shaped from). */
static Status respell(Reader *r, Node *n)
{
    Graph *g = r->g;
    if (op_has(n->op, OPF_SOURCE) && n->nin == 1) {
        const GTensor *x = &g->tensors[n->in[0]];
        Attr *dt = (Attr *)node_attr(n, "dtype");
        if (strstr(n->aten, "_like.") && !add_ints_attr(g, n, "size", x->shape, x->rank))
            return ST_NOMEM;
        if (dt && dt->kind != ATTR_STR)
            *dt = (Attr){.key = dt->key, .kind = ATTR_STR, .s = dtype_name(x->dtype)};
        if (!dt &&
            !add_attr(g, n, (Attr){.key = "dtype", .kind = ATTR_STR, .s = dtype_name(x->dtype)}))
            return ST_NOMEM;
        n->nin = 0;
    }
    if (n->op == OP_TRANSPOSE)
        for (int i = 0; i < n->nattrs; i++) {
            if (!strcmp(n->attrs[i].key, "axis0")) n->attrs[i].key = "dim0";
            if (!strcmp(n->attrs[i].key, "axis1")) n->attrs[i].key = "dim1";
        }
    if (n->op == OP_DIV && !strncmp(n->aten, "aten.floor_divide", 17) &&
        !add_attr(g, n, (Attr){.key = "rounding_mode", .kind = ATTR_STR, .s = "floor"}))
        return ST_NOMEM;
    if (n->op == OP_SLICE && attr_present(n, "length")) { /* narrow(dim, start, length) */
        const GTensor *x = &g->tensors[n->in[0]];
        int d = norm_dim(attr_int(n, "dim", 0), x->rank);
        int64_t start = attr_int(n, "start", 0), len = attr_int(n, "length", 0);
        if (d < 0 || len < 0 || start < -x->shape[d] || start > x->shape[d])
            return diag_error(r->d, r->path, n->name, NULL,
                              "narrow: dim, start or length out of range");
        if (start < 0) start += x->shape[d];
        for (int i = 0; i < n->nattrs; i++)
            if (!strcmp(n->attrs[i].key, "start")) n->attrs[i].i = start;
        if (!add_attr(
                g, n,
                (Attr){
                    .key = "end", .kind = ATTR_INT, .i = start + len, .f = (double)(start + len)}))
            return ST_NOMEM;
    }
    if (n->op == OP_EXPAND && n->nin == 2) {
        const GTensor *o = &g->tensors[n->in[1]];
        n->nin = 1;
        if (!add_ints_attr(g, n, "size", o->shape, o->rank)) return ST_NOMEM;
    }
    if (n->op == OP_VIEW && attr_present(n, "sizes")) {
        const GTensor *x = &g->tensors[n->in[0]];
        int64_t sz[NPU_MAX_RANK], s[2 * NPU_MAX_RANK];
        int k = attr_ints(n, "sizes", sz, NPU_MAX_RANK);
        int d = norm_dim(attr_int(n, "dim", 0), x->rank);
        if (k < 1 || d < 0 || x->rank - 1 + k > NPU_MAX_RANK)
            return diag_error(r->d, r->path, n->name, NULL,
                              "unflatten: `dim` must be a dim of the input and `sizes` a "
                              "non-empty list of ints");
        int m = 0;
        for (int i = 0; i < x->rank; i++)
            if (i != d)
                s[m++] = x->shape[i];
            else
                for (int j = 0; j < k; j++)
                    s[m++] = sz[j];
        if (!add_ints_attr(g, n, "size", s, m)) return ST_NOMEM;
    }
    return ST_OK;
}

static Status read_node(Reader *r, struct json_object *jn, int idx)
{
    Graph *g = r->g;
    char fallback[32];
    const char *name = get_str(jn, "name");
    if (!name) {
        snprintf(fallback, sizeof fallback, "#%d", idx);
        return diag_error(r->d, r->path, fallback, NULL, "node without a \"name\"");
    }
    if (graph_find_node(g, name) >= 0)
        return diag_error(r->d, r->path, name, NULL, "duplicate node name");
    const char *aten = get_str(jn, "op_type");
    if (!aten) return diag_error(r->d, r->path, name, NULL, "node without an \"op_type\"");
    const char *why = ir_refused(aten);
    if (why) return diag_error(r->d, r->path, name, NULL, "%s is not supported: %s", aten, why);
    OpId op = op_lookup(aten);
    if (op == OP_INVALID)
        return diag_error(r->d, r->path, name, NULL,
                          "unknown op '%s' (see `npu-explore ops` for the supported set)", aten);
    struct json_object *ins = get(jn, "inputs"), *outs = get(jn, "outputs");
    if (!ins || !json_object_is_type(ins, json_type_array))
        return diag_error(r->d, r->path, name, NULL, "\"inputs\" missing or not a list");
    if (outs && !json_object_is_type(outs, json_type_array))
        return diag_error(r->d, r->path, name, NULL, "\"outputs\" is not a list");
    int nin = (int)json_object_array_length(ins);
    int nout = outs ? (int)json_object_array_length(outs) : 0;
    const OpInfo *oi = &op_info[op];
    if (nin < oi->min_in || nin > oi->max_in)
        return diag_error(r->d, r->path, name, NULL,
                          "%s takes %d..%d tensor inputs, the node has %d", aten, oi->min_in,
                          oi->max_in, nin);
    if (!(oi->flags & OPF_NOOP) && nout < 1)
        return diag_error(r->d, r->path, name, NULL, "%s must have an output", aten);
    if (nout > 64) return diag_error(r->d, r->path, name, NULL, "too many outputs (%d)", nout);
    int in[64], out[64];
    for (int i = 0; i < nin; i++) {
        struct json_object *rec = json_object_array_get_idx(ins, (size_t)i);
        if (!rec || !json_object_is_type(rec, json_type_object))
            return diag_error(r->d, r->path, name, NULL, "input %d is not an object", i);
        Status st = resolve_input(r, name, rec, &in[i]);
        if (st != ST_OK) return st;
    }
    for (int i = 0; i < nout; i++) {
        struct json_object *rec = json_object_array_get_idx(outs, (size_t)i);
        const char *tn = get_str(rec, "name");
        if (!tn) return diag_error(r->d, r->path, name, NULL, "output %d has no \"name\"", i);
        if (graph_find_tensor(g, tn) >= 0)
            return diag_error(r->d, r->path, name, tn,
                              "output name already names another tensor (produced twice)");
        int rank;
        int64_t shape[NPU_MAX_RANK];
        DType dt;
        Status st = read_tensor_rec(r, rec, name, tn, &rank, shape, &dt);
        if (st != ST_OK) return st;
        out[i] = graph_add_tensor(g, tn, dt, rank, shape, TK_ACT);
        if (out[i] < 0) return ST_NOMEM;
    }
    int k = graph_add_node(g, name, op, aten, in, nin, out, nout);
    if (k < 0) return ST_NOMEM;
    for (int i = 0; i < nout; i++) {
        g->tensors[out[i]].producer = k;
        g->tensors[out[i]].producer_out = i;
    }
    Status st = ir_parse_attrs(g, &g->nodes[k], get(jn, "attrs"), r->d);
    return st == ST_OK ? respell(r, &g->nodes[k]) : st;
}

static Status read_io(Reader *r, struct json_object *list, const char *what, int is_input)
{
    Graph *g = r->g;
    if (!list || !json_object_is_type(list, json_type_array))
        return diag_error(r->d, r->path, NULL, NULL, "\"%s\" missing or not a list", what);
    int n = (int)json_object_array_length(list);
    int *ids = malloc(sizeof(int) * (size_t)(n + 1));
    if (!ids) return ST_NOMEM;
    if (is_input) {
        g->inputs = ids;
        g->ninputs = 0;
    } else {
        g->outputs = ids;
        g->noutputs = 0;
    }
    for (int i = 0; i < n; i++) {
        struct json_object *rec = json_object_array_get_idx(list, (size_t)i);
        const char *name = get_str(rec, "name");
        if (!name) return diag_error(r->d, r->path, NULL, NULL, "%s[%d] has no \"name\"", what, i);
        int t = graph_find_tensor(g, name);
        if (is_input) {
            if (t >= 0) return diag_error(r->d, r->path, NULL, name, "duplicate graph input");
            int rank;
            int64_t shape[NPU_MAX_RANK];
            DType dt;
            Status st = read_tensor_rec(r, rec, NULL, name, &rank, shape, &dt);
            if (st != ST_OK) return st;
            t = graph_add_tensor(g, name, dt, rank, shape, TK_INPUT);
            if (t < 0) return ST_NOMEM;
            g->inputs[g->ninputs++] = t;
        } else {
            if (t < 0)
                return diag_error(r->d, r->path, NULL, name,
                                  "graph output is not produced by any node");
            g->outputs[g->noutputs++] = t;
        }
    }
    return ST_OK;
}

/* The part of the top-level object read before the nodes: the model's name, the weights and their
 * mapping, the constants and the graph inputs. */
static const char *const head_keys[] = {"model_name", "weight_name_mapping", "constants", "weights",
                                        "graph_inputs"};

static Status read_head(Reader *r, struct json_object *root)
{
    Graph *g = r->g;
    const char *mn = get_str(root, "model_name");
    g->model_name = arena_strdup(&g->arena, mn ? mn : "model");
    r->mapping = get(root, "weight_name_mapping");
    if (r->mapping && !json_object_is_type(r->mapping, json_type_object))
        return diag_error(r->d, r->path, NULL, NULL, "\"weight_name_mapping\" is not an object");
    r->consts = get(root, "constants");
    if (r->consts && !json_object_is_type(r->consts, json_type_object)) r->consts = NULL;
    struct json_object *ws = get(root, "weights");
    if (ws) {
        if (!json_object_is_type(ws, json_type_array))
            return diag_error(r->d, r->path, NULL, NULL, "\"weights\" is not a list");
        for (size_t i = 0; i < json_object_array_length(ws); i++) {
            struct json_object *w = json_object_array_get_idx(ws, i);
            const char *k = get_str(w, "name");
            if (!k) return diag_error(r->d, r->path, NULL, NULL, "weights[%zu] has no name", i);
            if (!strmap_put(&r->weight_keys, k, w)) return ST_NOMEM;
        }
    }
    return read_io(r, get(root, "graph_inputs"), "graph_inputs", 1);
}

static Status read_node_at(Reader *r, struct json_object *jn, size_t i)
{
    if (!jn || !json_object_is_type(jn, json_type_object))
        return diag_error(r->d, r->path, NULL, NULL, "nodes[%zu] is not an object", i);
    return read_node(r, jn, (int)i);
}

/* The part read after the nodes: the graph outputs; then the graph is completed. */
static Status read_tail(Reader *r, struct json_object *root)
{
    Status st = read_io(r, get(root, "graph_outputs"), "graph_outputs", 0);
    if (st == ST_OK) st = inplace_resolve(r->g, r->d);
    return st == ST_OK ? graph_link(r->g) : st;
}

/* The document as one json-c tree. */
static Status read_tree(Reader *r, const char *json, size_t len)
{
    struct json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
    if (!tok) return ST_NOMEM;
    struct json_object *root = json_tokener_parse_ex(tok, json, (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    if (!root || jerr != json_tokener_success) {
        size_t off = json_tokener_get_parse_end(tok);
        int line = 1;
        for (size_t i = 0; i < off && i < len; i++)
            line += json[i] == '\n';
        json_tokener_free(tok);
        if (root) json_object_put(root);
        return diag_error(r->d, r->path, NULL, NULL, "not valid JSON (line %d: %s)", line,
                          jerr == json_tokener_success ? "incomplete document"
                                                       : json_tokener_error_desc(jerr));
    }
    json_tokener_free(tok);
    Status st = ST_OK;
    if (!json_object_is_type(root, json_type_object))
        st = diag_error(r->d, r->path, NULL, NULL, "top level is not a JSON object");
    if (st == ST_OK) st = read_head(r, root);
    struct json_object *nodes = st == ST_OK ? get(root, "nodes") : NULL;
    if (st == ST_OK && (!nodes || !json_object_is_type(nodes, json_type_array)))
        st = diag_error(r->d, r->path, NULL, NULL, "\"nodes\" missing or not a list");
    for (size_t i = 0; st == ST_OK && i < json_object_array_length(nodes); i++)
        st = read_node_at(r, json_object_array_get_idx(nodes, i), i);
    if (st == ST_OK) st = read_tail(r, root);
    json_object_put(root);
    return st;
}

static bool is_head_key(const char *k)
{
    for (size_t i = 0; i < sizeof head_keys / sizeof head_keys[0]; i++)
        if (!strcmp(k, head_keys[i])) return true;
    return false;
}

/* The nodes from the first one the walk could not read on (the export writes part of the head
 * after the nodes, or the file is bad), parsed and kept for a second reading. */
typedef struct Kept {
    struct json_object **v;
    size_t n, cap, from; /* v[i] is node from + i; from is SIZE_MAX while none is kept */
} Kept;

static void kept_free(Kept *k)
{
    for (size_t i = 0; i < k->n; i++)
        json_object_put(k->v[i]);
    free(k->v);
}

/* Reads the nodes array at w's cursor: each element parsed, read and freed while *st is ST_OK;
 * from the first that fails on, kept in *kept instead (parsed to find the array's end), and every
 * one kept unread when `defer`. False when the array is not plain JSON. */
static bool walk_nodes(Reader *r, JsonWalk *w, Status *st, Kept *kept, bool defer)
{
    bool first = true;
    int k = -1;
    if (!json_walk_open(w, '[')) return false;
    for (size_t i = 0; *st != ST_NOMEM && (k = json_walk_element(w, &first)) == 1; i++) {
        struct json_object *jn;
        if (!json_walk_value(w, &jn)) return false;
        if (*st == ST_OK && !defer) *st = read_node_at(r, jn, i);
        if (*st != ST_BAD_INPUT && !defer) {
            json_object_put(jn);
            continue;
        }
        if (kept->n == 0) kept->from = i;
        if (kept->n == kept->cap) {
            size_t cap = kept->cap ? kept->cap * 2 : 64;
            struct json_object **v = realloc(kept->v, sizeof *v * cap);
            if (!v) {
                json_object_put(jn);
                *st = ST_NOMEM;
                break;
            }
            kept->v = v;
            kept->cap = cap;
        }
        kept->v[kept->n++] = jn;
    }
    return *st == ST_NOMEM || k == 0;
}

/* The second reading of the nodes (array at w's cursor): those before kept->from parsed again,
 * then the kept ones. */
static Status reread_nodes(Reader *r, JsonWalk *w, const Kept *kept)
{
    Status st = ST_OK;
    bool first = true;
    if (!json_walk_open(w, '[')) return ST_BAD_INPUT;
    for (size_t i = 0; st == ST_OK && i < kept->from; i++) {
        struct json_object *jn;
        int k = json_walk_element(w, &first);
        if (k == 0 && kept->n == 0) break; /* none kept: the whole array again */
        if (k != 1 || !json_walk_value(w, &jn)) return ST_BAD_INPUT;
        st = read_node_at(r, jn, i);
        json_object_put(jn);
    }
    for (size_t i = 0; st == ST_OK && i < kept->n; i++)
        st = read_node_at(r, kept->v[i], kept->from + i);
    return st;
}

/* Whether a head key the walk has not met may come after the nodes: its quoted name is in the
 * text after them. A look, not a parse: a wrong yes costs only the streaming of the nodes. */
static bool head_may_follow(struct json_object *root, const char *s, size_t len)
{
    for (size_t i = 0; i < sizeof head_keys / sizeof head_keys[0]; i++) {
        char q[32];
        int n = snprintf(q, sizeof q, "\"%s\"", head_keys[i]);
        if (!json_object_object_get_ex(root, head_keys[i], NULL) && memmem(s, len, q, (size_t)n))
            return true;
    }
    return false;
}

/* A fresh graph for the reader, its maps emptied (a read that starts over). */
static Status restart(Reader *r)
{
    graph_free(r->g);
    strmap_free(&r->weight_keys);
    r->mapping = r->consts = NULL;
    r->g = graph_new(r->path);
    return r->g ? ST_OK : ST_NOMEM;
}

/* The document member by member (compiler/json_walk.h): the members but "nodes" are kept in one
 * object, and each node is parsed, read and freed in turn, so the nodes never exist as one tree.
 * The nodes are read when the walk reaches them, the head complete then; where a head key may
 * come after them (an export that writes "constants" last), they are kept and read once the walk
 * is done, and where one comes unforeseen, read again then.
 * ST_OK or ST_NOMEM as read_tree would give them; *tree when this read cannot stand for
 * read_tree's (a key twice, anything malformed or refused: read_tree's diagnostics are the ones
 * to give). `mark`: the diagnostics before the read, kept when it starts over. */
static Status read_walk(Reader *r, const char *json, size_t len, int mark, bool *tree)
{
    JsonWalk w;
    json_walk_init(&w, json, len, JSON_TOKENER_DEFAULT_DEPTH);
    struct json_object *root = json_object_new_object();
    Kept kept = {.from = SIZE_MAX};
    Status st = root ? ST_OK : ST_NOMEM;
    bool first = true, late = false, defer = false;
    size_t nodes_at = 0; /* where the nodes array starts, 0: not seen */
    const char *key;
    int k = -1;
    if (st == ST_OK && json_walk_open(&w, '{'))
        while (st != ST_NOMEM && (k = json_walk_member(&w, &first, &key)) == 1) {
            bool nodes = !strcmp(key, "nodes");
            if (json_object_object_get_ex(root, key, NULL) || (nodes && nodes_at)) break;
            if (nodes) {
                nodes_at = w.pos;
                defer = head_may_follow(root, json + w.pos, len - w.pos);
                if (!defer) st = read_head(r, root);
                if (!walk_nodes(r, &w, &st, &kept, defer)) break;
                continue;
            }
            late |= nodes_at && is_head_key(key);
            struct json_object *v;
            if (!json_walk_value(&w, &v)) break;
            if (json_object_object_add(root, key, v) != 0) {
                json_object_put(v);
                st = ST_NOMEM;
            }
        }
    bool plain = k == 0 && nodes_at;
    if (st != ST_NOMEM && plain && (late || defer)) {
        if (!defer) { /* read again from scratch */
            if (r->d) diag_truncate(r->d, mark);
            st = restart(r);
        }
        w.pos = nodes_at;
        w.level = 1;
        if (st == ST_OK) st = read_head(r, root);
        if (st == ST_OK) st = reread_nodes(r, &w, &kept);
    }
    if (st == ST_OK && plain) st = read_tail(r, root);
    *tree = st != ST_NOMEM && (!plain || st != ST_OK);
    kept_free(&kept);
    json_object_put(root);
    json_walk_free(&w);
    return st;
}

Status ir_read_buffer_as(const char *path, const char *json, size_t len, IrRead how, Graph **out,
                         DiagList *d, bool *walked)
{
    *out = NULL;
    Reader r = {.d = d, .path = path};
    strmap_init(&r.weight_keys);
    r.g = graph_new(path);
    Status st = r.g ? ST_OK : ST_NOMEM;
    bool tree = how == IR_READ_TREE;
    int mark = d ? d->count : 0;
    if (st == ST_OK && !tree) {
        st = read_walk(&r, json, len, mark, &tree);
        if (tree) { /* read it again as one tree, from scratch */
            if (d) diag_truncate(d, mark);
            st = restart(&r);
        }
    }
    if (walked) *walked = !tree;
    if (st == ST_OK && tree) st = read_tree(&r, json, len);
    if (st == ST_NOMEM) diag_add(d, DIAG_ERROR, ST_NOMEM, path, NULL, NULL, "out of memory");
    strmap_free(&r.weight_keys);
    if (st != ST_OK) {
        graph_free(r.g);
        return st;
    }
    *out = r.g;
    return ST_OK;
}

Status ir_read_buffer(const char *path, const char *json, size_t len, Graph **out, DiagList *d)
{
    return ir_read_buffer_as(path, json, len, IR_READ_WALK, out, d, NULL);
}

Status ir_read_file(const char *path, Graph **out, DiagList *d)
{
    char *buf;
    size_t len;
    *out = NULL;
    Status st = file_read_all(path, &buf, &len, d);
    if (st != ST_OK) return st;
    if (len == 0) {
        free(buf);
        return diag_error(d, path, NULL, NULL, "empty file");
    }
    st = ir_read_buffer(path, buf, len, out, d);
    free(buf);
    return st;
}
