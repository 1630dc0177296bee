#include "app/kernel_source.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "compiler/graph.h"
#include "compiler/lower/kernel_table.h"
#include "compiler/shader_src.h"
#include "compiler/codegen/spv_tools.h"
#include "runtime/vulkan/vk_shaders.h"

int kernel_source_find(const Plan *p, const char *spec, DiagList *d)
{
    char *end;
    long v = strtol(spec, &end, 10);
    if (*spec && !*end) {
        if (v >= 0 && v < p->nkernels) return (int)v;
        diag_error(d, p->source, NULL, NULL, "no kernel %s (the plan has %d: 0..%d)", spec,
                   p->nkernels, p->nkernels - 1);
        return -1;
    }
    for (int f = 0; f < p->nfusions; f++)
        if (strcmp(p->fusions[f].id, spec) == 0) {
            const PlanFusion *pf = &p->fusions[f];
            if (pf->kernel >= 0) return pf->kernel;
            /* a prologue fold, or the instance it folds: the first kernel computing its members
             * (compiler/fuse_fold.c: they join the provenance of the GEMVs reading its output) */
            for (int k = 0; pf->enabled && pf->nnodes > 0 && k < p->nkernels; k++)
                for (int i = 0; i < p->kernels[k].nprov; i++)
                    if (strcmp(p->kernels[k].prov[i], pf->nodes[0]) == 0) return k;
            diag_error(d, p->source, NULL, NULL, "fusion %s is switched off: it has no kernel",
                       spec);
            return -1;
        }
    diag_error(d, p->source, NULL, NULL, "'%s' is neither a kernel index nor a fusion id", spec);
    return -1;
}

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *r = malloc(n);
    if (r) memcpy(r, s, n);
    return r;
}

/* What glslc compiles before a shared body (shaders/kernels.def: `-std=450 -DSTORAGE_<VARIANT>
 * -D...`), as the lines it stands for; nothing for a whole .comp shader without defines. */
static void add_defines(StrBuf *t, const KernelRow *row, const char *module)
{
    const char *var = module ? strrchr(module, '.') : NULL;
    bool whole = strstr(row->source, ".comp") != NULL;
    if (whole && !*row->defines) return;
    sb_puts(t, "// ");
    sb_puts(t, row->stem);
    sb_puts(t, ": shaders/");
    sb_puts(t, row->source);
    sb_puts(t, " as glslc compiles it (shaders/kernels.def)\n");
    if (!whole) sb_puts(t, "#version 450\n");
    if (var && !whole) {
        char up[16] = "";
        for (size_t i = 0; var[i + 1] && i + 1 < sizeof up; i++)
            up[i] = (char)toupper((unsigned char)var[i + 1]);
        sb_puts(t, "#define STORAGE_");
        sb_puts(t, up);
        sb_puts(t, "\n");
    }
    for (const char *d = row->defines; *d;) {
        size_t n = strcspn(d, " ");
        char def[128];
        snprintf(def, sizeof def, "%.*s", (int)(n < 100 ? n : 100), d);
        char *eq = strchr(def, '=');
        if (eq) *eq = ' ';
        sb_puts(t, "#define ");
        sb_puts(t, def);
        sb_puts(t, "\n");
        d += n;
        while (*d == ' ')
            d++;
    }
    sb_puts(t, "// ---- ");
    sb_puts(t, row->source);
    sb_puts(t, " ----\n");
}

/* The shader file, then every file it includes (depth first, once each) under a header line. */
static void add_file(StrBuf *t, const ShaderSource *s, const char **seen, int *nseen)
{
    for (int i = 0; i < *nseen; i++)
        if (seen[i] == s->name) return;
    if (*nseen == 32) return;
    seen[(*nseen)++] = s->name;
    if (*nseen > 1) {
        sb_puts(t, "\n// ---- ");
        sb_puts(t, s->name);
        sb_puts(t, " (included) ----\n");
    }
    sb_puts(t, s->text);
    for (const char *p = strstr(s->text, "#include \""); p; p = strstr(p + 1, "#include \"")) {
        const char *a = p + 10, *e = strchr(a, '"');
        char name[128];
        if (!e || (size_t)(e - a) >= sizeof name) continue;
        memcpy(name, a, (size_t)(e - a));
        name[e - a] = 0;
        const ShaderSource *inc = shader_src_find(name);
        if (inc) add_file(t, inc, seen, nseen);
    }
}

