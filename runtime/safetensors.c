/* Reading and writing safetensors files. The header is untrusted: every length, offset and shape is
 * checked before a pointer into the map is formed. json-c parses the header, but it keeps only the
 * last of two equal keys, so the top-level keys are also walked in the raw text (next_key) to see
 * duplicates and to keep file order. */
#include "runtime/safetensors.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

#define JSON_DEPTH 64

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

static Status nomem(DiagList *d, const char *file)
{
    return diag_add(d, DIAG_ERROR, ST_NOMEM, file, NULL, NULL, "out of memory");
}

static bool has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

static void fmt_shape(char *buf, size_t n, const int64_t *shape, int rank)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < rank && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

/* Number of bytes a tensor of this shape and dtype needs; false on overflow. Any zero dimension
 * makes it zero, whatever the other dimensions are. */
static bool shape_bytes(const int64_t *shape, int rank, DType dt, size_t *out)
{
    uint64_t numel = 1;
    for (int i = 0; i < rank; i++)
        if (shape[i] == 0) {
            *out = 0;
            return true;
        }
    for (int i = 0; i < rank; i++) {
        uint64_t dim = (uint64_t)shape[i];
        if (numel > UINT64_MAX / dim) return false;
        numel *= dim;
    }
    size_t sz = dtype_size(dt);
    if (numel > (uint64_t)INT64_MAX || numel > SIZE_MAX / sz) return false;
    *out = (size_t)numel * sz;
    return true;
}

/* Parses a whole JSON text of `len` bytes (trailing whitespace allowed) in strict mode. NULL and a
 * diagnostic when it is not JSON; the caller owns the result (json_object_put). */
