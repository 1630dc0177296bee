/* Test helpers: one-node graphs built through the real IR reader, random tensors, running a
 * node's CPU kernel. Linked into every test binary. */
#ifndef NPU_TESTUTIL_H
#define NPU_TESTUTIL_H

#include "app/model.h"
#include "app/options.h"
#include "compiler/graph.h"
#include "compiler/pass.h"
#include "runtime/htensor.h"

typedef struct TuSpec {
    const char *dtype; /* "float32", "int64", "bool"; NULL = float32 */
    int rank;
    int64_t shape[NPU_MAX_RANK];
} TuSpec;

/* A graph with one node `aten` whose inputs are graph inputs "in0".."in{n-1}" and outputs
 * "out0".. (graph outputs), attrs from a JSON object text (NULL = {}). NULL on error (the
 * diagnostics are printed to stderr). */
Graph *tu_node_graph(const char *aten, int nin, const TuSpec *in, int nout, const TuSpec *out,
                     const char *attrs_json);
/* The JSON text tu_node_graph reads (malloc'd, *len bytes): a one-node graph in the exporter's
 * format. */
char *tu_node_json(const char *aten, int nin, const TuSpec *in, int nout, const TuSpec *out,
                   const char *attrs_json, size_t *len);
/* Writes {"name":NAME,"shape":[s0,s1,...]} (an IR tensor reference) at b, cap bytes at most;
 * returns what snprintf returns for the whole text (graph JSON built by offsets). */
int tu_tensor_json(char *b, size_t cap, const char *name, int rank, const int *shape);
/* Appends printf-formatted text to the NUL-terminated dst of cap bytes; fails the test when it
 * does not fit (graph JSON built piece by piece). */
void tu_cat(char *dst, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A graph in the exporter's JSON built piece by piece: the texts of its inputs, outputs, weights
 * (weight NAME read as the parameter p_NAME) and nodes, each a comma-separated list. */
typedef struct TuGraph {
    char in[1024], out[1024], w[4096], map[2048], nodes[24576];
} TuGraph;
void tu_graph_node(TuGraph *g, const char *name, const char *op, const char *ins, const char *outs,
                   const char *attrs);
/* Adds weight `name` of shape `shape` (JSON text, "[8,3,3,3]"), read as parameter p_<name>. */
void tu_graph_weight(TuGraph *g, const char *name, const char *shape);
/* The whole graph's JSON (model "t") into json, cap bytes at most. */
void tu_graph_json(const TuGraph *g, char *json, size_t cap);
/* Runs node 0's CPU kernel. `in` are the inputs (any dtype; converted to the reference dtype),
 * `out` receives newly allocated outputs (caller frees with htensor_free). */
Status tu_run(const Graph *g, HTensor *in, HTensor *out, DiagList *d);
/* Allocates a tensor of the reference dtype of `dtype` ("float32", "int64", "bool"). */
void tu_alloc(HTensor *t, const char *dtype, int rank, const int64_t *shape);
/* Fills with deterministic uniform values in [lo, hi] (integers for int/bool tensors). */
void tu_rand(HTensor *t, uint64_t seed, double lo, double hi);
/* Largest |a[i] - b[i]| over float tensors of equal numel. */
double tu_max_diff(const HTensor *a, const float *b, int64_t n);
/* Is y (n elements) within 2e-6 * (1 + max |ref|) of ref everywhere? When not, says so on stderr
 * with `what`. */
bool tu_close(const HTensor *y, const float *ref, int64_t n, const char *what);
/* The whole file, NUL-terminated (malloc'd), or NULL with the reason on stderr. */
char *tu_read_file(const char *path);
/* True under `make test-long` (NPU_TEST_LONG=1): a binary then runs its large-size cases, which
 * the quick suite leaves out. */
bool tu_long(void);
/* Whether a case of the long set (lng) or of the quick set runs in this suite. */
bool tu_here(bool lng);
/* A test binary's main(): runs the test functions named (void f(void **state)), each a cmocka
 * test of its name, as one group; with $NPU_TEST_FILTER set (e.g. "test_gemm_*"), only those it
 * matches. TU_TESTS is that run as an expression, for a main that sets something up first or picks
 * the quick or the long set (`return tu_long() ? TU_TESTS(a) : TU_TESTS(a, b);`); TU_GROUP the
 * same with group setup and teardown functions (int f(void **state)). */
#define TU_MAIN(...)                                                                               \
    int main(void)                                                                                 \
    {                                                                                              \
        return TU_TESTS(__VA_ARGS__);                                                              \
    }
#define TU_TESTS(...) TU_GROUP(NULL, NULL, __VA_ARGS__)
#define TU_GROUP(setup, teardown, ...)                                                             \
    tu_run_tests(#__VA_ARGS__, (const TuTest[]){__VA_ARGS__},                                      \
                 sizeof((const TuTest[]){__VA_ARGS__}) / sizeof(TuTest), setup, teardown)
typedef void (*TuTest)(void **state);
typedef int (*TuFixture)(void **state);
/* What TU_GROUP expands to: fns[0..n) named by the comma-separated `names`. */
int tu_run_tests(const char *names, const TuTest *fns, size_t n, TuFixture setup,
                 TuFixture teardown);

/* Group fixtures of a scratch folder, tu_tmp_dir(): made before the first test, removed with all
 * it holds after the last (TU_GROUP(tu_tmp_setup, tu_tmp_teardown, ...)). */
int tu_tmp_setup(void **state);
int tu_tmp_teardown(void **state);
const char *tu_tmp_dir(void);
/* tu_tmp_dir()/name, in one of four static buffers (a call may pass a few). */
const char *tu_tmp_path(const char *name);

/* Loads the model at path into *m and binds its weights and inputs with options o, failing the test
 * with the diagnostics on an error; model_free(m) when done. */
void tu_load_model(Model *m, const char *path, const Options *o);
/* Compiles the IR file `path` with the default options (and --break ids, NULL none) into *p;
 * the diagnostics go to stderr when it fails. */
Status tu_compile(const char *path, const char *break_id, Pipeline *p);
/* The graph of `json` (the exporter's format) or of the IR file at path; the pipeline of a graph
 * (which it takes), of json, or of the IR file at path as the CLI compiles it (the plan then
 * refers to the file's text, which the pipeline holds), with options o (NULL: the defaults).
 * Each fails the test with the diagnostics when it does not import or compile; pipeline_free(&p)
 * when done. */
Graph *tu_read_json(const char *json);
Graph *tu_read_ir(const char *path);
Pipeline tu_compile_graph(Graph *g, const CompileOptions *o);
Pipeline tu_compile_json(const char *json, const CompileOptions *o);
Pipeline tu_compile_file(const char *path, const CompileOptions *o);

#endif
