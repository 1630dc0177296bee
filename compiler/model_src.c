#include "compiler/model_src.h"

#include <stdlib.h>
#include <string.h>
#include "common/fileio.h"
#include "compiler/ir_json.h"
#include "compiler/npubin.h"

bool model_is_npubin(const char *path)
{
    size_t n = strlen(path);
    return n > 7 && strcmp(path + n - 7, ".npubin") == 0;
}

static char *dup_bytes(const char *s, size_t n)
{
    char *c = malloc(n + 1);
    if (!c) return NULL;
    if (n) memcpy(c, s, n);
    c[n] = '\0';
    return c;
}

Status model_src_read(const char *path, char **text, size_t *len, char **origin, DiagList *d)
{
    *text = NULL;
    *len = 0;
    if (origin) *origin = NULL;
    if (!model_is_npubin(path)) {
        Status st = file_read_all(path, text, len, d);
        if (st == ST_OK && *len == 0) {
            free(*text);
            *text = NULL;
            return diag_error(d, path, NULL, NULL, "empty file");
        }
        return st;
    }
    Plan *p = NULL;
    Status st = npubin_read(path, &p, d);
    if (st != ST_OK) return st;
    if (!p->ir_json || p->ir_json_len == 0) {
        plan_free(p);
        return diag_error(d, path, NULL, NULL,
                          "the file carries no IR (written by an older build): recompile it "
                          "from its IR JSON");
    }
    *text = dup_bytes(p->ir_json, (size_t)p->ir_json_len);
    *len = (size_t)p->ir_json_len;
    if (origin && p->source) *origin = dup_bytes(p->source, strlen(p->source));
    bool nomem = !*text || (origin && p->source && !*origin);
    plan_free(p);
    if (nomem) {
        free(*text);
        *text = NULL;
        if (origin) {
            free(*origin);
            *origin = NULL;
        }
        return ST_NOMEM;
    }
    return ST_OK;
}

Status model_src_open(const char *path, ModelText *t, DiagList *d)
{
    memset(t, 0, sizeof *t);
    if (model_is_npubin(path)) {
        Status st = model_src_read(path, &t->copy, &t->len, NULL, d);
        t->text = t->copy;
        return st;
    }
    Status st = file_map(path, &t->map, d);
    if (st == ST_OK && t->map.size == 0) return diag_error(d, path, NULL, NULL, "empty file");
    t->text = (const char *)t->map.data;
    t->len = t->map.size;
    return st;
}

void model_src_close(ModelText *t)
{
    file_unmap(&t->map);
    free(t->copy);
    memset(t, 0, sizeof *t);
}

Status model_src_graph(const char *path, Graph **g, DiagList *d)
{
    char *text;
    size_t len;
    *g = NULL;
    Status st = model_src_read(path, &text, &len, NULL, d);
    if (st == ST_OK) st = ir_read_buffer(path, text, len, g, d);
    free(text);
    return st;
}