static json_object *parse_json(const char *text, size_t len, const char *file, DiagList *d)
{
    if (memchr(text, 0, len)) {
        diag_error(d, file, NULL, NULL, "header contains a NUL byte");
        return NULL;
    }
    if (len > (size_t)INT32_MAX) {
        diag_error(d, file, NULL, NULL, "JSON text of %zu bytes is too large", len);
        return NULL;
    }
    json_tokener *tok = json_tokener_new_ex(JSON_DEPTH);
    if (!tok) {
        nomem(d, file);
        return NULL;
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *root = json_tokener_parse_ex(tok, text, (int)len);
    enum json_tokener_error je = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (je == json_tokener_continue) {
        diag_error(d, file, NULL, NULL, "header is not valid JSON: it ends early");
        json_object_put(root);
        return NULL;
    }
    if (je != json_tokener_success || !root) {
        diag_error(d, file, NULL, NULL, "header is not valid JSON: %s at byte %zu",
                   json_tokener_error_desc(je), end);
        json_object_put(root);
        return NULL;
    }
    for (size_t i = end; i < len; i++) {
        if (!strchr(" \t\r\n", text[i])) {
            diag_error(d, file, NULL, NULL, "header has text after the JSON object at byte %zu", i);
            json_object_put(root);
            return NULL;
        }
    }
    return root;
}

/* Walks the top-level keys of a JSON object json-c has already accepted. */
typedef struct KeyScan {
    const char *h;
    size_t len, i;
    int depth;
    bool want_key;
} KeyScan;

/* The next top-level key token, quotes included, as [*ks, *ke); false at the end. */
static bool next_key(KeyScan *k, size_t *ks, size_t *ke)
{
    while (k->i < k->len) {
        char c = k->h[k->i];
        if (c == '"' || c == '\'') { /* json-c accepts single quotes even in strict mode */
            size_t s = k->i++;
            while (k->i < k->len && k->h[k->i] != c)
                k->i += k->h[k->i] == '\\' ? 2 : 1;
            k->i++;
            if (k->depth == 1 && k->want_key) {
                k->want_key = false;
                *ks = s;
                *ke = k->i < k->len ? k->i : k->len;
                return true;
            }
            continue;
        }
        k->i++;
        if (c == '{' || c == '[') {
            if (++k->depth == 1) k->want_key = true;
        } else if (c == '}' || c == ']') {
            k->depth--;
        } else if (c == ',' && k->depth == 1) {
            k->want_key = true;
        }
    }
    return false;
}

static Status add_tensor(SafeTensors *s, const StTensor *t, const char *file, DiagList *d)
{
    if (strmap_has(&s->by_name, t->name)) {
        int j = (int)(intptr_t)strmap_get(&s->by_name, t->name) - 1;
        if (s->tensors[j].shard == t->shard)
            return diag_error(d, file, NULL, t->name, "tensor name appears twice in the header");
        return diag_error(d, file, NULL, t->name, "tensor is also stored in shard %s",
                          s->shards[s->tensors[j].shard].path);
    }
    StTensor *p = grow_array(s->tensors, s->count, &s->cap, sizeof *p, 16);
    if (!p) return nomem(d, file);
    s->tensors = p;
    char *name = xstrdup(t->name);
    if (!name) return nomem(d, file);
    if (!strmap_put(&s->by_name, name, (void *)(intptr_t)(s->count + 1))) {
        free(name);
        return nomem(d, file);
    }
    StTensor *dst = &s->tensors[s->count++];
    *dst = *t;
    dst->name = name;
    return ST_OK;
}

/* Reads one non-negative JSON integer; false when `v` is anything else. */
static bool get_uint(json_object *v, int64_t *out)
{
    if (!json_object_is_type(v, json_type_int)) return false;
    int64_t x = json_object_get_int64(v); /* clamps values above INT64_MAX */
    if (x < 0) return false;
    *out = x;
    return true;
}

/* Validates one header entry and fills t (whose name, shard are set) against a data section. */
static Status parse_entry(const char *file, json_object *e, const unsigned char *data,
                          size_t datalen, StTensor *t, DiagList *d)
{
    const char *name = t->name;
    if (!json_object_is_type(e, json_type_object))
        return diag_error(d, file, NULL, name, "header entry is not an object");
    json_object *jd, *js, *jo;
    if (!json_object_object_get_ex(e, "dtype", &jd) || !json_object_is_type(jd, json_type_string))
        return diag_error(d, file, NULL, name, "\"dtype\" is missing or not a string");
    t->dtype = dtype_parse_st(json_object_get_string(jd));
    if (t->dtype == DT_INVALID)
        return diag_error(d, file, NULL, name, "unknown dtype \"%.40s\"",
                          json_object_get_string(jd));

    if (!json_object_object_get_ex(e, "shape", &js) || !json_object_is_type(js, json_type_array))
        return diag_error(d, file, NULL, name, "\"shape\" is missing or not a list");
    size_t rank = json_object_array_length(js);
    if (rank > NPU_MAX_RANK)
        return diag_error(d, file, NULL, name, "rank %zu is above the limit of %d", rank,
                          NPU_MAX_RANK);
    t->rank = (int)rank;
    for (size_t i = 0; i < rank; i++) {
        if (!get_uint(json_object_array_get_idx(js, i), &t->shape[i]))
            return diag_error(d, file, NULL, name,
                              "\"shape\" item %zu is not a non-negative integer", i);
    }
    char sh[256];
    fmt_shape(sh, sizeof sh, t->shape, t->rank);
    size_t need;
    if (!shape_bytes(t->shape, t->rank, t->dtype, &need))
        return diag_error(d, file, NULL, name, "shape %s of %s is too large", sh,
                          dtype_st_name(t->dtype));

    int64_t b, en;
    if (!json_object_object_get_ex(e, "data_offsets", &jo) ||
        !json_object_is_type(jo, json_type_array) || json_object_array_length(jo) != 2 ||
        !get_uint(json_object_array_get_idx(jo, 0), &b) ||
        !get_uint(json_object_array_get_idx(jo, 1), &en))
        return diag_error(d, file, NULL, name,
                          "\"data_offsets\" is missing or not two non-negative integers");
    if (b > en)
        return diag_error(d, file, NULL, name, "data_offsets [%lld, %lld] begin after they end",
                          (long long)b, (long long)en);
    if ((uint64_t)en > datalen)
        return diag_error(d, file, NULL, name,
                          "data_offsets [%lld, %lld] run past the data section (%zu bytes)",
                          (long long)b, (long long)en, datalen);
    if ((uint64_t)(en - b) != need)
        return diag_error(d, file, NULL, name,
                          "data_offsets [%lld, %lld] hold %lld bytes but shape %s of %s needs %zu",
                          (long long)b, (long long)en, (long long)(en - b), sh,
                          dtype_st_name(t->dtype), need);
    t->data = data + b;
    t->nbytes = need;
    return ST_OK;
}

static Status parse_meta(SafeTensors *s, const char *file, json_object *m, DiagList *d)
{
    if (!json_object_is_type(m, json_type_object))
        return diag_error(d, file, NULL, NULL, "\"__metadata__\" is not an object");
    int n = json_object_object_length(m);
    char **p = realloc(s->meta, ((size_t)(s->nmeta + n) * 2 + 1) * sizeof *p);
    if (!p) return nomem(d, file);
    s->meta = p;
    struct json_object_iterator it = json_object_iter_begin(m), end = json_object_iter_end(m);
    for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
        const char *k = json_object_iter_peek_name(&it);
        json_object *v = json_object_iter_peek_value(&it);
        if (!json_object_is_type(v, json_type_string))
            return diag_error(d, file, NULL, NULL,
                              "\"__metadata__\" value of \"%.80s\" is not a string", k);
        char *kc = xstrdup(k), *vc = xstrdup(json_object_get_string(v));
        if (!kc || !vc) {
            free(kc);
            free(vc);
            return nomem(d, file);
        }
        s->meta[2 * s->nmeta] = kc;
        s->meta[2 * s->nmeta + 1] = vc;
        s->nmeta++;
    }
    return ST_OK;
}

