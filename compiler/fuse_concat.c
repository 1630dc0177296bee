/* linear_concat and linear_glu: the graph side of an instance (the matches are in
 * fuse_patterns.c). An instance keeps its member nodes (the CPU reference and `--no-fuse` run
 * them as they are) and, while enabled, reads its weights and biases stacked by recipes applied
 * at load (runtime/bind.c).
 * linear_concat adds one combined output tensor written by the fused matmul, the weights and
 * biases concatenated along N, and makes each part's output a view of the combined output at
 * the part's first column. The match only takes one-row inputs (decode), where a slice along
 * the last dim is contiguous: the parts are dense tensors to their readers, at an offset that
 * keeps binding alignment (CONCAT_ALIGN).
 * linear_glu's kernel reads x and the gate's and up's weights (and biases) interleaved in runs
 * of GLU_BLOCK rows, and writes the mul's output: nothing else of the graph changes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/fusion.h"
#include "compiler/pass.h"

int fuse_concat_parts(const Graph *g, const Fusion *f, ConcatPart *parts, int max)
{
    int n = 0;
    int64_t start = 0;
    for (int i = 0; i < f->nnodes && n < max; i++) {
        const Node *l = &g->nodes[f->nodes[i]];
        if (l->op != OP_LINEAR) continue;
        ConcatPart *p = &parts[n++];
        p->linear = f->nodes[i];
        p->out = l->out[0];
        /* an activation member reading it: the part is the activation's output */
        for (int j = 0; j < f->nnodes; j++) {
            const Node *a = &g->nodes[f->nodes[j]];
            if (a->op != OP_LINEAR && a->nin > 0 && a->in[0] == l->out[0]) p->out = a->out[0];
        }
        p->start = start;
        p->n = node_input(g, l, 1)->shape[0];
        start += p->n;
    }
    return n;
}

static Status add_recipe(Graph *g, int out, const int *src, int nsrc, int block)
{
    Recipe *r = realloc(g->recipes, sizeof(Recipe) * (size_t)(g->nrecipes + 1));
    if (!r) return ST_NOMEM;
    g->recipes = r;
    Recipe *x = &g->recipes[g->nrecipes++];
    memset(x, 0, sizeof *x);
    x->kind = RECIPE_CONCAT;
    x->out_w = out;
    x->out_b = x->conv_w = x->conv_b = x->gamma = x->beta = x->mean = x->var = -1;
    x->nsrc = nsrc;
    x->block = block;
    for (int i = 0; i < nsrc; i++)
        x->src[i] = src[i];
    return ST_OK;
}

/* A derived weight of `like`'s dtype: the parts' tensors (input `arg` of each linear) stacked
 * along dim 0 (interleaved in runs of `block` rows when not 0), and its recipe. Returns its id
 * or -1. */
static int concat_weight(Graph *g, const ConcatPart *parts, int np, int arg, const char *name,
                         int block)
{
    int src[CONCAT_MAX_PARTS];
    int64_t shape[2] = {0, 0};
    for (int i = 0; i < np; i++) {
        src[i] = g->nodes[parts[i].linear].in[arg];
        shape[0] += g->tensors[src[i]].shape[0];
    }
    GTensor like = g->tensors[src[0]];
    shape[1] = like.rank == 2 ? like.shape[1] : 0;
    int t = graph_add_derived_weight(g, name, &like, like.rank, shape);
    if (t < 0 || add_recipe(g, t, src, np, block) != ST_OK) return -1;
    return t;
}

