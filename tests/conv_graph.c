/* Conv-family graphs for the Vulkan conformance tests (conv_graph.h). */
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/plan.h"
#include "tests/conv_graph.h"
#include "tests/vk_check.h"

const char *const gb_dtypes[3] = {"fp32", "fp16", "bf16"};
const double gb_tols[3] = {VC_TOL_F32, VC_TOL_F16, VC_TOL_BF16};

const GbAct gb_acts[] = {
    {"aten.relu.default", NULL},
    {"aten.relu6.default", NULL},
    {"aten.hardtanh.default", "\"min_val\":0.0,\"max_val\":6.0"},
    {"aten.hardtanh.default", "\"min_val\":-1.5,\"max_val\":2.25"},
    {"aten.hardswish.default", NULL},
    {"aten.hardsigmoid.default", NULL},
    {"aten.silu.default", NULL},
    {"aten.sigmoid.default", NULL},
    {"aten.gelu.default", NULL},
    {"aten.gelu.default", "\"approximate\":\"tanh\""},
    {"aten.tanh.default", NULL},
};
const int gb_nacts = (int)(sizeof gb_acts / sizeof gb_acts[0]);

/* Tensor text {"name":..,"shape":[..]} in one of a few rotating buffers. */
static const char *tt(const char *name, const int64_t *s)
{
    static char bufs[8][160];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, 160, "{\"name\":\"%s\",\"shape\":[%lld,%lld,%lld,%lld]}", name, (long long)s[0],
             (long long)s[1], (long long)s[2], (long long)s[3]);
    return b;
}

void gb_input(Gb *g, const char *name, const int64_t *s)
{
    tu_cat(g->in, sizeof g->in, "%s%s", g->in[0] ? "," : "", tt(name, s));
}

void gb_output(Gb *g, const char *name, const int64_t *s)
{
    tu_cat(g->out, sizeof g->out, "%s%s", g->out[0] ? "," : "", tt(name, s));
}

/* A node with up to three inputs (NULL names end the list) and one output. */
void gb_node(Gb *g, const char *name, const char *op, const char *const *ins,
             const int64_t *const *ishapes, const char *out, const int64_t *oshape,
             const char *attrs)
{
    tu_cat(g->nodes, sizeof g->nodes, "%s{\"name\":\"%s\",\"op_type\":\"%s\",\"inputs\":[",
           g->nodes[0] ? "," : "", name, op);
    for (int i = 0; i < 3 && ins[i]; i++)
        tu_cat(g->nodes, sizeof g->nodes, "%s%s", i ? "," : "", tt(ins[i], ishapes[i]));
    tu_cat(g->nodes, sizeof g->nodes, "],\"outputs\":[%s],\"attrs\":{%s}}", tt(out, oshape),
           attrs ? attrs : "");
}

/* conv2d node `name`: weights "NAME_w" [cout, cin/groups, kh, kw] (and "NAME_b" [cout] when
 * bias) declared and mapped as the exporter does (parameter p_NAME_w -> state_dict NAME_w). */
void gb_conv(Gb *g, const char *name, const char *x, const int64_t *xs, int64_t cout,
             int64_t groups, int64_t kh, int64_t kw, bool bias, const char *out, const int64_t *os,
             const char *attrs)
{
    char wn[64], pw[64], bn[64], pb[64];
    snprintf(wn, sizeof wn, "%s_w", name);
    snprintf(pw, sizeof pw, "p_%s_w", name);
    snprintf(bn, sizeof bn, "%s_b", name);
    snprintf(pb, sizeof pb, "p_%s_b", name);
    int64_t ws[4] = {cout, xs[1] / groups, kh, kw};
    tu_cat(g->w, sizeof g->w, "%s%s", g->w[0] ? "," : "", tt(wn, ws));
    tu_cat(g->map, sizeof g->map, "%s\"%s\":\"%s\"", g->map[0] ? "," : "", pw, wn);
    if (bias) {
        tu_cat(g->w, sizeof g->w, ",{\"name\":\"%s\",\"shape\":[%lld]}", bn, (long long)cout);
        tu_cat(g->map, sizeof g->map, ",\"%s\":\"%s\"", pb, bn);
    }
    char a[256];
    snprintf(a, sizeof a, "%s%s\"groups\":%lld", attrs ? attrs : "", attrs && *attrs ? "," : "",
             (long long)groups);
    /* the bias shape is printed by hand: tt() is 4-D */
    tu_cat(g->nodes, sizeof g->nodes,
           "%s{\"name\":\"%s\",\"op_type\":\"aten.conv2d.default\",\"inputs\":[%s,%s",
           g->nodes[0] ? "," : "", name, tt(x, xs), tt(pw, ws));
    if (bias)
        tu_cat(g->nodes, sizeof g->nodes, ",{\"name\":\"%s\",\"shape\":[%lld]}", pb,
               (long long)cout);
    tu_cat(g->nodes, sizeof g->nodes, "],\"outputs\":[%s],\"attrs\":{%s}}", tt(out, os), a);
}