/* Decodes a raw key token into a malloc'd string; NULL (with a diagnostic) on a NUL in the key. */
static char *decode_key(const char *tok, size_t len, const char *file, DiagList *d)
{
    if (tok[0] == '\'') {
        diag_error(d, file, NULL, NULL, "header key %.*s is single-quoted, which JSON forbids",
                   (int)(len < 80 ? len : 80), tok);
        return NULL;
    }
    json_object *k = parse_json(tok, len, file, d);
    if (!k || !json_object_is_type(k, json_type_string)) {
        json_object_put(k);
        if (k) diag_error(d, file, NULL, NULL, "cannot read a header key");
        return NULL;
    }
    const char *str = json_object_get_string(k);
    char *out = NULL;
    if (strlen(str) != (size_t)json_object_get_string_len(k))
        diag_error(d, file, NULL, str, "tensor name contains a NUL character");
    else if (!(out = xstrdup(str)))
        nomem(d, file);
    json_object_put(k);
    return out;
}

/* Walks the header's keys in file order and registers every tensor of shard `shard`. */
static Status parse_header(SafeTensors *s, int shard, json_object *root, const char *h, size_t hlen,
                           const unsigned char *data, size_t datalen, DiagList *d)
{
    const char *file = s->shards[shard].path;
    KeyScan k = {.h = h, .len = hlen};
    size_t ks, ke;
    int seen = 0;
    while (next_key(&k, &ks, &ke)) {
        char *name = decode_key(h + ks, ke - ks, file, d);
        if (!name) return ST_BAD_INPUT;
        json_object *v = NULL;
        Status st = ST_OK;
        if (!json_object_object_get_ex(root, name, &v)) {
            st = diag_add(d, DIAG_ERROR, ST_INTERNAL, file, NULL, name,
                          "header key not found after parsing");
        } else if (strcmp(name, "__metadata__") == 0) {
            st = parse_meta(s, file, v, d);
        } else {
            StTensor t = {.name = name, .shard = shard};
            st = parse_entry(file, v, data, datalen, &t, d);
            if (st == ST_OK) st = add_tensor(s, &t, file, d);
        }
        free(name);
        if (st != ST_OK) return st;
        seen++;
    }
    if (seen != json_object_object_length(root))
        return diag_add(d, DIAG_ERROR, ST_INTERNAL, file, NULL, NULL,
                        "header has %d keys but %d were read", json_object_object_length(root),
                        seen);
    return ST_OK;
}

/* Maps shard `shard` (whose path is set) and registers its tensors. */
static Status load_file(SafeTensors *s, int shard, DiagList *d)
{
    StShard *sh = &s->shards[shard];
    const char *file = sh->path;
    Status st = file_map(file, &sh->map, d);
    if (st != ST_OK) return st;
    const unsigned char *p = sh->map.data;
    size_t size = sh->map.size;
    if (size < 8)
        return diag_error(d, file, NULL, NULL,
                          "file is %zu bytes, too short for the 8-byte header length", size);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = hlen << 8 | p[i];
    if (hlen > ST_MAX_HEADER)
        return diag_error(d, file, NULL, NULL, "header length %llu is above the limit of %u",
                          (unsigned long long)hlen, ST_MAX_HEADER);
    if (hlen > size - 8)
        return diag_error(d, file, NULL, NULL,
                          "header length %llu runs past the end of the file (%zu bytes)",
                          (unsigned long long)hlen, size);
    const char *h = (const char *)p + 8;
    json_object *root = parse_json(h, (size_t)hlen, file, d);
    if (!root) return ST_BAD_INPUT;
    if (!json_object_is_type(root, json_type_object)) {
        json_object_put(root);
        return diag_error(d, file, NULL, NULL, "header is not a JSON object");
    }
    st = parse_header(s, shard, root, h, (size_t)hlen, p + 8 + hlen, size - 8 - (size_t)hlen, d);
    json_object_put(root);
    return st;
}

