/* A .npubin's kernels against this build's shaders: the push words, spec constants and grid of
 * a built-in NPU kernel were computed by the writing build's lowering for one SPIR-V module; a
 * build whose module differs (a push block that gained a word) must not run them. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "compiler/npubin.h"
#include "compiler/shader_fp.h"

bool npubin_kernel_stale(const Plan *p, int k)
{
    const PlanKernel *kn = &p->kernels[k];
    return p->file_version >= 4 && plan_kernel_builtin(p, kn) &&
           kn->fingerprint != shader_fp_kernel(p, kn, NULL, 0);
}

/* The compile command that rebuilds the plan: its source with the options the plan records
 * (compute dtype, tier, tuning knobs; fusion and pass switches are not recorded), spelled out so
 * the command says what it keeps (compiling the .npubin itself keeps them too: docs/CLI.md). */
static const char *recompile(const Plan *p, const char *path, char *buf, size_t n)
{
    const char *dt = dtype_compute_name(p->compute);
    if (!dt) dt = "fp32";
    const char *tier = plan_tier_name(p->tier);
    int at = snprintf(buf, n, "npu-explore compile %s -o %s --dtype %s --tier %s",
                      p->source ? p->source : "MODEL.json", path, dt, tier ? tier : "auto");
    for (const char *t = p->tuning; t && *t && at > 0 && (size_t)at < n;) {
        size_t k = strcspn(t, " ");
        if (k) at += snprintf(buf + at, n - (size_t)at, " --tune %.*s", (int)k, t);
        t += k + (t[k] == ' ');
    }
    return buf;
}

static const char *hex(uint64_t v, char *buf, size_t n)
{
    if (!v) return "none";
    snprintf(buf, n, "%016llx", (unsigned long long)v);
    return buf;
}

Status npubin_verify(const Plan *p, const char *path, bool strict, DiagList *d)
{
    if (p->file_version == 0) return ST_OK; /* compiled by this build */
    char cmd[1024];
    recompile(p, path, cmd, sizeof cmd);
    if (p->file_version < 4) {
        int n = 0;
        for (int k = 0; k < p->nkernels; k++)
            n += plan_kernel_builtin(p, &p->kernels[k]);
        if (!n) return ST_OK; /* nothing a shader change could break */
        return diag_add(
            d, DIAG_WARNING, ST_OK, path, NULL, NULL,
            "written before kernel fingerprints (format v%d): its %d built-in NPU kernel%s "
            "cannot be checked against this build's shaders (if they changed, "
            "recompile it with '%s')",
            p->file_version, n, n == 1 ? "" : "s", cmd);
    }
    int first = -1, nstale = 0;
    for (int k = 0; k < p->nkernels; k++)
        if (npubin_kernel_stale(p, k)) {
            if (first < 0) first = k;
            nstale++;
        }
    if (!nstale) return ST_OK;
    const PlanKernel *kn = &p->kernels[first];
    char mod[256], h[20], now[64] = "; this build has no such module", more[96] = "";
    uint64_t want = shader_fp_kernel(p, kn, mod, sizeof mod);
    if (want) snprintf(now, sizeof now, " vs this build's %016llx", (unsigned long long)want);
    if (nstale > 1)
        snprintf(more, sizeof more, "; %d more kernel%s like it (describe marks them)", nstale - 1,
                 nstale == 2 ? "" : "s");
    return diag_add(d, strict ? DIAG_ERROR : DIAG_WARNING, strict ? ST_BAD_INPUT : ST_OK, path,
                    NULL, NULL,
                    "kernel %d '%s' (module %s) was compiled against another build's shader "
                    "(fingerprint %s%s)%s: recompile it with '%s'",
                    first, kn->shader, mod, hex(kn->fingerprint, h, sizeof h), now, more, cmd);
}
