#include "app/attrib.h"

#include <stdio.h>
#include <string.h>

#include "compiler/lower/kernel_table.h"

static bool is_corrupt(const PlanKernel *k)
{
    return kernel_kind_of(k->shader) == KK_corrupt;
}

static bool computes(const PlanKernel *k, const char *node)
{
    for (int i = 0; i < k->nprov; i++)
        if (strcmp(k->prov[i], node) == 0) return true;
    return false;
}

/* Does kernel k compute a member of fusion f? */
static bool computes_member(const Plan *p, const PlanKernel *k, int f)
{
    for (int j = 0; j < p->fusions[f].nnodes; j++)
        if (computes(k, p->fusions[f].nodes[j])) return true;
    return false;
}

static const char *out_name(const Plan *p, const PlanKernel *k)
{
    return k->nargs > k->nin ? p->tensors[k->args[k->nargs - 1]].name : "";
}

int attrib_fusion_kernel(const Plan *p, int f, bool *own)
{
    *own = p->fusions[f].kernel >= 0;
    if (*own) return p->fusions[f].kernel;
    if (!p->fusions[f].enabled) return -1;
    for (int k = 0; k < p->nkernels; k++)
        if (!is_corrupt(&p->kernels[k]) && computes_member(p, &p->kernels[k], f)) return k;
    return -1;
}

int attrib_tensor_kernel(const Plan *p, const char *name, bool *inside)
{
    *inside = false; /* the last writer: a split kernel's first part binds the output too */
    for (int k = p->nkernels - 1; k >= 0; k--)
        if (!is_corrupt(&p->kernels[k]) && strcmp(out_name(p, &p->kernels[k]), name) == 0) return k;
    *inside = true;
    for (int k = 0; k < p->nkernels; k++)
        if (!is_corrupt(&p->kernels[k]) && computes(&p->kernels[k], name)) return k;
    return -1;
}

/* The kernel whose output corrupt kernel c rewrites: the last one before it writing that
 * tensor; -1. */
static int corrupted(const Plan *p, int c)
{
    const PlanKernel *kc = &p->kernels[c];
    if (kc->nargs <= kc->nin) return -1;
    int t = kc->args[kc->nargs - 1];
    for (int k = c - 1; k >= 0; k--) {
        const PlanKernel *kn = &p->kernels[k];
        if (!is_corrupt(kn) && kn->nargs > kn->nin && kn->args[kn->nargs - 1] == t) return k;
    }
    return -1;
}

int attrib_breaks(const Plan *p, const char *ids, BreakSite *out, int max)
{
    int n = 0;
    for (const char *s = ids; s && *s && n < max;) {
        size_t len = strcspn(s, ",");
        for (int f = 0; f < p->nfusions; f++) {
            if (strlen(p->fusions[f].id) != len || strncmp(p->fusions[f].id, s, len) != 0) continue;
            BreakSite *b = &out[n++];
            *b = (BreakSite){p->fusions[f].id, f, -1, false, -1};
            /* the corrupt kernel after a kernel computing its members (compiler/lower/lower.c puts
             * it after the instance's own kernel, or after the first kernel a fold runs it in) */
            for (int c = 0; c < p->nkernels && b->corrupt < 0; c++) {
                int h = is_corrupt(&p->kernels[c]) ? corrupted(p, c) : -1;
                if (h >= 0 && computes_member(p, &p->kernels[h], f)) b->kernel = h, b->corrupt = c;
            }
            if (b->kernel < 0) b->kernel = attrib_fusion_kernel(p, f, &b->own);
            b->own = b->kernel >= 0 && p->kernels[b->kernel].fusion == f;
            break;
        }
        s += len;
        if (*s) s++;
    }
    return n;
}

void attrib_break_text(const Plan *p, const BreakSite *b, char *buf, size_t n)
{
    const PlanFusion *f = &p->fusions[b->fusion];
    if (b->kernel < 0) {
        snprintf(buf, n, "%s %s: no kernel computes it in this plan (switched off)", f->id,
                 f->pattern);
        return;
    }
    const PlanKernel *k = &p->kernels[b->kernel];
    char corrupt[48] = "";
    if (b->corrupt >= 0) snprintf(corrupt, sizeof corrupt, " (kernel %d corrupt)", b->corrupt);
    if (b->own) {
        snprintf(buf, n, "%s %s: the break corrupts the output %s of its kernel %d (%s)%s", f->id,
                 f->pattern, out_name(p, k), b->kernel, k->shader, corrupt);
        return;
    }
    char members[160] = "";
    size_t u = 0;
    for (int i = 0; i < f->nnodes && u + 8 < sizeof members; i++) {
        int w = snprintf(members + u, sizeof members - u, "%s%s", i ? ", " : "", f->nodes[i]);
        if (w > 0) u += (size_t)w;
    }
    if (u >= sizeof members - 8) snprintf(members + sizeof members - 8, 8, ", ...");
    snprintf(buf, n,
             "%s %s has no kernel of its own in this plan: its ops (%s) run inside kernel %d "
             "(%s%s%s); the break corrupts that kernel's output %s%s",
             f->id, f->pattern, members, b->kernel, k->shader, k->fusion >= 0 ? ", " : "",
             k->fusion >= 0 ? p->fusions[k->fusion].id : "", out_name(p, k), corrupt);
}

void attrib_break_short(const Plan *p, const BreakSite *b, char *buf, size_t n)
{
    const PlanKernel *k = b->kernel >= 0 ? &p->kernels[b->kernel] : NULL;
    if (!k)
        snprintf(buf, n, "%s", b->id);
    else if (b->own)
        snprintf(buf, n, "%s kernel %d", b->id, b->kernel);
    else
        snprintf(buf, n, "%s in kernel %d%s%s%s", b->id, b->kernel, k->fusion >= 0 ? " (" : "",
                 k->fusion >= 0 ? p->fusions[k->fusion].id : "", k->fusion >= 0 ? ")" : "");
}

const BreakSite *attrib_break_of_kernel(const BreakSite *s, int n, int k)
{
    for (int i = 0; i < n; i++)
        if (s[i].kernel == k || s[i].corrupt == k) return &s[i];
    return NULL;
}