static Status add_shard(SafeTensors *s, char *path, DiagList *d)
{
    StShard *p = realloc(s->shards, (size_t)(s->nshards + 1) * sizeof *p);
    if (!p) {
        free(path);
        return nomem(d, s->path);
    }
    s->shards = p;
    s->shards[s->nshards++] = (StShard){.path = path};
    return ST_OK;
}

/* A shard name must stay inside the index's folder: relative, no ".." component. */
static bool shard_name_ok(const char *f)
{
    if (!*f || f[0] == '/') return false;
    for (const char *c = f;;) {
        const char *e = strchr(c, '/');
        size_t n = e ? (size_t)(e - c) : strlen(c);
        if (n == 2 && c[0] == '.' && c[1] == '.') return false;
        if (!e) return true;
        c = e + 1;
    }
}

static Status index_shards(SafeTensors *s, const char *path, json_object *wm, StrMap *shard_of,
                           DiagList *d)
{
    struct json_object_iterator it = json_object_iter_begin(wm), end = json_object_iter_end(wm);
    for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
        const char *name = json_object_iter_peek_name(&it);
        json_object *v = json_object_iter_peek_value(&it);
        if (!json_object_is_type(v, json_type_string))
            return diag_error(d, path, NULL, name, "weight_map value is not a shard file name");
        const char *f = json_object_get_string(v);
        if (!shard_name_ok(f))
            return diag_error(d, path, NULL, name,
                              "shard \"%.200s\" is not a relative path inside the index's folder",
                              f);
        if (strmap_has(shard_of, f)) continue;
        size_t n = strlen(path) + strlen(f) + 2;
        char *full = malloc(n);
        if (!full) return nomem(d, path);
        path_sibling(full, n, path, f);
        if (!file_exists(full)) {
            Status st = diag_error(d, path, NULL, name,
                                   "shard \"%.200s\" does not exist (looked for %s)", f, full);
            free(full);
            return st;
        }
        Status st = add_shard(s, full, d);
        if (st != ST_OK) return st;
        if (!strmap_put(shard_of, f, (void *)(intptr_t)s->nshards)) return nomem(d, path);
    }
    return ST_OK;
}

static Status open_index(SafeTensors *s, const char *path, DiagList *d)
{
    char *text;
    size_t len;
    Status st = file_read_all(path, &text, &len, d);
    if (st != ST_OK) return st;
    json_object *root = parse_json(text, len, path, d);
    free(text);
    if (!root) return ST_BAD_INPUT;
    json_object *wm = NULL;
    StrMap shard_of; /* shard name -> shard index + 1; keys live in root */
    strmap_init(&shard_of);
    if (!json_object_is_type(root, json_type_object) ||
        !json_object_object_get_ex(root, "weight_map", &wm) ||
        !json_object_is_type(wm, json_type_object)) {
        st = diag_error(d, path, NULL, NULL, "index has no \"weight_map\" object");
        goto out;
    }
    st = index_shards(s, path, wm, &shard_of, d);
    if (st == ST_OK && s->nshards == 0)
        st = diag_error(d, path, NULL, NULL, "index's \"weight_map\" is empty");
    for (int i = 0; st == ST_OK && i < s->nshards; i++)
        st = load_file(s, i, d);
    /* every tensor the index promises must be in the shard it names */
    struct json_object_iterator it = json_object_iter_begin(wm), end = json_object_iter_end(wm);
    for (; st == ST_OK && !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
        const char *name = json_object_iter_peek_name(&it);
        const char *f = json_object_get_string(json_object_iter_peek_value(&it));
        int want = (int)(intptr_t)strmap_get(&shard_of, f) - 1;
        const StTensor *t = st_find(s, name);
        if (!t)
            st = diag_error(d, path, NULL, name, "not found in its shard %s", s->shards[want].path);
        else if (t->shard != want)
            st = diag_error(d, path, NULL, name, "index says shard %s but it is in %s",
                            s->shards[want].path, s->shards[t->shard].path);
    }
out:
    strmap_free(&shard_of);
    json_object_put(root);
    return st;
}

