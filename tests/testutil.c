#include "tests/testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <ftw.h>

#include "common/fileio.h"
#include "common/strbuf.h"
#include "compiler/ir_json.h"
#include "runtime/cpu/cpu_kernels.h"

/* The tensors PREFIX0, PREFIX1, ... of specs s[0..n) in the exporter's format, comma-separated. */
static void put_specs(StrBuf *b, const char *prefix, const TuSpec *s, int n)
{
    for (int i = 0; i < n; i++) {
        sb_printf(b, "%s{\"name\":\"%s%d\",\"dtype\":\"%s\",\"shape\":[", i ? "," : "", prefix, i,
                  s[i].dtype ? s[i].dtype : "float32");
        for (int d = 0; d < s[i].rank; d++)
            sb_printf(b, d ? ",%lld" : "%lld", (long long)s[i].shape[d]);
        sb_puts(b, "]}");
    }
}

int tu_tensor_json(char *b, size_t cap, const char *name, int rank, const int *shape)
{
    int k = snprintf(b, cap, "{\"name\":\"%s\",\"shape\":[", name);
    for (int i = 0; i < rank; i++)
        k += snprintf(b + k, (size_t)k < cap ? cap - (size_t)k : 0, i ? ",%d" : "%d", shape[i]);
    return k + snprintf(b + k, (size_t)k < cap ? cap - (size_t)k : 0, "]}");
}

char *tu_node_json(const char *aten, int nin, const TuSpec *in, int nout, const TuSpec *out,
                   const char *attrs_json, size_t *len)
{
    StrBuf b = {0};
    sb_puts(&b, "{\"model_name\":\"t\",\"graph_inputs\":[");
    put_specs(&b, "in", in, nin);
    sb_puts(&b, "],\"graph_outputs\":[");
    put_specs(&b, "out", out, nout);
    sb_printf(&b,
              "],\"weights\":[],\"weight_name_mapping\":{},"
              "\"nodes\":[{\"name\":\"n0\",\"op_type\":\"%s\",\"inputs\":[",
              aten);
    put_specs(&b, "in", in, nin);
    sb_puts(&b, "],\"outputs\":[");
    put_specs(&b, "out", out, nout);
    sb_printf(&b, "],\"attrs\":%s}]}", attrs_json ? attrs_json : "{}");
    *len = b.n;
    return sb_take(&b);
}

Graph *tu_node_graph(const char *aten, int nin, const TuSpec *in, int nout, const TuSpec *out,
                     const char *attrs_json)
{
    size_t k;
    char *b = tu_node_json(aten, nin, in, nout, out, attrs_json, &k);
    Graph *g = NULL;
    DiagList d = {0};
    if (!b || ir_read_buffer("<test>", b, k, &g, &d) != ST_OK) diag_print(&d, stderr);
    diag_free(&d);
    free(b);
    return g;
}

Status tu_run(const Graph *g, HTensor *in, HTensor *out, DiagList *d)
{
    const Node *n = &g->nodes[0];
    HTensor conv[64];
    const HTensor *ip[64];
    HTensor *op[64];
    for (int i = 0; i < n->nin; i++) {
        const GTensor *t = node_input(g, n, i);
        htensor_convert_new(&conv[i], &in[i], htensor_ref_dtype(t->dtype));
        ip[i] = &conv[i];
    }
    for (int i = 0; i < n->nout; i++) {
        const GTensor *t = node_output(g, n, i);
        htensor_alloc(&out[i], htensor_ref_dtype(t->dtype), t->rank, t->shape);
        op[i] = &out[i];
    }
    CpuCall c = {g, n, ip, n->nin, op, n->nout, d, "<test>"};
    Status st = cpu_kernel_table[n->op](&c);
    for (int i = 0; i < n->nin; i++)
        htensor_free(&conv[i]);
    if (st != ST_OK)
        for (int i = 0; i < n->nout; i++)
            htensor_free(&out[i]);
    return st;
}