Status fuse_concat_finish(Graph *g, int fi)
{
    ConcatPart parts[CONCAT_MAX_PARTS];
    int np = fuse_concat_parts(g, &g->fusions[fi], parts, CONCAT_MAX_PARTS);
    g->fusions[fi].anchor = g->fusions[fi].nodes[0];
    const GTensor y0 = g->tensors[parts[0].out];
    int64_t shape[NPU_MAX_RANK];
    memcpy(shape, y0.shape, sizeof shape);
    shape[y0.rank - 1] = parts[np - 1].start + parts[np - 1].n;
    /* named after its parts: "linear|linear_1|linear_2" */
    size_t len = 1;
    for (int i = 0; i < np; i++)
        len += strlen(g->tensors[parts[i].out].name) + 1;
    char *name = arena_alloc(&g->arena, len);
    if (!name) return ST_NOMEM;
    name[0] = 0;
    for (int i = 0; i < np; i++) {
        if (i) strcat(name, "|");
        strcat(name, g->tensors[parts[i].out].name);
    }
    int y = graph_add_tensor(g, name, y0.dtype, y0.rank, shape, TK_ACT);
    if (y < 0) return ST_NOMEM;
    Fusion *f = &g->fusions[fi];
    f->out = y;
    if (!f->enabled) return ST_OK;
    const Node *l0 = &g->nodes[parts[0].linear];
    bool bias = l0->nin > 2;
    int x = l0->in[0];
    int w = concat_weight(g, parts, np, 1, arena_printf(&g->arena, "%s.weight@concat", name), 0);
    int b = bias
                ? concat_weight(g, parts, np, 2, arena_printf(&g->arena, "%s.bias@concat", name), 0)
                : -1;
    if (w < 0 || (bias && b < 0)) return ST_NOMEM;
    f = &g->fusions[fi];
    f->kin[0] = x;
    f->kin[1] = w;
    f->kin[2] = b;
    f->nkin = bias ? 3 : 2;
    for (int i = 0; i < np; i++) {
        GTensor *o = &g->tensors[parts[i].out];
        o->alias_of = y;
        o->view_off = parts[i].start; /* one row: column = element */
    }
    return ST_OK;
}

void fuse_glu_linears(const Graph *g, const Fusion *f, int *gate, int *up)
{
    int silu = -1;
    *gate = *up = -1;
    for (int i = 0; i < f->nnodes; i++)
        if (g->nodes[f->nodes[i]].op == OP_SILU) silu = f->nodes[i];
    for (int i = 0; silu >= 0 && i < f->nnodes; i++) {
        const Node *n = &g->nodes[f->nodes[i]];
        if (n->op != OP_LINEAR) continue;
        if (n->out[0] == g->nodes[silu].in[0])
            *gate = f->nodes[i];
        else
            *up = f->nodes[i];
    }
}

Status fuse_glu_finish(Graph *g, int fi)
{
    if (!g->fusions[fi].enabled) return ST_OK;
    ConcatPart parts[2] = {{.linear = -1}, {.linear = -1}};
    fuse_glu_linears(g, &g->fusions[fi], &parts[0].linear, &parts[1].linear);
    if (parts[0].linear < 0 || parts[1].linear < 0) return ST_INTERNAL;
    const Node *l0 = &g->nodes[parts[0].linear];
    bool bias = l0->nin > 2;
    int x = l0->in[0];
    /* named after the two linears' outputs: "linear_4|linear_5.weight@glu" */
    const char *name = arena_printf(&g->arena, "%s|%s", g->tensors[l0->out[0]].name,
                                    g->tensors[g->nodes[parts[1].linear].out[0]].name);
    if (!name) return ST_NOMEM;
    int w =
        concat_weight(g, parts, 2, 1, arena_printf(&g->arena, "%s.weight@glu", name), GLU_BLOCK);
    int b = bias ? concat_weight(g, parts, 2, 2, arena_printf(&g->arena, "%s.bias@glu", name),
                                 GLU_BLOCK)
                 : -1;
    if (w < 0 || (bias && b < 0)) return ST_NOMEM;
    Fusion *f = &g->fusions[fi];
    f->kin[0] = x;
    f->kin[1] = w;
    f->kin[2] = b;
    f->nkin = bias ? 3 : 2;
    return ST_OK;
}
