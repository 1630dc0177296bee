/* viz_heat: a profile's per-kernel GPU time or error laid over the graph's nodes, binned on one
 * colour scale per measure. The scale table below is the only place the bins are defined: the
 * SVG fill, the explorer's terminal colour and the legend's wording come from the same row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/viz.h"

typedef struct HeatBin {
    double upto;      /* time: the bin holds values below upto x the largest; error: rel_l2 below */
    const char *fill; /* SVG colour (ColorBrewer YlOrRd / RdYlGn) */
    int ansi;         /* terminal colour: 1 red 2 green 3 yellow 4 blue 5 magenta 6 cyan */
} HeatBin;

/* clang-format off */
static const HeatBin time_bins[VIZ_HEAT_BINS] = {
    {0.05, "#ffffb2", 4}, {0.15, "#fecc5c", 6}, {0.35, "#fd8d3c", 2}, {0.60, "#f03b20", 3},
    {1e300, "#bd0026", 1},
};
/* error: by rel_l2 decades while within tolerance; the last bin is a verdict, not a number */
static const HeatBin err_bins[VIZ_HEAT_BINS] = {
    {1e-4, "#1a9850", 2}, {1e-3, "#91cf60", 6}, {1e-2, "#fee08b", 3}, {1e300, "#fc8d59", 5},
    {0, "#d73027", 1}, /* MISMATCH: beyond the dtype's tolerance */
};
/* clang-format on */
#define NONE_FILL "#eeeeee"

static const HeatBin *bins(const VizHeat *h)
{
    return h->by == VIZ_COLOR_ERROR ? err_bins : time_bins;
}

const char *viz_heat_fill(const VizHeat *h, int bin)
{
    return bin < 0 || bin >= VIZ_HEAT_BINS ? NONE_FILL : bins(h)[bin].fill;
}

int viz_heat_ansi(const VizHeat *h, int bin)
{
    return bin < 0 || bin >= VIZ_HEAT_BINS ? 0 : bins(h)[bin].ansi;
}

const char *viz_heat_none(const VizHeat *h)
{
    return h->by == VIZ_COLOR_ERROR ? "no kernel or not judged" : "no kernel";
}

void viz_heat_free(VizHeat *h)
{
    free(h->bin);
    free(h->kernel);
    free(h->value);
    memset(h, 0, sizeof *h);
}

static void legend(VizHeat *h)
{
    if (h->by == VIZ_COLOR_ERROR) {
        snprintf(h->title, sizeof h->title, "error of the kernel computing the node (rel_l2)");
        snprintf(h->label[0], sizeof h->label[0], "below 1e-4");
        snprintf(h->label[1], sizeof h->label[1], "1e-4 to 1e-3");
        snprintf(h->label[2], sizeof h->label[2], "1e-3 to 1e-2");
        snprintf(h->label[3], sizeof h->label[3], "1e-2 or more, ok");
        snprintf(h->label[4], sizeof h->label[4], "MISMATCH");
        for (int b = 0; b < VIZ_HEAT_BINS; b++) { /* the label, cut to fit */
            size_t n = strlen(h->label[b]);
            if (n >= sizeof h->share[b]) n = sizeof h->share[b] - 1;
            memcpy(h->share[b], h->label[b], n);
            h->share[b][n] = 0;
        }
        return;
    }
    snprintf(h->title, sizeof h->title, "GPU time of the kernels computing the node (us, median)");
    double lo = 0;
    for (int b = 0; b < VIZ_HEAT_BINS; b++) {
        double hi = time_bins[b].upto * h->max;
        if (b == VIZ_HEAT_BINS - 1)
            snprintf(h->label[b], sizeof h->label[b], "%.1f to %.1f", lo, h->max);
        else
            snprintf(h->label[b], sizeof h->label[b], "%.1f to %.1f", lo, hi);
        snprintf(h->share[b], sizeof h->share[b], "%.0f-%.0f%%",
                 b ? 100 * time_bins[b - 1].upto : 0,
                 b == VIZ_HEAT_BINS - 1 ? 100 : 100 * time_bins[b].upto);
        lo = hi;
    }
}

Status viz_heat(const Graph *g, VizColor by, const VizKernelData *k, int nk, VizHeat *h,
                DiagList *d)
{
    memset(h, 0, sizeof *h);
    h->by = by;
    h->nnodes = g->nnodes;
    size_t n = (size_t)g->nnodes + 1;
    h->bin = malloc(n * sizeof *h->bin);
    h->kernel = malloc(n * sizeof *h->kernel);
    h->value = calloc(n, sizeof *h->value);
    bool *bad = calloc(n, sizeof *bad), *judged = calloc(n, sizeof *judged);
    if (!h->bin || !h->kernel || !h->value || !bad || !judged) {
        free(bad);
        free(judged);
        viz_heat_free(h);
        return diag_add(d, DIAG_ERROR, ST_NOMEM, g->path, NULL, NULL, "out of memory");
    }
    for (int i = 0; i < g->nnodes; i++)
        h->kernel[i] = -1, h->bin[i] = -1;
    for (int j = 0; j < nk; j++)
        for (int m = 0; m < k[j].nnodes; m++) {
            int i = graph_find_node(g, k[j].nodes[m]);
            if (i < 0) continue;
            if (h->kernel[i] < 0) h->kernel[i] = k[j].kernel;
            if (by == VIZ_COLOR_TIME) {
                h->value[i] += k[j].gpu_us > 0 ? k[j].gpu_us : 0;
            } else if (k[j].judged) {
                judged[i] = true;
                bad[i] |= k[j].bad;
                if (k[j].rel_l2 > h->value[i]) h->value[i] = k[j].rel_l2;
            }
        }
    for (int i = 0; i < g->nnodes; i++)
        if (h->kernel[i] >= 0 && h->value[i] > h->max) h->max = h->value[i];
    for (int i = 0; i < g->nnodes; i++) {
        if (h->kernel[i] < 0 || (by == VIZ_COLOR_ERROR && !judged[i])) continue;
        if (by == VIZ_COLOR_ERROR && bad[i]) {
            h->bin[i] = VIZ_HEAT_BINS - 1;
            continue;
        }
        const HeatBin *b = bins(h);
        double v = by == VIZ_COLOR_TIME ? (h->max > 0 ? h->value[i] / h->max : 0) : h->value[i];
        int last = by == VIZ_COLOR_ERROR ? VIZ_HEAT_BINS - 2 : VIZ_HEAT_BINS - 1;
        int x = 0;
        while (x < last && v >= b[x].upto)
            x++;
        h->bin[i] = (signed char)x;
    }
    free(bad);
    free(judged);
    legend(h);
    return ST_OK;
}