void tu_alloc(HTensor *t, const char *dtype, int rank, const int64_t *shape)
{
    htensor_alloc(t, htensor_ref_dtype(dtype_parse(dtype ? dtype : "float32")), rank, shape);
}

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

void tu_rand(HTensor *t, uint64_t seed, double lo, double hi)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
    for (int64_t i = 0; i < t->numel; i++) {
        double u = (double)(next(&s) >> 11) / 9007199254740992.0;
        double v = lo + (hi - lo) * u;
        switch (t->dtype) {
        case DT_F32:
            ((float *)t->data)[i] = (float)v;
            break;
        case DT_I64:
            ((int64_t *)t->data)[i] = (int64_t)(lo + (double)(next(&s) % (uint64_t)(hi - lo + 1)));
            break;
        case DT_BOOL:
            ((uint8_t *)t->data)[i] = (uint8_t)(next(&s) & 1);
            break;
        default:
            break;
        }
    }
}

double tu_max_diff(const HTensor *a, const float *b, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = htensor_get_f(a, i) - b[i];
        if (d < 0) d = -d;
        if (d != d) return 1e30;
        if (d > m) m = d;
    }
    return m;
}

bool tu_close(const HTensor *y, const float *ref, int64_t n, const char *what)
{
    if (y->numel != n) {
        fprintf(stderr, "%s: %lld elements, expected %lld\n", what, (long long)y->numel,
                (long long)n);
        return false;
    }
    double big = 0;
    for (int64_t i = 0; i < n; i++)
        big = fabs(ref[i]) > big ? fabs(ref[i]) : big;
    double diff = tu_max_diff(y, ref, n), tol = 2e-6 * (1.0 + big);
    if (diff > tol) fprintf(stderr, "%s: max diff %g > %g\n", what, diff, tol);
    return diff <= tol;
}

bool tu_long(void)
{
    const char *v = getenv("NPU_TEST_LONG");
    return v && *v && strcmp(v, "0") != 0;
}

bool tu_here(bool lng)
{
    return lng == tu_long();
}

int tu_run_tests(const char *names, const TuTest *fns, size_t n, TuFixture setup,
                 TuFixture teardown)
{
    struct CMUnitTest *t = calloc(n, sizeof *t);
    char *buf = strdup(names);
    if (!t || !buf) {
        fprintf(stderr, "tu_run_tests: out of memory\n");
        return 1;
    }
    char *p = buf;
    for (size_t i = 0; i < n; i++) { /* "test_a, test_b": the source's names, one space apart */
        char *comma = strchr(p, ',');
        if (comma) *comma = 0;
        t[i].name = p + strspn(p, " ");
        t[i].test_func = fns[i];
        p = comma ? comma + 1 : p + strlen(p);
    }
    const char *only = getenv("NPU_TEST_FILTER");
    if (only && *only) cmocka_set_test_filter(only);
    int rc = _cmocka_run_group_tests("tests", t, n, setup, teardown);
    free(buf);
    free(t);
    return rc;
}

static char tmp_dir[64];