Status kernel_source_get(const Plan *p, int k, KernelSource *out, DiagList *d)
{
    memset(out, 0, sizeof *out);
    if (k < 0 || k >= p->nkernels) return diag_error(d, p->source, NULL, NULL, "no kernel %d", k);
    const PlanKernel *kn = &p->kernels[k];
    char title[512];
    const char *fus = kn->fusion >= 0 ? p->fusions[kn->fusion].id : NULL;
    const char *pat = kn->fusion >= 0 ? p->fusions[kn->fusion].pattern : NULL;
    const uint32_t *words = NULL;
    size_t nw = 0;
    if (kn->target == KT_CPU) {
        snprintf(title, sizeof title, "kernel %d: %s on the CPU reference", k, kn->shader);
        out->source = dupstr("// a CPU kernel: it runs its IR node on the CPU reference\n"
                             "// (runtime/cpu_*.c); there is no shader\n");
        out->disasm = dupstr("; no SPIR-V: a CPU kernel\n");
    } else if (plan_find_module(p, kn->shader)) {
        const PlanModule *m = plan_find_module(p, kn->shader);
        snprintf(title, sizeof title, "kernel %d: %s (generated%s%s%s%s), %lld SPIR-V words", k,
                 kn->shader, fus ? ", " : "", fus ? fus : "", pat ? " " : "", pat ? pat : "",
                 (long long)m->nwords);
        /* the module is shared by equal kernels: this one's members and tensors first */
        StrBuf t = {0};
        char line[512];
        snprintf(line, sizeof line, "// kernel %d%s%s%s%s%s computes:", k, fus ? " (" : "",
                 fus ? fus : "", pat ? " " : "", pat ? pat : "", fus ? ")" : "");
        sb_puts(&t, line);
        for (int i = 0; i < kn->nprov; i++) {
            sb_puts(&t, i ? ", " : " ");
            sb_puts(&t, kn->prov[i]);
        }
        sb_puts(&t, "\n");
        for (int i = 0; i < kn->nargs; i++) {
            const PlanTensor *pt = &p->tensors[kn->args[i]];
            char sh[128];
            shape_str(pt->shape, pt->rank, sh, sizeof sh);
            snprintf(line, sizeof line, "//   t%d = %s %s%s%s\n", i, pt->name,
                     dtype_short(pt->storage), sh, i >= kn->nin ? " (output)" : "");
            sb_puts(&t, line);
        }
        sb_puts(&t, m->source);
        out->source = sb_take(&t);
        words = m->spirv;
        nw = (size_t)m->nwords;
    } else {
        char mod[128];
        const KernelRow *row = kernel_row(kn->shader);
        const char *file = row ? row->source : "?";
        const PlanTensor *o = kn->nargs > 0 ? &p->tensors[kn->args[kn->nargs - 1]] : NULL;
        const VkSpv *spv = vk_spv_for(kn->shader, o ? o->storage : DT_F32, mod, sizeof mod);
        snprintf(title, sizeof title, "kernel %d: %s (hand-written shaders/%s%s%s), module %s", k,
                 kn->shader, file, fus ? ", " : "", fus ? fus : "", spv ? mod : "(none built)");
        const ShaderSource *s = row ? shader_src_find(row->source) : NULL;
        if (s) {
            StrBuf t = {0};
            const char *seen[32];
            int nseen = 0;
            add_defines(&t, row, spv ? mod : NULL);
            add_file(&t, s, seen, &nseen);
            out->source = sb_take(&t);
        } else {
            out->source = dupstr("// no embedded source for this kernel\n");
        }
        if (spv) {
            words = spv->code;
            nw = spv->size / 4;
        } else {
            out->disasm = dupstr("; no SPIR-V module is built for this kernel\n");
        }
    }
    if (words) {
        out->disasm = spv_disassemble(words, nw);
        out->nwords = (int)nw;
    }
    out->title = dupstr(title);
    if (!out->title || !out->source || !out->disasm) {
        kernel_source_free(out);
        return diag_add(d, DIAG_ERROR, ST_NOMEM, NULL, NULL, NULL, "out of memory");
    }
    return ST_OK;
}

void kernel_source_free(KernelSource *s)
{
    free(s->title);
    free(s->source);
    free(s->disasm);
    memset(s, 0, sizeof *s);
}

void kernel_source_print(FILE *f, const KernelSource *s)
{
    fprintf(f, "%s\n==== source ====\n%s", s->title, s->source);
    if (*s->source && s->source[strlen(s->source) - 1] != '\n') fputc('\n', f);
    fprintf(f, "==== SPIR-V (%d words, disassembled) ====\n%s", s->nwords, s->disasm);
}
