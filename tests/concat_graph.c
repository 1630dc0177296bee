#include "tests/concat_graph.h"

#include <stdio.h>
#include <stdlib.h>

static void tensor(FILE *f, const char *name, int64_t a, int64_t b, int64_t c)
{
    if (c)
        fprintf(f, "{\"name\":\"%s\",\"shape\":[%lld,%lld,%lld]}", name, (long long)a, (long long)b,
                (long long)c);
    else if (b)
        fprintf(f, "{\"name\":\"%s\",\"shape\":[%lld,%lld]}", name, (long long)a, (long long)b);
    else
        fprintf(f, "{\"name\":\"%s\",\"shape\":[%lld]}", name, (long long)a);
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

/* one linear node: name, input, weight, bias (NULL: none), output, rows x k -> n */
static void linear_node(FILE *f, const char *name, const char *x, const char *w, const char *b,
                        const char *y, int64_t rows, int64_t k, int64_t n)
{
    fprintf(f, "{\"name\":\"%s\",\"op_type\":\"aten.linear.default\",\"inputs\":[", name);
    tensor(f, x, 1, rows, k);
    fputc(',', f);
    tensor(f, w, n, k, 0);
    if (b) {
        fputc(',', f);
        tensor(f, b, n, 0, 0);
    }
    fprintf(f, "],\"outputs\":[");
    tensor(f, y, 1, rows, n);
    fprintf(f, "],\"attrs\":{}},");
}

char *glu_graph_json(const GluSpec *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    int64_t r = s->rows;
    fprintf(f, "{\"model_name\":\"glu\",\"graph_inputs\":[");
    tensor(f, "x", 1, r, s->k);
    if (s->up_reads_x2) {
        fputc(',', f);
        tensor(f, "x2", 1, r, s->k);
    }
    fprintf(f, "],\"graph_outputs\":[");
    tensor(f, s->neg ? "o" : "h", 1, r, s->f);
    fprintf(f, "],\"weights\":[");
    tensor(f, "wg", s->f, s->k, 0);
    fputc(',', f);
    tensor(f, "wu", s->f, s->k, 0);
    if (s->bias) {
        fputc(',', f);
        tensor(f, "bg", s->f, 0, 0);
    }
    if (s->bias_up) {
        fputc(',', f);
        tensor(f, "bu", s->f, 0, 0);
    }
    fprintf(f, "],\"weight_name_mapping\":{\"p_wg\":\"wg\",\"p_wu\":\"wu\"%s%s},\"nodes\":[",
            s->bias ? ",\"p_bg\":\"bg\"" : "", s->bias_up ? ",\"p_bu\":\"bu\"" : "");
    const char *ux = s->up_reads_x2 ? "x2" : "x";
    if (s->up_node_first)
        linear_node(f, "up", ux, "p_wu", s->bias_up ? "p_bu" : NULL, "u", r, s->k, s->f);
    linear_node(f, "gate", "x", "p_wg", s->bias ? "p_bg" : NULL, "g", r, s->k, s->f);
    fprintf(f, "{\"name\":\"silu\",\"op_type\":\"aten.silu.default\",\"inputs\":[");
    tensor(f, "g", 1, r, s->f);
    fprintf(f, "],\"outputs\":[");
    tensor(f, "sg", 1, r, s->f);
    fprintf(f, "],\"attrs\":{}},");
    if (!s->up_node_first)
        linear_node(f, "up", ux, "p_wu", s->bias_up ? "p_bu" : NULL, "u", r, s->k, s->f);
    fprintf(f, "{\"name\":\"mul\",\"op_type\":\"aten.mul.Tensor\",\"inputs\":[");
    tensor(f, s->up_first ? "u" : "sg", 1, r, s->f);
    fputc(',', f);
    tensor(f, s->up_first ? "sg" : "u", 1, r, s->f);
    fprintf(f, "],\"outputs\":[");
    tensor(f, "h", 1, r, s->f);
    fprintf(f, "],\"attrs\":{}}");
    if (s->neg) {
        fprintf(f, ",{\"name\":\"neg\",\"op_type\":\"aten.neg.default\",\"inputs\":[");
        tensor(f, "h", 1, r, s->f);
        fprintf(f, "],\"outputs\":[");
        tensor(f, "o", 1, r, s->f);
        fprintf(f, "],\"attrs\":{}}");
    }
    fprintf(f, "]}");
    fclose(f);
    return buf;
}
