/* Helpers of the pass tests (tests/pass_check.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/ir_json.h"
#include "tests/pass_check.h"

int tp_count_pattern(const Graph *g, const char *prefix)
{
    int n = 0;
    for (int i = 0; i < g->nfusions; i++)
        n += strncmp(g->fusions[i].pattern, prefix, strlen(prefix)) == 0;
    return n;
}

Pipeline tp_compile(const char *path, const CompileOptions *o)
{
    Pipeline p;
    DiagList d = {0};
    Status st = pipeline_run(path, o, &p, &d);
    if (st != ST_OK) diag_print(&d, stderr);
    assert_int_equal(st, ST_OK);
    diag_free(&d);
    return p;
}

/* A one-block graph in the exporter's format, for pattern unit tests. */
Graph *tp_read_json(const char *json)
{
    Graph *g = NULL;
    DiagList d = {0};
    Status st = ir_read_buffer("t.json", json, strlen(json), &g, &d);
    if (st != ST_OK) diag_print(&d, stderr);
    diag_free(&d);
    assert_non_null(g);
    return g;
}

Pipeline tp_compile_json_opts(const char *json, const CompileOptions *o)
{
    Pipeline p;
    DiagList d = {0};
    Status st = pipeline_run_graph(tp_read_json(json), o, &p, &d);
    if (st != ST_OK) diag_print(&d, stderr);
    assert_int_equal(st, ST_OK);
    diag_free(&d);
    return p;
}

Pipeline tp_compile_json(const char *json)
{
    return tp_compile_json_opts(json, NULL);
}

/* The partition as the partition pass leaves it: fuse-elementwise off (its groups take CPU
 * nodes they can compute onto the NPU; test_vk_gen and tests/cli/codegen.sh cover that). */
Pipeline tp_compile_json_no_gen(const char *json)
{
    CompileOptions o;
    compile_defaults(&o);
    o.no_fuse[o.n_no_fuse++] = "fuse-elementwise";
    return tp_compile_json_opts(json, &o);
}

/* The kernels of plan p with stem `stem`. */
int tp_count_shader(const Plan *p, const char *stem)
{
    int n = 0;
    for (int k = 0; k < p->nkernels; k++)
        n += strcmp(p->kernels[k].shader, stem) == 0;
    return n;
}

const char *tp_parts(const Plan *p, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < p->nparts && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%s", i ? " " : "",
                              p->parts[i].target == KT_CPU ? "cpu" : "npu");
    return buf;
}

Placement tp_place(const Graph *g, const char *name)
{
    int i = graph_find_node(g, name);
    assert_true(i >= 0);
    return g->nodes[i].place;
}
