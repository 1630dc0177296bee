#include "app/heat.h"

#include <stdlib.h>
#include <string.h>

int heat_color_parse(const char *name)
{
    static const char *const names[] = {[VIZ_COLOR_KIND] = "kind",
                                        [VIZ_COLOR_PARTITION] = "partition",
                                        [VIZ_COLOR_TIME] = "time",
                                        [VIZ_COLOR_ERROR] = "error"};
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
        if (strcmp(name, names[i]) == 0) return i;
    return -1;
}

Status heat_from_result(const Plan *p, const ProfileResult *r, VizKernelData **out, DiagList *d)
{
    if (!r->have || r->pr.nkernels != p->nkernels)
        return diag_error(d, NULL, NULL, NULL, "heat map: no profile of this plan");
    VizKernelData *k = calloc((size_t)p->nkernels + 1, sizeof *k);
    if (!k) return diag_add(d, DIAG_ERROR, ST_NOMEM, NULL, NULL, NULL, "out of memory");
    for (int i = 0; i < p->nkernels; i++) {
        const ProfKernel *pk = &r->pr.k[i];
        k[i] = (VizKernelData){i,
                               p->kernels[i].prov,
                               p->kernels[i].nprov,
                               pk->gpu_med,
                               pk->has_err && !pk->err.argmax ? pk->err.rel_l2 : -1,
                               pk->has_err,
                               pk->has_err && !pk->ok};
    }
    *out = k;
    return ST_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The node set of a kernel as one string: the names sorted, comma-joined (malloc'd). */
static char *node_key(const char *const *nodes, int n)
{
    const char **v = malloc(sizeof *v * (size_t)(n + 1));
    size_t len = 1;
    for (int i = 0; i < n; i++)
        len += strlen(nodes[i]) + 1;
    char *s = malloc(len);
    if (!v || !s) {
        free(v);
        free(s);
        return NULL;
    }
    memcpy(v, nodes, sizeof *v * (size_t)n);
    qsort(v, (size_t)n, sizeof *v, cmp_str);
    s[0] = 0;
    for (int i = 0; i < n; i++) {
        if (i) strcat(s, ",");
        strcat(s, v[i]);
    }
    free(v);
    return s;
}

static bool has_key(char *const *keys, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (keys[i] && strcmp(keys[i], key) == 0) return true;
    return false;
}

/* Is sp a measurement of plan p? An error saying what differs, else ST_OK. */
static Status same_plan(const SavedProfile *sp, const char *path, const Plan *p, const Graph *g,
                        DiagList *d)
{
    const char *model = p->model_name ? p->model_name : "";
    if (sp->model && sp->model[0] && strcmp(sp->model, model) != 0)
        return diag_error(d, path, NULL, NULL,
                          "the saved profile is of model '%s', this is '%s' "
                          "(%s): profile this model with --save",
                          sp->model, model, p->source);
    for (int i = 0; i < sp->nk; i++)
        for (int m = 0; m < sp->k[i].nnodes; m++)
            if (graph_find_node(g, sp->k[i].nodes[m]) < 0)
                return diag_error(d, path, sp->k[i].nodes[m], NULL,
                                  "kernel %d (%s) of the saved profile computes node '%s', which "
                                  "%s has none of: the profile is of another model",
                                  sp->k[i].index, sp->k[i].shader, sp->k[i].nodes[m], p->source);
    char **mine = calloc((size_t)p->nkernels + 1, sizeof *mine);
    char **theirs = calloc((size_t)sp->nk + 1, sizeof *theirs);
    Status st = mine && theirs ? ST_OK : ST_NOMEM;
    for (int i = 0; st == ST_OK && i < p->nkernels; i++)
        if (!(mine[i] = node_key(p->kernels[i].prov, p->kernels[i].nprov))) st = ST_NOMEM;
    for (int i = 0; st == ST_OK && i < sp->nk; i++)
        if (!(theirs[i] = node_key((const char *const *)sp->k[i].nodes, sp->k[i].nnodes)))
            st = ST_NOMEM;
    if (st == ST_NOMEM) st = diag_add(d, DIAG_ERROR, ST_NOMEM, path, NULL, NULL, "out of memory");
    for (int i = 0; st == ST_OK && i < sp->nk; i++)
        if (!has_key(mine, p->nkernels, theirs[i]))
            st =
                diag_error(d, path, NULL, NULL,
                           "kernel %d (%s%s%s) of the saved profile computes [%s]; no kernel of "
                           "this plan computes exactly those nodes: the profile is of another "
                           "plan (fusion switches, --no-fuse, --disable, --break or --tier differ)",
                           sp->k[i].index, sp->k[i].shader, sp->k[i].fusion[0] ? ", " : "",
                           sp->k[i].fusion, theirs[i]);
    for (int i = 0; st == ST_OK && i < p->nkernels; i++)
        if (!has_key(theirs, sp->nk, mine[i]))
            st = diag_error(d, path, NULL, NULL,
                            "this plan's kernel %d (%s) computing [%s] has no kernel in the saved "
                            "profile: the profile is of another plan (fusion switches, --no-fuse, "
                            "--disable, --break or --tier differ)",
                            i, p->kernels[i].shader, mine[i]);
    for (int i = 0; mine && i < p->nkernels; i++)
        free(mine[i]);
    for (int i = 0; theirs && i < sp->nk; i++)
        free(theirs[i]);
    free(mine);
    free(theirs);
    return st;
}

Status heat_from_saved(const SavedProfile *sp, const char *path, const Plan *p, const Graph *g,
                       VizKernelData **out, DiagList *d)
{
    Status st = same_plan(sp, path, p, g, d);
    if (st != ST_OK) return st;
    VizKernelData *k = calloc((size_t)sp->nk + 1, sizeof *k);
    if (!k) return diag_add(d, DIAG_ERROR, ST_NOMEM, path, NULL, NULL, "out of memory");
    for (int i = 0; i < sp->nk; i++) {
        const SavedKernel *s = &sp->k[i];
        bool judged = strcmp(s->verdict, "-") != 0;
        k[i] = (VizKernelData){
            s->index, (const char *const *)s->nodes,          s->nnodes, s->gpu_us, s->rel_l2,
            judged,   judged && strcmp(s->verdict, "ok") != 0};
    }
    *out = k;
    return ST_OK;
}
