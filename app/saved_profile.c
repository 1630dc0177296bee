#include "app/saved_profile.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

static char *str_of(json_object *o, const char *key)
{
    json_object *v;
    return strdup(json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "");
}

static double num_of(json_object *o, const char *key, double dflt)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) ? json_object_get_double(v) : dflt;
}

/* The kernel's IR nodes: the "nodes" array, or (files saved before it existed) "fused_from"
 * split at commas. */
static Status nodes_of(json_object *o, SavedKernel *k)
{
    json_object *v;
    if (json_object_object_get_ex(o, "nodes", &v) && json_object_is_type(v, json_type_array)) {
        int n = (int)json_object_array_length(v);
        k->nodes = calloc((size_t)n + 1, sizeof *k->nodes);
        if (!k->nodes) return ST_NOMEM;
        for (int i = 0; i < n; i++) {
            k->nodes[i] = strdup(json_object_get_string(json_object_array_get_idx(v, (size_t)i)));
            if (!k->nodes[i]) return ST_NOMEM;
            k->nnodes++;
        }
        return ST_OK;
    }
    char *from = str_of(o, "fused_from");
    if (!from) return ST_NOMEM;
    int n = 1;
    for (const char *c = from; *c; c++)
        n += *c == ',';
    k->nodes = calloc((size_t)n + 1, sizeof *k->nodes);
    Status st = k->nodes ? ST_OK : ST_NOMEM;
    char *save = NULL;
    for (char *t = strtok_r(from, ",", &save); st == ST_OK && t; t = strtok_r(NULL, ",", &save))
        if ((k->nodes[k->nnodes] = strdup(t)))
            k->nnodes++;
        else
            st = ST_NOMEM;
    free(from);
    return st;
}

Status saved_profile_load(const char *path, SavedProfile *sp, DiagList *d)
{
    memset(sp, 0, sizeof *sp);
    FILE *f = fopen(path, "r");
    if (!f) return diag_error(d, path, NULL, NULL, "cannot open the saved profile");
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, kcap = 0;
    Status st = ST_OK;
    while (st == ST_OK && getline(&line, &cap, f) > 0) {
        lineno++;
        if (line[0] == '\n') continue;
        json_object *o = json_tokener_parse(line), *kind;
        if (!o || !json_object_object_get_ex(o, "kind", &kind)) {
            st = diag_error(d, path, NULL, NULL,
                            "line %d is not a profile JSON line (profile "
                            "--save FILE writes them)",
                            lineno);
        } else if (strcmp(json_object_get_string(kind), "summary") == 0 && !sp->model) {
            sp->model = str_of(o, "model");
        } else if (strcmp(json_object_get_string(kind), "kernel") == 0) {
            SavedKernel *nk = grow_array(sp->k, sp->nk, &kcap, sizeof *nk, 64);
            if (nk)
                sp->k = nk;
            else
                st = ST_NOMEM;
            if (st == ST_OK) {
                SavedKernel *k = &sp->k[sp->nk++];
                memset(k, 0, sizeof *k);
                k->index = (int)num_of(o, "index", -1);
                k->shader = str_of(o, "kernel");
                k->fusion = str_of(o, "fusion");
                k->output = str_of(o, "output");
                k->gpu_us = num_of(o, "gpu_us", -1);
                k->cpu_us = num_of(o, "cpu_us", -1);
                k->rel_l2 = num_of(o, "rel_l2", -1);
                char *v = str_of(o, "verdict");
                snprintf(k->verdict, sizeof k->verdict, "%s", v ? v : "-");
                free(v);
                if (!k->shader || !k->fusion || !k->output) st = ST_NOMEM;
                if (st == ST_OK) st = nodes_of(o, k);
            }
        }
        json_object_put(o);
    }
    free(line);
    fclose(f);
    if (st == ST_NOMEM) st = diag_add(d, DIAG_ERROR, ST_NOMEM, path, NULL, NULL, "out of memory");
    if (st == ST_OK && sp->nk == 0)
        st = diag_error(d, path, NULL, NULL,
                        "no profile kernel lines (profile --save FILE writes them)");
    if (st != ST_OK) saved_profile_free(sp);
    return st;
}

void saved_profile_free(SavedProfile *sp)
{
    for (int i = 0; i < sp->nk; i++) {
        SavedKernel *k = &sp->k[i];
        free(k->shader);
        free(k->fusion);
        free(k->output);
        for (int j = 0; j < k->nnodes; j++)
            free(k->nodes[j]);
        free(k->nodes);
    }
    free(sp->k);
    free(sp->model);
    memset(sp, 0, sizeof *sp);
}
