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
#include "tests/testutil.h"

int tp_count_pattern(const Graph *g, const char *prefix)
{
    int n = 0;
    for (int i = 0; i < g->nfusions; i++)
        n += strncmp(g->fusions[i].pattern, prefix, strlen(prefix)) == 0;
    return n;
}

Pipeline tp_compile_json(const char *json)
{
    return tu_compile_json(json, NULL);
}

/* The partition as the partition pass leaves it: fuse-elementwise off (its groups take CPU
 * nodes they can compute onto the NPU; test_vk_gen and tests/cli/codegen.sh cover that). */
Pipeline tp_compile_json_no_gen(const char *json)
{
    CompileOptions o;
    compile_defaults(&o);
    o.no_fuse[o.n_no_fuse++] = "fuse-elementwise";
    return tu_compile_json(json, &o);
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
