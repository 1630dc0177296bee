/* `npu-explore ops --coverage MODEL.json...`: per model, which ops run on the NPU, which only on
 * the CPU reference (and why), which need no kernel of their own (identities, folded batch
 * norms) and which are not supported at all, each with its node names. A model that compiles
 * is judged by the real pipeline (the placement the partition and fuse-elementwise passes
 * give each node); one that does not import is judged by op name alone, with the errors. */
#include <json.h>
#include <stdio.h>
#include <string.h>

#include "app/commands.h"
#include "compiler/ir_json.h"
#include "compiler/pass.h"

enum { C_NPU, C_CPU, C_GONE, C_NONE, C_N };
static const char *cls_name[C_N] = {"npu", "cpu", "no kernel", "unsupported"};

typedef struct Row {
    char op[96];
    int cls;
    char why[160];
    int count;
    char names[512];
} Row;

typedef struct Table {
    Row rows[256];
    int n, per[C_N];
} Table;

/* Adds node `name` of op `op` in class cls (why: the reason, may be NULL). */
static void add(Table *t, const char *op, int cls, const char *why, const char *name)
{
    Row *r = NULL;
    for (int i = 0; i < t->n && !r; i++)
        if (t->rows[i].cls == cls && !strcmp(t->rows[i].op, op) &&
            !strcmp(t->rows[i].why, why ? why : ""))
            r = &t->rows[i];
    if (!r) {
        if (t->n == (int)(sizeof t->rows / sizeof t->rows[0])) return;
        r = &t->rows[t->n++];
        memset(r, 0, sizeof *r);
        snprintf(r->op, sizeof r->op, "%s", op);
        snprintf(r->why, sizeof r->why, "%s", why ? why : "");
        r->cls = cls;
    }
    size_t len = strlen(r->names);
    if (len + strlen(name) + 8 < sizeof r->names)
        snprintf(r->names + len, sizeof r->names - len, "%s%s", r->count ? ", " : "", name);
    else if (!strstr(r->names, ", ..."))
        snprintf(r->names + len, sizeof r->names - len, ", ...");
    r->count++;
    t->per[cls]++;
}

/* Classifies by the compiled pipeline (the nodes the compiler adds are left out). */
static void from_pipeline(Table *t, const Graph *g)
{
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = &g->nodes[i];
        const char *op = n->aten ? n->aten : op_short_name(n->op);
        if (n->own) continue;
        if (n->dead)
            add(t, op, C_GONE, "removed or folded by the compiler", n->name);
        else if (n->place == PLACE_NPU || n->adopted)
            add(t, op, C_NPU, NULL, n->name);
        else
            add(t, op, C_CPU, n->why_cpu, n->name);
    }
}

/* Classifies by op name alone (the model does not import). */
static void from_names(Table *t, const char *path)
{
    struct json_object *root = json_object_from_file(path), *nodes = NULL;
    if (!root || !json_object_object_get_ex(root, "nodes", &nodes) ||
        !json_object_is_type(nodes, json_type_array)) {
        if (root) json_object_put(root);
        return;
    }
    for (size_t i = 0; i < json_object_array_length(nodes); i++) {
        struct json_object *jn = json_object_array_get_idx(nodes, i), *v;
        const char *op =
            json_object_object_get_ex(jn, "op_type", &v) ? json_object_get_string(v) : "?";
        const char *name =
            json_object_object_get_ex(jn, "name", &v) ? json_object_get_string(v) : "?";
        const char *refusal = ir_refused(op);
        OpId id = op_lookup(op);
        if (refusal)
            add(t, op, C_NONE, refusal, name);
        else if (id == OP_INVALID)
            add(t, op, C_NONE, "unknown op", name);
        else
            add(t, op, op_has(id, OPF_NPU) ? C_NPU : C_CPU,
                op_has(id, OPF_NPU) ? "by op name: shapes not checked" : "no NPU kernel", name);
    }
    json_object_put(root);
}

static void print_model(const char *path, const Table *t, const DiagList *d, bool compiled)
{
    printf("%s: %d nodes: %d npu, %d cpu, %d no kernel, %d unsupported%s\n", path,
           t->per[0] + t->per[1] + t->per[2] + t->per[3], t->per[C_NPU], t->per[C_CPU],
           t->per[C_GONE], t->per[C_NONE], compiled ? "" : " (does not compile: by op name)");
    for (int c = 0; c < C_N; c++)
        for (int i = 0; i < t->n; i++) {
            const Row *r = &t->rows[i];
            if (r->cls != c) continue;
            printf("  %-11s %-40s x%-3d %s%s%s\n", cls_name[c], r->op, r->count, r->names,
                   r->why[0] && c != C_NPU ? "  -- " : "", c != C_NPU ? r->why : "");
        }
    for (int i = 0; i < d->count && !compiled; i++)
        printf("  error: %s%s%s\n", d->items[i].node ? d->items[i].node : "",
               d->items[i].node ? ": " : "", d->items[i].msg);
}

int cmd_ops_coverage(int argc, char **argv)
{
    int bad = 0;
    if (argc < 1) {
        fprintf(stderr, "error: ops --coverage needs one or more MODEL.json\n");
        return 2;
    }
    for (int i = 0; i < argc; i++) {
        static Table t;
        memset(&t, 0, sizeof t);
        DiagList d = {0};
        Pipeline p = {0};
        CompileOptions o;
        compile_defaults(&o);
        Status st = pipeline_run(argv[i], &o, &p, &d);
        if (st == ST_OK)
            from_pipeline(&t, p.g);
        else
            from_names(&t, argv[i]);
        print_model(argv[i], &t, &d, st == ST_OK);
        bad |= st != ST_OK || t.per[C_NONE] > 0;
        pipeline_free(&p);
        diag_free(&d);
    }
    return bad ? 2 : 0;
}