Status st_open(SafeTensors *s, const char *path, DiagList *d)
{
    memset(s, 0, sizeof *s);
    strmap_init(&s->by_name);
    s->path = xstrdup(path);
    if (!s->path) return nomem(d, path);
    Status st;
    if (has_suffix(path, ".json")) {
        st = open_index(s, path, d);
    } else {
        char *p = xstrdup(path);
        st = p ? add_shard(s, p, d) : nomem(d, path);
        if (st == ST_OK) st = load_file(s, 0, d);
    }
    if (st != ST_OK) st_close(s);
    return st;
}

const StTensor *st_find(const SafeTensors *s, const char *name)
{
    int i = (int)(intptr_t)strmap_get(&s->by_name, name);
    return i ? &s->tensors[i - 1] : NULL;
}

int st_count(const SafeTensors *s)
{
    return s->count;
}

const StTensor *st_at(const SafeTensors *s, int i)
{
    return i >= 0 && i < s->count ? &s->tensors[i] : NULL;
}

const char *st_shard_path(const SafeTensors *s, int i)
{
    return i >= 0 && i < s->nshards ? s->shards[i].path : NULL;
}

const char *st_meta(const SafeTensors *s, const char *key)
{
    for (int i = 0; i < s->nmeta; i++)
        if (strcmp(s->meta[2 * i], key) == 0) return s->meta[2 * i + 1];
    return NULL;
}

void st_close(SafeTensors *s)
{
    if (!s) return;
    for (int i = 0; i < s->count; i++)
        free((char *)s->tensors[i].name);
    free(s->tensors);
    for (int i = 0; i < s->nshards; i++) {
        file_unmap(&s->shards[i].map);
        free(s->shards[i].path);
    }
    free(s->shards);
    for (int i = 0; i < 2 * s->nmeta; i++)
        free(s->meta[i]);
    free(s->meta);
    strmap_free(&s->by_name);
    free(s->path);
    memset(s, 0, sizeof *s);
}

Status st_to_htensor(const StTensor *t, DType dt, HTensor *out)
{
    memset(out, 0, sizeof *out);
    if (!t || !dtype_size(dt) || !dtype_size(t->dtype)) return ST_BAD_INPUT;
    Status st = htensor_alloc(out, dt, t->rank, t->shape);
    if (st != ST_OK) return st;
    if ((size_t)out->numel * dtype_size(t->dtype) != t->nbytes) {
        htensor_free(out);
        return ST_INTERNAL;
    }
    /* offsets in a file need not be aligned; the converters read whole elements */
    const void *src = t->data;
    void *tmp = NULL;
    if (t->nbytes && (uintptr_t)src % dtype_size(t->dtype) != 0) {
        if (!(tmp = malloc(t->nbytes))) {
            htensor_free(out);
            return ST_NOMEM;
        }
        memcpy(tmp, src, t->nbytes);
        src = tmp;
    }
    if (dt == DT_BOOL && t->dtype == DT_BOOL) { /* a stored bool may be any byte */
        for (int64_t i = 0; i < out->numel; i++)
            ((uint8_t *)out->data)[i] = ((const uint8_t *)src)[i] != 0;
    } else if (out->numel) {
        htensor_convert(out->data, dt, src, t->dtype, out->numel);
    }
    free(tmp);
    return ST_OK;
}

/* Builds the header object; sizes[i] are the tensors' byte counts. NULL on a bad argument. */
static json_object *build_header(const char *path, int n, const char *const *names,
                                 const HTensor *const *ts, const size_t *sizes,
                                 const char *const *meta, DiagList *d)
{
    json_object *root = json_object_new_object();
    if (!root) {
        nomem(d, path);
        return NULL;
    }
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        json_object *e = json_object_new_object(), *shape = json_object_new_array(),
                    *offs = json_object_new_array();
        bool ok = e && shape && offs;
        for (int r = 0; ok && r < ts[i]->rank; r++)
            ok = !json_object_array_add(shape, json_object_new_int64(ts[i]->shape[r]));
        ok = ok && !json_object_array_add(offs, json_object_new_int64((int64_t)off)) &&
             !json_object_array_add(offs, json_object_new_int64((int64_t)(off + sizes[i])));
        ok = ok && !json_object_object_add(e, "dtype",
                                           json_object_new_string(dtype_st_name(ts[i]->dtype)));
        if (ok) ok = !json_object_object_add(e, "shape", shape), shape = NULL;
        if (ok) ok = !json_object_object_add(e, "data_offsets", offs), offs = NULL;
        if (ok) ok = !json_object_object_add(root, names[i], e), e = NULL;
        json_object_put(e);
        json_object_put(shape);
        json_object_put(offs);
        if (!ok) {
            json_object_put(root);
            nomem(d, path);
            return NULL;
        }
        off += sizes[i];
    }
    if (meta) {
        json_object *m = json_object_new_object();
        bool ok = m != NULL;
        for (int i = 0; ok && meta[i]; i += 2) {
            if (!meta[i + 1]) {
                json_object_put(m);
                json_object_put(root);
                diag_error(d, path, NULL, NULL, "metadata key \"%s\" has no value", meta[i]);
                return NULL;
            }
            ok = !json_object_object_add(m, meta[i], json_object_new_string(meta[i + 1]));
        }
        if (ok) ok = !json_object_object_add(root, "__metadata__", m), m = NULL;
        json_object_put(m);
        if (!ok) {
            json_object_put(root);
            nomem(d, path);
            return NULL;
        }
    }
    return root;
}

