/* `npu-explore tune MODEL`: the search of app/tune.h on the model's device, its table (or JSON
 * lines), and the winners written to the tuning cache (app/tuned.h). */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app/commands.h"
#include "app/model.h"
#include "app/report.h"
#include "app/tune.h"

/* A new JSON line of the tune schema, of kind `kind`. */
static json_object *new_line(const char *kind)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "schema", json_object_new_string("npu-explore/tune/1"));
    json_object_object_add(o, "kind", json_object_new_string(kind));
    return o;
}

/* The knobs of mask m as a JSON array of names. */
static json_object *knob_names(TuneMask m)
{
    json_object *a = json_object_new_array();
    for (int i = 0; i < TUNE_COUNT; i++)
        if (m >> i & 1u) json_object_array_add(a, json_object_new_string(tune_info[i].name));
    return a;
}

static void report_json(FILE *f, const TuneResult *r)
{
    for (int i = 0; i < r->n; i++) {
        const TuneRow *w = &r->rows[i];
        json_object *o = new_line("kernel");
        json_object_object_add(o, "index", json_object_new_int(w->kernel));
        json_object_object_add(o, "kernel", json_object_new_string(w->stem));
        json_object_object_add(o, "count", json_object_new_int(w->count));
        json_object_object_add(o, "key", json_object_new_string(w->key));
        json_object_object_add(o, "default_us", json_object_new_double(w->default_us));
        json_object_object_add(o, "best_us", json_object_new_double(w->best_us));
        json_object *k = json_object_new_object();
        for (int j = 0; j < TUNE_COUNT; j++)
            if (w->best.set >> j & 1u)
                json_object_object_add(k, tune_info[j].name, json_object_new_int64(w->best.v[j]));
        json_object_object_add(o, "knobs", k);
        json_object_object_add(o, "improved", json_object_new_boolean(w->improved));
        json_object_object_add(o, "searched", knob_names(w->knobs));
        json_object_object_add(o, "tried", json_object_new_int(w->tried));
        json_object_object_add(o, "same", json_object_new_int(w->same));
        json_object_object_add(o, "refused", json_object_new_int(w->rejected));
        json_object_object_add(o, "failed", json_object_new_int(w->failed));
        json_object_object_add(o, "skipped", json_object_new_boolean(w->skipped));
        json_object_object_add(o, "note", json_object_new_string(w->note));
        fprintf(f, "%s\n",
                json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                      JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(o);
    }
    int won = 0;
    for (int i = 0; i < r->n; i++)
        won += r->rows[i].improved;
    json_object *o = new_line("summary");
    json_object_object_add(o, "model", json_object_new_string(r->model));
    json_object_object_add(o, "device", json_object_new_string(r->device));
    json_object_object_add(o, "dtype", json_object_new_string(r->dtype));
    json_object_object_add(o, "tier", json_object_new_string(plan_tier_name(r->tier)));
    json_object_object_add(o, "beam", json_object_new_int(r->beam));
    json_object_object_add(o, "iters", json_object_new_int(r->iters));
    json_object_object_add(o, "kernels", json_object_new_int(r->n));
    json_object_object_add(o, "improved", json_object_new_int(won));
    json_object_object_add(o, "seconds", json_object_new_double(r->seconds));
    json_object_object_add(o, "cache", json_object_new_string(r->cache));
    json_object_object_add(o, "cached", json_object_new_int(r->cached));
    fprintf(
        f, "%s\n",
        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
}

void tune_report(FILE *f, const TuneResult *r, bool json)
{
    if (json) {
        report_json(f, r);
        return;
    }
    fprintf(f,
            "tune %s on %s, %s, tier %s: beam %d, %d timed runs per configuration (median)\n"
            "%-5s %-18s %4s %10s %10s %8s %5s %5s %5s  %s\n",
            r->model, r->device, r->dtype, plan_tier_name(r->tier), r->beam, r->iters, "#",
            "kernel", "n", "default_us", "best_us", "speedup", "tried", "same", "refus", "knobs");
    int won = 0;
    for (int i = 0; i < r->n; i++) {
        const TuneRow *w = &r->rows[i];
        char knobs[256] = "", sp[16] = "-";
        tuning_format_set(&w->best, knobs, sizeof knobs);
        if (w->improved) snprintf(sp, sizeof sp, "%.2fx", w->default_us / w->best_us);
        won += w->improved;
        if (w->skipped) {
            fprintf(f, "%-5d %-18s %4d %10s %10s %8s %5s %5s %5s  (%s)\n", w->kernel, w->stem,
                    w->count, "-", "-", "-", "-", "-", "-", w->note);
            continue;
        }
        fprintf(f, "%-5d %-18s %4d %10.2f %10.2f %8s %5d %5d %5d  %s\n", w->kernel, w->stem,
                w->count, w->default_us, w->best_us, sp, w->tried, w->same, w->rejected,
                w->improved ? knobs : "(defaults kept)");
        if (w->note[0] && (w->rejected || w->failed))
            fprintf(f, "      %d refused, %d failed; first: %s\n", w->rejected, w->failed, w->note);
    }
    fprintf(f, "%d kernel%s searched in %.1f s, %d faster than the defaults by %.0f%% or more",
            r->n, r->n == 1 ? "" : "s", r->seconds, won, 100 * TUNE_MARGIN);
    if (r->cache[0])
        fprintf(f, ": cache %s (%d entries for this device)\n", r->cache, r->cached);
    else
        fprintf(f, " (--tuned none: nothing cached)\n");
}

int cmd_tune(int argc, char **argv)
{
    Options o;
    DiagList d = {0};
    opt_defaults(&o);
    o.iters = 10; /* per configuration: many are timed */
    Status st = opt_parse(&o, argc, argv, 1, &d);
    Model m = {0};
    TuneResult r = {0};
    if (st == ST_OK) st = model_load_graph(&m, o.model, &d);
    if (st == ST_OK) st = model_npubin_options(&o, &d); /* a .npubin: its plan's options */
    if (st == ST_OK) st = model_bind(&m, &o, &d);
    TuneSearch ts = {.kernel = o.kernel, .beam = o.beam, .budget_s = o.budget_s, .iters = o.iters};
    Progress pg = {report_tty_progress, (void *)"tune", NULL};
    bool tty = isatty(2);
    if (st == ST_OK) st = tune_measure(&o, &m, &ts, tty ? &pg : NULL, &r, &d);
    if (tty) fprintf(stderr, "\r\033[K");
    if (st == ST_OK) st = tune_store(&o, &r, &d);
    if (st == ST_OK) tune_report(stdout, &r, o.json);
    diag_print(&d, stderr);
    tune_result_free(&r);
    model_free(&m);
    diag_free(&d);
    return status_exit_code(st);
}
