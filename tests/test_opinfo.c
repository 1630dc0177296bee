/* PyTorch's own OpInfo samples (tests/models/opinfo: one ATen call a graph, inputs and PyTorch's
 * outputs in cases.safetensors as "<case>.<tensor>") on the CPU reference: every case either
 * matches PyTorch (floats within 1e-4 relative L2, integers and bools exactly) or is refused
 * with ST_BAD_INPUT and a diagnostic at import or at run, never computed differently. The
 * refused cases are listed in tests/models/opinfo/refused.txt, so a case that starts to be
 * refused, or to run while listed, fails the test as a mismatch does. In-process, the cases
 * file opened once: 849 graphs in seconds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "app/model.h"
#include "app/options.h"
#include "app/runner.h"
#include "runtime/compare.h"
#include "runtime/cpu/cpu_ref.h"
#include "tests/testutil.h"

#define DIR "tests/models/opinfo/"

typedef enum Verdict { V_MATCH, V_REFUSED, V_MISMATCH } Verdict;

/* Whether the graph's outputs match the references: floats by rel_l2 (1e-4; with dtype_tol a
 * reference stored in fp16 or bf16 gets that dtype's tolerance, as the NPU keeps float tensors
 * in its plan's compute dtype: a cast to bf16 in an fp32 plan stores fp32), the rest exactly. */
static bool outputs_match(const Graph *g, const HTensor *const *outs, const Binding *b,
                          bool dtype_tol, char *why, size_t n)
{
    if (b->nref != g->noutputs) {
        snprintf(why, n, "%d of %d outputs have a reference", b->nref, g->noutputs);
        return false;
    }
    for (int i = 0; i < g->noutputs; i++) {
        const HTensor *got = outs[i];
        DType rd = g->tensors[g->outputs[i]].dtype; /* as the IR declares it */
        Tolerance tol = {.rel_l2 = !dtype_tol      ? 1e-4
                                   : rd == DT_F16  ? 3e-3
                                   : rd == DT_BF16 ? 2e-2
                                                   : 1e-4,
                         .max_abs = 0};
        CmpStats s;
        if (!cmp_output(got, &b->ref[i], NULL, &tol, &s)) {
            snprintf(why, n, "output %d: element counts differ", i);
            return false;
        }
        bool exact = !dtype_is_float(got->dtype);
        if (exact ? s.max_abs != 0 || s.nonfinite : !cmp_ok(&s, &tol)) {
            snprintf(why, n, "output %s: rel_l2 %g max_abs %g nonfinite %lld",
                     g->tensors[g->outputs[i]].name, s.rel_l2, s.max_abs, (long long)s.nonfinite);
            return false;
        }
    }
    return true;
}

/* One case: its IR, its inputs and references bound from the open cases file `io`. */
static Verdict run_case(const SafeTensors *io, const char *name, bool vulkan, char *why, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, DIR "%s.json", name);
    Model m = {0};
    DiagList d = {0};
    Verdict v = V_MISMATCH;
    Status st = model_load_graph(&m, path, &d);
    if (st == ST_OK) st = bind_init(m.g, &m.b);
    if (st == ST_OK) st = bind_constants(m.g, &m.b);
    if (st == ST_OK) st = bind_inputs_st(m.g, io, DIR "cases.safetensors", name, &m.b, &d);
    if (st == ST_OK) st = bind_reference_st(m.g, io, DIR "cases.safetensors", name, &m.b, &d);
    if (vulkan && st == ST_OK) { /* the plan compiled for lavapipe in fp32, run there */
        Options o;
        opt_defaults(&o);
        o.model = path;
        o.dtype = "fp32";
        o.backend = "vulkan";
        o.kernel_cache = "none";
        Runner rn;
        HTensor outs[16] = {{0}};
        const HTensor *po[16];
        int no = m.g->noutputs;
        st = no <= 16 ? runner_open(&rn, &o, &m, false, &d) : ST_BAD_INPUT;
        if (st == ST_OK) {
            st = exec_run(&rn.x, false, &d);
            for (int i = 0; st == ST_OK && i < no; i++) {
                st = exec_read(&rn.x, rn.pipe.plan->outputs[i], &outs[i], &d);
                po[i] = &outs[i];
            }
            runner_close(&rn);
        }
        if (st == ST_OK) v = outputs_match(m.g, po, &m.b, true, why, n) ? V_MATCH : V_MISMATCH;
        for (int i = 0; i < no && i < 16; i++)
            htensor_free(&outs[i]);
        if (st != ST_OK) snprintf(why, n, "%s", d.count ? d.items[0].msg : "failed");
        model_free(&m);
        diag_free(&d);
        return v;
    }
    RefRun r = {0};
    if (st == ST_OK) {
        RefOptions ro = {.keep_all = false};
        st = ref_run(m.g, m.b.vals, &ro, &r, &d);
        const HTensor *outs[16];
        for (int i = 0; i < m.g->noutputs && i < 16; i++)
            outs[i] = &r.vals[m.g->outputs[i]];
        if (st == ST_OK && m.g->noutputs > 16) st = ST_BAD_INPUT;
        if (st == ST_OK) v = outputs_match(m.g, outs, &m.b, false, why, n) ? V_MATCH : V_MISMATCH;
        ref_free(&r);
    }
    if (st == ST_BAD_INPUT && d.count > 0) {
        v = V_REFUSED;
        snprintf(why, n, "%s", d.items[0].msg);
    } else if (st != ST_OK) {
        snprintf(why, n, "status %d", (int)st);
    }
    model_free(&m); /* also after a failed load: the path and the text */
    diag_free(&d);
    return v;
}