int tu_tmp_setup(void **state)
{
    (void)state;
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/npu-test-XXXXXX");
    return mkdtemp(tmp_dir) ? 0 : -1;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int tu_tmp_teardown(void **state)
{
    (void)state;
    return nftw(tmp_dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

const char *tu_tmp_dir(void)
{
    return tmp_dir;
}

const char *tu_tmp_path(const char *name)
{
    static char buf[4][256];
    static int next;
    char *p = buf[next++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", tmp_dir, name);
    return p;
}

char *tu_read_file(const char *path)
{
    char *s = NULL;
    DiagList d = {0};
    if (file_read_all(path, &s, NULL, &d) != ST_OK) {
        diag_print(&d, stderr);
        s = NULL;
    }
    diag_free(&d);
    return s;
}

void tu_load_model(Model *m, const char *path, const Options *o)
{
    memset(m, 0, sizeof *m);
    DiagList d = {0};
    Status st = model_load_graph(m, path, &d);
    if (st == ST_OK) st = model_bind(m, o, &d);
    if (st != ST_OK) diag_print(&d, stderr);
    diag_free(&d);
    assert_int_equal(st, ST_OK);
}

Status tu_compile(const char *path, const char *break_id, Pipeline *p)
{
    CompileOptions co;
    compile_defaults(&co);
    co.break_id = break_id;
    DiagList d = {0};
    memset(p, 0, sizeof *p);
    Status st = pipeline_run(path, &co, p, &d);
    if (st != ST_OK) diag_print(&d, stderr);
    diag_free(&d);
    return st;
}

/* The graph of json (path NULL) or of the IR file at path, failing the test on an error. */
static Graph *read_or_fail(const char *json, const char *path)
{
    Graph *g = NULL;
    DiagList d = {0};
    Status st =
        path ? ir_read_file(path, &g, &d) : ir_read_buffer("<test>", json, strlen(json), &g, &d);
    if (st != ST_OK) diag_print(&d, stderr);
    diag_free(&d);
    assert_int_equal(st, ST_OK);
    return g;
}

Graph *tu_read_json(const char *json)
{
    return read_or_fail(json, NULL);
}

Graph *tu_read_ir(const char *path)
{
    return read_or_fail(NULL, path);
}

/* The pipeline of g (NULL: the IR file at path) with options o, failing the test on an error. */
static Pipeline compile_or_fail(Graph *g, const char *path, const CompileOptions *o)
{
    Pipeline p;
    DiagList d = {0};
    Status st = g ? pipeline_run_graph(g, o, &p, &d) : pipeline_run(path, o, &p, &d);
    if (st != ST_OK) diag_print(&d, stderr);
    diag_free(&d);
    assert_int_equal(st, ST_OK);
    return p;
}

Pipeline tu_compile_graph(Graph *g, const CompileOptions *o)
{
    return compile_or_fail(g, NULL, o);
}

Pipeline tu_compile_json(const char *json, const CompileOptions *o)
{
    return compile_or_fail(tu_read_json(json), NULL, o);
}

Pipeline tu_compile_file(const char *path, const CompileOptions *o)
{
    return compile_or_fail(NULL, path, o);
}

void tu_cat(char *dst, size_t cap, const char *fmt, ...)
{
    size_t n = strlen(dst);
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(dst + n, cap - n, fmt, ap);
    va_end(ap);
    assert_true(k >= 0 && (size_t)k < cap - n);
}

void tu_graph_node(TuGraph *g, const char *name, const char *op, const char *ins, const char *outs,
                   const char *attrs)
{
    tu_cat(g->nodes, sizeof g->nodes,
           "%s{\"name\":\"%s\",\"op_type\":\"%s\",\"inputs\":[%s],\"outputs\":[%s],\"attrs\":{%s}}",
           g->nodes[0] ? "," : "", name, op, ins, outs, attrs);
}

void tu_graph_weight(TuGraph *g, const char *name, const char *shape)
{
    tu_cat(g->w, sizeof g->w, "%s{\"name\":\"%s\",\"shape\":%s}", g->w[0] ? "," : "", name, shape);
    tu_cat(g->map, sizeof g->map, "%s\"p_%s\":\"%s\"", g->map[0] ? "," : "", name, name);
}

void tu_graph_json(const TuGraph *g, char *json, size_t cap)
{
    int k = snprintf(json, cap,
                     "{\"model_name\":\"t\",\"graph_inputs\":[%s],\"graph_outputs\":[%s],"
                     "\"weights\":[%s],\"weight_name_mapping\":{%s},\"nodes\":[%s]}",
                     g->in, g->out, g->w, g->map, g->nodes);
    assert_true(k >= 0 && (size_t)k < cap);
}
