/* .npubin test helpers (tests/npubin_util.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/hash.h"
#include "compiler/ir_json.h"
#include "compiler/lower/lower.h"
#include "compiler/npubin.h"
#include "compiler/pass.h"
#include "tests/npubin_util.h"

Plan *nu_build_plan(const char *path)
{
    Graph *g = NULL;
    DiagList d = {0};
    Status st = ir_read_file(path, &g, &d);
    CompileOptions o;
    memset(&o, 0, sizeof o);
    o.channel_tile = 32;
    o.compute = DT_F16;
    o.arena_align = 256;
    o.pack_min = 1; /* every float input in its host form: the round trip carries pack kernels */
    Arena scratch;
    arena_init(&scratch, 64 * 1024);
    PassCtx c = {&o, &d, &scratch};
    PassFn passes[] = {pass_canonicalize, pass_fold_batchnorm, pass_partition, pass_fuse,
                       pass_layout,       pass_pack_inputs,    pass_views,     pass_plan_memory};
    for (size_t i = 0; st == ST_OK && i < sizeof passes / sizeof passes[0]; i++) {
        st = passes[i](g, &c);
        arena_reset(&scratch);
    }
    Plan *p = NULL;
    if (st == ST_OK) st = plan_build(g, &o, &p, &d);
    if (st != ST_OK) diag_print(&d, stderr);
    assert_int_equal(st, ST_OK);
    arena_free(&scratch);
    graph_free(g);
    diag_free(&d);
    return p;
}

unsigned char *nu_encode(const Plan *p, size_t *len)
{
    unsigned char *buf = NULL;
    DiagList d = {0};
    Status st = npubin_encode(p, &buf, len, &d);
    if (st != ST_OK) diag_print(&d, stderr);
    assert_int_equal(st, ST_OK);
    diag_free(&d);
    return buf;
}

void nu_put_le(unsigned char *b, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

unsigned char *nu_wrap(const void *payload, size_t n, uint32_t version, size_t *len)
{
    unsigned char *b = malloc(NPUBIN_HEADER_SIZE + n + 1);
    assert_non_null(b);
    memcpy(b, NPUBIN_MAGIC, 8);
    nu_put_le(b + 8, version, 4);
    nu_put_le(b + 12, 0, 4);
    nu_put_le(b + 16, n, 8);
    if (n) memcpy(b + NPUBIN_HEADER_SIZE, payload, n);
    nu_put_le(b + 24, hash64(b + NPUBIN_HEADER_SIZE, n), 8);
    *len = NPUBIN_HEADER_SIZE + n;
    return b;
}

void nu_reseal(unsigned char *b, size_t len)
{
    nu_put_le(b + 24, hash64(b + NPUBIN_HEADER_SIZE, len - NPUBIN_HEADER_SIZE), 8);
}

/* The index of key k in map, -1 when absent. */
static int key_index(const msgpack_object *map, const char *k)
{
    assert_int_equal(map->type, MSGPACK_OBJECT_MAP);
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        const msgpack_object *o = &map->via.map.ptr[i].key;
        if (o->via.str.size == strlen(k) && memcmp(o->via.str.ptr, k, o->via.str.size) == 0)
            return (int)i;
    }
    return -1;
}

msgpack_object *nu_key(msgpack_object *map, const char *k)
{
    int i = key_index(map, k);
    if (i < 0) {
        fail_msg("no key %s", k);
        return NULL;
    }
    return &map->via.map.ptr[i].val;
}

void nu_rename(msgpack_object *map, const char *from, const char *to)
{
    int i = key_index(map, from);
    if (i < 0) {
        fail_msg("no key %s", from);
        return;
    }
    nu_set_str(&map->via.map.ptr[i].key, to, (uint32_t)strlen(to));
}

msgpack_object *nu_elem(msgpack_object *arr, uint32_t i)
{
    assert_int_equal(arr->type, MSGPACK_OBJECT_ARRAY);
    assert_true(i < arr->via.array.size);
    return &arr->via.array.ptr[i];
}

msgpack_object *nu_rec(msgpack_object *root, const char *list, uint32_t i, const char *k)
{
    return nu_key(nu_elem(nu_key(root, list), i), k);
}

void nu_set_int(msgpack_object *o, int64_t v)
{
    o->type = v < 0 ? MSGPACK_OBJECT_NEGATIVE_INTEGER : MSGPACK_OBJECT_POSITIVE_INTEGER;
    o->via.i64 = v;
}

void nu_set_str(msgpack_object *o, const char *s, uint32_t n)
{
    o->type = MSGPACK_OBJECT_STR;
    o->via.str.ptr = s;
    o->via.str.size = n;
}

void nu_set_ints(msgpack_object *o, msgpack_zone *z, uint32_t n, int64_t v)
{
    o->type = MSGPACK_OBJECT_ARRAY;
    o->via.array.size = n;
    o->via.array.ptr = msgpack_zone_malloc(z, sizeof(msgpack_object) * n);
    for (uint32_t i = 0; i < n; i++)
        nu_set_int(&o->via.array.ptr[i], v);
}

void nu_drop_key_of(msgpack_object *m, const char *name)
{
    size_t n = strlen(name);
    for (uint32_t k = 0; k < m->via.map.size; k++)
        if (m->via.map.ptr[k].key.via.str.size == n &&
            !memcmp(m->via.map.ptr[k].key.via.str.ptr, name, n)) {
            m->via.map.ptr[k] = m->via.map.ptr[m->via.map.size - 1];
            m->via.map.size--;
            return;
        }
}

void nu_drop_key(msgpack_object *r, const char *array, const char *name)
{
    msgpack_object *a = nu_key(r, array);
    for (uint32_t i = 0; i < a->via.array.size; i++)
        nu_drop_key_of(nu_elem(a, i), name);
}

unsigned char *nu_mutated(const Plan *p, NuMutate fn, uint32_t version, size_t *len)
{
    size_t n;
    unsigned char *buf = nu_encode(p, &n);
    msgpack_unpacked u;
    msgpack_unpacked_init(&u);
    size_t off = 0;
    assert_int_equal(msgpack_unpack_next(&u, (const char *)buf + NPUBIN_HEADER_SIZE,
                                         n - NPUBIN_HEADER_SIZE, &off),
                     MSGPACK_UNPACK_SUCCESS);
    fn(&u.data, u.zone);
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    assert_int_equal(msgpack_pack_object(&pk, u.data), 0);
    unsigned char *w = nu_wrap(sb.data, sb.size, version, len);
    msgpack_sbuffer_destroy(&sb);
    msgpack_unpacked_destroy(&u);
    free(buf);
    return w;
}