/* Checks the arguments of st_write and fills sizes[] and *total. */
static Status check_write_args(const char *path, int n, const char *const *names,
                               const HTensor *const *ts, size_t *sizes, size_t *total, DiagList *d)
{
    StrMap seen;
    strmap_init(&seen);
    Status st = ST_OK;
    *total = 0;
    for (int i = 0; st == ST_OK && i < n; i++) {
        const char *name = names[i];
        const HTensor *t = ts[i];
        if (!name || !*name || strcmp(name, "__metadata__") == 0)
            st = diag_error(d, path, NULL, name, "tensor %d has no usable name", i);
        else if (strmap_has(&seen, name))
            st = diag_error(d, path, NULL, name, "tensor name given twice");
        else if (!t || !dtype_size(t->dtype) || t->rank < 0 || t->rank > NPU_MAX_RANK)
            st = diag_error(d, path, NULL, name, "tensor has no valid dtype and rank");
        else if (!strmap_put(&seen, name, (void *)1))
            st = nomem(d, path);
        for (int r = 0; st == ST_OK && r < t->rank; r++)
            if (t->shape[r] < 0) st = diag_error(d, path, NULL, name, "negative dimension");
        if (st == ST_OK && !shape_bytes(t->shape, t->rank, t->dtype, &sizes[i]))
            st = diag_error(d, path, NULL, name, "tensor is too large");
        if (st == ST_OK && sizes[i] && !t->data)
            st = diag_error(d, path, NULL, name, "tensor has no data");
        if (st == ST_OK && sizes[i] > SIZE_MAX / 2 - *total)
            st = diag_error(d, path, NULL, name, "tensors are too large together");
        if (st == ST_OK) *total += sizes[i];
    }
    strmap_free(&seen);
    return st;
}

Status st_write_meta(const char *path, int n, const char *const *names, const HTensor *const *ts,
                     const char *const *meta, DiagList *d)
{
    if (n < 0 || (n > 0 && (!names || !ts)))
        return diag_error(d, path, NULL, NULL, "no tensors given to write");
    size_t *sizes = calloc((size_t)n + 1, sizeof *sizes);
    if (!sizes) return nomem(d, path);
    size_t total;
    Status st = check_write_args(path, n, names, ts, sizes, &total, d);
    json_object *root = NULL;
    if (st == ST_OK && !(root = build_header(path, n, names, ts, sizes, meta, d)))
        st = ST_BAD_INPUT;
    unsigned char *buf = NULL;
    if (st == ST_OK) {
        const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN |
                                                                    JSON_C_TO_STRING_NOSLASHESCAPE);
        size_t hlen = text ? strlen(text) : 0, padded = (hlen + 7) & ~(size_t)7;
        size_t len = 8 + padded + total;
        if (!text || !(buf = malloc(len))) {
            st = nomem(d, path);
        } else {
            for (int i = 0; i < 8; i++)
                buf[i] = (unsigned char)((uint64_t)padded >> (8 * i));
            memcpy(buf + 8, text, hlen);
            memset(buf + 8 + hlen, ' ', padded - hlen); /* the format pads with spaces */
            size_t off = 8 + padded;
            for (int i = 0; i < n; i++) {
                if (sizes[i]) memcpy(buf + off, ts[i]->data, sizes[i]);
                off += sizes[i];
            }
            st = file_write_atomic(path, buf, len, d);
        }
    }
    free(buf);
    json_object_put(root);
    free(sizes);
    return st;
}

Status st_write(const char *path, int n, const char *const *names, const HTensor *const *ts,
                DiagList *d)
{
    return st_write_meta(path, n, names, ts, NULL, d);
}
