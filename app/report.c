#include "app/report.h"

#include <string.h>

Tolerance report_tolerance(const Options *o, const char *dtype)
{
    Tolerance t = {1e-4, 0};
    if (strcmp(dtype, "fp16") == 0) t.rel_l2 = 2e-2;
    if (strcmp(dtype, "bf16") == 0) t.rel_l2 = 3e-2;
    if (o && o->tol_rel >= 0) t.rel_l2 = o->tol_rel;
    if (o && o->tol_abs >= 0) t.max_abs = o->tol_abs;
    return t;
}

void report_argmax_note(const CmpStats *s, char *buf, size_t n)
{
    if (!s->argmax) {
        snprintf(buf, n, "%s", "");
        return;
    }
    snprintf(buf, n, "argmax: %lld rows, %lld differ by index, %lld beyond tolerance",
             (long long)s->am_rows, (long long)s->am_differ, (long long)s->am_beyond);
}

void report_argmax_json(const CmpStats *s, char *buf, size_t n)
{
    if (!s->argmax) {
        snprintf(buf, n, "%s", "");
        return;
    }
    snprintf(buf, n,
             ",\"argmax_rows\":%lld,\"argmax_differ\":%lld,\"argmax_beyond\":%lld,"
             "\"argmax_gap\":%.6g",
             (long long)s->am_rows, (long long)s->am_differ, (long long)s->am_beyond, s->am_gap);
}

int report_check(FILE *f, const Graph *g, const Binding *b, const HTensor *vals,
                 const Tolerance *tol, const char *backend, int json)
{
    int ok = 0, bad = 0, missing = 0;
    if (!json)
        fprintf(f, "%-20s %-18s %10s %10s %9s %8s %8s  %s\n", "output", "shape", "max_abs",
                "rel_l2", "cosine", "top1", "top5", "verdict");
    for (int i = 0; i < g->noutputs; i++) {
        const GTensor *t = &g->tensors[g->outputs[i]];
        char shp[160];
        tensor_describe(t, shp, sizeof shp);
        if (!b->ref[i].data) {
            missing++;
            if (json)
                fprintf(f,
                        "{\"schema\":\"npu-explore/check/1\",\"kind\":\"output\",\"name\":\"%s\","
                        "\"shape\":\"%s\",\"verdict\":\"no-reference\"}\n",
                        t->name, shp);
            else
                fprintf(f, "%-20s %-18s %10s %10s %9s %8s %8s  %s\n", t->name, shp, "-", "-", "-",
                        "-", "-", "no reference");
            continue;
        }
        CmpStats s;
        const ArgmaxSrc *am = b->argmax && b->argmax[i].x.data ? &b->argmax[i] : NULL;
        ArgmaxSrc exact; /* an argmax output with no reference input: its indices exactly */
        if (!am && cmp_argmax_source(g, g->outputs[i], NULL, 0, &exact)) am = &exact;
        cmp_output(&vals[g->outputs[i]], &b->ref[i], am, tol, &s);
        int pass = cmp_ok(&s, tol);
        pass ? ok++ : bad++;
        char t1[32] = "-", t5[32] = "-", note[128], amj[160];
        if (s.has_topk) {
            snprintf(t1, sizeof t1, "%lld/%lld", (long long)s.top1_agree, (long long)s.rows);
            snprintf(t5, sizeof t5, "%lld/%lld", (long long)s.top5_agree, (long long)s.rows);
        }
        if (s.argmax) /* top1: the rows whose index is the reference's */
            snprintf(t1, sizeof t1, "%lld/%lld", (long long)(s.am_rows - s.am_differ),
                     (long long)s.am_rows);
        report_argmax_note(&s, note, sizeof note);
        report_argmax_json(&s, amj, sizeof amj);
        if (json)
            fprintf(f,
                    "{\"schema\":\"npu-explore/check/1\",\"kind\":\"output\",\"name\":\"%s\","
                    "\"shape\":\"%s\",\"max_abs\":%.6g,\"rel_l2\":%.6g,\"cosine\":%.8f,"
                    "\"pearson\":%.8f,\"top1\":\"%s\",\"top5\":\"%s\",\"nonfinite\":%lld%s,"
                    "\"verdict\":\"%s\"}\n",
                    t->name, shp, s.max_abs, s.rel_l2, s.cosine, s.pearson, t1, t5,
                    (long long)s.nonfinite, amj, pass ? "ok" : "MISMATCH");
        else if (s.argmax) /* the indices' float errors mean nothing: the rows say it */
            fprintf(f, "%-20s %-18s %10s %10s %9s %8s %8s  %s  %s\n", t->name, shp, "-", "-", "-",
                    t1, t5, pass ? "ok" : "MISMATCH", note);
        else
            fprintf(f, "%-20s %-18s %10.3e %10.3e %9.6f %8s %8s  %s\n", t->name, shp, s.max_abs,
                    s.rel_l2, s.cosine, t1, t5, pass ? "ok" : "MISMATCH");
    }
    if (json)
        fprintf(f,
                "{\"schema\":\"npu-explore/check/1\",\"kind\":\"summary\",\"backend\":\"%s\","
                "\"outputs\":%d,\"ok\":%d,\"mismatch\":%d,\"no_reference\":%d,"
                "\"tol_rel_l2\":%g}\n",
                backend, g->noutputs, ok, bad, missing, tol->rel_l2);
    else
        fprintf(f,
                "summary: %d outputs, %d ok, %d mismatch, %d without reference (backend %s, "
                "tolerance rel_l2 <= %g)\n",
                g->noutputs, ok, bad, missing, backend, tol->rel_l2);
    if (bad) return 1;
    if (ok == 0) return 2;
    return 0;
}

void report_fused_from(const PlanKernel *k, char *buf, size_t n)
{
    buf[0] = 0;
    size_t used = 0;
    for (int i = 0; i < k->nprov && used + 1 < n; i++) {
        int w = snprintf(buf + used, n - used, i ? ",%s" : "%s", k->prov[i]);
        if (w < 0) break;
        used += (size_t)w;
    }
    if (used >= n - 1 && n > 4) strcpy(buf + n - 4, "...");
}

void report_tty_progress(void *ctx, const char *stage, int k, int n)
{
    const char *cmd = ctx ? ctx : "";
    if (n > 0)
        fprintf(stderr, "\r%s: %s %d/%d\033[K", cmd, stage, k, n);
    else
        fprintf(stderr, "\r%s: %s\033[K", cmd, stage);
    fflush(stderr);
}