const char *gb_json(const Gb *g0, const char *res, const int64_t *rs)
{
    static Gb g;
    static char json[81920];
    g = *g0;
    gb_output(&g, res, rs);
    int n = snprintf(json, sizeof json,
                     "{\"model_name\":\"t\",\"graph_inputs\":[%s],\"graph_outputs\":[%s],"
                     "\"weights\":[%s],\"weight_name_mapping\":{%s},\"nodes\":[%s]}",
                     g.in, g.out, g.w, g.map, g.nodes);
    assert_true(n > 0 && (size_t)n < sizeof json);
    return json;
}

double gb_check(const Gb *g, const char *res, const int64_t *rs, const char *dtype, double tol,
                const char *expect)
{
    return vc_check_json(gb_json(g, res, rs), dtype, tol, expect);
}

void gb_conv_geom(const ConvCase *cc, char *attrs, size_t cap, int64_t ys[4])
{
    int64_t oh, ow, ph = cc->ph, pw = cc->pw;
    if (cc->pad_str && strcmp(cc->pad_str, "same") == 0) {
        oh = cc->h, ow = cc->w;
    } else {
        if (cc->pad_str) ph = pw = 0;
        oh = (cc->h + 2 * ph - cc->dh * (cc->kh - 1) - 1) / cc->sh + 1;
        ow = (cc->w + 2 * pw - cc->dw * (cc->kw - 1) - 1) / cc->sw + 1;
    }
    if (cc->pad_str)
        snprintf(attrs, cap, "\"stride\":[%lld,%lld],\"padding\":\"%s\",\"dilation\":[%lld,%lld]",
                 (long long)cc->sh, (long long)cc->sw, cc->pad_str, (long long)cc->dh,
                 (long long)cc->dw);
    else
        snprintf(attrs, cap,
                 "\"stride\":[%lld,%lld],\"padding\":[%lld,%lld],\"dilation\":[%lld,%lld]",
                 (long long)cc->sh, (long long)cc->sw, (long long)ph, (long long)pw,
                 (long long)cc->dh, (long long)cc->dw);
    ys[0] = cc->n, ys[1] = cc->cout, ys[2] = oh, ys[3] = ow;
}

void gb_conv_case(const ConvCase *cc, int t0, int t1)
{
    if (!tu_here(cc->lng)) return;
    char attrs[200];
    int64_t xs[4] = {cc->n, cc->c, cc->h, cc->w}, ys[4];
    gb_conv_geom(cc, attrs, sizeof attrs, ys);
    Gb g = {0};
    gb_input(&g, "x", xs);
    gb_conv(&g, "conv", "x", xs, cc->cout, cc->groups, cc->kh, cc->kw, cc->bias, "y", ys, attrs);
    for (int t = t0; t < t1; t++)
        gb_check(&g, "y", ys, gb_dtypes[t], gb_tols[t], cc->expect);
}

const PlanKernel *gb_first_conv(const Plan *p)
{
    for (int i = 0; i < p->nkernels; i++)
        if (strncmp(p->kernels[i].shader, "conv2d", 6) == 0) return &p->kernels[i];
    fail_msg("the plan has no conv2d kernel");
    return NULL;
}
