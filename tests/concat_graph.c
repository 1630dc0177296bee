#include "concat_graph.h"

#include <stdio.h>
#include <stdlib.h>

static void tensor(FILE *f, const char *name, int64_t a, int64_t b, int64_t c)
{
    if (c) fprintf(f, "{\"name\":\"%s\",\"shape\":[%lld,%lld,%lld]}", name, (long long)a,
                   (long long)b, (long long)c);
    else if (b) fprintf(f, "{\"name\":\"%s\",\"shape\":[%lld,%lld]}", name, (long long)a, (long long)b);
    else fprintf(f, "{\"name\":\"%s\",\"shape\":[%lld]}", name, (long long)a);
}

char *concat_graph_json(const ConcatSpec *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    int64_t k2 = s->k2 ? s->k2 : s->k;
    char nm[64];
    fprintf(f, "{\"model_name\":\"concat\",\"graph_inputs\":[");
    tensor(f, "x", 1, s->rows, s->k);
    fputc(',', f);
    tensor(f, "x2", 1, s->rows, k2);
    fprintf(f, "],\"graph_outputs\":[");
    for (int i = 0; i < s->n; i++) {
        snprintf(nm, sizeof nm, "o%d", i);
        if (i) fputc(',', f);
        tensor(f, nm, 1, s->rows, s->cols[i]);
    }
    if (s->part_is_output) {
        fputc(',', f);
        tensor(f, s->act[0] ? "a0" : "y0", 1, s->rows, s->cols[0]);
    }
    fprintf(f, "],\"weights\":[");
    for (int i = 0; i < s->n; i++) {
        int64_t k = s->input[i] ? k2 : s->k;
        snprintf(nm, sizeof nm, "w%d", i);
        if (i) fputc(',', f);
        tensor(f, nm, s->cols[i], k, 0);
        if (s->bias[i]) {
            snprintf(nm, sizeof nm, "b%d", i);
            fputc(',', f);
            tensor(f, nm, s->cols[i], 0, 0);
        }
    }
    fprintf(f, "],\"weight_name_mapping\":{");
    for (int i = 0; i < s->n; i++) {
        fprintf(f, "%s\"p_w%d\":\"w%d\"", i ? "," : "", i, i);
        if (s->bias[i]) fprintf(f, ",\"p_b%d\":\"b%d\"", i, i);
    }
    fprintf(f, "},\"nodes\":[");
    for (int i = 0; i < s->n; i++) {
        int64_t k = s->input[i] ? k2 : s->k, c = s->cols[i];
        fprintf(f, "%s{\"name\":\"l%d\",\"op_type\":\"aten.linear.default\",\"inputs\":[",
                i ? "," : "", i);
        tensor(f, s->input[i] ? "x2" : "x", 1, s->rows, k);
        snprintf(nm, sizeof nm, "p_w%d", i);
        fputc(',', f);
        tensor(f, nm, c, k, 0);
        if (s->bias[i]) {
            snprintf(nm, sizeof nm, "p_b%d", i);
            fputc(',', f);
            tensor(f, nm, c, 0, 0);
        }
        fprintf(f, "],\"outputs\":[");
        snprintf(nm, sizeof nm, "y%d", i);
        tensor(f, nm, 1, s->rows, c);
        fprintf(f, "],\"attrs\":{}}");
        const char *part = nm;
        char an[64];
        if (s->act[i]) {
            snprintf(an, sizeof an, "a%d", i);
            fprintf(f, ",{\"name\":\"act%d\",\"op_type\":\"%s\",\"inputs\":[", i, s->act[i]);
            tensor(f, nm, 1, s->rows, c);
            fprintf(f, "],\"outputs\":[");
            tensor(f, an, 1, s->rows, c);
            fprintf(f, "],\"attrs\":{}}");
            part = an;
        }
        fprintf(f, ",{\"name\":\"neg%d\",\"op_type\":\"aten.neg.default\",\"inputs\":[", i);
        tensor(f, part, 1, s->rows, c);
        snprintf(an, sizeof an, "o%d", i);
        fprintf(f, "],\"outputs\":[");
        tensor(f, an, 1, s->rows, c);
        fprintf(f, "],\"attrs\":{}}");
    }
    fprintf(f, "]}");
    fclose(f);
    return buf;
}
