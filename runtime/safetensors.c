#include "safetensors.h"

#include <json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

static uint64_t rd64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static Status add_tensor(SafeTensors *s, StTensor *t)
{
    if (s->count == s->cap) {
        int cap = s->cap ? s->cap * 2 : 64;
        StTensor *p = realloc(s->tensors, sizeof *p * (size_t)cap);
        char **q = realloc(s->names, sizeof *q * (size_t)cap);
        if (p) s->tensors = p;
        if (q) s->names = q;
        if (!p || !q) return ST_NOMEM;
        s->cap = cap;
    }
    char *nm = dupstr(t->name);
    if (!nm) return ST_NOMEM;
    s->names[s->count] = nm;
    t->name = nm;
    s->tensors[s->count] = *t;
    s->count++;
    return ST_OK;
}

/* Parses one mapped file as shard `shard`. */
static Status parse_file(SafeTensors *s, const char *path, int shard, DiagList *d)
{
    const FileMap *m = &s->maps[shard];
    if (m->size < 8) return diag_error(d, path, NULL, NULL, "not a safetensors file (%zu bytes)", m->size);
    uint64_t hlen = rd64(m->data);
    if (hlen > m->size - 8 || hlen > (100u << 20))
        return diag_error(d, path, NULL, NULL,
                          "header length %llu exceeds the file (%zu bytes): truncated or not a "
                          "safetensors file",
                          (unsigned long long)hlen, m->size);
    const char *hdr = (const char *)m->data + 8;
    size_t data_start = 8 + (size_t)hlen, data_len = m->size - data_start;
    struct json_tokener *tok = json_tokener_new();
    if (!tok) return ST_NOMEM;
    struct json_object *root = json_tokener_parse_ex(tok, hdr, (int)hlen);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    json_tokener_free(tok);
    if (!root || jerr != json_tokener_success || !json_object_is_type(root, json_type_object)) {
        if (root) json_object_put(root);
        return diag_error(d, path, NULL, NULL, "header is not a JSON object");
    }
    Status st = ST_OK;
    json_object_object_foreach(root, key, val)
    {
        if (strcmp(key, "__metadata__") == 0) continue;
        StTensor t = {.name = key, .shard = shard};
        struct json_object *dt = NULL, *sh = NULL, *off = NULL;
        if (!json_object_is_type(val, json_type_object) ||
            !json_object_object_get_ex(val, "dtype", &dt) ||
            !json_object_object_get_ex(val, "shape", &sh) ||
            !json_object_object_get_ex(val, "data_offsets", &off)) {
            st = diag_error(d, path, NULL, key, "entry needs dtype, shape and data_offsets");
            break;
        }
        t.dtype = json_object_is_type(dt, json_type_string) ? dtype_parse_st(json_object_get_string(dt))
                                                            : DT_INVALID;
        if (t.dtype == DT_INVALID) {
            st = diag_error(d, path, NULL, key, "unknown dtype %s", json_object_to_json_string(dt));
            break;
        }
        if (!json_object_is_type(sh, json_type_array) || json_object_array_length(sh) > NPU_MAX_RANK) {
            st = diag_error(d, path, NULL, key, "shape is not a list of at most %d dims", NPU_MAX_RANK);
            break;
        }
        t.rank = (int)json_object_array_length(sh);
        uint64_t numel = 1;
        int bad = 0;
        for (int i = 0; i < t.rank; i++) {
            struct json_object *e = json_object_array_get_idx(sh, (size_t)i);
            int64_t v = json_object_is_type(e, json_type_int) ? json_object_get_int64(e) : -1;
            if (v < 0 || v > (1LL << 40)) bad = 1;
            else if (v && numel > UINT64_MAX / (uint64_t)v / 16) bad = 1;
            else numel *= (uint64_t)v;
            t.shape[i] = v;
        }
        if (bad) {
            st = diag_error(d, path, NULL, key, "shape has a negative, non-integer or huge dim");
            break;
        }
        if (!json_object_is_type(off, json_type_array) || json_object_array_length(off) != 2 ||
            !json_object_is_type(json_object_array_get_idx(off, 0), json_type_int) ||
            !json_object_is_type(json_object_array_get_idx(off, 1), json_type_int)) {
            st = diag_error(d, path, NULL, key, "data_offsets is not two integers");
            break;
        }
        int64_t b = json_object_get_int64(json_object_array_get_idx(off, 0));
        int64_t e = json_object_get_int64(json_object_array_get_idx(off, 1));
        if (b < 0 || e < b || (uint64_t)e > data_len) {
            st = diag_error(d, path, NULL, key,
                            "data_offsets [%lld, %lld] outside the data section (%zu bytes)",
                            (long long)b, (long long)e, data_len);
            break;
        }
        if ((uint64_t)(e - b) != numel * dtype_size(t.dtype)) {
            st = diag_error(d, path, NULL, key, "holds %lld bytes but %s%s needs %llu",
                            (long long)(e - b), dtype_st_name(t.dtype), "",
                            (unsigned long long)(numel * dtype_size(t.dtype)));
            break;
        }
        if (st_find(s, key)) {
            st = diag_error(d, path, NULL, key, "tensor listed twice");
            break;
        }
        t.data = m->data + data_start + b;
        t.nbytes = (size_t)(e - b);
        if ((st = add_tensor(s, &t)) != ST_OK) break;
        if (!strmap_put(&s->by_name, s->names[s->count - 1], &s->tensors[s->count - 1])) {
            st = ST_NOMEM;
            break;
        }
    }
    json_object_put(root);
    /* tensors may have moved on realloc: rebuild the index */
    strmap_free(&s->by_name);
    strmap_init(&s->by_name);
    for (int i = 0; i < s->count; i++)
        if (!strmap_put(&s->by_name, s->tensors[i].name, &s->tensors[i])) return ST_NOMEM;
    return st;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static Status open_index(SafeTensors *s, const char *path, DiagList *d)
{
    char *buf;
    size_t len;
    Status st = file_read_all(path, &buf, &len, d);
    if (st != ST_OK) return st;
    struct json_object *root = json_tokener_parse(buf);
    free(buf);
    struct json_object *wm = NULL;
    if (!root || !json_object_object_get_ex(root, "weight_map", &wm) ||
        !json_object_is_type(wm, json_type_object)) {
        if (root) json_object_put(root);
        return diag_error(d, path, NULL, NULL, "sharded index without a \"weight_map\" object");
    }
    /* distinct shard files, in first-seen order */
    char *shards[1024];
    int ns = 0;
    json_object_object_foreach(wm, key, val)
    {
        const char *f = json_object_is_type(val, json_type_string) ? json_object_get_string(val) : NULL;
        if (!f || !*f || f[0] == '/' || strstr(f, "..") || strchr(f, '\\')) {
            st = diag_error(d, path, NULL, key, "shard file name %s is not a plain name inside the "
                                                 "index's folder",
                            f ? f : "(not a string)");
            break;
        }
        int seen = 0;
        for (int i = 0; i < ns; i++) seen |= strcmp(shards[i], f) == 0;
        if (!seen && ns < 1024) shards[ns++] = dupstr(f);
    }
    if (st == ST_OK) {
        s->maps = calloc((size_t)ns + 1, sizeof *s->maps);
        if (!s->maps) st = ST_NOMEM;
    }
    for (int i = 0; st == ST_OK && i < ns; i++) {
        char p[4096];
        path_sibling(p, sizeof p, path, shards[i]);
        st = file_map(p, &s->maps[i], d);
        if (st == ST_OK) {
            s->nmaps = i + 1;
            st = parse_file(s, p, i, d);
        }
    }
    for (int i = 0; i < ns; i++) free(shards[i]);
    json_object_put(root);
    return st;
}

Status st_open(SafeTensors *s, const char *path, DiagList *d)
{
    memset(s, 0, sizeof *s);
    strmap_init(&s->by_name);
    if (ends_with(path, ".json")) return open_index(s, path, d);
    s->maps = calloc(1, sizeof *s->maps);
    if (!s->maps) return ST_NOMEM;
    Status st = file_map(path, &s->maps[0], d);
    if (st != ST_OK) return st;
    s->nmaps = 1;
    return parse_file(s, path, 0, d);
}

const StTensor *st_find(const SafeTensors *s, const char *name)
{
    return strmap_get(&s->by_name, name);
}

int st_count(const SafeTensors *s)
{
    return s->count;
}

const StTensor *st_at(const SafeTensors *s, int i)
{
    return i >= 0 && i < s->count ? &s->tensors[i] : NULL;
}

void st_close(SafeTensors *s)
{
    for (int i = 0; i < s->nmaps; i++) file_unmap(&s->maps[i]);
    for (int i = 0; i < s->count; i++) free(s->names[i]);
    free(s->maps);
    free(s->names);
    free(s->tensors);
    strmap_free(&s->by_name);
    memset(s, 0, sizeof *s);
}

Status st_to_htensor(const StTensor *t, DType dt, HTensor *out)
{
    Status st = htensor_alloc(out, dt, t->rank, t->shape);
    if (st != ST_OK) return st;
    htensor_convert(out->data, dt, t->data, t->dtype, out->numel);
    return ST_OK;
}

Status st_write(const char *path, int n, const char *const *names, const HTensor *const *ts,
                DiagList *d)
{
    struct json_object *hdr = json_object_new_object();
    if (!hdr) return ST_NOMEM;
    uint64_t off = 0;
    for (int i = 0; i < n; i++) {
        struct json_object *e = json_object_new_object(), *sh = json_object_new_array(),
                           *of = json_object_new_array();
        for (int k = 0; k < ts[i]->rank; k++)
            json_object_array_add(sh, json_object_new_int64(ts[i]->shape[k]));
        uint64_t nb = (uint64_t)ts[i]->numel * dtype_size(ts[i]->dtype);
        json_object_array_add(of, json_object_new_int64((int64_t)off));
        json_object_array_add(of, json_object_new_int64((int64_t)(off + nb)));
        off += nb;
        json_object_object_add(e, "dtype", json_object_new_string(dtype_st_name(ts[i]->dtype)));
        json_object_object_add(e, "shape", sh);
        json_object_object_add(e, "data_offsets", of);
        json_object_object_add(hdr, names[i], e);
    }
    const char *js = json_object_to_json_string_ext(hdr, JSON_C_TO_STRING_PLAIN);
    size_t jl = strlen(js), padded = (jl + 7) / 8 * 8;
    size_t total = 8 + padded + off;
    unsigned char *buf = malloc(total ? total : 1);
    if (!buf) {
        json_object_put(hdr);
        return ST_NOMEM;
    }
    for (int i = 0; i < 8; i++) buf[i] = (unsigned char)(padded >> (8 * i));
    memcpy(buf + 8, js, jl);
    memset(buf + 8 + jl, ' ', padded - jl);
    size_t p = 8 + padded;
    for (int i = 0; i < n; i++) {
        size_t nb = (size_t)ts[i]->numel * dtype_size(ts[i]->dtype);
        if (nb) memcpy(buf + p, ts[i]->data, nb);
        p += nb;
    }
    json_object_put(hdr);
    Status st = file_write_atomic(path, buf, total, d);
    free(buf);
    return st;
}