/* refused.txt: one case name a line, '#' comments. */
static bool listed(const char *list, const char *name)
{
    size_t k = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        const char *sp = memchr(p, ' ', len);
        size_t w = sp ? (size_t)(sp - p) : len;
        if (w == k && strncmp(p, name, k) == 0) return true;
        p = e ? e + 1 : NULL;
    }
    return false;
}

/* The suite's files, opened once per test: cases.json, refused.txt, cases.safetensors. */
typedef struct Suite {
    struct json_object *root, *cases;
    char *refused;
    SafeTensors io;
    DiagList d;
    int n;
} Suite;

static void suite_open(Suite *s)
{
    memset(s, 0, sizeof *s);
    s->root = json_object_from_file(DIR "cases.json");
    assert_non_null(s->root);
    s->refused = tu_read_file(DIR "refused.txt");
    assert_non_null(s->refused);
    assert_int_equal(st_open(&s->io, DIR "cases.safetensors", &s->d), ST_OK);
    s->cases = json_object_object_get(s->root, "cases");
    s->n = (int)json_object_array_length(s->cases);
}

/* Case i's field `key` ("name", "op"). */
static const char *suite_get(const Suite *s, int i, const char *key)
{
    struct json_object *c = json_object_array_get_idx(s->cases, (size_t)i);
    return json_object_get_string(json_object_object_get(c, key));
}

static void suite_close(Suite *s)
{
    st_close(&s->io);
    diag_free(&s->d);
    free(s->refused);
    json_object_put(s->root);
}

static void test_opinfo_cases_match_or_are_refused(void **state)
{
    (void)state;
    Suite s;
    suite_open(&s);
    int n = s.n, bad = 0, match = 0, ref = 0;
    FILE *dump = getenv("OPINFO_LIST") ? fopen(getenv("OPINFO_LIST"), "w") : NULL;
    for (int i = 0; i < n; i++) {
        const char *name = suite_get(&s, i, "name");
        char why[512] = "";
        Verdict v = run_case(&s.io, name, false, why, sizeof why);
        bool want_refused = listed(s.refused, name);
        if (v == V_MATCH) match++;
        if (v == V_REFUSED) ref++;
        if (dump && v == V_REFUSED) fprintf(dump, "%s # %s\n", name, why);
        if (v == V_MISMATCH || (v == V_REFUSED) != want_refused) {
            bad++;
            print_message("%s: %s%s\n", name,
                          v == V_MISMATCH ? "MISMATCH "
                          : want_refused  ? "runs but refused.txt lists it "
                                          : "refused, not in refused.txt: ",
                          why);
        }
    }
    print_message("%d cases: %d match PyTorch, %d refused\n", n, match, ref);
    if (dump) fclose(dump);
    suite_close(&s);
    assert_int_equal(bad, 0);
}

/* The same samples on Vulkan (lavapipe, fp32 plans, kernels and partitions as `run` makes them):
 * the first case of each op that the CPU reference matches must match PyTorch there too, within
 * 1e-4, or the dtype's tolerance for an fp16/bf16 result (one case an op keeps `make test` quick:
 * every case compiles its own kernels). */
static void test_opinfo_vulkan_one_case_per_op(void **state)
{
    (void)state;
    Suite s;
    suite_open(&s);
    int n = s.n, bad = 0, ran = 0;
    const char *last_op = "";
    for (int i = 0; i < n; i++) {
        const char *name = suite_get(&s, i, "name"), *op = suite_get(&s, i, "op");
        if (strcmp(op, last_op) == 0 || listed(s.refused, name)) continue;
        last_op = op;
        char why[512] = "";
        Verdict v = run_case(&s.io, name, true, why, sizeof why);
        ran++;
        if (v != V_MATCH) {
            bad++;
            print_message("%s on Vulkan: %s %s\n", name,
                          v == V_MISMATCH ? "MISMATCH" : "refused:", why);
        }
    }
    print_message("%d ops' first cases on Vulkan, %d disagree\n", ran, bad);
    suite_close(&s);
    assert_int_equal(bad, 0);
}

TU_MAIN(test_opinfo_cases_match_or_are_refused, test_opinfo_vulkan_one_case_per_op)
